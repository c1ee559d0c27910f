"""Shared by the Isaac Lab-shaped PPO entries (issue 28): Isaac Lab's Ant skrl config, the stand-in env loaded by
path, and the one-JSON-line result every entry prints.

Every entry (``isaaclab_standin_ppo.py`` for skrl_like, ``torch_ppo_floor.py`` for plain torch, ``peers/skrl_isaaclab_
ppo.py`` for skrl 1.4.3 / 2.1.1, ``peers/rsl_rl_isaaclab_ppo.py`` for rsl_rl) imports this module only: no skrl_like
import, so the peers' venvs (torch + gymnasium + the peer library) can use it.

``ANT_AGENT`` holds the values of Isaac Lab's
``source/isaaclab_tasks/isaaclab_tasks/manager_based/classic/ant/agents/skrl_ppo_cfg.yaml`` (read at IsaacLab commit
39a7f586fd6d6d0c4e6528c8130823a9beaea38c): rollouts 16, 4 learning epochs of 2 mini-batches, lr 3e-4 with
``KLAdaptiveLR(kl_threshold=0.008)``, ``RunningStandardScaler`` on states and values, grad-norm clip 1.0, ratio and
value clip 0.2 (predicted values clipped), no entropy loss, value loss scale 1.0, rewards scaled by 0.6, no
time-limit bootstrap; the models: a Gaussian policy (log std initialised at 0, clipped to [-20, 2], actions not
clipped) and a deterministic value, both ``[256, 128, 64]`` ELU on the states, shared (``separate: False``).
"""

import importlib.util
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

HIDDEN = [256, 128, 64]
ANT_AGENT = {
    "rollouts": 16,
    "learning_epochs": 4,
    "mini_batches": 2,
    "discount_factor": 0.99,
    "lambda": 0.95,
    "learning_rate": 3.0e-04,
    "kl_threshold_lr": 0.008,  # KLAdaptiveLR's kl_threshold
    "grad_norm_clip": 1.0,
    "ratio_clip": 0.2,
    "value_clip": 0.2,
    "clip_predicted_values": True,
    "entropy_loss_scale": 0.0,
    "value_loss_scale": 1.0,
    "rewards_shaper_scale": 0.6,
    "initial_log_std": 0.0,
    "min_log_std": -20.0,
    "max_log_std": 2.0,
}


def load_standin():
    """``IsaacLabStandInEnv`` from ``skrl_like/envs/isaaclab_standin.py`` by path (needs torch and gymnasium only)."""
    path = os.path.join(ROOT, "skrl_like", "envs", "isaaclab_standin.py")
    spec = importlib.util.spec_from_file_location("isaaclab_standin", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["isaaclab_standin"] = module
    spec.loader.exec_module(module)
    return module.IsaacLabStandInEnv


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def add_arguments(parser) -> None:
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--timesteps", type=int, default=64, help="env steps per sub-env (16 per update)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--separate", action="store_true", help="separate policy and value networks")
    parser.add_argument("--device", default="cpu")


def report(library: str, version: str, args, seconds: float, **extra) -> None:
    """Print the one JSON line of an entry."""
    import torch

    line = {
        "benchmark": "isaaclab_standin_ppo",
        "library": library,
        "version": version,
        "commit": commit(),
        "seed": args.seed,
        "num_envs": args.num_envs,
        "timesteps": args.timesteps,
        "separate": bool(args.separate),
        "device": args.device,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "seconds": round(seconds, 3),
        "env_steps_per_second": round(args.timesteps * args.num_envs / seconds),
        "config": {"hidden": HIDDEN, "activation": "elu", **ANT_AGENT},
    }
    line.update(extra)
    print(json.dumps(line), flush=True)
