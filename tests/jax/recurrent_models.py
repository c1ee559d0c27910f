"""Tiny JAX recurrent models for the ``_RNN`` agents' tests (the torch mirror: tests/torch/recurrent_models.py).

The sizes are class attributes, so a test binds others with a two-line subclass (which keeps ``Model``'s
constructor). Parameters: ``rnn/layer_0/cell/*`` (the flax cell), ``head/*`` and the policy's ``log_std_parameter``.
"""

import flax.linen as nn
import gymnasium
import jax.numpy as jnp

from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.models.recurrent import RecurrentLayer, hidden_state_sizes

OBSERVATIONS = gymnasium.spaces.Box(-1.0, 1.0, (1,))
ACTIONS = gymnasium.spaces.Box(-1.0, 1.0, (1,))


def _specification(model) -> dict:
    sizes = hidden_state_sizes(model.kind, 1, model.num_envs, model.hidden)
    return {"rnn": {"sequence_length": model.sequence_length, "sizes": sizes}}


def _features(model, inputs):
    terminated = inputs.get("terminated")  # given in the training layout only
    return model.rnn(inputs["states"], inputs["rnn"], terminated, terminated is not None)


class RecurrentGaussianPolicy(GaussianMixin, Model):
    """mean = head(rnn(states)), a state-independent log standard deviation."""

    num_envs, sequence_length, kind, hidden = 2, 2, "RNN", 2

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self, clip_actions=False)

    def setup(self):
        self.rnn = RecurrentLayer(self.kind, self.hidden, 1, self.sequence_length)
        self.head = nn.Dense(self.num_actions)
        self.log_std_parameter = self.param("log_std_parameter", lambda _: jnp.zeros(self.num_actions))

    def get_specification(self):
        return _specification(self)

    def __call__(self, inputs, role=""):
        features, states = _features(self, inputs)
        return self.head(features), self.log_std_parameter, {"rnn": states}


class RecurrentValue(DeterministicMixin, Model):
    num_envs, sequence_length, kind, hidden = 2, 2, "LSTM", 3

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    def setup(self):
        self.rnn = RecurrentLayer(self.kind, self.hidden, 1, self.sequence_length)
        self.head = nn.Dense(1)

    def get_specification(self):
        return _specification(self)

    def __call__(self, inputs, role=""):
        features, states = _features(self, inputs)
        return self.head(features), {"rnn": states}


class LinearValue(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role=""):
        return nn.Dense(1)(inputs["states"]), {}
