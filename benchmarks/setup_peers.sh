#!/usr/bin/env bash
# Recreate the three benchmark-peer virtual environments OUTSIDE the repository.
#
#   /work/bench_venvs/torch : torch 2.13.0 (local CPU wheel) + skrl 1.4.3 + stable-baselines3 + gymnasium 1.4.0
#                             + pettingzoo 1.27.0 + mpe2 1.1.1 (benchmarks/multi_agent.py, the main venv's versions)
#   /work/bench_venvs/jax   : skrl 1.4.3 + jax/jaxlib 0.9.2 + flax 0.12.6 + optax 0.2.8 + gymnasium 1.4.0, NO torch
#   /work/bench_venvs/sbx   : sbx-rl 0.28.0 (SBX, the JAX port of Stable-Baselines3) + jax 0.10.2 and flax 0.12.8
#                             as our own venv + torch 2.13.0 (stable-baselines3 needs it) + gymnasium 1.4.0
#
# Usage:  bash benchmarks/setup_peers.sh [--force]      (BENCH_VENVS=/other/dir to relocate;
#                                                       ONLY="torch" or ONLY="torch jax" builds only those venvs)
#
# Why these pins (see /work/shared/spec/README.md §7 "Facts checked on this machine"):
#  * any torch spec other than ==2.13.0 pulls several GB of CUDA wheels; a constraints file pins it so no
#    transitive dependency (stable-baselines3 requires torch>=2.8) can upgrade it; stable-baselines3 is
#    pinned to the version first installed here (2.9.2) so reruns are identical;
#  * skrl 1.4.3's JAX backend calls jnp.clip(a_min=..., a_max=...), removed in jax 0.10 -> jax 0.9.2;
#  * flax 0.12.6 + optax 0.2.8 are the versions the spec (§7) found working with jax 0.9.2.
set -euo pipefail

ROOT="${BENCH_VENVS:-/work/bench_venvs}"
PY="${PYTHON:-python3}"
FORCE=0
ONLY="${ONLY:-torch jax sbx}"
wanted() { [[ " $ONLY " == *" $1 "* ]]; }
[[ "${1:-}" == "--force" ]] && FORCE=1

mkdir -p "$ROOT"
CONS_TORCH="$ROOT/constraints-torch.txt"
CONS_JAX="$ROOT/constraints-jax.txt"
CONS_SBX="$ROOT/constraints-sbx.txt"

cat > "$CONS_TORCH" <<'C'
torch==2.13.0
gymnasium==1.4.0
skrl==1.4.3
stable-baselines3==2.9.2
pettingzoo==1.27.0
mpe2==1.1.1
C
cat > "$CONS_JAX" <<'C'
jax==0.9.2
jaxlib==0.9.2
flax==0.12.6
optax==0.2.8
gymnasium==1.4.0
skrl==1.4.3
C

cat > "$CONS_SBX" <<'C'
torch==2.13.0
gymnasium==1.4.0
jax==0.10.2
jaxlib==0.10.2
flax==0.12.8
optax==0.2.8
stable-baselines3==2.9.2
sbx-rl==0.28.0
C

make_venv() {
    local dir="$1"
    if [[ -d "$dir" && $FORCE -eq 1 ]]; then rm -rf "$dir"; fi
    if [[ ! -x "$dir/bin/python" ]]; then "$PY" -m venv "$dir"; fi
}

# ---------------------------------------------------------------- torch peer venv
make_venv "$ROOT/torch"
# torch first, alone, so the local CPU wheel is what gets installed
"$ROOT/torch/bin/pip" install -c "$CONS_TORCH" "torch==2.13.0"
"$ROOT/torch/bin/pip" install -c "$CONS_TORCH" "skrl==1.4.3" "stable-baselines3" "gymnasium==1.4.0" "pettingzoo" "mpe2"

# ---------------------------------------------------------------- jax peer venv (no torch)
if wanted jax; then
make_venv "$ROOT/jax"
"$ROOT/jax/bin/pip" install -c "$CONS_JAX" "skrl==1.4.3" "jax==0.9.2" "jaxlib==0.9.2" "flax==0.12.6" \
    "optax==0.2.8" "gymnasium==1.4.0"
if "$ROOT/jax/bin/python" -c "import importlib.util,sys; sys.exit(importlib.util.find_spec('torch') is None)"; then
    echo "ERROR: torch ended up in $ROOT/jax (it must not be needed by skrl's JAX path)" >&2
    exit 1
fi
fi

# ---------------------------------------------------------------- SBX peer venv
if wanted sbx; then
make_venv "$ROOT/sbx"
"$ROOT/sbx/bin/pip" install -c "$CONS_SBX" "torch==2.13.0"
"$ROOT/sbx/bin/pip" install -c "$CONS_SBX" "sbx-rl==0.28.0"
fi

# ---------------------------------------------------------------- record exact versions
for name in $ONLY; do "$ROOT/$name/bin/pip" freeze > "$ROOT/$name-freeze.txt"; done
wanted torch && "$ROOT/torch/bin/python" -c "import torch, skrl, stable_baselines3, gymnasium as g; print('torch peer:', torch.__version__, 'skrl', skrl.__version__, 'sb3', stable_baselines3.__version__, 'gymnasium', g.__version__)"
wanted jax && "$ROOT/jax/bin/python" -c "import jax, flax, optax, skrl, gymnasium as g; print('jax peer:', jax.__version__, 'flax', flax.__version__, 'optax', optax.__version__, 'skrl', skrl.__version__, 'gymnasium', g.__version__)"
echo "peer venvs ready under $ROOT (freeze files: $ROOT/*-freeze.txt)"
