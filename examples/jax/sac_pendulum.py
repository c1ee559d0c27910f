"""Train SAC on Pendulum-v1 with the JAX backend, then evaluate with exploration off (the policy's mean action).

The mirror of examples/torch/sac_pendulum.py (the same hyperparameters, skrl's own Pendulum SAC example's).
Run: python examples/jax/sac_pendulum.py [--timesteps 15000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import gymnasium as gym
import jax.numpy as jnp
import numpy as np

from skrl_like.jax.agents.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed

# skrl's own Pendulum SAC example (torch_gymnasium_pendulum_sac.py): [400, 300] ReLU networks, a 20k replay memory
# sampled without replacement, 15k steps; the keys not set here keep SAC_DEFAULT_CONFIG's values (learning rates 1e-3,
# alpha from 0.2 with its learning rate 1e-3, polyak 0.005)
HIDDEN = (400, 300)
MEMORY_SIZE = 20_000
TIMESTEPS = 15_000
SAC_CFG = {
    "discount_factor": 0.98,
    "batch_size": 100,
    "random_timesteps": 0,
    "learning_starts": 1000,
    "learn_entropy": True,
}


def mlp(x, hidden):
    for width in hidden:
        x = nn.relu(nn.Dense(width)(x))
    return x


class Policy(GaussianMixin, Model):
    hidden: tuple = HIDDEN

    def __init__(self, observation_space, action_space, device=None, hidden=HIDDEN, **kwargs):
        self.hidden = tuple(hidden)
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)

    @nn.compact
    def __call__(self, inputs, role):
        log_std = self.param("log_std_parameter", lambda _: jnp.zeros(self.num_actions))
        # Pendulum-v1's torque is in [-2, 2]
        return 2 * nn.tanh(nn.Dense(self.num_actions)(mlp(inputs["states"], self.hidden))), log_std, {}


class Critic(DeterministicMixin, Model):
    hidden: tuple = HIDDEN

    def __init__(self, observation_space, action_space, device=None, hidden=HIDDEN, **kwargs):
        self.hidden = tuple(hidden)
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        x = jnp.concatenate([inputs["states"], inputs["taken_actions"]], axis=-1)
        return nn.Dense(1)(mlp(x, self.hidden)), {}


def make_agent(env, experiment=None, hidden=HIDDEN, memory_size=MEMORY_SIZE, **cfg):
    """A SAC agent for ``env``; keyword arguments override entries of ``SAC_CFG``."""
    cfg = {**SAC_DEFAULT_CONFIG, **SAC_CFG, **cfg, "experiment": experiment or {"directory": "runs/jax/pendulum"}}
    models = {"policy": Policy(env.observation_space, env.action_space, env.device, hidden)}
    for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
        models[role] = Critic(env.observation_space, env.action_space, env.device, hidden)
    for role, model in models.items():
        model.init_state_dict(role)
    memory = RandomMemory(memory_size=memory_size, num_envs=env.num_envs, device=env.device, replacement=False)
    return SAC(
        models=models,
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=TIMESTEPS, help="environment steps")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    set_seed(args.seed)
    env = wrap_env(gym.make("Pendulum-v1"))
    agent = make_agent(env)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=20)
    print(
        f"Final evaluation (20 episodes, exploration off): mean return {np.mean(returns):.1f} +- {np.std(returns):.1f}"
    )


if __name__ == "__main__":
    main()
