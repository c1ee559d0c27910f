"""TD3 with recurrent models (skrl's ``TD3_RNN``; skrl's JAX backend has none), JAX backend: TD3's update on sequences
sampled from the replay memory.

The same config (``TD3_DEFAULT_CONFIG``) and constructor as :class:`~skrl_like.jax.agents.td3.TD3`; the hidden
states are carried, stored and fed by :class:`~skrl_like.jax.agents.recurrent.RecurrentOffPolicyAgent`.
"""

from skrl_like.jax.agents.recurrent import RecurrentOffPolicyAgent
from skrl_like.jax.agents.td3.td3 import TD3


class TD3_RNN(RecurrentOffPolicyAgent, TD3):
    """Twin Delayed DDPG with a recurrent policy (and optionally recurrent critics; see ``docs/recurrent.md``).

    Takes :class:`TD3`'s arguments. The policy is recurrent (``get_specification()["rnn"]``); recurrent critics
    have its hidden-state sizes; the memory holds at least one sequence (``memory_size >= sequence_length``), and an
    update draws ``batch_size`` sequences of ``sequence_length`` steps.
    """
