"""The loop of the floors (``torch_floor.py``, ``jax_floor.py``): ``off_policy.py``'s throughput protocol run by the
barest code a backend allows, so that a library's time divided by the floor's bounds what any rewrite could gain.

A floor module supplies ``parts(algorithm, hyper, seed, replay) -> (act, gradient_step, random_action)`` and its
replay class (preallocated arrays with ``write(row, observations, rewards, terminated)`` and ``batch(batch_size)``);
``run`` does the rest: the env of ``off_policy.py`` unwrapped (a one-env gymnasium sync vector env with same-step
autoreset), ``THROUGHPUT_TIMESTEPS`` env steps of which the first ``learning_starts`` act at random without
updates, each transition written into the replay, one gradient step per env step after that, and ONE JSON line in
``off_policy.py``'s layout.
"""

import argparse
import json
import time
from typing import Any, Callable

from off_policy import HYPERPARAMETERS, THROUGHPUT_TIMESTEPS, make_vector_env

ALGORITHMS = ("SAC", "TD3", "DQN")


class ReplayRows:
    """What both floors' replays share: ``batch`` gathers the rows ``random_rows(batch_size)`` draws (a backend's
    replay sets ``states``, ``actions``, ``rewards``, ``next_states``, ``terminated`` and ``rows``)."""

    def random_rows(self, batch_size: int) -> Any:
        raise NotImplementedError

    def batch(self, batch_size: int) -> tuple:
        rows = self.random_rows(batch_size)
        return (
            self.states[rows],
            self.actions[rows],
            self.rewards[rows],
            self.next_states[rows],
            self.terminated[rows],
        )


def run(description: str, library: str, backend: str, version: str, replay_class: Any, parts: Callable) -> None:
    """Parse ``--algorithm``, ``--seed``, ``--timesteps``; run the protocol; print its JSON line.

    :param library: the name printed as ``library`` (e.g. ``"plain torch (floor)"``).
    :param backend: ``"torch"`` or ``"jax"``; ``version`` the backend's version string.
    :param replay_class: ``replay_class(rows, observation_size, seed, discrete_actions)``, with ``write`` and ``batch``.
    :param parts: ``parts(algorithm, hyper, seed, replay) -> (act, gradient_step, random_action)``:
        ``act(observations)`` and ``random_action()`` give the env's actions (``(1, action_size)`` NumPy arrays), and
        ``gradient_step(timestep, batch)`` takes one step on ``replay.batch(batch_size)``.
    """
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algorithm", choices=ALGORITHMS, default="SAC")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=None, help="env steps (default: THROUGHPUT_TIMESTEPS)")
    args = parser.parse_args()
    hyper = HYPERPARAMETERS[args.algorithm]
    env = make_vector_env(hyper["env"], num_envs=1)
    discrete_actions = getattr(env.single_action_space, "n", 0)
    replay = replay_class(hyper["memory_size"], env.single_observation_space.shape[0], args.seed, discrete_actions)
    act, gradient_step, random_action = parts(args.algorithm, hyper, args.seed, replay)
    timesteps = args.timesteps or THROUGHPUT_TIMESTEPS[args.algorithm]
    learning_starts, batch_size = hyper["cfg"]["learning_starts"], hyper["cfg"]["batch_size"]

    observations = env.reset(seed=args.seed)[0]
    start = time.perf_counter()
    for timestep in range(timesteps):
        actions = random_action() if timestep < learning_starts else act(observations)
        next_observations, rewards, terminated, _, _ = env.step(actions)
        replay.write(timestep % replay.rows, observations, rewards, terminated)
        observations = next_observations
        if timestep >= learning_starts:
            gradient_step(timestep, replay.batch(batch_size))
    seconds = time.perf_counter() - start
    result = {
        "library": library,
        "backend": backend,
        "algorithm": args.algorithm,
        "env": hyper["env"],
        "seed": args.seed,
        backend: version,
        "timesteps": timesteps,
        "learning_starts": learning_starts,
        "seconds": round(seconds, 3),
        "env_steps_per_s": round(timesteps / seconds, 1),
    }
    print(json.dumps(result), flush=True)
