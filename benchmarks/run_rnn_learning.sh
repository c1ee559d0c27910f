#!/usr/bin/env bash
# Learning of the recurrent agents (issue 29), one process at a time; figures in docs/benchmarks.md.
#   bash benchmarks/run_rnn_learning.sh ppo                     # PPO_RNN GRU and feedforward PPO, masked CartPole
#   CELLS=LSTM bash benchmarks/run_rnn_learning.sh ppo          # PPO_RNN LSTM
#   BACKEND=jax CELLS=GRU bash benchmarks/run_rnn_learning.sh ppo
#   SEEDS="0 1" bash benchmarks/run_rnn_learning.sh sac         # SAC_RNN GRU and feedforward SAC, masked Pendulum
#   SEEDS=0 bash benchmarks/run_rnn_learning.sh others          # A2C_RNN (CartPole), TRPO_RNN and RPO_RNN (Pendulum)
#   BACKEND=jax AGENTS="SAC TD3 DDPG" bash benchmarks/run_rnn_learning.sh offpolicy  # feedforward, then GRU, masked Pendulum
# Results: benchmarks/results/$PREFIX-rnn-<what>.jsonl (one JSON line per run); stderr in benchmarks/results/$PREFIX-rnn.log
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/.."
PY="${PY_OURS:-.venv/bin/python}"
BACKEND="${BACKEND:-torch}"
PREFIX="${PREFIX:-s15}"
export OMP_NUM_THREADS=1 XLA_FLAGS="--xla_cpu_multi_thread_eigen=false"
# masked CartPole, on-policy: 8 envs x rollouts 128 (sequences of 16), 4 epochs x 4 mini-batches, standardised
# states and values, 200k env steps
CARTPOLE="--env cartpole --num-envs 8 --rollouts 128 --sequence-length 16 --epochs 4 --mini-batches 4 --gamma 0.99 \
--gae-lambda 0.95 --activation tanh --scale --timesteps 200000"
# masked Pendulum, SAC, TD3, DDPG: skrl 1.4.3's PendulumNoVel examples' agent settings (1 env, gamma 0.98, batch 100,
# learning_starts 1000, memory 20000, sequences of 20, their noises) with smaller networks and budget (docs/benchmarks.md)
PENDULUM="--env pendulum --num-envs 1 --sequence-length 20 --hidden 64 --mlp 64 --activation relu \
--batch-size ${SAC_BATCH:-100} --memory-size 20000 --learning-starts 1000 --timesteps ${SAC_TIMESTEPS:-10000}"

# masked Pendulum, on-policy (TRPO_RNN, RPO_RNN): skrl's PendulumNoVel TRPO/PPO GRU examples' settings (rollouts 1024
# on 1 env there; 4 envs x 256 here, the same 1024 rows of 32 sequences of 32), 10 epochs x 32 mini-batches,
# discount 0.9, KLAdaptiveLR (kl_threshold 0.008) for RPO's shared optimizer, 100k env steps
PENDULUM_ON="--env pendulum --num-envs 4 --rollouts 256 --sequence-length 32 --epochs 10 --mini-batches 32 \
--gamma 0.9 --gae-lambda 0.95 --activation relu --scale --timesteps ${ON_TIMESTEPS:-100000}"

run() {  # run OUTFILE ARGS...
    local out="$1"; shift
    echo "# $*" >>benchmarks/results/$PREFIX-rnn.log
    nice -n 10 "$PY" benchmarks/rnn_learning.py "$@" 2>>benchmarks/results/$PREFIX-rnn.log | tail -n 1 | tee -a "$out"
}

mkdir -p benchmarks/results
case "${1:-ppo}" in
    ppo)
        for cell in ${CELLS:-GRU none}; do
            for seed in ${SEEDS:-0 1 2 3 4}; do
                run "benchmarks/results/$PREFIX-rnn-ppo-${cell,,}-${BACKEND}.jsonl" --backend "$BACKEND" --agent PPO \
                    --cell "$cell" --seed "$seed" $CARTPOLE
            done
        done ;;
    sac)
        for cell in ${CELLS:-GRU none}; do
            for seed in ${SEEDS:-0 1 2}; do
                run "benchmarks/results/$PREFIX-rnn-sac-${cell,,}-${BACKEND}.jsonl" --backend "$BACKEND" --agent SAC \
                    --cell "$cell" --seed "$seed" $PENDULUM
            done
        done ;;
    offpolicy)  # SAC_RNN, TD3_RNN, DDPG_RNN and their feedforward controls on masked Pendulum
        for agent in ${AGENTS:-SAC TD3 DDPG}; do
            for cell in ${CELLS:-none GRU}; do
                for seed in ${SEEDS:-0 1 2 3 4}; do
                    run "benchmarks/results/$PREFIX-rnn-${agent,,}-${cell,,}-${BACKEND}.jsonl" --backend "$BACKEND" \
                        --agent "$agent" --cell "$cell" --seed "$seed" $PENDULUM
                done
            done
        done ;;
    others)  # A2C_RNN on masked CartPole; TRPO_RNN and RPO_RNN (Gaussian policies only) on masked Pendulum
        for agent in ${AGENTS:-A2C TRPO RPO}; do
            case "$agent" in
                A2C) settings="$CARTPOLE" ;;
                TRPO) settings="$PENDULUM_ON" ;;
                *) settings="$PENDULUM_ON --kl-adaptive 0.008" ;;
            esac
            for seed in ${SEEDS:-0}; do
                run "benchmarks/results/$PREFIX-rnn-others-${BACKEND}.jsonl" --backend "$BACKEND" --agent "$agent" \
                    --cell GRU --seed "$seed" $settings
            done
        done ;;
    *) echo "usage: $0 ppo|sac|offpolicy|others" >&2; exit 2 ;;
esac
