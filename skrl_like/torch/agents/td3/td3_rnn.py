"""skrl's ``TD3_RNN``: :class:`TD3` on sequences, see ``docs/recurrent.md``."""

from skrl_like.torch.agents.recurrent import RecurrentOffPolicyAgent
from skrl_like.torch.agents.td3.td3 import TD3


class TD3_RNN(RecurrentOffPolicyAgent, TD3):
    """Twin Delayed DDPG with a recurrent policy: :class:`TD3`'s arguments and config (:class:`RecurrentOffPolicyAgent`)."""
