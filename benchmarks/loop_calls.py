"""Python function calls made by ``SequentialTrainer.train()`` (cProfile), PPO CleanRL config: a count that the
machine's load does not change, to check that a loop feature adds no per-step call when it is off.

    .venv/bin/python benchmarks/loop_calls.py --backend torch --timesteps 2048
    .venv/bin/python benchmarks/loop_calls.py --backend torch --timesteps 4096
    .venv/bin/python benchmarks/loop_calls.py --backend torch --timesteps 2048 --trainer step

``--trainer step`` counts a ``StepTrainer`` stepped once per vector step instead (``trainer.train()`` in a loop).

Run it at two lengths on two commits: the per-step cost of a change is the growth of the difference between the
commits' counts from one length to the other, divided by the added vector steps. Prints one JSON line.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/
import argparse  # noqa: E402
import cProfile  # noqa: E402
import json  # noqa: E402
import pstats  # noqa: E402

from configs import CONFIGS, SKRL_EXPERIMENT, SKRL_TRAINER_CFG, make_env, plan  # noqa: E402
from ppo_cartpole import jax_agent, torch_agent  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("torch", "jax"), required=True)
    parser.add_argument("--timesteps", type=int, default=2048, help="env steps summed over sub-envs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trainer", choices=("sequential", "step"), default="sequential")
    args = parser.parse_args()

    from skrl_like import logger
    from skrl_like.utils import set_seed

    logger.setLevel("ERROR")
    set_seed(args.seed)
    if args.backend == "torch":
        from skrl_like.torch.envs.wrappers import wrap_env
        from skrl_like.torch.trainers import SequentialTrainer, StepTrainer
    else:
        from skrl_like.jax.envs.wrappers import wrap_env
        from skrl_like.jax.trainers import SequentialTrainer, StepTrainer
    run = plan("cleanrl", args.timesteps)
    env = wrap_env(make_env(run["num_envs"], seed=args.seed), wrapper="gymnasium", verbose=False)
    ppo_cfg = {**CONFIGS["cleanrl"]["ppo"], "experiment": dict(SKRL_EXPERIMENT)}
    if args.backend == "jax":
        ppo_cfg.pop("mixed_precision", None)
    agent, _ = (torch_agent if args.backend == "torch" else jax_agent)(env, run, ppo_cfg)
    trainer_class = SequentialTrainer if args.trainer == "sequential" else StepTrainer
    trainer = trainer_class(env=env, agents=agent, cfg={**SKRL_TRAINER_CFG, "timesteps": run["vector_steps"]})
    profile = cProfile.Profile()
    profile.enable()
    if args.trainer == "sequential":
        trainer.train()
    else:
        for _ in range(run["vector_steps"]):
            trainer.train()
    profile.disable()
    stats = pstats.Stats(profile)
    row = {"backend": args.backend, "trainer": args.trainer, "vector_steps": run["vector_steps"]}
    print(json.dumps({**row, "python_calls": stats.total_calls}))


if __name__ == "__main__":
    main()
