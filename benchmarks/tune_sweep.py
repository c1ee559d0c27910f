"""A 4-trial learning-rate sweep of PPO on CartPole: wall time on a local Ray (``--mode ray``, ``--cpus`` trials at a
time) beside the same trials one after another in one process (``--mode sequential``). One JSON line per run.

Run: python benchmarks/tune_sweep.py --mode sequential; python benchmarks/tune_sweep.py --mode ray --cpus 2
"""

import argparse
import json
import os
import tempfile
import time

from skrl_like.core.runner import read_yaml
from skrl_like.tune import make_trainable

RATES = [1e-4, 3e-4, 1e-3, 3e-3]
TUNED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "skrl_like", "tuned", "ppo_cartpole.yaml")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("ray", "sequential"), required=True)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--timesteps-per-iteration", type=int, default=1250)
    parser.add_argument("--backend", default="torch")
    args = parser.parse_args()
    run = read_yaml(TUNED)
    trainable = make_trainable(run, backend=args.backend, timesteps_per_iteration=args.timesteps_per_iteration)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as storage:
        if args.mode == "sequential":
            import ray.tune.trainable.trainable as module

            module.DEFAULT_STORAGE_PATH = storage  # the trials' directories (not ~/ray_results)
            returns = []
            for rate in RATES:
                trial = trainable(config={"agent.learning_rate": rate})
                for _ in range(args.iterations):
                    result = trial.step()
                returns.append(result["episode_return_mean"])
                trial.stop()
        else:
            import ray
            from ray import tune

            ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
            results = tune.Tuner(
                trainable,
                param_space={"agent.learning_rate": tune.grid_search(RATES)},
                tune_config=tune.TuneConfig(metric="episode_return_mean", mode="max"),
                run_config=tune.RunConfig(
                    storage_path=storage, stop={"training_iteration": args.iterations}, verbose=0
                ),
            ).fit()
            returns = [results[i].metrics["episode_return_mean"] for i in range(len(results))]
            ray.shutdown()
    seconds = time.perf_counter() - began
    env_steps = len(RATES) * args.iterations * args.timesteps_per_iteration * run["env"]["num_envs"]
    print(json.dumps({"benchmark": "tune_sweep", "mode": args.mode, "cpus": args.cpus if args.mode == "ray" else 1,
                      "backend": args.backend, "trials": len(RATES), "env_steps": env_steps,
                      "wall_s": round(seconds, 2), "returns": [round(r, 1) for r in returns]}))  # fmt: skip


if __name__ == "__main__":
    main()
