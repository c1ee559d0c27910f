"""Isaac Lab-shaped PPO throughput: torch or JAX PPO through the Runner on ``skrl_like.envs.IsaacLabStandInEnv``
(60 observations, 8 actions: Isaac Lab's Ant) wrapped by ``wrap_env(env, wrapper="isaaclab")``, no user-written
wrapper, with Isaac Lab 2.3's Ant PPO settings (rollouts 16, 8 epochs of 4 mini-batches, [256, 128, 64] ELU
networks, ``RunningStandardScaler``, ``KLAdaptiveLR``).

    .venv/bin/python benchmarks/isaaclab_standin_ppo.py --backend torch --num-envs 1024 --timesteps 64
    .venv/bin/python benchmarks/isaaclab_standin_ppo.py --backend torch --num-envs 4096 --device cuda:0

Prints ONE JSON line: the settings, ``env_steps_per_second`` over the whole run (environment steps, i.e. trainer
steps times ``num_envs``, including the updates and the first compilation in JAX), the wall time, and the last
write's mean step reward.
"""

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


def config(timesteps: int, directory: str) -> dict:
    network = [{"name": "net", "input": "STATES", "layers": [256, 128, 64], "activations": "elu"}]
    return {
        "seed": 42,
        "models": {
            "separate": False,
            "policy": {
                "class": "GaussianMixin",
                "clip_actions": False,
                "clip_log_std": True,
                "min_log_std": -20.0,
                "max_log_std": 2.0,
                "initial_log_std": 0.0,
                "network": network,
                "output": "ACTIONS",
            },
            "value": {"class": "DeterministicMixin", "clip_actions": False, "network": network, "output": "ONE"},
        },
        "memory": {"class": "RandomMemory", "memory_size": -1},
        "agent": {
            "class": "PPO",
            "rollouts": 16,
            "learning_epochs": 8,
            "mini_batches": 4,
            "discount_factor": 0.99,
            "lambda": 0.95,
            "learning_rate": 3.0e-04,
            "learning_rate_scheduler": "KLAdaptiveLR",
            "learning_rate_scheduler_kwargs": {"kl_threshold": 0.008},
            "state_preprocessor": "RunningStandardScaler",
            "state_preprocessor_kwargs": None,
            "value_preprocessor": "RunningStandardScaler",
            "value_preprocessor_kwargs": None,
            "grad_norm_clip": 1.0,
            "ratio_clip": 0.2,
            "value_clip": 0.2,
            "clip_predicted_values": True,
            "entropy_loss_scale": 0.0,
            "value_loss_scale": 1.0,
            "rewards_shaper_scale": 0.6,
            "time_limit_bootstrap": False,
            "experiment": {"directory": directory, "write_interval": 16, "checkpoint_interval": 0},
        },
        "trainer": {
            "class": "SequentialTrainer",
            "timesteps": timesteps,
            "environment_info": "log",
            "disable_progressbar": True,
            "close_environment_at_exit": False,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["torch", "jax"], default="torch")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--timesteps", type=int, default=64, help="trainer steps (16 per update)")
    parser.add_argument("--device", default="cpu", help="the env's device (and the torch agent's)")
    args = parser.parse_args()

    from skrl_like.envs import IsaacLabStandInEnv

    if args.backend == "torch":
        from skrl_like.torch.envs.wrappers import wrap_env
        from skrl_like.torch.utils.runner import Runner
    else:
        from skrl_like import config as skrl_config
        from skrl_like.jax.envs.wrappers import wrap_env
        from skrl_like.jax.utils.runner import Runner

        skrl_config.jax.backend = "jax"

    env = wrap_env(IsaacLabStandInEnv(num_envs=args.num_envs, device=args.device), wrapper="isaaclab", verbose=False)
    with tempfile.TemporaryDirectory() as directory:
        runner = Runner(env, config(args.timesteps, directory))
        rows = []
        runner.agent.result_listeners.append(rows.append)
        start = time.perf_counter()
        runner.run("train")
        seconds = time.perf_counter() - start
    result = {
        "benchmark": "isaaclab_standin_ppo",
        "backend": args.backend,
        "device": args.device,
        "num_envs": args.num_envs,
        "timesteps": args.timesteps,
        "seconds": round(seconds, 2),
        "env_steps_per_second": round(args.timesteps * args.num_envs / seconds),
        "last_mean_step_reward": rows[-1].get("Reward / Instantaneous reward (mean)") if rows else None,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
