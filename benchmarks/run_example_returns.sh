#!/usr/bin/env bash
# Learning quality of the shipped examples (their documented hyperparameters, written once, in the example): each
# example trains with --seed S and prints its final greedy evaluation; this records one JSON line per run:
# {"example", "backend", "seed", "seconds", "result": the example's last line}. Returns are deterministic for a seed,
# so these runs may share the machine (their times may not be quoted).
#   bash benchmarks/run_example_returns.sh                                   # the issue-12 set, seeds 0-4
#   EXAMPLES="trpo_pendulum" BACKENDS="jax" SEEDS="0 1" bash benchmarks/run_example_returns.sh
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/.."
PY="${PY_OURS:-.venv/bin/python}"
OUT="${OUT:-$HERE/results/example-returns-$(date +%Y%m%d-%H%M%S).jsonl}"
mkdir -p "$(dirname "$OUT")"
export OMP_NUM_THREADS=1 XLA_FLAGS="--xla_cpu_multi_thread_eigen=false"
for example in ${EXAMPLES:-a2c_cartpole trpo_pendulum rpo_pendulum cem_cartpole q_learning_frozen_lake sarsa_taxi}; do
    for seed in ${SEEDS:-0 1 2 3 4}; do
        for backend in ${BACKENDS:-torch jax}; do
            [[ -f "examples/$backend/$example.py" ]] || continue
            start=$(date +%s)
            last=$("$PY" "examples/$backend/$example.py" --seed "$seed" 2>>"${OUT%.jsonl}.log" | tail -n 1)
            printf '{"example": "%s", "backend": "%s", "seed": %s, "seconds": %s, "result": "%s"}\n' \
                "$example" "$backend" "$seed" "$(( $(date +%s) - start ))" "${last//\"/\'}" | tee -a "$OUT"
        done
    done
done
echo "results: $OUT"
