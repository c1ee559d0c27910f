"""Learning quality of the recurrent agents (issue 29): a task that needs memory, one seed per run, one JSON line.

    .venv/bin/python benchmarks/rnn_learning.py --backend torch --agent PPO --cell GRU --seed 0
    .venv/bin/python benchmarks/rnn_learning.py --backend torch --agent PPO --cell none --seed 0   # feedforward
    .venv/bin/python benchmarks/rnn_learning.py --backend torch --agent SAC --env pendulum --cell GRU --seed 0

Tasks (the velocities masked, so a feedforward policy cannot tell which way the system moves):

- ``cartpole``: CartPole-v1 observing only ``[x, theta]`` (the cart and pole velocities dropped).
- ``pendulum``: Pendulum-v1 with the angular velocity reading 0 (skrl's PendulumNoVel wrapper, as
  examples/torch/ppo_rnn_pendulumnovel.py).

The agent is built by the ``Runner`` from one backend-neutral configuration (:func:`runner_cfg`), so both backends and
every agent read the same network definition: with ``--cell GRU``/``LSTM`` the models start with a recurrent
container of ``--hidden`` units and the Runner builds the ``_RNN`` agent; ``--cell none`` replaces it with a
feedforward layer of the same width (the control). The env is seeded once (``reset(seed=seed)``); the return is the
mean of 20 episodes with exploration off (``Trainer.evaluate_episodes``: argmax / the mean action, hidden states
carried through each episode). The printed line holds every setting, so a figure in docs/benchmarks.md can be rerun
from it.
"""

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import gymnasium
import numpy as np

ON_POLICY = ("PPO", "A2C", "RPO", "TRPO")
OFF_POLICY = ("SAC", "TD3", "DDPG")
ENVS = {"cartpole": "CartPole-v1", "pendulum": "Pendulum-v1"}
RETURN_TAG = "Reward / Total reward (mean)"


class CartPoleNoVelocity(gymnasium.ObservationWrapper):
    """CartPole's observation ``[x, x_dot, theta, theta_dot]`` reduced to ``[x, theta]``."""

    KEPT = np.array([0, 2])

    def __init__(self, env):
        super().__init__(env)
        space = env.observation_space
        self.observation_space = gymnasium.spaces.Box(space.low[self.KEPT], space.high[self.KEPT], dtype=space.dtype)

    def observation(self, observation):
        return observation[self.KEPT]


class PendulumNoVelocity(gymnasium.ObservationWrapper):
    """Pendulum's observation ``(cos, sin, angular velocity)`` with the velocity set to 0 (skrl's PendulumNoVel)."""

    def observation(self, observation):
        return observation * np.array([1.0, 1.0, 0.0], dtype=observation.dtype)


