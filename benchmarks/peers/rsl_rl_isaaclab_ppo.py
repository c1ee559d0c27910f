"""rsl_rl's PPO (``rsl-rl-lib`` 5.x, ``OnPolicyRunner``) on the Isaac Lab-shaped benchmark of issue 28: the same
stand-in env (``skrl_like/envs/isaaclab_standin.py``, loaded by path) behind rsl_rl's ``VecEnv`` contract, the way
Isaac Lab's ``RslRlVecEnvWrapper`` presents an Isaac Lab env (observation groups as a ``TensorDict``, dones =
terminated or truncated, ``extras["time_outs"]`` = truncated), with the Ant skrl config's values mapped onto
rsl_rl's keys: 16 steps per env, 4 epochs of 2 mini-batches, lr 3e-4 with the adaptive schedule at KL 0.008, clip
0.2, clipped value loss (coefficient 1.0), no entropy, grad-norm clip 1.0, gamma 0.99, lambda 0.95, rewards times
0.6 (in the adapter), [256, 128, 64] ELU actor and critic with empirical observation normalisation (skrl's
``RunningStandardScaler`` on the states), Gaussian std initialised at 1 (log std 0).

rsl_rl has no shared actor-critic and no value normaliser: compare it with the others' ``--separate`` runs (the
value scaler is the one piece of the config it cannot do). No log directory: rsl_rl then writes nothing.

    .bench_venv_rslrl/bin/python benchmarks/peers/rsl_rl_isaaclab_ppo.py --num-envs 4096 --timesteps 64 --seed 0

Prints ONE JSON line in ``isaaclab_ant.report``'s layout (``library: "rsl_rl"``, ``separate: true``).
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from importlib.metadata import version  # noqa: E402

import torch  # noqa: E402
from rsl_rl.env import VecEnv  # noqa: E402
from rsl_rl.runners import OnPolicyRunner  # noqa: E402
from tensordict import TensorDict  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/
from isaaclab_ant import ANT_AGENT, HIDDEN, add_arguments, load_standin, report  # noqa: E402


class StandInVecEnv(VecEnv):
    """The stand-in behind rsl_rl's ``VecEnv`` (what Isaac Lab's ``RslRlVecEnvWrapper`` does for a real env)."""

    def __init__(self, env, reward_scale: float):
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.single_action_space.shape[0]
        self.max_episode_length = env.max_episode_length
        self.device = env.device
        self.cfg = {}
        self.reward_scale = reward_scale
        self._observations, _ = env.reset()

    @property
    def episode_length_buf(self) -> torch.Tensor:
        return self.env.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self.env.episode_length_buf = value

    def get_observations(self) -> TensorDict:
        return TensorDict(dict(self._observations), batch_size=[self.num_envs])

    def step(self, actions: torch.Tensor):
        self._observations, rewards, terminated, truncated, extras = self.env.step(actions)
        extras = {**extras, "time_outs": truncated}
        dones = (terminated | truncated).long()
        return self.get_observations(), rewards * self.reward_scale, dones, extras


def train_cfg() -> dict:
    a = ANT_AGENT
    model = {"class_name": "MLPModel", "hidden_dims": list(HIDDEN), "activation": "elu", "obs_normalization": True}
    return {
        "num_steps_per_env": a["rollouts"],
        "save_interval": 10**9,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "check_for_nan": True,
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": a["learning_epochs"],
            "num_mini_batches": a["mini_batches"],
            "clip_param": a["ratio_clip"],
            "gamma": a["discount_factor"],
            "lam": a["lambda"],
            "value_loss_coef": a["value_loss_scale"],
            "entropy_coef": a["entropy_loss_scale"],
            "learning_rate": a["learning_rate"],
            "max_grad_norm": a["grad_norm_clip"],
            "use_clipped_value_loss": True,
            "schedule": "adaptive",
            "desired_kl": a["kl_threshold_lr"],
        },
        "actor": {
            **model,
            "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0, "std_type": "log"},
        },
        "critic": dict(model),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args()
    args.separate = True  # rsl_rl's actor and critic are always separate networks
    if args.timesteps % ANT_AGENT["rollouts"]:
        raise SystemExit(f"--timesteps must be a multiple of {ANT_AGENT['rollouts']} (rsl_rl runs whole iterations)")
    torch.manual_seed(args.seed)
    env = StandInVecEnv(load_standin()(num_envs=args.num_envs, device=args.device, seed=args.seed), 0.6)
    with contextlib.redirect_stdout(io.StringIO()):  # rsl_rl prints the models
        runner = OnPolicyRunner(env, train_cfg(), log_dir=None, device=args.device)
    start = time.perf_counter()
    runner.learn(num_learning_iterations=args.timesteps // ANT_AGENT["rollouts"])
    seconds = time.perf_counter() - start
    report("rsl_rl", version("rsl-rl-lib"), args, seconds)


if __name__ == "__main__":
    main()
