"""Benchmark peer: stable-baselines3 PPO on CartPole-v1, same env construction as every other script.

Run with the torch peer venv (see benchmarks/setup_peers.sh):
    /work/bench_venvs/torch/bin/python benchmarks/peers/sb3_ppo_cartpole.py --config cleanrl --seed 0

SB3 cannot take a gymnasium vector env directly, so :class:`GymnasiumVecEnvAdapter` exposes the exact env
built by ``configs.make_env`` (gymnasium sync vector env, same-step autoreset) through SB3's ``VecEnv``
interface: no DummyVecEnv, no Monitor. Hyperparameters come from ``configs.sb3_ppo_kwargs``.
Truncation is bootstrapped only if ``time_limit_bootstrap`` is True in the config (it is False, like
skrl's default), by passing ``TimeLimit.truncated`` in the step infos.

Prints exactly one JSON line. ``seconds`` is the wall time of ``PPO.learn()`` only.
"""

import os

os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/

import numpy as np  # noqa: E402
import torch  # noqa: E402
from common import Timer, emit, evaluate, parse_args  # noqa: E402
from configs import CONFIGS, make_env, plan, sb3_ppo_kwargs  # noqa: E402

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env.base_vec_env import VecEnv  # noqa: E402


class GymnasiumVecEnvAdapter(VecEnv):
    """SB3 ``VecEnv`` view of a gymnasium (>= 1.0) vector env created with SAME_STEP autoreset."""

    def __init__(self, venv, bootstrap_truncation: bool = False):
        self.venv = venv
        self.bootstrap_truncation = bootstrap_truncation
        self._actions = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    # -- core
    def reset(self):
        seed = self._seeds[0]  # SB3's seed(s) -> [s, s+1, ...]; gymnasium vector reset(seed=s) does the same
        obs, infos = self.venv.reset(seed=seed)
        self._reset_seeds()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions):
        self._actions = actions

    def step_wait(self):
        obs, rewards, terminated, truncated, infos = self.venv.step(self._actions)
        dones = np.logical_or(terminated, truncated)
        out_infos = [{} for _ in range(self.num_envs)]
        if dones.any():
            final_obs = infos["final_obs"]
            for i in np.flatnonzero(dones):
                out_infos[i]["terminal_observation"] = final_obs[i]
                out_infos[i]["TimeLimit.truncated"] = bool(
                    self.bootstrap_truncation and truncated[i] and not terminated[i]
                )
        return obs, rewards.astype(np.float32), dones, out_infos

    def close(self):
        self.venv.close()

    # -- attribute plumbing required by the VecEnv ABC
    def get_attr(self, attr_name, indices=None):
        if attr_name == "render_mode":
            return [None for _ in self._get_indices(indices)]
        values = self.venv.get_attr(attr_name)
        return [values[i] for i in self._get_indices(indices)]

    def set_attr(self, attr_name, value, indices=None):
        self.venv.set_attr(attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        results = self.venv.call(method_name, *method_args, **method_kwargs)
        return [results[i] for i in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._get_indices(indices)]


def main() -> None:
    args = parse_args(__doc__)
    run = plan(args.config, args.timesteps)
    kwargs = sb3_ppo_kwargs(args.config)
    kwargs["policy_kwargs"]["activation_fn"] = torch.nn.Tanh

    venv = GymnasiumVecEnvAdapter(
        make_env(run["num_envs"]), bootstrap_truncation=CONFIGS[args.config]["ppo"]["time_limit_bootstrap"]
    )
    model = PPO("MlpPolicy", venv, seed=args.seed, device="cpu", verbose=0, tensorboard_log=None, **kwargs)
    with Timer() as timer:
        model.learn(total_timesteps=run["env_steps"], progress_bar=False)
    assert model.num_timesteps == run["env_steps"], (model.num_timesteps, run["env_steps"])

    final = None
    if not args.no_eval:

        def act(obs):
            return model.predict(obs, deterministic=True)[0]

        final = evaluate(act, args.seed)
    venv.close()
    emit("stable-baselines3", "torch", args.config, args.seed, run["env_steps"], timer.seconds, final)


if __name__ == "__main__":
    main()
