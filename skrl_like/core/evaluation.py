"""Evaluation: whole episodes played with exploration off, after training or every ``evaluation_interval`` timesteps.

Written once for both backends and every agent. An evaluation during training plays on its own environment (the
trainer's ``evaluation_env``) and leaves the training run exactly as it was: the global random states (Python,
NumPy and the backend's: torch's generators, the JAX root key) are saved before and restored after it, and so are
the agent's own acting state (e.g. a JAX agent's key, an exploration noise's state, its tracking buffers), since
acting draws random numbers even when the deterministic action is the one played. So a run with evaluation ends with
the parameters of the same run without it.
"""

from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

from skrl_like import logger
from skrl_like.core.agents.recurrent import hidden_states_apart


def play_episodes(
    trainer: Any, env: Any, num_episodes: int, max_timesteps: int = 1_000_000
) -> Tuple[List[float], List[int]]:
    """Play ``num_episodes`` whole episodes of ``env`` with the trainer's single agent, exploration off.

    Actions are the policy's deterministic ``mean_actions`` (the mode, for discrete policies) unless the trainer's
    ``cfg["stochastic_evaluation"]``; nothing is learned or stored. With a vector env of ``N`` sub-envs each sub-env
    plays the same number of episodes (``ceil(num_episodes / N)``, the first ones it finishes), so short episodes
    are not over-represented, as they would be by keeping the first episodes to end. A vector env is not reset by
    ``reset()`` once it ran (its sub-envs may be mid-episode), so each sub-env's first, partial episode is played out
    and not counted.

    :param trainer: a trainer with one agent (its ``_act`` picks the actions).
    :param env: the wrapped environment to play (the training env, or a separate evaluation env).
    :param num_episodes: how many episodes to play.
    :param max_timesteps: a bound on interaction steps, so a policy that never ends an episode cannot hang.
    :return: the episodes' undiscounted returns and their lengths, in the same order.
    :raises RuntimeError: fewer than ``num_episodes`` episodes ended within ``max_timesteps`` steps.
    """
    agent = trainer._agent_list[0]
    num_envs = env.num_envs
    per_env = -(-num_episodes // num_envs)
    previous_mode = agent.training
    agent.set_running_mode("eval")
    returns: List[List[float]] = [[] for _ in range(num_envs)]
    lengths: List[List[int]] = [[] for _ in range(num_envs)]
    running = np.zeros(num_envs)
    steps = np.zeros(num_envs, dtype=np.int64)
    partial = np.full(num_envs, num_envs > 1)  # the episode each sub-env is in may have begun before
    states, _ = env.reset()
    # a recurrent agent plays with hidden states of its own, sized for this env, from zeros; training's are kept
    with hidden_states_apart(agent, num_envs):
        try:
            for timestep in range(max_timesteps):
                with trainer._no_grad():
                    actions = trainer._act(states, timestep, trainer.timesteps, evaluate=True)
                    next_states, rewards, terminated, truncated, _ = env.step(actions)
                    agent._advance_carried_state(terminated, truncated)  # a recurrent agent's hidden states move on
                running += trainer._to_numpy(rewards).reshape(-1)
                steps += 1
                done = (trainer._to_numpy(terminated) | trainer._to_numpy(truncated)).reshape(-1).astype(bool)
                for index in np.nonzero(done & ~partial)[0]:
                    returns[index].append(float(running[index]))
                    lengths[index].append(int(steps[index]))
                partial[done] = False
                running[done] = 0.0
                steps[done] = 0
                if all(len(env_returns) >= per_env for env_returns in returns):
                    flat_returns = [value for env_returns in returns for value in env_returns[:per_env]]
                    flat_lengths = [value for env_lengths in lengths for value in env_lengths[:per_env]]
                    return flat_returns[:num_episodes], flat_lengths[:num_episodes]
                if num_envs == 1 and done[0]:  # a vector env resets its sub-envs itself
                    with trainer._no_grad():
                        next_states, _ = env.reset()
                states = next_states
        finally:
            agent.set_running_mode("train" if previous_mode else "eval")
    finished = sum(len(env_returns) for env_returns in returns)
    raise RuntimeError(f"Only {finished} of {num_episodes} episodes ended within {max_timesteps} steps")


class _AttributeSnapshot:
    """The attributes of some objects as they are now, to rebind the ones a piece of code rebinds.

    Acting state is held in attributes that acting rebinds (a JAX agent's ``_key``, a noise's ``state`` or draw
    count, a JAX model's key counter, the ``tracking_data`` the trainer swaps out); attributes added meanwhile (e.g.
    a lazily compiled function) are kept.
    """

    def __init__(self, objects: Iterable[Any]) -> None:
        self.saved = [(obj, dict(vars(obj))) for obj in objects if hasattr(obj, "__dict__")]

    def restore(self) -> None:
        for obj, attributes in self.saved:
            current = vars(obj)
            for name, value in attributes.items():
                if current.get(name, _MISSING) is not value:
                    object.__setattr__(obj, name, value)  # flax modules refuse plain setattr after construction


_MISSING = object()


def acting_state_owners(agent: Any) -> List[Any]:
    """The agent, its models and its exploration noise: the objects whose attributes acting may rebind."""
    owners = [agent, *(model for model in getattr(agent, "models", {}).values() if model is not None)]
    exploration = (getattr(agent, "cfg", None) or {}).get("exploration")
    noise = exploration.get("noise") if isinstance(exploration, dict) else None
    if noise is not None:
        owners.append(noise)
    return owners


class Evaluation:
    """Evaluation every ``interval`` timesteps of training, on a separate environment.

    The trainer calls :meth:`run` right before the agent writes the results of a write interval whose timestep is a
    multiple of ``interval`` (so after that step's update: the evaluated policy is the one the row describes); the
    results are tracked on the agent as ``Evaluation / Total reward (mean|min|max)`` and
    ``Evaluation / Episode length (mean)`` and so go to TensorBoard and into that interval's results row.

    :param trainer: the trainer (single agent, single-agent environment).
    :param env: the wrapped evaluation environment (``evaluation_env``), never the training one.
    :param interval: timesteps between evaluations (a multiple of the agent's write interval).
    :param episodes: episodes per evaluation.
    """

    def __init__(self, trainer: Any, env: Any, interval: int, episodes: int) -> None:
        self.trainer = trainer
        self.env = env
        self.interval = interval
        self.episodes = episodes
        #: the latest evaluation's results (``None`` before the first): ``timestep``, ``returns``, ``lengths``
        self.last_results: Optional[Dict[str, Any]] = None
        #: the timestep of the evaluation with the highest mean return so far (the run's best checkpoint), and it
        self.best_timestep: Optional[int] = None
        self.best_return = -np.inf

    def run_state(self) -> Dict[str, Any]:
        """What a full-state checkpoint keeps so that a resumed run evaluates as the uninterrupted one: the best
        evaluation so far (the best checkpoint is chosen against it), the latest results, and the evaluation env's
        own state (its sub-environments go on mid-episode from one evaluation to the next, with their generators),
        ``None`` where the env cannot save it (a resumed run's next evaluation then starts from a reset)."""
        env_state = None
        if getattr(type(self.env), "run_state", None) is not None:
            env_state = self.env.run_state()
        return {
            "best_timestep": self.best_timestep,
            "best_return": float(self.best_return),
            "last_results": self.last_results,
            "env": env_state,
        }

    def load_run_state(self, state: Dict[str, Any], where: str) -> None:
        """Load :meth:`run_state`'s dict (a checkpoint written before evaluation kept its env holds only the best)."""
        self.best_timestep, self.best_return = state["best_timestep"], state["best_return"]
        self.last_results = state.get("last_results")
        env_state = state.get("env")
        if env_state is not None and getattr(type(self.env), "load_run_state", None) is not None:
            self.env.load_run_state(env_state)
        else:
            logger.warning(
                f"{where} holds no state of the evaluation environment: the next evaluation starts it from a reset, "
                "so its results may differ from the uninterrupted run's"
            )

    def due(self, timestep: int) -> bool:
        return timestep % self.interval == 0

    def run(self, timestep: int) -> Dict[str, Any]:
        """Play :attr:`episodes` episodes with the training run's random and acting state left untouched; track
        and return their statistics."""
        trainer = self.trainer
        agent = trainer._agent_list[0]
        random_state = trainer._random_state()
        snapshot = _AttributeSnapshot(acting_state_owners(agent))
        agent.tracking_data = type(agent.tracking_data)(list)  # what acting tracks (e.g. noise) is not training's
        try:
            returns, lengths = play_episodes(trainer, self.env, self.episodes)
        finally:
            snapshot.restore()
            trainer._set_random_state(random_state)
        results = {
            "Evaluation / Total reward (mean)": float(np.mean(returns)),
            "Evaluation / Total reward (min)": float(np.min(returns)),
            "Evaluation / Total reward (max)": float(np.max(returns)),
            "Evaluation / Episode length (mean)": float(np.mean(lengths)),
        }
        for tag, value in results.items():
            agent.track_data(tag, value)
        self.last_results = {"timestep": timestep, "returns": returns, "lengths": lengths, **results}
        if results["Evaluation / Total reward (mean)"] > self.best_return:
            self.best_return = results["Evaluation / Total reward (mean)"]
            self.best_timestep = timestep
        return self.last_results
