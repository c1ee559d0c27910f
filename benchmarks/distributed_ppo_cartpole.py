"""PPO CartPole-v1 throughput with 1 and 2 ranks (torchrun / the JAX launcher), torch and JAX backends.

    .venv/bin/python benchmarks/distributed_ppo_cartpole.py --seeds 0 1 2 --timesteps 40000

Runs benchmarks/ppo_cartpole.py (the ``cleanrl`` configuration, no evaluation) as one process and as two ranks, the
ranks splitting the same total of environment steps, alternating the runs seed by seed (the machine may be shared).
Prints one JSON line per run: ``env_steps_per_s`` is all ranks' environment steps over the slowest rank's training
time (``SequentialTrainer.train()``, JAX compilation included).
"""

import argparse
import json
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "ppo_cartpole.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def command(backend: str, ranks: int, seed: int, timesteps: int) -> list:
    args = [SCRIPT, "--backend", backend, "--config", "cleanrl", "--seed", str(seed), "--timesteps"]
    args += [str(timesteps // ranks), "--no-eval"]
    if ranks == 1:
        return [sys.executable, *args]
    if backend == "torch":
        torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
        return [torchrun, "--standalone", "--nproc_per_node", str(ranks), *args]
    launcher = ["-m", "skrl_like.jax.utils.distributed", "--nproc-per-node", str(ranks)]
    return [sys.executable, *launcher, "--coordinator-address", f"127.0.0.1:{free_port()}", *args]


def run(backend: str, ranks: int, seed: int, timesteps: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    ended = subprocess.run(command(backend, ranks, seed, timesteps), env=env, capture_output=True, text=True)
    lines = [json.loads(line) for line in ended.stdout.splitlines() if line.startswith("{")]
    if ended.returncode != 0 or len(lines) != ranks:
        raise RuntimeError(f"{backend} with {ranks} ranks failed ({ended.returncode}):\n{ended.stderr[-3000:]}")
    steps = sum(line["timesteps"] for line in lines)
    seconds = max(line["seconds"] for line in lines)
    return {
        "library": "skrl_like",
        "backend": backend,
        "ranks": ranks,
        "seed": seed,
        "timesteps": steps,
        "seconds": round(seconds, 3),
        "env_steps_per_s": round(steps / seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--timesteps", type=int, default=40_000, help="environment steps of all ranks together")
    parser.add_argument("--backends", nargs="+", default=["torch", "jax"], choices=("torch", "jax"))
    args = parser.parse_args()
    for seed in args.seeds:
        for backend in args.backends:
            for ranks in (1, 2):
                print(json.dumps(run(backend, ranks, seed, args.timesteps)), flush=True)


if __name__ == "__main__":
    main()
