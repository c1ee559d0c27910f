#!/usr/bin/env bash
# Issue 28's Isaac Lab-shaped PPO side by side: skrl_like, the plain-torch floor, skrl 1.4.3, skrl 2.1.1 and
# rsl_rl (separate models only) on the stand-in env with Isaac Lab's Ant skrl config, one process at a time, the
# entry order rotating by one position per seed; one JSON line per run appended to $OUT.
# Peer venvs (git-ignored, in the worktree): see docs/benchmarks.md, "Isaac Lab-shaped PPO (issue 28)".
#
#   NUM_ENVS=4096 SEEDS="0 1 2" bash benchmarks/run_isaaclab_ppo.sh                  # shared model (no rsl_rl)
#   NUM_ENVS=4096 SEPARATE=1 SEEDS="0 1 2" bash benchmarks/run_isaaclab_ppo.sh       # separate models, with rsl_rl
#   NUM_ENVS=1024 TIMESTEPS=32 SEEDS=0 ENTRIES="ours floor" bash benchmarks/run_isaaclab_ppo.sh
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/.."
NUM_ENVS="${NUM_ENVS:-4096}"
TIMESTEPS="${TIMESTEPS:-64}"
SEEDS="${SEEDS:-0 1 2}"
if [[ -n "${SEPARATE:-}" ]]; then DEFAULT="ours floor skrl14 skrl21 rslrl"; else DEFAULT="ours floor skrl14 skrl21"; fi
ENTRIES=(${ENTRIES:-$DEFAULT})
OUT="${OUT:-$HERE/results/isaaclab-ppo-$(date +%Y%m%d-%H%M%S).jsonl}"
mkdir -p "$(dirname "$OUT")"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
ARGS=(--num-envs "$NUM_ENVS" --timesteps "$TIMESTEPS")
[[ -n "${SEPARATE:-}" ]] && ARGS+=(--separate)
run_entry() {  # entry seed
  local command
  case "$1" in
    ours) command=(.venv/bin/python benchmarks/isaaclab_standin_ppo.py) ;;
    floor) command=(.venv/bin/python benchmarks/torch_ppo_floor.py) ;;
    skrl14) command=(.bench_venv_skrl14/bin/python benchmarks/peers/skrl_isaaclab_ppo.py) ;;
    skrl21) command=(.bench_venv_skrl21/bin/python benchmarks/peers/skrl_isaaclab_ppo.py) ;;
    rslrl) command=(.bench_venv_rslrl/bin/python benchmarks/peers/rsl_rl_isaaclab_ppo.py) ;;
    *) echo "unknown entry $1 (ours floor skrl14 skrl21 rslrl)" >&2; return 1 ;;
  esac
  "${command[@]}" "${ARGS[@]}" --seed "$2" 2>> "${OUT%.jsonl}.log" | tail -n 1 >> "$OUT" || echo "failed: $1 $2" >> "${OUT%.jsonl}.log"
}
shift_by=0
for seed in $SEEDS; do
  count=${#ENTRIES[@]}
  for ((i = 0; i < count; i++)); do
    run_entry "${ENTRIES[$(((i + shift_by) % count))]}" "$seed"
  done
  shift_by=$((shift_by + 1))
done
echo "results: $OUT"
[[ -f "$HERE/summarize_isaaclab.py" ]] && .venv/bin/python "$HERE/summarize_isaaclab.py" "$OUT"
