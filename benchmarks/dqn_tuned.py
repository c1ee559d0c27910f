"""Learning quality of a tuned DQN file as a user runs it: ``skrl_like train -f tuned/<file> --seed S``, then
``skrl_like eval RUN_DIR`` (the final checkpoint, 20 greedy episodes). One JSON line per run.

    .venv/bin/python benchmarks/dqn_tuned.py --backend jax --seed 7
    .venv/bin/python benchmarks/dqn_tuned.py --backend torch --seed 0 --config '{"learning_rate": 2.5e-4}'
    SEEDS="0 1 2 3 4 5 6 7 8 9" bash benchmarks/run_dqn_tuned.sh        # the table of docs/benchmarks.md

Only the command line is used (no private function), so the figures are those a user gets: the config-file model
builder, the CLI's seeding. ``--config`` takes the CLI's JSON overrides (agent keys, or sections such as
``{"memory": {"memory_size": 100000}}``), for screening candidates before they go into the file. TensorBoard writing
and interval checkpoints are off (the CLI still writes the final agent checkpoint, which eval reads) unless
``--best``, which keeps the file's intervals (TensorBoard and checkpoints) and also reports ``eval --checkpoint
best`` (the best agent by mean training return); the run directory is removed afterwards unless ``--keep``.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUIET = {
    "agent": {"experiment": {"write_interval": 0, "checkpoint_interval": 0}},
    "trainer": {"disable_progressbar": True},
}
EVAL = re.compile(r"mean return ([-0-9.]+), std ([-0-9.]+)")


def cli(*args: str) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false"}
    result = subprocess.run(
        [sys.executable, "-m", "skrl_like", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if result.returncode != 0:
        raise SystemExit(f"skrl_like {' '.join(args)} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("torch", "jax"), required=True)
    parser.add_argument("--file", default="tuned/dqn_cartpole.yaml")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", default="{}", help="JSON overrides, as skrl_like train --config")
    parser.add_argument("--timesteps", type=int, default=None)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the run directory")
    parser.add_argument(
        "--best", action="store_true", help="the file's write and checkpoint intervals; also eval --checkpoint best"
    )
    args = parser.parse_args()

    overrides = json.loads(args.config)
    merged = json.loads(json.dumps(QUIET))
    if args.best:  # the file's intervals, so that the run tracks its returns and keeps its best agent
        del merged["agent"]["experiment"]
    for key, value in overrides.items():  # the driver's quiet settings, then the candidate's (agent keys at the top)
        section = key if key in ("agent", "trainer", "memory", "models", "env") else None
        if section is None:
            merged["agent"][key] = value
        elif isinstance(value, dict):
            merged.setdefault(section, {}).update(value)
        else:
            merged[section] = value
    directory = tempfile.mkdtemp(prefix="dqn_tuned_")
    train = ["train", "-f", args.file, "--backend", args.backend, "--seed", str(args.seed)]
    train += ["--config", json.dumps(merged), "--experiment-dir", directory]
    if args.timesteps is not None:
        train += ["--timesteps", str(args.timesteps)]
    start = time.perf_counter()
    run_dir = cli(*train).strip().splitlines()[-1]
    seconds = time.perf_counter() - start
    found = EVAL.search(cli("eval", run_dir, "--episodes", str(args.episodes)))
    if args.best:
        best = EVAL.search(cli("eval", run_dir, "--episodes", str(args.episodes), "--checkpoint", "best"))
    if not args.keep:
        shutil.rmtree(directory, ignore_errors=True)
    result = {
        "library": "skrl_like",
        "backend": args.backend,
        "file": args.file,
        "overrides": overrides,
        "seed": args.seed,
        "timesteps": args.timesteps,
        "seconds": round(seconds, 1),
        "eval_return": float(found.group(1)),
        "eval_std": float(found.group(2)),
    }
    if args.best:
        result.update(best_eval_return=float(best.group(1)), best_eval_std=float(best.group(2)))
    if args.keep:
        result["run_dir"] = run_dir
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
