"""Where skrl_like's PPO spends its time on the Isaac Lab-shaped benchmark (issue 28): cProfile (Python functions,
cumulative) or the torch profiler (operators, self CPU time) over ``runner.run("train")`` of
``isaaclab_standin_ppo.py``'s Runner config.

    .venv/bin/python benchmarks/profile_isaaclab_ppo.py --num-envs 4096 --timesteps 48 --profiler cprofile
    .venv/bin/python benchmarks/profile_isaaclab_ppo.py --num-envs 4096 --timesteps 48 --profiler torch

Prints the top ``--rows`` rows (stdout); not a timed benchmark (the profilers add their own overhead).
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
from isaaclab_ant import add_arguments  # noqa: E402
from isaaclab_standin_ppo import config  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--profiler", choices=["cprofile", "torch"], default="cprofile")
    parser.add_argument("--rows", type=int, default=40)
    args = parser.parse_args()

    import torch

    from skrl_like.envs import IsaacLabStandInEnv
    from skrl_like.torch.envs.wrappers import wrap_env
    from skrl_like.torch.utils.runner import Runner

    env = wrap_env(IsaacLabStandInEnv(num_envs=args.num_envs, seed=args.seed), wrapper="isaaclab", verbose=False)
    with tempfile.TemporaryDirectory() as directory:
        runner = Runner(env, config(args.timesteps, directory, args.seed, args.separate))
        if args.profiler == "cprofile":
            profile = cProfile.Profile()
            profile.runcall(runner.run, "train")
            stats = pstats.Stats(profile, stream=sys.stdout).strip_dirs()
            stats.sort_stats("cumulative").print_stats(args.rows)
            stats.sort_stats("tottime").print_stats(args.rows)
        else:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
                runner.run("train")
            print(profile.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))


if __name__ == "__main__":
    main()
