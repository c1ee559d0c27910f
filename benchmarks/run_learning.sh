#!/usr/bin/env bash
# Learning-quality runs (ours): PPO CartPole-v1 (8 envs, 100k steps) x 5 seeds and PPO Pendulum-v1 (4 envs,
# 400k steps) x 3 seeds, for both backends, one process at a time. Results: benchmarks/results/learning-*.jsonl
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/.."
PY="${PY_OURS:-.venv/bin/python}"
OUT="${OUT:-$HERE/results/learning-$(date +%Y%m%d-%H%M%S).jsonl}"
mkdir -p "$(dirname "$OUT")"
export OMP_NUM_THREADS=1 XLA_FLAGS="--xla_cpu_multi_thread_eigen=false"
for env in ${ENVS:-cartpole pendulum}; do
    seeds="0 1 2 3 4"; [[ "$env" == pendulum ]] && seeds="${PENDULUM_SEEDS:-0 1 2}"
    for seed in $seeds; do
        for backend in ${BACKENDS:-torch jax}; do
            "$PY" benchmarks/ppo_learning.py --backend "$backend" --env "$env" --seed "$seed" 2>>"${OUT%.jsonl}.log" | tail -n 1 | tee -a "$OUT"
        done
    done
done
