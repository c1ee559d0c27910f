"""skrl's ``SAC_RNN`` (skrl's JAX backend has none): :class:`SAC` on sequences, see ``docs/recurrent.md``."""

from skrl_like.jax.agents.recurrent import RecurrentOffPolicyAgent
from skrl_like.jax.agents.sac.sac import SAC


class SAC_RNN(RecurrentOffPolicyAgent, SAC):
    """Soft Actor-Critic with a recurrent policy: :class:`SAC`'s arguments and config (:class:`RecurrentOffPolicyAgent`)."""
