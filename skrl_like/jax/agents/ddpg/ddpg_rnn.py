"""skrl's ``DDPG_RNN`` (skrl's JAX backend has none): :class:`DDPG` on sequences, see ``docs/recurrent.md``."""

from skrl_like.jax.agents.ddpg.ddpg import DDPG
from skrl_like.jax.agents.recurrent import RecurrentOffPolicyAgent


class DDPG_RNN(RecurrentOffPolicyAgent, DDPG):
    """Deep Deterministic Policy Gradient with a recurrent policy: :class:`DDPG`'s arguments and config (:class:`RecurrentOffPolicyAgent`)."""
