"""skrl's ``SAC_RNN``: :class:`SAC` on sequences, see ``docs/recurrent.md``."""

from skrl_like.torch.agents.recurrent import RecurrentOffPolicyAgent
from skrl_like.torch.agents.sac.sac import SAC


class SAC_RNN(RecurrentOffPolicyAgent, SAC):
    """Soft Actor-Critic with a recurrent policy: :class:`SAC`'s arguments and config (:class:`RecurrentOffPolicyAgent`)."""
