"""DDPG with recurrent models (skrl's ``DDPG_RNN``; skrl's JAX backend has none), JAX backend: DDPG's update on sequences
sampled from the replay memory.

The same config (``DDPG_DEFAULT_CONFIG``) and constructor as :class:`~skrl_like.jax.agents.ddpg.DDPG`; the hidden
states are carried, stored and fed by :class:`~skrl_like.jax.agents.recurrent.RecurrentOffPolicyAgent`.
"""

from skrl_like.jax.agents.ddpg.ddpg import DDPG
from skrl_like.jax.agents.recurrent import RecurrentOffPolicyAgent


class DDPG_RNN(RecurrentOffPolicyAgent, DDPG):
    """Deep Deterministic Policy Gradient with a recurrent policy (and optionally recurrent critics; see ``docs/recurrent.md``).

    Takes :class:`DDPG`'s arguments. The policy is recurrent (``get_specification()["rnn"]``); recurrent critics
    have its hidden-state sizes; the memory holds at least one sequence (``memory_size >= sequence_length``), and an
    update draws ``batch_size`` sequences of ``sequence_length`` steps.
    """
