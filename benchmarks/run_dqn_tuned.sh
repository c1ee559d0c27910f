#!/usr/bin/env bash
# The seed table of tuned/dqn_cartpole.yaml (docs/benchmarks.md): skrl_like train -f, then eval of the final
# checkpoint (20 greedy episodes), one run at a time, both backends. Returns are deterministic for a seed, so they
# may be measured on a busy machine (their times may not).
#   bash benchmarks/run_dqn_tuned.sh                                  # seeds 0-9, torch and JAX
#   SEEDS="7 123" BACKENDS=jax CONFIG='{"learning_rate": 2.5e-4}' bash benchmarks/run_dqn_tuned.sh
#   BEST=1 SEEDS="2 3" BACKENDS=torch bash benchmarks/run_dqn_tuned.sh   # also the best checkpoint (eval --checkpoint best)
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/.."
PY="${PY_OURS:-.venv/bin/python}"
OUT="${OUT:-$HERE/results/dqn-tuned-$(date +%Y%m%d-%H%M%S).jsonl}"
mkdir -p "$(dirname "$OUT")"
export OMP_NUM_THREADS=1 XLA_FLAGS="--xla_cpu_multi_thread_eigen=false"
for seed in ${SEEDS:-0 1 2 3 4 5 6 7 8 9}; do
    for backend in ${BACKENDS:-torch jax}; do
        "$PY" benchmarks/dqn_tuned.py --backend "$backend" --seed "$seed" --file "${FILE:-tuned/dqn_cartpole.yaml}" \
            --config "${CONFIG:-{\}}" ${BEST:+--best} 2>>"${OUT%.jsonl}.log" | tee -a "$OUT"
    done
done
echo "results: $OUT"
