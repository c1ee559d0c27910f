#!/usr/bin/env bash
# One GPU session's checks and benchmarks (issues 27 and 28), run by the `device` tool on a lent machine:
#   carry: .whl   command: bash benchmarks/gpu_session.sh
# .whl/ (git-ignored) holds the wheels the GPU image lacks: gymnasium (+ farama-notifications), brax 0.14.2 with
# mujoco/mujoco-mjx 3.3.7 and what brax imports, rsl-rl-lib 5.5.1 (+ tensordict, GitPython), and skrl 1.4.3 / 2.1.1
# in .whl/skrl14, .whl/skrl21 (each installed to its own folder, so the two never meet in one process).
# Sections run in order of priority, each under its own timeout; a section that would start after BUDGET seconds is
# skipped. Every JSON line goes to $OUT/gpu.jsonl, the logs to $OUT/*.log.
set -u
OUT="${OUT:-/tmp/gpu_out}"
BUDGET="${BUDGET:-480}"
SEEDS="${SEEDS:-0 1 2}"
TIMESTEPS="${TIMESTEPS:-320}"
NUM_ENVS="${NUM_ENVS:-4096}"
DEVICE="${DEVICE:-cuda:0}"
WHEELS="${WHEELS:-.whl}"
mkdir -p "$OUT"
START=$SECONDS
LINES="$OUT/gpu.jsonl"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false TF_CPP_MIN_LOG_LEVEL=3 GIT_PYTHON_REFRESH=quiet

install() {  # target wheels...
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$@" >/dev/null 2>&1 \
    || echo "install into $1 failed" >>"$OUT/setup.log"
}
install /tmp/site "$WHEELS"/*.whl
install /tmp/skrl14 "$WHEELS"/skrl14/*.whl
install /tmp/skrl21 "$WHEELS"/skrl21/*.whl
BASE="/tmp/site:$PWD"
export PYTHONPATH="$BASE"
{ nvidia-smi -L; python3 -c "import sys, torch, jax; print(sys.version.split()[0], 'torch', torch.__version__, \
'jax', jax.__version__, jax.devices())"; } >>"$OUT/setup.log" 2>&1

due() {  # name: whether the section is chosen ($ONLY: names, default all) and there is time left for it
  [[ -n "${ONLY:-}" && " $ONLY " != *" $1 "* ]] && return 1
  if ((SECONDS - START > BUDGET)); then echo "skipped $1 at $((SECONDS - START)) s" >>"$OUT/setup.log"; return 1; fi
  echo "start $1 at $((SECONDS - START)) s" >>"$OUT/setup.log"
}

entry() {  # library seed separate: one Isaac Lab-shaped PPO run on $DEVICE ($NUM_ENVS envs)
  local path="$BASE" script=benchmarks/isaaclab_standin_ppo.py extra=()
  case "$1" in
    floor) script=benchmarks/torch_ppo_floor.py ;;
    skrl14) path="/tmp/skrl14:$BASE"; script=benchmarks/peers/skrl_isaaclab_ppo.py ;;
    skrl21) path="/tmp/skrl21:$BASE"; script=benchmarks/peers/skrl_isaaclab_ppo.py ;;
    rslrl) script=benchmarks/peers/rsl_rl_isaaclab_ppo.py ;;
    jax) extra=(--backend jax) ;;
    jax-host) extra=(--backend jax --memory-storage host) ;;
    jax-device) extra=(--backend jax --memory-storage device) ;;
  esac
  [[ "$3" == 1 ]] && extra+=(--separate)
  PYTHONPATH="$path" timeout 60 python3 "$script" --num-envs "$NUM_ENVS" --timesteps "$TIMESTEPS" --device "$DEVICE" \
    --seed "$2" "${extra[@]}" 2>>"$OUT/isaaclab.log" | tail -n 1 >>"$LINES"
}

side_by_side() {  # separate entries...: the entries rotate by one position per seed
  local separate=$1 shift_by=0
  shift
  local entries=("$@") count=$#
  for seed in $SEEDS; do
    for ((i = 0; i < count; i++)); do entry "${entries[$(((i + shift_by) % count))]}" "$seed" "$separate"; done
    shift_by=$((shift_by + 1))
  done
}

if due torch-gpu-tests; then
  timeout 120 python3 -m pytest -q -p no:cacheprovider tests/torch/test_loop_on_device.py \
    tests/envs/test_isaaclab_standin.py -k "gpu or cuda" >"$OUT/torch_tests.log" 2>&1
fi
due isaaclab-shared && side_by_side 0 ours floor skrl14 skrl21
due isaaclab-separate && side_by_side 1 ours floor skrl14 rslrl
if due compiled-update; then
  timeout 150 python3 benchmarks/ppo_update_compiled.py --device "$DEVICE" --num-envs "$NUM_ENVS" --repeats 5 2>>"$OUT/compiled.log" \
    | tail -n 1 >>"$LINES"
fi
if due brax; then
  timeout 150 python3 benchmarks/brax_ppo.py --num_envs 1024 --rollouts 32 --updates 10 --label gpu \
    >>"$OUT/brax.log" 2>&1
  grep -h '"brax_ppo"' benchmarks/results/brax_ppo.jsonl >>"$LINES" 2>/dev/null
fi
due jax-isaaclab && entry jax 0 0
if due jax-storage; then  # the JAX memory's two storages, alternated
  for seed in ${SEEDS% *}; do entry jax-host "$seed" 0; entry jax-device "$seed" 0; done
fi
if due jax-loop-tests; then
  timeout 150 python3 -m pytest -q -p no:cacheprovider tests/jax/test_loop_on_device.py \
    tests/jax/test_memory_storages.py >"$OUT/jax_tests.log" 2>&1
fi
echo "done at $((SECONDS - START)) s" >>"$OUT/setup.log"
cat "$OUT/setup.log"
tail -n 3 "$OUT"/*tests.log
