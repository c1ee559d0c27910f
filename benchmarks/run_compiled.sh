#!/usr/bin/env bash
# CompiledTrainer against rejax (issue 15), side by side: five single-seed runs alternating ours/rejax, then 8 and 64
# seeds vmapped (alternating); our ordinary JAX path on gymnasium CartPole beside the compiled one. Then SAC on gymnax
# Pendulum-v1 with rejax's Pendulum config: five seeds alternating, our ordinary path on gymnasium Pendulum, 8 seeds
# vmapped; TD3 the same way with rejax's Pendulum TD3 config. One JSON line per run into
# benchmarks/results/compiled.jsonl.
# Usage: REJAX_PYTHON=/work/bench_venvs/rejax/bin/python benchmarks/run_compiled.sh   (ALGORITHMS="sac": SAC only)
# PIN=0 runs both libraries pinned to CPU 0 (taskset): XLA then keeps one intra-op thread and a small env's step
# runs without hand-offs between threads, whose waiting otherwise counts as process CPU time (docs/compiled-trainer.md).
set -euo pipefail
cd "$(dirname "$0")/.."
OURS_PYTHON=${OURS_PYTHON:-.venv/bin/python}
REJAX_PYTHON=${REJAX_PYTHON:-/work/bench_venvs/rejax/bin/python}
OUT=${OUT:-benchmarks/results/compiled.jsonl}
export OMP_NUM_THREADS=1 XLA_FLAGS=--xla_cpu_multi_thread_eigen=false
mkdir -p "$(dirname "$OUT")"
PIN_PREFIX=()
if [ -n "${PIN:-}" ]; then PIN_PREFIX=(taskset -c "$PIN"); fi
run() { nice -n 19 "${PIN_PREFIX[@]}" "$@" 2>/dev/null | grep '^{' >> "$OUT"; tail -1 "$OUT"; }
if [[ " ${ALGORITHMS:-ppo sac td3} " == *" ppo "* ]]; then
    for seed in ${SEEDS:-0 1 2 3 4}; do
        PYTHONPATH=$PWD run "$OURS_PYTHON" benchmarks/compiled.py --library ours --seed "$seed"
        run "$REJAX_PYTHON" benchmarks/compiled.py --library rejax --seed "$seed"
    done
    # our ordinary JAX path (SequentialTrainer, gymnasium CartPole, same 4 x 128 / 4 x 4 shape) beside the compiled one
    for seed in 0; do
        PYTHONPATH=$PWD run "$OURS_PYTHON" benchmarks/ppo_cartpole.py --backend jax --config cleanrl --seed "$seed" --timesteps 100352 --no-eval
        PYTHONPATH=$PWD run "$OURS_PYTHON" benchmarks/compiled.py --library ours --seed "$seed" --updates 196
    done
    # vmapped: 200 updates per run (102,400 env steps each) keep the 64-seed call within minutes on a shared CPU
    for seeds in 8 64; do
        PYTHONPATH=$PWD run "$OURS_PYTHON" benchmarks/compiled.py --library ours --seeds "$seeds" --updates 200
        run "$REJAX_PYTHON" benchmarks/compiled.py --library rejax --seeds "$seeds" --updates 200
    done
fi
if [[ " ${ALGORITHMS:-ppo sac td3} " == *" sac "* ]]; then
    for seed in ${SEEDS:-0 1 2 3 4}; do
        PYTHONPATH=$PWD run "$OURS_PYTHON" benchmarks/compiled.py --algorithm sac --library ours --seed "$seed"
        run "$REJAX_PYTHON" benchmarks/compiled.py --algorithm sac --library rejax --seed "$seed"
    done
    # our ordinary JAX path (SequentialTrainer, gymnasium Pendulum-v1, the same agent) beside the compiled one
    PYTHONPATH=$PWD run "$OURS_PYTHON" benchmarks/compiled.py --algorithm sac --library ours_sequential --seed 0
    PYTHONPATH=$PWD run "$OURS_PYTHON" benchmarks/compiled.py --algorithm sac --library ours --seeds 8
    run "$REJAX_PYTHON" benchmarks/compiled.py --algorithm sac --library rejax --seeds 8
fi
if [[ " ${ALGORITHMS:-ppo sac td3} " == *" td3 "* ]]; then
    for seed in ${SEEDS:-0 1 2 3 4}; do
        PYTHONPATH=$PWD run "$OURS_PYTHON" benchmarks/compiled.py --algorithm td3 --library ours --seed "$seed"
        run "$REJAX_PYTHON" benchmarks/compiled.py --algorithm td3 --library rejax --seed "$seed"
    done
    PYTHONPATH=$PWD run "$OURS_PYTHON" benchmarks/compiled.py --algorithm td3 --library ours --seeds 8
    run "$REJAX_PYTHON" benchmarks/compiled.py --algorithm td3 --library rejax --seeds 8
fi
