"""Tiny torch recurrent models for the ``_RNN`` agents' tests (the JAX mirror: tests/jax/recurrent_models.py)."""

import gymnasium
import torch
from torch import nn

from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.models.recurrent import hidden_state_sizes, make_recurrent_module, recurrent_forward

OBSERVATIONS = gymnasium.spaces.Box(-1.0, 1.0, (1,))
ACTIONS = gymnasium.spaces.Box(-1.0, 1.0, (1,))


class _Recurrent(Model):
    """A recurrent layer of ``hidden`` units over the observations (skrl's layouts, see docs/recurrent.md)."""

    def __init__(self, observation_space, action_space, num_envs, sequence_length, kind, hidden):
        Model.__init__(self, observation_space, action_space, "cpu")
        self.num_envs, self.sequence_length, self.kind, self.hidden = num_envs, sequence_length, kind, hidden
        self.rnn = make_recurrent_module(kind, self.num_observations, hidden)

    def get_specification(self):
        sizes = hidden_state_sizes(self.kind, 1, self.num_envs, self.hidden)
        return {"rnn": {"sequence_length": self.sequence_length, "sizes": sizes}}

    def features(self, inputs):
        return recurrent_forward(
            self.rnn, inputs["states"], inputs["rnn"], self.sequence_length, inputs.get("terminated"), self.training
        )


class RecurrentGaussianPolicy(GaussianMixin, _Recurrent):
    """mean = head(rnn(states)), a state-independent log standard deviation."""

    def __init__(self, observation_space, action_space, num_envs=2, sequence_length=2, kind="RNN", hidden=2):
        _Recurrent.__init__(self, observation_space, action_space, num_envs, sequence_length, kind, hidden)
        GaussianMixin.__init__(self, clip_actions=False)
        self.head = nn.Linear(hidden, self.num_actions)
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role=""):
        features, states = self.features(inputs)
        return self.head(features), self.log_std_parameter, {"rnn": states}


class RecurrentValue(DeterministicMixin, _Recurrent):
    def __init__(self, observation_space, action_space, num_envs=2, sequence_length=2, kind="LSTM", hidden=3):
        _Recurrent.__init__(self, observation_space, action_space, num_envs, sequence_length, kind, hidden)
        DeterministicMixin.__init__(self)
        self.head = nn.Linear(hidden, 1)

    def compute(self, inputs, role=""):
        features, states = self.features(inputs)
        return self.head(features), {"rnn": states}


class LinearValue(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space):
        Model.__init__(self, observation_space, action_space, "cpu")
        DeterministicMixin.__init__(self)
        self.linear = nn.Linear(self.num_observations, 1)

    def compute(self, inputs, role=""):
        return self.linear(inputs["states"]), {}