def make_masked_env(env: str, num_envs: int, masked: bool = True, same_step_autoreset: bool = False):
    """The sync vector env of ``num_envs`` masked envs. ``same_step_autoreset``: gymnasium's same-step autoreset
    and Discrete actions taken as ``(num_envs, 1)`` too, the layout skrl 1.4.3 assumes (benchmarks/rnn_speed.py)."""
    wrapper = CartPoleNoVelocity if env == "cartpole" else PendulumNoVelocity
    make = (lambda: wrapper(gymnasium.make(ENVS[env]))) if masked else (lambda: gymnasium.make(ENVS[env]))
    if not same_step_autoreset:
        return gymnasium.vector.SyncVectorEnv([make] * num_envs)
    from configs import SqueezeDiscreteActions

    vector = gymnasium.vector.SyncVectorEnv([make] * num_envs, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    return SqueezeDiscreteActions(vector) if env == "cartpole" else vector


def trunk(args) -> list:
    """The models' shared form: a recurrent container (or a feedforward layer as wide) then a ``--mlp`` layer."""
    if args.cell == "none":
        first = {"name": "trunk", "input": "OBSERVATIONS", "layers": [args.hidden], "activations": args.activation}
    else:
        first = {
            "name": "trunk",
            "input": "OBSERVATIONS",
            "type": args.cell,
            "layers": [args.hidden],
            "sequence_length": args.sequence_length,
        }
    return [first, {"name": "mlp", "input": "trunk", "layers": [args.mlp], "activations": args.activation}]


def runner_cfg(args, timesteps: int, directory: str) -> dict:
    """The Runner configuration of one run (skrl 1.4's YAML layout, as a dict); tracking rows are written 10 times
    a run under ``directory`` (for the training curve), no checkpoints."""
    no_files = {"directory": directory, "write_interval": max(1, timesteps // 10), "checkpoint_interval": 0}
    trainer = {"class": "SequentialTrainer", "timesteps": timesteps, "headless": True, "disable_progressbar": True}
    if args.agent in ON_POLICY:
        discrete = args.env == "cartpole"
        if discrete:
            policy = {"class": "CategoricalMixin", "unnormalized_log_prob": True, "output": "ACTIONS"}
        else:  # Pendulum's torque in [-2, 2], as examples/torch/ppo_rnn_pendulumnovel.py
            policy = {"class": "GaussianMixin", "clip_actions": True, "output": "2 * tanh(ACTIONS)"}
        models = {
            "separate": True,
            "policy": {**policy, "network": trunk(args)},
            "value": {"class": "DeterministicMixin", "network": trunk(args), "output": "ONE"},
        }
        agent = {
            "class": args.agent,
            "rollouts": args.rollouts,
            "learning_epochs": args.epochs,
            "mini_batches": args.mini_batches,
            "discount_factor": args.gamma,
            "lambda": args.gae_lambda,
            "learning_rate": args.lr,
            "grad_norm_clip": 0.5,
            "value_loss_scale": 0.5,
            "entropy_loss_scale": args.entropy,
            "state_preprocessor": "RunningStandardScaler" if args.scale else None,
            "value_preprocessor": "RunningStandardScaler" if args.scale else None,
            "experiment": no_files,
        }
        if args.kl_adaptive:
            agent["learning_rate_scheduler"] = "KLAdaptiveLR"
            agent["learning_rate_scheduler_kwargs"] = {"kl_threshold": args.kl_adaptive}
        if args.agent == "TRPO":  # a trust-region policy step: no policy learning rate, no entropy term
            agent.pop("learning_rate")
            agent.pop("entropy_loss_scale")
            agent["value_learning_rate"] = args.lr
        if args.agent == "A2C":
            agent.pop("learning_epochs")
            agent.pop("value_loss_scale")
        memory = {"class": "RandomMemory", "memory_size": -1}
    else:  # SAC, TD3, DDPG: skrl 1.4.3's PendulumNoVel examples (discount 0.98, batch 100, learning_starts 1000)
        critic = trunk(args)
        critic[1] = {**critic[1], "input": "concatenate([trunk, ACTIONS])"}
        if args.agent == "SAC":
            policy = {"class": "GaussianMixin", "clip_actions": True, "network": trunk(args), "output": "2 * tanh(ACTIONS)"}
            models = {"policy": policy}
            critics = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
        else:
            policy = {"class": "DeterministicMixin", "network": trunk(args), "output": "2 * tanh(ACTIONS)"}
            models = {"policy": policy, "target_policy": policy}
            critics = ("critic", "target_critic") if args.agent == "DDPG" else ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
        models["separate"] = True
        for role in critics:
            models[role] = {"class": "DeterministicMixin", "network": critic, "output": "ONE"}
        # skrl's feedforward TD3 and DDPG examples take 1000 uniform random steps, its recurrent ones none
        random_steps = 1000 if args.cell == "none" and args.agent != "SAC" else 0
        agent = {
            "class": args.agent,
            "discount_factor": 0.98,
            "batch_size": args.batch_size,
            "random_timesteps": random_steps if args.random_timesteps is None else args.random_timesteps,
            "learning_starts": args.learning_starts,
            "experiment": no_files,
        }
        decay = {"initial_scale": 1.0, "final_scale": 1e-3, "timesteps": None}  # the defaults skrl's examples keep
        if args.agent == "SAC":
            agent["learn_entropy"] = True
        elif args.agent == "TD3":
            agent["exploration"] = {**decay, "noise": "GaussianNoise", "noise_kwargs": {"mean": 0.0, "std": 0.1}}
            agent["smooth_regularization_noise"] = "GaussianNoise"
            agent["smooth_regularization_noise_kwargs"] = {"mean": 0.0, "std": 0.2}
            agent["smooth_regularization_clip"] = 0.5
        else:
            noise = {"theta": 0.15, "sigma": 0.1, "base_scale": 1.0}
            agent["exploration"] = {**decay, "noise": "OrnsteinUhlenbeckNoise", "noise_kwargs": noise}
        memory = {"class": "RandomMemory", "memory_size": args.memory_size}
    return {"seed": args.seed, "models": models, "memory": memory, "agent": agent, "trainer": trainer}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("torch", "jax"), default="torch")
    parser.add_argument("--agent", choices=ON_POLICY + OFF_POLICY, default="PPO")
    parser.add_argument("--env", choices=sorted(ENVS), default="cartpole")
    parser.add_argument("--cell", choices=("GRU", "LSTM", "none"), default="GRU", help="none: feedforward control")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--unmasked", action="store_true", help="diagnostic: observe the velocities too")
    parser.add_argument("--timesteps", type=int, default=100_000, help="env steps in total (all envs)")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=64, help="recurrent (or control) layer width")
    parser.add_argument("--mlp", type=int, default=64, help="width of the layer after it")
    parser.add_argument("--activation", default="relu")
    parser.add_argument("--sequence-length", type=int, default=32)
    parser.add_argument("--rollouts", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--mini-batches", type=int, default=1)
    parser.add_argument("--gamma", type=float, default=0.98)
    parser.add_argument("--gae-lambda", type=float, default=0.8)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--entropy", type=float, default=0.0)
    parser.add_argument("--scale", action="store_true", help="RunningStandardScaler on states and values")
    parser.add_argument("--kl-adaptive", type=float, default=0.0, help="KLAdaptiveLR's kl_threshold (0: constant)")
    parser.add_argument("--batch-size", type=int, default=100, help="off-policy: sequences (or transitions) per step")
    parser.add_argument("--memory-size", type=int, default=20_000, help="off-policy: replay memory per env")
    parser.add_argument("--learning-starts", type=int, default=1000, help="off-policy: steps before the first update")
    parser.add_argument(
        "--random-timesteps", type=int, default=None, help="off-policy: uniform random steps (default: skrl's example's)"
    )
    args = parser.parse_args()

    from skrl_like import logger

    logger.setLevel("ERROR")
    if args.backend == "torch":
        import torch

        torch.set_num_threads(1)
        from skrl_like.torch.envs.wrappers import wrap_env
        from skrl_like.torch.utils.runner import Runner
    else:
        from skrl_like.jax.envs.wrappers import wrap_env
        from skrl_like.jax.utils.runner import Runner

    env = wrap_env(make_masked_env(args.env, args.num_envs, not args.unmasked), verbose=False)
    env._env.reset(seed=args.seed)
    vector_steps = args.timesteps // args.num_envs
    curve = []  # (env steps, mean training return of the episodes ended since the previous row)
    with tempfile.TemporaryDirectory() as directory:
        runner = Runner(env, runner_cfg(args, vector_steps, directory))
        runner.agent.add_result_listener(lambda row: curve.append((row["env_steps"], row.get(RETURN_TAG))))
        start = time.perf_counter()
        runner.trainer.train()
        seconds = time.perf_counter() - start
        returns = runner.trainer.evaluate_episodes(num_episodes=20)
    result = {
        "library": "skrl_like",
        "backend": args.backend,
        "agent": type(runner.agent).__name__,
        "env": ENVS[args.env] + ("" if args.unmasked else " (velocities masked)"),
        "cell": args.cell,
        "seed": args.seed,
        "timesteps": vector_steps * args.num_envs,
        "seconds": round(seconds, 2),
        "eval_return": round(float(np.mean(returns)), 2),
        "training_curve": [[steps, None if value is None else round(value, 1)] for steps, value in curve],
        "settings": {key: value for key, value in vars(args).items() if key not in ("seed", "backend")},
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
