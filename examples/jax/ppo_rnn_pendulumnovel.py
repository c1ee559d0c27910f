"""Train PPO_RNN with a GRU on velocity-masked Pendulum ("PendulumNoVel": the angular velocity reads 0) with the JAX
backend (skrl's JAX backend has no recurrent agent), then evaluate with exploration off and play one episode with
``compute_action`` carrying the hidden state.

The mirror of examples/torch/ppo_rnn_pendulumnovel.py: skrl's PendulumNoVel PPO GRU settings (4 envs, rollouts
1024, sequences of 128 steps, 10 epochs x 32 mini-batches of one sequence each, KLAdaptiveLR, standardised states
and values). The recurrent layer is ``skrl_like.jax.models.recurrent.RecurrentLayer``: one step per environment
while acting, a scan over each sequence (reset after ``inputs["terminated"]``) in the update. See docs/recurrent.md.
Run: python examples/jax/ppo_rnn_pendulumnovel.py [--timesteps 400000] [--seed 42] [--cell GRU|LSTM|RNN]
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import gymnasium as gym
import jax.numpy as jnp
import numpy as np

from skrl_like.jax.agents.ppo import PPO_DEFAULT_CONFIG, PPO_RNN
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.models.recurrent import RecurrentLayer, hidden_state_sizes
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.resources.schedulers import KLAdaptiveLR
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed


class RecurrentModel(Model):
    """A recurrent layer over the observations, then a 64-unit ReLU layer and the output layer."""

    num_envs: int = 1
    cell: str = "GRU"
    hidden_size: int = 64
    sequence_length: int = 128

    def __init__(
        self,
        observation_space,
        action_space,
        device=None,
        num_envs=1,
        cell="GRU",
        hidden_size=64,
        sequence_length=128,
        **kwargs,
    ):
        # flax fields: set before the module is built (flax rebuilds a module from them, by keyword)
        self.num_envs, self.cell, self.hidden_size, self.sequence_length = num_envs, cell, hidden_size, sequence_length
        Model.__init__(self, observation_space, action_space, device, **kwargs)

    def get_specification(self):
        sizes = hidden_state_sizes(self.cell, 1, self.num_envs, self.hidden_size)
        return {"rnn": {"sequence_length": self.sequence_length, "sizes": sizes}}

    def output(self, inputs, outputs):
        # acting: one step per environment; training (inputs["terminated"] given): sequences reset after the ends
        terminated = inputs.get("terminated")
        layer = RecurrentLayer(self.cell, self.hidden_size, 1, self.sequence_length, name="rnn")
        features, states = layer(inputs["states"], inputs["rnn"], terminated, terminated is not None)
        return nn.Dense(outputs)(nn.relu(nn.Dense(64)(features))), states


class Policy(GaussianMixin, RecurrentModel):
    def __init__(self, observation_space, action_space, device=None, **recurrent):
        RecurrentModel.__init__(self, observation_space, action_space, device, **recurrent)
        GaussianMixin.__init__(self, clip_actions=True, clip_log_std=True, min_log_std=-20, max_log_std=2)

    @nn.compact
    def __call__(self, inputs, role):
        output, states = self.output(inputs, self.num_actions)
        log_std = self.param("log_std_parameter", lambda _: jnp.zeros(self.num_actions))
        return 2 * nn.tanh(output), log_std, {"rnn": states}


class Value(DeterministicMixin, RecurrentModel):
    def __init__(self, observation_space, action_space, device=None, **recurrent):
        RecurrentModel.__init__(self, observation_space, action_space, device, **recurrent)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        output, states = self.output(inputs, 1)
        return output, {"rnn": states}


def make_env(num_envs):
    # skrl_like.envs registers PendulumNoVel-v1 (Pendulum-v1 with the velocity reading 0) when gymnasium imports it
    env = gym.make_vec("skrl_like.envs:PendulumNoVel-v1", num_envs=num_envs, vectorization_mode="sync")
    return wrap_env(env)


def make_agent(env, cell="GRU", rollouts=1024, sequence_length=128, mini_batches=32, experiment=None):
    """The same hyperparameters as the torch example."""
    recurrent = {"num_envs": env.num_envs, "cell": cell, "hidden_size": 64, "sequence_length": sequence_length}
    cfg = {
        **PPO_DEFAULT_CONFIG,  # ratio and value clips 0.2, grad_norm_clip 0.5, lambda 0.95, lr 1e-3 as skrl's
        "rollouts": rollouts,
        "learning_epochs": 10,
        "mini_batches": mini_batches,
        "discount_factor": 0.9,
        "learning_rate_scheduler": KLAdaptiveLR,
        "learning_rate_scheduler_kwargs": {"kl_threshold": 0.008},
        "value_loss_scale": 0.5,
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": env.observation_space, "device": env.device},
        "value_preprocessor": RunningStandardScaler,
        "value_preprocessor_kwargs": {"size": 1, "device": env.device},
        "experiment": experiment or {"directory": "runs/jax/pendulumnovel"},
    }
    spaces = {"observation_space": env.observation_space, "action_space": env.action_space}
    models = {"policy": Policy(**spaces, device=env.device, **recurrent)}
    models["value"] = Value(**spaces, device=env.device, **recurrent)
    for role, model in models.items():
        model.init_state_dict(role)  # traced with zero hidden states of the specification's sizes
    memory = RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device)
    return PPO_RNN(models=models, memory=memory, cfg=cfg, device=env.device, **spaces)


def play_one_episode(agent):
    """Deployment: a plain gymnasium env and ``compute_action``, the hidden state carried from step to step."""
    env = gym.make("skrl_like.envs:PendulumNoVel-v1")
    observation, _ = env.reset(seed=0)
    hidden_states, total, done = None, 0.0, False  # None: zero hidden states, a new episode
    while not done:
        action, hidden_states = agent.compute_action(observation, hidden_states=hidden_states)
        observation, reward, terminated, truncated, _ = env.step(action)
        total, done = total + reward, terminated or truncated
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=400_000, help="environment steps in total (all envs)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--cell", default="GRU", choices=["GRU", "LSTM", "RNN"])
    parser.add_argument("--rollouts", type=int, default=1024, help="a multiple of the sequence length")
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--evaluation-episodes", type=int, default=20)
    args = parser.parse_args()

    set_seed(args.seed)
    env = make_env(num_envs=4)
    # mini-batches of one sequence each, as skrl's settings (32 with the defaults)
    mini_batches = args.rollouts // args.sequence_length * env.num_envs
    agent = make_agent(env, args.cell, args.rollouts, args.sequence_length, mini_batches)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps // 4, "headless": True})
    trainer.train()
    returns = np.array(trainer.evaluate_episodes(num_episodes=args.evaluation_episodes))
    print(f"Evaluation over {len(returns)} episodes (exploration off): mean return {returns.mean():.1f}")
    print(f"One episode with compute_action and a carried hidden state: return {play_one_episode(agent):.1f}")


if __name__ == "__main__":
    main()
