"""PPO with recurrent models (skrl's ``PPO_RNN``; skrl's JAX backend has none), JAX backend: PPO's compiled update
on sequences of the rollout.

The same config (``PPO_DEFAULT_CONFIG``) and constructor as :class:`~skrl_like.jax.agents.ppo.PPO`; the hidden
states are carried, stored and fed by :class:`~skrl_like.jax.agents.recurrent.RecurrentOnPolicyAgent`.
"""

from skrl_like.jax.agents.ppo.ppo import PPO, PPO_DEFAULT_CONFIG  # skrl's file exports the config too
from skrl_like.jax.agents.recurrent import RecurrentOnPolicyAgent

__all__ = ["PPO_RNN", "PPO_DEFAULT_CONFIG"]


class PPO_RNN(RecurrentOnPolicyAgent, PPO):
    """Proximal Policy Optimization with recurrent policy and/or value models (see ``docs/recurrent.md``).

    Takes :class:`PPO`'s arguments. At least one model is recurrent (``get_specification()["rnn"]``); ``rollouts`` is
    a multiple of its ``sequence_length`` and ``mini_batches`` divides the number of sequences of an update.
    """
