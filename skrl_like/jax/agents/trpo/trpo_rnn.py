"""Trust Region Policy Optimization with recurrent models (skrl's ``TRPO_RNN``; skrl's JAX backend has none), JAX backend.

The same config (``TRPO_DEFAULT_CONFIG``) and constructor as :class:`~skrl_like.jax.agents.trpo.TRPO`; the
hidden states are carried, stored and fed by :class:`~skrl_like.jax.agents.recurrent.RecurrentOnPolicyAgent`.
"""

from skrl_like.jax.agents.recurrent import RecurrentOnPolicyAgent
from skrl_like.jax.agents.trpo.trpo import TRPO


class TRPO_RNN(RecurrentOnPolicyAgent, TRPO):
    """TRPO with recurrent policy and/or value models (see ``docs/recurrent.md``).

    Takes :class:`TRPO`'s arguments. At least one model is recurrent (``get_specification()["rnn"]``); ``rollouts``
    is a multiple of its ``sequence_length`` and ``mini_batches`` divides the number of sequences of an update.
    """
