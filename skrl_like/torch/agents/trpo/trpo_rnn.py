"""Trust Region Policy Optimization with recurrent models (skrl's ``TRPO_RNN``), torch backend.

The same config (``TRPO_DEFAULT_CONFIG``) and constructor as :class:`~skrl_like.torch.agents.trpo.TRPO`; the
hidden states are carried, stored and fed by :class:`~skrl_like.torch.agents.recurrent.RecurrentOnPolicyAgent`.
"""

from typing import Any

import torch

from skrl_like.torch.agents.recurrent import RecurrentOnPolicyAgent
from skrl_like.torch.agents.trpo.trpo import TRPO


class TRPO_RNN(RecurrentOnPolicyAgent, TRPO):
    """TRPO with recurrent policy and/or value models (see ``docs/recurrent.md``).

    Takes :class:`TRPO`'s arguments. At least one model is recurrent (``get_specification()["rnn"]``); ``rollouts``
    is a multiple of its ``sequence_length`` and ``mini_batches`` divides the number of sequences of an update.
    """

    def _policy_step(self, *args: Any, **kwargs: Any) -> Any:
        # the Fisher-vector products differentiate twice, which cuDNN's recurrent kernels cannot (as skrl)
        with torch.backends.cudnn.flags(enabled=False):
            return super()._policy_step(*args, **kwargs)
