"""Train TD3 on Pendulum-v1 with the JAX backend, then evaluate with exploration off (the noiseless policy).

The mirror of examples/torch/td3_pendulum.py (the off-policy benchmark's hyperparameters, the paper's noises).
Every model is initialised with its own key: with one shared key the two critics would start, and stay, identical.
Run: python examples/jax/td3_pendulum.py [--timesteps 20000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.jax.agents.td3 import TD3, TD3_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, Model
from skrl_like.jax.resources.noises import GaussianNoise
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed

HIDDEN = (256, 256)
MEMORY_SIZE = 20_000
EXPLORATION_STD = 0.1  # GaussianNoise(0, EXPLORATION_STD), scaled from 1.0 to 1e-3 over the run
SMOOTHING_STD = 0.2  # GaussianNoise(0, SMOOTHING_STD) on the target policy's actions, clipped to 0.5
TD3_CFG = {
    "gradient_steps": 1,
    "batch_size": 256,
    "discount_factor": 0.99,
    "polyak": 0.005,
    "actor_learning_rate": 1e-3,
    "critic_learning_rate": 1e-3,
    "random_timesteps": 1000,
    "learning_starts": 1000,
    "policy_delay": 2,
    "smooth_regularization_clip": 0.5,
}


def mlp(x, hidden):
    for width in hidden:
        x = nn.relu(nn.Dense(width)(x))
    return x


class Actor(DeterministicMixin, Model):
    hidden: tuple = HIDDEN

    def __init__(self, observation_space, action_space, device=None, hidden=HIDDEN, **kwargs):
        self.hidden = tuple(hidden)
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self, clip_actions=False)

    @nn.compact
    def __call__(self, inputs, role):
        # Pendulum-v1's torque is in [-2, 2]
        return 2 * nn.tanh(nn.Dense(self.num_actions)(mlp(inputs["states"], self.hidden))), {}


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
    """A TD3 agent for ``env``; keyword arguments override entries of ``TD3_CFG``."""
    cfg = {
        **TD3_DEFAULT_CONFIG,
        **TD3_CFG,
        "exploration": {
            "noise": GaussianNoise(0, EXPLORATION_STD, device=env.device),
            "initial_scale": 1.0,
            "final_scale": 1e-3,
            "timesteps": None,
        },
        "smooth_regularization_noise": GaussianNoise(0, SMOOTHING_STD, device=env.device),
        **cfg,
        "experiment": experiment or {"directory": "runs/jax/pendulum"},
    }
    models = {
        role: Actor(env.observation_space, env.action_space, env.device, hidden) for role in ("policy", "target_policy")
    }
    for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
        models[role] = Critic(env.observation_space, env.action_space, env.device, hidden)
    for index, (role, model) in enumerate(models.items()):
        model.init_state_dict(role, key=jax.random.fold_in(config.jax.key, index))  # the targets are copied anyway
    memory = RandomMemory(memory_size=memory_size, num_envs=env.num_envs, device=env.device)
    return TD3(
        models=models,
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=20_000, help="environment steps")
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
