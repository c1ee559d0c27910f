"""The compiled JAX PPO update alone, in one process or in each of the launcher's processes: milliseconds per update.

    .venv/bin/python benchmarks/distributed_ppo_update.py --calls 30
    .venv/bin/python -m skrl_like.jax.utils.distributed --nproc-per-node 2 benchmarks/distributed_ppo_update.py

The shapes of the ``cleanrl`` configuration per process (128 rollouts x 2 environments, 4 epochs x 4 mini-batches,
64x64 tanh networks) on a rollout of random numbers; no environment, so what differs between one and two processes
is the collectives inside the update (and the program compiled for them). Two warm-up updates (compilation), then
``--calls`` timed ones. Rank 0 prints one JSON line.
"""

import argparse
import json
import time

import flax.linen as nn
import gymnasium
import jax
import numpy as np

from skrl_like import config
from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, Model

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (4,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(2)
ROLLOUTS, NUM_ENVS = 128, 2


def mlp(inputs, outputs):
    return nn.Dense(outputs)(nn.tanh(nn.Dense(64)(nn.tanh(nn.Dense(64)(inputs)))))


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return mlp(inputs["states"], 2), {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return mlp(inputs["states"], 1), {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=30, help="timed updates (after two warm-up ones)")
    args = parser.parse_args()
    distributed = config.jax.is_distributed
    config.jax.key = 0
    models = {"policy": Policy(OBSERVATIONS, ACTIONS), "value": Value(OBSERVATIONS, ACTIONS)}
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": ROLLOUTS,
        "learning_epochs": 4,
        "mini_batches": 4,
        "learning_rate": 1e-3,
        "value_loss_scale": 0.5,
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    memory = RandomMemory(memory_size=ROLLOUTS, num_envs=NUM_ENVS)
    agent = PPO(models, memory, OBSERVATIONS, ACTIONS, None, cfg)
    agent.init()
    rng = np.random.default_rng(config.jax.rank if distributed else 0)
    for _ in range(ROLLOUTS):
        memory.add_samples(
            states=rng.normal(size=(NUM_ENVS, 4)).astype(np.float32),
            actions=rng.integers(0, 2, size=(NUM_ENVS, 1)).astype(np.float32),
            rewards=rng.normal(size=(NUM_ENVS, 1)).astype(np.float32),
            next_states=rng.normal(size=(NUM_ENVS, 4)).astype(np.float32),
            terminated=np.zeros((NUM_ENVS, 1), np.int8),
            truncated=np.zeros((NUM_ENVS, 1), np.int8),
        )
    agent.set_mode("train")
    for _ in range(2):
        agent._update(ROLLOUTS, 10**6)
    jax.block_until_ready(agent.policy.state_dict.params)
    began = time.perf_counter()
    for _ in range(args.calls):
        agent._update(ROLLOUTS, 10**6)
    jax.block_until_ready(agent.policy.state_dict.params)
    milliseconds = (time.perf_counter() - began) / args.calls * 1e3
    if not distributed or config.jax.rank == 0:
        processes = config.jax.world_size if distributed else 1
        print(json.dumps({"library": "skrl_like", "processes": processes, "ms_per_update": round(milliseconds, 2)}))


if __name__ == "__main__":
    main()
