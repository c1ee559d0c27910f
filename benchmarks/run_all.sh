#!/usr/bin/env bash
# Run the published comparisons: skrl_like (ours) vs skrl 1.4.3 (torch, jax) vs stable-baselines3, plus the
# minimal hand-written collection loop, on CartPole-v1 PPO, both configs (benchmarks/configs.py).
#
# NOT a unit test. Run it ALONE on an otherwise idle machine (2 shared cores: any other load skews torch by
# 4-10x). Peers need the venvs from benchmarks/setup_peers.sh.
#
#   bash benchmarks/run_all.sh                        # 3 seeds x 2 configs x all entries, 100k env steps
#   SEEDS="0 1 2" CONFIGS="zoo" TIMESTEPS=100000 bash benchmarks/run_all.sh
#   TIMESTEPS=4096 NO_EVAL=1 bash benchmarks/run_all.sh   # smoke run of the whole pipeline
#   PIN_CPU=0 bash benchmarks/run_all.sh              # every entry pinned to core 0 (taskset): one core in all
#
# The thread settings below give every library one intra-op thread, but XLA still compiles on a thread pool
# (JAX compilation used ~1.75 cores on 2): PIN_CPU makes "one core for every library" literal.
#
# Method: for every (config, seed) each entry runs once, one process at a time; the entry ORDER rotates by
# one position per seed, so no library always runs first/last (thermal, cache and page-cache effects are
# spread). Every result is one JSON line appended to $OUT; summarize.py reports the MEDIAN over the 3 seeds
# of env_steps_per_s, seconds and final_eval_return per (library, backend, config).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
cd "$REPO"

BENCH_VENVS="${BENCH_VENVS:-/work/bench_venvs}"
PY_OURS="${PY_OURS:-$REPO/.venv/bin/python}"
PY_TORCH_PEER="${PY_TORCH_PEER:-$BENCH_VENVS/torch/bin/python}"
PY_JAX_PEER="${PY_JAX_PEER:-$BENCH_VENVS/jax/bin/python}"

SEEDS="${SEEDS:-0 1 2}"
CONFIGS="${CONFIGS:-cleanrl zoo}"
TIMESTEPS="${TIMESTEPS:-100000}"
EXTRA=()
[[ -n "${NO_EVAL:-}" ]] && EXTRA+=(--no-eval)

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="${OUT:-$HERE/results/cartpole-ppo-$STAMP.jsonl}"
mkdir -p "$(dirname "$OUT")"
LOG="${OUT%.jsonl}.log"

export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false"
PIN=()
[[ -n "${PIN_CPU:-}" ]] && PIN=(taskset -c "$PIN_CPU")
export JAX_PLATFORMS=cpu TF_CPP_MIN_LOG_LEVEL=3

# ---------------------------------------------------------------------------------------------------------
# Entries: "name|python|script". Each script takes --config --seed --timesteps [--no-eval] and prints one
# JSON result line on stdout (benchmarks/common.py: emit).
ENTRIES=(
    # ===== ours =====
    "ours-torch|$PY_OURS|benchmarks/ppo_cartpole.py --backend torch"
    "ours-jax|$PY_OURS|benchmarks/ppo_cartpole.py --backend jax"
    "ours-torch-collection|$PY_OURS|benchmarks/ppo_cartpole.py --backend torch --no-learning"
    # ===== peers =====
    "skrl-torch|$PY_TORCH_PEER|benchmarks/peers/skrl_torch_ppo_cartpole.py"
    "skrl-jax|$PY_JAX_PEER|benchmarks/peers/skrl_jax_ppo_cartpole.py"
    "sb3-torch|$PY_TORCH_PEER|benchmarks/peers/sb3_ppo_cartpole.py"
    # ===== collection-overhead baseline (no learning) =====
    "minimal-loop|$PY_OURS|benchmarks/minimal_loop.py"
)

record_env() {
    {
        echo "# $(date -Is) host=$(hostname) cores=$(nproc --all) pinned=${PIN_CPU:-no} load=$(cut -d' ' -f1-3 /proc/loadavg)"
        echo "# timesteps=$TIMESTEPS seeds=[$SEEDS] configs=[$CONFIGS]"
        "$PY_OURS" -c "import torch,jax,gymnasium;print('# ours venv: torch',torch.__version__,'jax',jax.__version__,'gymnasium',gymnasium.__version__)" 2>/dev/null
        "$PY_TORCH_PEER" -c "import torch,skrl,stable_baselines3 as s;print('# torch peer: torch',torch.__version__,'skrl',skrl.__version__,'sb3',s.__version__)" 2>/dev/null
        "$PY_JAX_PEER" -c "import jax,flax,skrl;print('# jax peer: jax',jax.__version__,'flax',flax.__version__,'skrl',skrl.__version__)" 2>/dev/null
    } | tee -a "$LOG"
}

run_entry() {  # name python script-with-flags config seed
    local name="$1" py="$2" cmd="$3" config="$4" seed="$5"
    local script="${cmd%% *}"
    if [[ " ${SKIP:-} " == *" $name "* ]]; then  # SKIP="skrl-jax sb3-torch" leaves entries out
        return 0
    fi
    if [[ ! -f "$script" ]]; then
        echo "skip $name: $script not written yet" | tee -a "$LOG"
        return 0
    fi
    if [[ ! -x "$py" ]]; then
        echo "skip $name: interpreter $py missing (run benchmarks/setup_peers.sh)" | tee -a "$LOG"
        return 0
    fi
    echo "run  $name config=$config seed=$seed" | tee -a "$LOG"
    local line
    # shellcheck disable=SC2086  # $cmd is "script [flags]" and must word-split
    line="$("${PIN[@]}" "$py" $cmd --config "$config" --seed "$seed" --timesteps "$TIMESTEPS" "${EXTRA[@]}" 2>>"$LOG" | tail -n 1)"
    if [[ "$line" == \{* ]]; then
        echo "$line" | tee -a "$OUT"
    else
        echo "FAILED $name config=$config seed=$seed (see $LOG)" | tee -a "$LOG"
    fi
}

record_env
n=${#ENTRIES[@]}
for config in $CONFIGS; do
    rot=0
    for seed in $SEEDS; do
        for ((k = 0; k < n; k++)); do
            IFS='|' read -r name py cmd <<< "${ENTRIES[$(((k + rot) % n))]}"
            run_entry "$name" "$py" "$cmd" "$config" "$seed"
        done
        rot=$((rot + 1))
    done
done

echo "results: $OUT"
python3 "$HERE/summarize.py" "$OUT" | tee "${OUT%.jsonl}.md"
