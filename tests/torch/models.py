"""The tiny torch models, CartPole builders and rollout recorder that several torch test files use (the JAX mirror:
tests/jax/models.py).

The widths are class attributes so that a file whose numbers were taken with another width binds it once with a
two-line subclass; every model draws its parameters in the same order as the copies it replaced.
"""

import gymnasium
import torch
import torch.nn as nn

from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.models import CategoricalMixin, DeterministicMixin, Model


class CategoricalMlp(CategoricalMixin, Model):
    """A categorical policy: logits from one Tanh layer of ``hidden`` units."""

    hidden = 16

    def __init__(self, observation_space, action_space, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        CategoricalMixin.__init__(self)
        self.net = nn.Sequential(
            nn.Linear(self.num_observations, self.hidden), nn.Tanh(), nn.Linear(self.hidden, self.num_actions)
        )

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class ValueMlp(DeterministicMixin, Model):
    """A state value: one output from one Tanh layer of ``hidden`` units."""

    hidden = 16

    def __init__(self, observation_space, action_space, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_observations, self.hidden), nn.Tanh(), nn.Linear(self.hidden, 1))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class SharedCategoricalValue(CategoricalMixin, DeterministicMixin, Model):
    """One model for both roles: a Tanh body of 16 units with a logits head (policy) and a value head (value)."""

    def __init__(self, observation_space, action_space, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        CategoricalMixin.__init__(self, role="policy")
        DeterministicMixin.__init__(self, role="value")
        self.body = nn.Sequential(nn.Linear(self.num_observations, 16), nn.Tanh())
        self.policy_head, self.value_head = nn.Linear(16, self.num_actions), nn.Linear(16, 1)

    def act(self, inputs, role):
        mixin = CategoricalMixin if role == "policy" else DeterministicMixin
        return mixin.act(self, inputs, role)

    def compute(self, inputs, role):
        hidden = self.body(inputs["states"])
        return (self.policy_head(hidden) if role == "policy" else self.value_head(hidden)), {}


class StateActionCritic(DeterministicMixin, Model):
    """A Q-function of the concatenated states and actions: one linear layer, or a ReLU layer of ``hidden`` units."""

    def __init__(self, observation_space, action_space, hidden=0):
        Model.__init__(self, observation_space, action_space, "cpu")
        DeterministicMixin.__init__(self)
        size = self.num_observations + self.num_actions
        self.net = (
            nn.Sequential(nn.Linear(size, hidden), nn.ReLU(), nn.Linear(hidden, 1)) if hidden else nn.Linear(size, 1)
        )

    def compute(self, inputs, role):
        return self.net(torch.cat([inputs["states"], inputs["taken_actions"]], dim=1)), {}


class LinearDeterministicPolicy(DeterministicMixin, Model):
    """A deterministic policy of one linear layer: the model of the wrong kind in the tests that refuse one."""

    def __init__(self, observation_space, action_space, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Linear(self.num_observations, self.num_actions)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def vector_cartpole(num_envs=4):
    """CartPole-v1 as a synchronous gymnasium vector env (even of one env), wrapped."""
    return wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def cartpole(num_envs=1):
    """CartPole-v1 wrapped: the plain env for one env, a synchronous vector env for more."""
    if num_envs == 1:
        return wrap_env(gymnasium.make("CartPole-v1"), verbose=False)
    return vector_cartpole(num_envs)


def record_rollout(agent, data):
    """Record a hand-made rollout through ``record_transition``: ``data`` holds ``states`` (one step more than the
    others: the last step's next states), ``actions``, ``rewards`` and ``terminated`` arrays of shape
    (steps, num_envs, ...); no step is truncated."""
    rollouts, num_envs = data["actions"].shape[:2]
    for t in range(rollouts):
        agent.record_transition(
            states=torch.from_numpy(data["states"][t]),
            actions=torch.from_numpy(data["actions"][t]),
            rewards=torch.from_numpy(data["rewards"][t]),
            next_states=torch.from_numpy(data["states"][t + 1]),
            terminated=torch.from_numpy(data["terminated"][t]),
            truncated=torch.zeros(num_envs, 1, dtype=torch.bool),
            infos={},
            timestep=t,
            timesteps=rollouts,
        )
