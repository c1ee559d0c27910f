"""The 4096-env PPO update, eager against ``compile_update`` (issue 28), on the Isaac Lab Ant config.

Two agents are built through the Runner (``isaaclab_standin_ppo.config``), one eager and one with
``cfg["compile_update"]`` (``True``, or ``--options``: ``torch.compile`` keyword arguments as JSON); each collects one
rollout and updates once (the compiled one compiles there). Then the same full rollout is learned from again and
again, the two agents' updates alternating, so both see the same machine load; each update's wall time is printed.

    .venv/bin/python benchmarks/ppo_update_compiled.py --num-envs 4096 --repeats 6
    .venv/bin/python benchmarks/ppo_update_compiled.py --options '{"mode": "max-autotune-no-cudagraphs"}'

Prints ONE JSON line: the settings, ``first_update_seconds`` (compilation included) and ``update_seconds`` of each
agent, their medians and ``speedup`` (eager median / compiled median).
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
from isaaclab_ant import commit  # noqa: E402
from isaaclab_standin_ppo import config  # noqa: E402


def timed(update, timestep: int = 0, timesteps: int = 1, device: str = "cpu") -> float:
    """Seconds of one ``update(timestep, timesteps)`` call (on a GPU, until its queued work is done)."""
    import torch

    synchronize = torch.cuda.synchronize if device.startswith("cuda") else lambda: None
    synchronize()
    started = time.perf_counter()
    update(timestep, timesteps)
    synchronize()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=6, help="timed updates per agent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--options", default=None, help="torch.compile keyword arguments as JSON (default: True)")
    parser.add_argument("--device", default="cpu", help="the stand-in env's device (cuda:0 on a GPU)")
    args = parser.parse_args()

    import torch

    from skrl_like.envs import IsaacLabStandInEnv
    from skrl_like.torch.envs.wrappers import wrap_env
    from skrl_like.torch.utils.runner import Runner

    compile_update = json.loads(args.options) if args.options else True
    agents, first = {}, {}
    with tempfile.TemporaryDirectory() as directory:
        for name, option in (("eager", False), ("compiled", compile_update)):
            env = wrap_env(
                IsaacLabStandInEnv(num_envs=args.num_envs, seed=args.seed, device=args.device),
                wrapper="isaaclab",
                verbose=False,
            )
            cfg = config(16, directory, args.seed)
            cfg["agent"]["compile_update"] = option
            runner = Runner(env, cfg)
            agent = runner.agent
            update, seconds = agent._update, []
            agent._update = lambda timestep, timesteps, update=update, seconds=seconds: seconds.append(
                timed(update, timestep, timesteps, args.device)
            )
            runner.run("train")  # one rollout, one update (the compiled agent compiles here)
            agent._update = update
            first[name] = round(seconds[0], 3)
            agent.set_mode("train")
            agents[name] = agent
        times = {"eager": [], "compiled": []}
        for _ in range(args.repeats):
            for name in ("eager", "compiled"):
                times[name].append(round(timed(agents[name]._update, device=args.device), 4))
    medians = {name: statistics.median(values) for name, values in times.items()}
    line = {
        "benchmark": "ppo_update_compiled",
        "commit": commit(),
        "num_envs": args.num_envs,
        "device": args.device,
        "compile_update": compile_update,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "first_update_seconds": first,
        "update_seconds": times,
        "median_update_seconds": medians,
        "speedup": round(medians["eager"] / medians["compiled"], 3),
    }
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
