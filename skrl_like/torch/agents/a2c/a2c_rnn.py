"""Advantage Actor-Critic with recurrent models (skrl's ``A2C_RNN``), torch backend.

The same config (``A2C_DEFAULT_CONFIG``) and constructor as :class:`~skrl_like.torch.agents.a2c.A2C`; the
hidden states are carried, stored and fed by :class:`~skrl_like.torch.agents.recurrent.RecurrentOnPolicyAgent`.
"""

from skrl_like.torch.agents.a2c.a2c import A2C
from skrl_like.torch.agents.recurrent import RecurrentOnPolicyAgent


class A2C_RNN(RecurrentOnPolicyAgent, A2C):
    """A2C with recurrent policy and/or value models (see ``docs/recurrent.md``).

    Takes :class:`A2C`'s arguments. At least one model is recurrent (``get_specification()["rnn"]``); ``rollouts``
    is a multiple of its ``sequence_length`` and ``mini_batches`` divides the number of sequences of an update.
    """
