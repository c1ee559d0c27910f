#!/usr/bin/env bash
# Side-by-side runs of benchmarks/off_policy.py (SAC, TD3, DDPG, DQN, DDQN) or, with SCRIPT=on_policy,
# benchmarks/on_policy.py (A2C, TRPO, RPO, CEM), or, with SCRIPT=multi_agent, benchmarks/multi_agent.py (IPPO, MAPPO on
# MPE simple_spread_v3), or, with SCRIPT=rnn_speed, benchmarks/rnn_speed.py (PPO_RNN, SAC_RNN: "PPO", "SAC"; issue 29):
# skrl_like (torch, jax) beside skrl 1.4.3 (torch, jax), one process
# at a time, the entry order rotating by one position per seed; one JSON line per run appended to $OUT.
# Run it ALONE on an idle machine (peers: bash benchmarks/setup_peers.sh).
#
#   ALGORITHMS="SAC TD3" TIMESTEPS=5000 NO_EVAL=1 bash benchmarks/run_side_by_side.sh      # throughput, side by side
#   ALGORITHMS="SAC TD3" ENTRIES="ours-torch ours-jax skrl-torch skrl-jax sbx" TIMESTEPS=5000 NO_EVAL=1 bash \
#     benchmarks/run_side_by_side.sh                                                     # with SBX (setup_peers.sh)
#   ALGORITHMS="SAC" ENTRIES="ours-torch ours-jax" bash benchmarks/run_side_by_side.sh     # returns, default budgets
#   ALGORITHMS="TD3" ENTRIES="ours-torch skrl-torch floor-torch" TIMESTEPS=3000 NO_EVAL=1 bash \
#     benchmarks/run_side_by_side.sh        # with plain torch's floor (benchmarks/torch_floor.py; floor-jax, floor-jax-peer:
#                                           # benchmarks/jax_floor.py in our venv / in skrl 1.4.3's JAX venv)
#   SCRIPT=on_policy ALGORITHMS="A2C TRPO" ENTRIES="ours-torch skrl-torch" bash benchmarks/run_side_by_side.sh
#   SCRIPT=multi_agent ALGORITHMS="IPPO MAPPO" SEEDS="0 1 2 3 4" ENTRIES="ours-torch skrl-torch" \
#     bash benchmarks/run_side_by_side.sh
#   SCRIPT=rnn_speed ALGORITHMS=PPO ENTRIES="ours-torch skrl-torch" bash benchmarks/run_side_by_side.sh
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/.."
BENCH_VENVS="${BENCH_VENVS:-/work/bench_venvs}"
SEEDS="${SEEDS:-0 1 2}"
ALGORITHMS="${ALGORITHMS:-SAC TD3 DDPG DQN}"
ENTRIES=(${ENTRIES:-ours-torch ours-jax skrl-torch skrl-jax})
SCRIPT="${SCRIPT:-off_policy}"
OUT="${OUT:-$HERE/results/$SCRIPT-$(date +%Y%m%d-%H%M%S).jsonl}"
mkdir -p "$(dirname "$OUT")"
export OMP_NUM_THREADS=1 XLA_FLAGS=--xla_cpu_multi_thread_eigen=false
EXTRA=()
[[ -n "${TIMESTEPS:-}" ]] && EXTRA+=(--timesteps "$TIMESTEPS")
[[ -n "${NO_EVAL:-}" ]] && EXTRA+=(--no-eval)
[[ -n "${MEMORY_SIZE:-}" ]] && EXTRA+=(--memory-size "$MEMORY_SIZE")  # off_policy.py only
[[ -n "${RSS_EVERY:-}" ]] && EXTRA+=(--rss-every "$RSS_EVERY")  # off_policy.py only
PIN=()  # PIN_CPU=0: every entry pinned to core 0 (taskset), so XLA's second thread gets no core of its own either
[[ -n "${PIN_CPU:-}" ]] && PIN=(taskset -c "$PIN_CPU")
run_entry() {  # entry algorithm seed
  local library backend python script
  case "$1" in
    ours-*) library=skrl_like; backend=${1#ours-}; python=.venv/bin/python ;;
    skrl-*) library=skrl; backend=${1#skrl-}; python="$BENCH_VENVS/$backend/bin/python" ;;
    sbx) library=sbx; backend=jax; python="$BENCH_VENVS/sbx/bin/python" ;;  # off_policy.py only
    floor-*)  # plain torch's / JAX's floor (SAC, TD3, DQN of off_policy.py only); floor-jax-peer: in skrl's JAX venv
      case "$1" in
        floor-torch) script=torch_floor; python=.venv/bin/python ;;
        floor-jax) script=jax_floor; python=.venv/bin/python ;;
        floor-jax-peer) script=jax_floor; python="$BENCH_VENVS/jax/bin/python" ;;
      esac
      "${PIN[@]}" "$python" "benchmarks/$script.py" --algorithm "$2" --seed "$3" ${TIMESTEPS:+--timesteps "$TIMESTEPS"} \
        >> "$OUT" 2>> "${OUT%.jsonl}.log" || echo "failed: $1 $2 $3" >> "${OUT%.jsonl}.log"
      return ;;
  esac
  "${PIN[@]}" "$python" "benchmarks/$SCRIPT.py" --library "$library" --backend "$backend" --algorithm "$2" --seed "$3" \
    "${EXTRA[@]}" >> "$OUT" 2>> "${OUT%.jsonl}.log" || echo "failed: $1 $2 $3" >> "${OUT%.jsonl}.log"
}
for algorithm in $ALGORITHMS; do
  for seed in $SEEDS; do
    count=${#ENTRIES[@]}
    for ((i = 0; i < count; i++)); do
      run_entry "${ENTRIES[$(((i + seed) % count))]}" "$algorithm" "$seed"
    done
  done
done
echo "results: $OUT"
