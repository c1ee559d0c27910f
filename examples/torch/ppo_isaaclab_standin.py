"""Train PPO through the Runner on the Isaac Lab stand-in env, the way Isaac Lab's skrl train script does, without
Isaac Sim.

The config has the layout of Isaac Lab 2.3's skrl files (``agents/skrl_ppo_cfg.yaml``): one shared model with
``STATES``/``OBSERVATIONS`` inputs, ``RunningStandardScaler`` preprocessors, ``KLAdaptiveLR``, ``write_interval: auto``
and ``environment_info: log``. The env is wrapped as Isaac Lab's ``SkrlVecEnvWrapper`` would wrap a real task
(``wrap_env(env, wrapper="isaaclab")``); the observations stay torch tensors on ``--device`` for the whole run.
The mean step reward rises from about 0.27 to about 0.63 in 2,000 steps of 64 envs (docs/gpu-simulators.md).
Run: python examples/torch/ppo_isaaclab_standin.py [--timesteps 2000] [--num-envs 64] [--device cpu]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

from skrl_like.envs import IsaacLabStandInEnv
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.utils.runner import Runner

# what Isaac Lab's train script loads with load_cfg_from_registry(task, "skrl_cfg_entry_point"), smaller networks
CFG = {
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
            "network": [{"name": "net", "input": "OBSERVATIONS", "layers": [64, 64], "activations": "elu"}],
            "output": "ACTIONS",
        },
        "value": {
            "class": "DeterministicMixin",
            "clip_actions": False,
            "network": [{"name": "net", "input": "STATES", "layers": [64, 64], "activations": "elu"}],
            "output": "ONE",
        },
    },
    "memory": {"class": "RandomMemory", "memory_size": -1},
    "agent": {
        "class": "PPO",
        "rollouts": 16,
        "learning_epochs": 8,
        "mini_batches": 4,
        "discount_factor": 0.99,
        "lambda": 0.95,
        "learning_rate": 1.0e-03,
        "learning_rate_scheduler": "KLAdaptiveLR",
        "learning_rate_scheduler_kwargs": {"kl_threshold": 0.008},
        "state_preprocessor": "RunningStandardScaler",
        "state_preprocessor_kwargs": None,
        "value_preprocessor": "RunningStandardScaler",
        "value_preprocessor_kwargs": None,
        "random_timesteps": 0,
        "learning_starts": 0,
        "grad_norm_clip": 1.0,
        "ratio_clip": 0.2,
        "value_clip": 0.2,
        "clip_predicted_values": True,
        "entropy_loss_scale": 0.0,
        "value_loss_scale": 1.0,
        "kl_threshold": 0.0,
        "rewards_shaper_scale": 1.0,
        "time_limit_bootstrap": False,
        "experiment": {
            "directory": "runs/torch/isaaclab_standin",
            "experiment_name": "",
            "write_interval": "auto",
            "checkpoint_interval": "auto",
        },
    },
    "trainer": {"class": "SequentialTrainer", "timesteps": 2000, "environment_info": "log"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=2000)
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--device", default="cpu", help="where the env's tensors (and the agent) live")
    args = parser.parse_args()

    env = wrap_env(IsaacLabStandInEnv(num_envs=args.num_envs, device=args.device), wrapper="isaaclab")
    CFG["trainer"].update(timesteps=args.timesteps, close_environment_at_exit=False)
    runner = Runner(env, CFG)
    rows = []
    runner.agent.result_listeners.append(rows.append)
    runner.run("train")
    env.close()
    key = "Reward / Instantaneous reward (mean)"
    print(f"Mean step reward: first write {rows[0][key]:.3f}, last write {rows[-1][key]:.3f}")
    print(f"Run directory: {runner.agent.experiment_dir}")


if __name__ == "__main__":
    main()
