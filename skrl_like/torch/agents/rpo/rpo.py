"""Robust Policy Optimization (RPO), torch backend.

Rahman and Xue, "Robust Policy Optimization in Deep Reinforcement Learning", 2022. Exactly PPO (same rollout,
losses, epochs and mini-batches) with one more input to every policy and value call: ``"alpha": cfg["alpha"]``,
which the user's Gaussian policy uses to perturb its mean action by ``U(-alpha, alpha)`` (the agent perturbs
nothing itself). The perturbation is drawn from torch's global random generator, so ``set_seed`` reproduces it.
"""

from typing import Any, Mapping

import torch

from skrl_like.core.agents import rpo as neutral
from skrl_like.core.agents.config import with_backend_keys
from skrl_like.torch.agents.ppo import PPO

RPO_DEFAULT_CONFIG = with_backend_keys(
    neutral.RPO_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
    compile_update=False,  # torch.compile the update's losses and their gradients (compiled at the first update)
)


class RPO(PPO):
    """Robust Policy Optimization: PPO whose policy and value models receive ``inputs["alpha"]``.

    :param models: ``{"policy": ..., "value": ...}``; the policy is Gaussian and adds ``U(-alpha, alpha)`` noise to
        its mean action, read from ``inputs["alpha"]`` (the same shared model may fill both roles).
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param action_space: the ``Box`` action space (or shape/size) of one environment.
    :param cfg: keys of ``RPO_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.torch.agents.base.Agent`).
    """

    default_config = RPO_DEFAULT_CONFIG

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        neutral.check_action_space(action_space)

    def _model_inputs(self, states: torch.Tensor) -> dict:
        """Every policy and value call (acting, the rollout's log pi_old and values, the update) gets ``alpha``."""
        return {"states": states, "alpha": self.cfg["alpha"]}
