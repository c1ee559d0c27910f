#!/usr/bin/env bash
# Learning quality of the off-policy agents (ours, both backends) with the examples' hyperparameters: SAC, TD3, DDPG
# on Pendulum-v1 (20k env steps) and DQN, DDQN on CartPole-v1 (100k), seeds 0-4, one process at a time. Returns are
# deterministic for a seed, so they may be measured on a busy machine (their times may not).
#   bash benchmarks/run_off_policy_returns.sh                      # everything
#   RUNS="sac:SAC dqn:DDQN" SEEDS="0 1" bash benchmarks/run_off_policy_returns.sh
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/.."
PY="${PY_OURS:-.venv/bin/python}"
OUT="${OUT:-$HERE/results/off-policy-returns-$(date +%Y%m%d-%H%M%S).jsonl}"
mkdir -p "$(dirname "$OUT")"
export OMP_NUM_THREADS=1 XLA_FLAGS="--xla_cpu_multi_thread_eigen=false"
for run in ${RUNS:-sac:SAC td3:TD3 ddpg:DDPG dqn:DQN dqn:DDQN}; do
    script=${run%%:*}; algorithm=${run##*:}
    extra=(); [[ "$script" == dqn ]] && extra=(--algorithm "$algorithm")
    for seed in ${SEEDS:-0 1 2 3 4}; do
        for backend in ${BACKENDS:-torch jax}; do
            "$PY" "benchmarks/${script}_learning.py" --backend "$backend" --seed "$seed" "${extra[@]}" \
                2>>"${OUT%.jsonl}.log" | tail -n 1 | tee -a "$OUT"
        done
    done
done
echo "results: $OUT"
