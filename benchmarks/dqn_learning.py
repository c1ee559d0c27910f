"""Learning quality: skrl_like DQN / DDQN on CartPole-v1 with the examples' hyperparameters, one seed per run,
one JSON line.

    .venv/bin/python benchmarks/dqn_learning.py --backend torch --algorithm DQN --seed 0     # 100k env steps
    .venv/bin/python benchmarks/dqn_learning.py --backend jax --algorithm DDQN --seed 0 --timesteps 2000

The agent comes from examples/<backend>/dqn_cartpole.py (``make_agent``, ``HYPERPARAMETERS`` and
``DDQN_HYPERPARAMETERS``, written once there), so the figures in docs/benchmarks.md are those of the documented
configuration. One environment, seeded once (``reset(seed=seed)``); the final return is the mean of 20 greedy
episodes (``Trainer.evaluate_episodes``, which plays the agent's ``mean_actions``: exploration off).
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
ENVS = {"cartpole": ("CartPole-v1", 100_000)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("torch", "jax"), required=True)
    parser.add_argument("--algorithm", choices=("DQN", "DDQN"), default="DQN")
    parser.add_argument("--env", choices=sorted(ENVS), default="cartpole")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=None, help="env steps in total (default 100k)")
    args = parser.parse_args()
    env_id, default_timesteps = ENVS[args.env]
    timesteps = args.timesteps or default_timesteps

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
    path = ROOT / "examples" / args.backend / f"dqn_{args.env}.py"
    spec = importlib.util.spec_from_file_location("example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    set_seed(args.seed)
    env = wrap_env(gymnasium.make(env_id), verbose=False)
    env._env.reset(seed=args.seed)
    agent = example.make_agent(env, args.algorithm, experiment={"write_interval": 0, "checkpoint_interval": 0})
    trainer = SequentialTrainer(
        env=env, agents=agent, cfg={"timesteps": timesteps, "headless": True, "disable_progressbar": True}
    )
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    returns = trainer.evaluate_episodes(num_episodes=20)
    result = {
        "library": "skrl_like",
        "backend": args.backend,
        "algorithm": args.algorithm,
        "env": env_id,
        "seed": args.seed,
        "timesteps": timesteps,
        "seconds": round(seconds, 2),
        "env_steps_per_s": round(timesteps / seconds, 1),
        "eval_return": round(float(sum(returns) / len(returns)), 2),
        "hyperparameters": example.HYPERPARAMETERS if args.algorithm == "DQN" else example.DDQN_HYPERPARAMETERS,
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
