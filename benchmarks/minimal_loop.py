"""Baseline for "collection overhead": the smallest sensible hand-written torch collection loop.

Same env as every benchmark (configs.make_env: gymnasium sync vector CartPole-v1, same-step autoreset),
a 64x64 tanh categorical policy (configs.ARCHITECTURE) evaluated under ``torch.no_grad()``, sampling, and
writes of obs / actions / log-probs into pre-allocated ``(rollouts, num_envs, ...)`` tensors, wrapping
around every ``rollouts`` steps. No learning, no value network, no GAE. A library's PPO
``env_steps_per_s`` divided by this number bounds its collection + update overhead.

Run with any venv that has torch (main .venv or /work/bench_venvs/torch):
    .venv/bin/python benchmarks/minimal_loop.py --config cleanrl --timesteps 100000

Prints one JSON line with the common result keys (library "minimal-loop", backend "torch", timesteps =
env steps rounded up to whole rollouts, final_eval_return always null) plus num_envs.
"""

import os

os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from configs import ARCHITECTURE, CONFIGS, make_env, plan  # noqa: E402

torch.set_num_threads(1)
torch.set_num_interop_threads(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--config", choices=sorted(CONFIGS), default="cleanrl", help="takes num_envs and rollouts from this config"
    )
    parser.add_argument("--num-envs", type=int, default=None, help="override the config's num_envs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=100_000, help="env steps summed over sub-envs")
    parser.add_argument("--no-eval", action="store_true", help="accepted for run_all.sh; nothing to evaluate")
    args = parser.parse_args()

    run = plan(args.config, args.timesteps)
    n = args.num_envs or run["num_envs"]
    t = run["rollouts"]
    vector_steps = -(-args.timesteps // (n * t)) * t
    torch.manual_seed(args.seed)

    env = make_env(n, seed=args.seed)
    obs_dim = env.single_observation_space.shape[0]
    num_actions = int(env.single_action_space.n)

    layers, last = [], obs_dim
    for width in ARCHITECTURE["policy"]["hidden"]:
        layers += [nn.Linear(last, width), nn.Tanh()]
        last = width
    policy = nn.Sequential(*layers, nn.Linear(last, num_actions))

    obs_buf = torch.zeros((t, n, obs_dim), dtype=torch.float32)
    act_buf = torch.zeros((t, n), dtype=torch.int64)
    logp_buf = torch.zeros((t, n), dtype=torch.float32)
    rew_buf = torch.zeros((t, n), dtype=torch.float32)
    done_buf = torch.zeros((t, n), dtype=torch.bool)

    obs_np, _ = env.reset(seed=args.seed)
    start = time.perf_counter()
    with torch.no_grad():
        for step in range(vector_steps):
            i = step % t
            obs = torch.from_numpy(obs_np).float()
            logits = policy(obs)
            dist = torch.distributions.Categorical(logits=logits)
            actions = dist.sample()
            obs_buf[i] = obs
            act_buf[i] = actions
            logp_buf[i] = dist.log_prob(actions)
            obs_np, reward, terminated, truncated, _ = env.step(actions.numpy())
            rew_buf[i] = torch.from_numpy(reward)
            done_buf[i] = torch.from_numpy(terminated | truncated)
    seconds = time.perf_counter() - start
    env.close()

    env_steps = vector_steps * n
    print(
        json.dumps(
            {
                "library": "minimal-loop",
                "backend": "torch",
                "config": args.config,
                "seed": args.seed,
                "timesteps": env_steps,
                "seconds": round(seconds, 4),
                "env_steps_per_s": round(env_steps / seconds, 2),
                "final_eval_return": None,
                "num_envs": n,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
