"""SAC with recurrent models (skrl's ``SAC_RNN``; skrl's JAX backend has none), JAX backend: SAC's update on sequences
sampled from the replay memory.

The same config (``SAC_DEFAULT_CONFIG``) and constructor as :class:`~skrl_like.jax.agents.sac.SAC`; the hidden
states are carried, stored and fed by :class:`~skrl_like.jax.agents.recurrent.RecurrentOffPolicyAgent`.
"""

from skrl_like.jax.agents.recurrent import RecurrentOffPolicyAgent
from skrl_like.jax.agents.sac.sac import SAC


class SAC_RNN(RecurrentOffPolicyAgent, SAC):
    """Soft Actor-Critic with a recurrent policy (and optionally recurrent critics; see ``docs/recurrent.md``).

    Takes :class:`SAC`'s arguments. The policy is recurrent (``get_specification()["rnn"]``); recurrent critics
    have its hidden-state sizes; the memory holds at least one sequence (``memory_size >= sequence_length``), and an
    update draws ``batch_size`` sequences of ``sequence_length`` steps.
    """
