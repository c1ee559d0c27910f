"""Speed of the recurrent agents beside skrl 1.4.3 (issue 29): PPO_RNN (GRU) on masked CartPole, SAC_RNN (GRU) on
masked Pendulum, one run per process, one JSON line.

    .venv/bin/python benchmarks/rnn_speed.py --library skrl_like --backend torch --algorithm PPO --seed 0
    .venv/bin/python benchmarks/rnn_speed.py --library skrl_like --backend jax --algorithm PPO --seed 0
    /work/bench_venvs/torch/bin/python benchmarks/rnn_speed.py --library skrl --algorithm PPO --seed 0
    python3 benchmarks/rnn_speed.py --summarize benchmarks/results/<file>.jsonl    # medians and ratios (.venv python)

The settings (``SETTINGS``) are written once and read by both libraries: ours builds the agent with the ``Runner``
from :func:`rnn_learning.runner_cfg` (the configuration of the learning runs), skrl 1.4.3 with model classes written
the way its recurrent examples write them (``benchmarks/peers/skrl_torch_rnn.py``, run with the torch peer venv of
``benchmarks/setup_peers.sh``). Same env (``rnn_learning.make_masked_env``), models (a GRU of ``hidden`` units then a
``mlp``-unit layer, separate policy and value / critics), memory and agent settings, so both do the same number of
gradient steps on the same number of sequences. ``seconds`` times ``trainer.train()`` only (no tracking files are
written: ``write_interval`` 0). Alternated runs, one process at a time:
``SCRIPT=rnn_speed ALGORITHMS=PPO ENTRIES="ours-torch skrl-torch" bash benchmarks/run_side_by_side.sh``.
"""

import argparse
import json
import os
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
from rnn_learning import make_masked_env, runner_cfg  # noqa: E402

# fmt: off
# PPO_RNN: the masked CartPole learning runs' settings (benchmarks/run_rnn_learning.sh); SAC_RNN: the masked
# Pendulum ones (skrl's PendulumNoVel SAC example's agent settings with 64-unit networks); "timesteps" in env steps
SETTINGS = {
    "PPO": {"env": "cartpole", "num_envs": 8, "timesteps": 32_768, "hidden": 64, "mlp": 64, "activation": "tanh",
            "sequence_length": 16, "rollouts": 128, "epochs": 4, "mini_batches": 4, "gamma": 0.99,
            "gae_lambda": 0.95, "lr": 1e-3, "entropy": 0.0, "scale": True, "kl_adaptive": 0.0},
    "SAC": {"env": "pendulum", "num_envs": 1, "timesteps": 1_000, "hidden": 64, "mlp": 64, "activation": "relu",
            "sequence_length": 20, "batch_size": 100, "memory_size": 15_000, "learning_starts": 118},
}
# SAC_RNN's learning_starts: skrl_like's update waits until the memory holds batch_size whole sequences (timestep
# batch_size + sequence_length - 2 = 118), skrl 1.4.3's starts at learning_starts; from 118 both do one gradient
# step per env step
# fmt: on


def settings_of(agent: str, seed: int, timesteps: int | None) -> argparse.Namespace:
    """The run's settings in the form ``rnn_learning.runner_cfg`` reads."""
    settings = {**SETTINGS[agent], "agent": agent, "cell": "GRU", "seed": seed}
    if timesteps:
        settings["timesteps"] = timesteps
    return argparse.Namespace(**settings)


def train_skrl_like(settings: argparse.Namespace, backend: str) -> tuple:
    """Train skrl_like's agent; returns (agent class name, wall and CPU seconds of ``train()``)."""
    from skrl_like import logger

    logger.setLevel("ERROR")
    if backend == "torch":
        import torch

        torch.set_num_threads(1)
        from skrl_like.torch.envs.wrappers import wrap_env
        from skrl_like.torch.utils.runner import Runner
    else:
        from skrl_like.jax.envs.wrappers import wrap_env
        from skrl_like.jax.utils.runner import Runner

    env = wrap_env(make_masked_env(settings.env, settings.num_envs, same_step_autoreset=True), verbose=False)
    env._env.reset(seed=settings.seed)
    with tempfile.TemporaryDirectory() as directory:
        cfg = runner_cfg(settings, settings.timesteps // settings.num_envs, directory)
        cfg["agent"]["experiment"]["write_interval"] = 0
        if settings.agent == "SAC":
            cfg["agent"]["learning_starts"] = settings.learning_starts
        runner = Runner(env, cfg)
        start, cpu_start = time.perf_counter(), time.process_time()
        runner.trainer.train()
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    env.close()
    return type(runner.agent).__name__, seconds, cpu_seconds


def summarize(paths: list) -> None:
    """Medians of the JSON lines in ``paths`` per (agent, library, backend), and each entry's speed relative to
    skrl_like torch's (wall env-steps/s; CPU seconds of train() per env step, steadier on a loaded machine)."""
    import statistics
    from collections import defaultdict

    groups = defaultdict(list)
    for path in paths:
        with open(path) as lines:
            for line in lines:
                if line.startswith("{"):
                    row = json.loads(line)
                    groups[(row["agent"], row["env_steps"], row["library"], row["backend"])].append(row)
    medians = {
        key: (
            len(rows),
            statistics.median(row["env_steps_per_s"] for row in rows),
            statistics.median(row["cpu_seconds"] for row in rows),
        )
        for key, rows in groups.items()
    }
    print(
        "| agent | env steps | library | backend | runs | median env-steps/s | median CPU s "
        "| skrl_like torch speed / this speed (wall, CPU) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (agent, steps, library, backend), (runs, speed, cpu) in sorted(medians.items()):
        ours = medians.get((agent, steps, "skrl_like", "torch"))
        ratio = f"{ours[1] / speed:.2f}x, {cpu / ours[2]:.2f}x" if ours else "n/a"
        print(f"| {agent} | {steps} | {library} | {backend} | {runs} | {speed:,.1f} | {cpu:.2f} | {ratio} |")


def main() -> None:
    if sys.argv[1:2] == ["--summarize"]:
        summarize(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", choices=("skrl_like", "skrl"), default="skrl_like")
    parser.add_argument("--backend", choices=("torch", "jax"), default="torch", help="skrl: torch only")
    parser.add_argument("--algorithm", choices=sorted(SETTINGS), default="PPO")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=None, help="env steps in total (default: SETTINGS')")
    args = parser.parse_args()
    settings = settings_of(args.algorithm, args.seed, args.timesteps)
    if args.library == "skrl":
        if args.backend != "torch":
            parser.error("skrl 1.4.3 has recurrent agents in torch only: use --backend torch")
        from peers.skrl_torch_rnn import train_skrl

        agent, seconds, cpu_seconds = train_skrl(settings)
    else:
        agent, seconds, cpu_seconds = train_skrl_like(settings, args.backend)
    env_steps = settings.timesteps // settings.num_envs * settings.num_envs
    result = {
        "library": args.library,
        "backend": args.backend,
        "agent": agent,
        "seed": args.seed,
        "env_steps": env_steps,
        "seconds": round(seconds, 3),
        "env_steps_per_s": round(env_steps / seconds, 1),
        "cpu_seconds": round(cpu_seconds, 3),  # the process's CPU time in train(): steadier on a loaded machine
        "settings": {key: value for key, value in vars(settings).items() if key != "seed"},
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
