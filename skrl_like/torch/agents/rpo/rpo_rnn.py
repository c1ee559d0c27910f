"""Robust Policy Optimization with recurrent models (skrl's ``RPO_RNN``), torch backend.

The same config (``RPO_DEFAULT_CONFIG``) and constructor as :class:`~skrl_like.torch.agents.rpo.RPO`; the
hidden states are carried, stored and fed by :class:`~skrl_like.torch.agents.recurrent.RecurrentOnPolicyAgent`.
"""

from skrl_like.torch.agents.recurrent import RecurrentOnPolicyAgent
from skrl_like.torch.agents.rpo.rpo import RPO


class RPO_RNN(RecurrentOnPolicyAgent, RPO):
    """RPO with recurrent policy and/or value models (see ``docs/recurrent.md``).

    Takes :class:`RPO`'s arguments. At least one model is recurrent (``get_specification()["rnn"]``); ``rollouts``
    is a multiple of its ``sequence_length`` and ``mini_batches`` divides the number of sequences of an update.
    """
