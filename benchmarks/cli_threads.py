"""``skrl_like train`` throughput under the CLI's torch thread setting (issue 30, item 1).

Runs the command line in a subprocess (as a user does) and appends one JSON line per run to
``benchmarks/results/cli_threads.jsonl``: the command, the thread setting, and the env-steps/s of the run's
``results.jsonl`` rows after the first (the set-up and, for SAC, the random warm-up excluded).

    python benchmarks/cli_threads.py --label before sac   # --agent SAC --env Pendulum-v1
    python benchmarks/cli_threads.py --label before ppo   # --agent PPO --env CartPole-v1
    python benchmarks/cli_threads.py --label before --omp 1 sac
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

RUNS = {
    # timesteps: past SAC's 1000 warm-up steps; PPO: 16 rollouts of 64 x 8 envs
    "sac": (["--agent", "SAC", "--env", "Pendulum-v1"], 1600, '{"experiment": {"write_interval": 200}}'),
    "ppo": (["--agent", "PPO", "--env", "CartPole-v1"], 1024, '{"experiment": {"write_interval": 128}}'),
}
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "cli_threads.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run", choices=sorted(RUNS))
    parser.add_argument("--label", required=True, help="e.g. before / after")
    parser.add_argument("--omp", help="OMP_NUM_THREADS for the run (default: unset)")
    parser.add_argument("--threads", help="the CLI's --threads flag (after only)")
    args = parser.parse_args()
    flags, timesteps, config = RUNS[args.run]
    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    if args.omp:
        env["OMP_NUM_THREADS"] = args.omp
    with tempfile.TemporaryDirectory() as directory:
        command = [sys.executable, "-m", "skrl_like", "train", *flags, "--timesteps", str(timesteps), "--seed", "0"]
        command += ["--config", config, "--experiment-dir", directory]
        if args.threads:
            command += ["--threads", args.threads]
        began = time.perf_counter()
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - began
        if result.returncode != 0:
            sys.exit(result.stderr[-2000:])
        run_dir = result.stdout.strip().splitlines()[-1]
        rows = [json.loads(line) for line in open(os.path.join(run_dir, "results.jsonl"))]
    rates = [row["env_steps_per_second"] for row in rows[1:] if row.get("env_steps_per_second")]
    if args.run == "sac":  # rows while learning only (after learning_starts)
        rates = [row["env_steps_per_second"] for row in rows if row["timestep"] > 1200]
    line = {
        "label": args.label,
        "run": " ".join(["skrl_like train", *flags, "--timesteps", str(timesteps)]),
        "OMP_NUM_THREADS": args.omp,
        "threads_flag": args.threads,
        "env_steps_per_second": round(sum(rates) / len(rates), 2),
        "wall_seconds": round(seconds, 1),
        "cpus": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    with open(OUT, "a") as file:
        file.write(json.dumps(line) + "\n")
    print(json.dumps(line))


if __name__ == "__main__":
    main()
