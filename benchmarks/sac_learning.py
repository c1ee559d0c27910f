"""Learning quality: skrl_like SAC with the examples' hyperparameters, one seed per run, one JSON line.

    .venv/bin/python benchmarks/sac_learning.py --backend torch --seed 0      # Pendulum-v1, 15k steps (skrl's)
    .venv/bin/python benchmarks/sac_learning.py --backend jax --seed 0 --timesteps 20000

The agent comes from examples/<backend>/sac_pendulum.py (``make_agent``; its hyperparameters, skrl's own Pendulum
SAC example's: ``SAC_CFG``, ``HIDDEN``, ``MEMORY_SIZE`` and ``TIMESTEPS``, are written once there and printed here), so
the figures in docs/benchmarks.md are those of the documented configuration. Issue 11's bar: a mean return >= -200 within 20k env steps, 4 of 5 seeds.
The env is seeded once (``reset(seed=seed)``); the return is the mean of 20 episodes with exploration off
(``Trainer.evaluate_episodes``: the policy's mean action).
"""

import argparse
import importlib.util
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

ROOT = Path(__file__).resolve().parents[1]
ENVS = {"pendulum": ("Pendulum-v1", 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("torch", "jax"), required=True)
    parser.add_argument("--env", choices=sorted(ENVS), default="pendulum")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=None, help="env steps in total (default: the example's)")
    args = parser.parse_args()
    env_id, num_envs = ENVS[args.env]

    import gymnasium

    from skrl_like import logger
    from skrl_like.utils import set_seed

    logger.setLevel("ERROR")
    if args.backend == "torch":
        import torch

        torch.set_num_threads(1)
        from skrl_like.torch.envs.wrappers import wrap_env
        from skrl_like.torch.trainers import SequentialTrainer
    else:
        from skrl_like.jax.envs.wrappers import wrap_env
        from skrl_like.jax.trainers import SequentialTrainer
    path = ROOT / "examples" / args.backend / f"sac_{args.env}.py"
    spec = importlib.util.spec_from_file_location("example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    timesteps = args.timesteps or example.TIMESTEPS

    set_seed(args.seed)
    env = wrap_env(gymnasium.make(env_id), verbose=False)
    env._env.reset(seed=args.seed)
    agent = example.make_agent(env, experiment={"write_interval": 0, "checkpoint_interval": 0})
    trainer = SequentialTrainer(
        env=env, agents=agent, cfg={"timesteps": timesteps // num_envs, "headless": True, "disable_progressbar": True}
    )
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    returns = trainer.evaluate_episodes(num_episodes=20)
    result = {
        "library": "skrl_like",
        "backend": args.backend,
        "algorithm": "SAC",
        "env": env_id,
        "seed": args.seed,
        "timesteps": timesteps,
        "seconds": round(seconds, 2),
        "env_steps_per_s": round(timesteps / seconds, 1),
        "eval_return": round(float(sum(returns) / len(returns)), 2),
        "hyperparameters": {
            **{key: value for key, value in agent.cfg.items() if isinstance(value, (bool, int, float, type(None)))},
            "hidden": list(example.HIDDEN),
            "memory_size": example.MEMORY_SIZE,
        },
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
