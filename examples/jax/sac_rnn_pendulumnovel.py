"""Train SAC_RNN with a GRU on velocity-masked Pendulum ("PendulumNoVel": the angular velocity reads 0) with the JAX
backend (skrl's JAX backend has no recurrent agent), then evaluate with exploration off.

The mirror of examples/torch/sac_rnn_pendulumnovel.py: a GRU of 400 units, then skrl's [400, 300] ReLU layers, in
the policy and both critics, sequences of 20 steps sampled from the replay memory (each from the policy's hidden
state stored with its first step), and skrl's Pendulum SAC settings. A smaller --hidden-size trains faster on a CPU.
Run: python examples/jax/sac_rnn_pendulumnovel.py [--timesteps 15000] [--seed 42] [--cell GRU|LSTM|RNN]
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import gymnasium as gym
import jax.numpy as jnp
import numpy as np

from skrl_like.jax.agents.sac import SAC_DEFAULT_CONFIG, SAC_RNN
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.models.recurrent import RecurrentLayer, hidden_state_sizes
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed

MEMORY_SIZE = 20_000
SAC_CFG = {  # skrl's Pendulum SAC settings; the other keys keep SAC_DEFAULT_CONFIG's
    "discount_factor": 0.98,
    "batch_size": 100,  # sequences per gradient step
    "random_timesteps": 0,
    "learning_starts": 1000,
    "learn_entropy": True,
}


class RecurrentNet(Model):
    """A recurrent layer over the observations, then [400, 300] ReLU layers (reading the actions too, for a critic)."""

    num_envs: int = 1
    cell: str = "GRU"
    hidden_size: int = 400
    sequence_length: int = 20

    def __init__(
        self,
        observation_space,
        action_space,
        device=None,
        num_envs=1,
        cell="GRU",
        hidden_size=400,
        sequence_length=20,
        **kwargs,
    ):
        # flax fields: set before the module is built (flax rebuilds a module from them, by keyword)
        self.num_envs, self.cell, self.hidden_size, self.sequence_length = num_envs, cell, hidden_size, sequence_length
        Model.__init__(self, observation_space, action_space, device, **kwargs)

    def get_specification(self):
        sizes = hidden_state_sizes(self.cell, 1, self.num_envs, self.hidden_size)
        return {"rnn": {"sequence_length": self.sequence_length, "sizes": sizes}}

    def output(self, inputs, outputs, takes_actions):
        # acting: one step per environment; training (inputs["terminated"] given): sequences reset after the ends
        terminated = inputs.get("terminated")
        layer = RecurrentLayer(self.cell, self.hidden_size, 1, self.sequence_length, name="rnn")
        x, states = layer(inputs["states"], inputs["rnn"], terminated, terminated is not None)
        if takes_actions:
            x = jnp.concatenate([x, inputs["taken_actions"]], axis=-1)
        x = nn.relu(nn.Dense(300)(nn.relu(nn.Dense(400)(x))))
        return nn.Dense(outputs)(x), states


class Policy(GaussianMixin, RecurrentNet):
    def __init__(self, observation_space, action_space, device=None, **recurrent):
        RecurrentNet.__init__(self, observation_space, action_space, device, **recurrent)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)

    @nn.compact
    def __call__(self, inputs, role):
        output, states = self.output(inputs, self.num_actions, takes_actions=False)
        log_std = self.param("log_std_parameter", lambda _: jnp.zeros(self.num_actions))
        return 2 * nn.tanh(output), log_std, {"rnn": states}  # Pendulum's torque is in [-2, 2]


class Critic(DeterministicMixin, RecurrentNet):
    def __init__(self, observation_space, action_space, device=None, **recurrent):
        RecurrentNet.__init__(self, observation_space, action_space, device, **recurrent)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        output, states = self.output(inputs, 1, takes_actions=True)
        return output, {"rnn": states}


def make_env(num_envs=1):
    # skrl_like.envs registers PendulumNoVel-v1 (Pendulum-v1 with the velocity reading 0) when gymnasium imports it
    env = gym.make_vec("skrl_like.envs:PendulumNoVel-v1", num_envs=num_envs, vectorization_mode="sync")
    return wrap_env(env)


def make_agent(env, cell="GRU", hidden_size=400, sequence_length=20, experiment=None, **cfg):
    """A SAC_RNN agent for ``env``; keyword arguments override entries of ``SAC_CFG``."""
    recurrent = {"num_envs": env.num_envs, "cell": cell, "hidden_size": hidden_size, "sequence_length": sequence_length}
    spaces = {"observation_space": env.observation_space, "action_space": env.action_space}
    models = {"policy": Policy(**spaces, device=env.device, **recurrent)}
    for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
        models[role] = Critic(**spaces, device=env.device, **recurrent)
    for role, model in models.items():  # traced with zero hidden states of the specification's sizes
        model.init_state_dict(role)
    cfg = {**SAC_DEFAULT_CONFIG, **SAC_CFG, **cfg, "experiment": experiment or {"directory": "runs/jax/pendulumnovel"}}
    memory = RandomMemory(memory_size=MEMORY_SIZE, num_envs=env.num_envs, device=env.device, replacement=False)
    return SAC_RNN(models=models, memory=memory, cfg=cfg, device=env.device, **spaces)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=15_000, help="environment steps")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--cell", default="GRU", choices=["GRU", "LSTM", "RNN"])
    parser.add_argument("--hidden-size", type=int, default=400, help="units of the recurrent layer")
    parser.add_argument("--learning-starts", type=int, default=SAC_CFG["learning_starts"])
    parser.add_argument("--evaluation-episodes", type=int, default=20)
    args = parser.parse_args()

    set_seed(args.seed)
    env = make_env()
    agent = make_agent(env, cell=args.cell, hidden_size=args.hidden_size, learning_starts=args.learning_starts)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True})
    trainer.train()
    returns = np.array(trainer.evaluate_episodes(num_episodes=args.evaluation_episodes))
    print(f"Evaluation over {len(returns)} episodes (exploration off): mean return {returns.mean():.1f}")


if __name__ == "__main__":
    main()
