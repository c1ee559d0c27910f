"""Robust Policy Optimization (RPO), torch backend.

Rahman and Xue, "Robust Policy Optimization in Deep Reinforcement Learning", 2022. Exactly PPO (same rollout,
losses, epochs and mini-batches) with one more input to every policy and value call: ``"alpha": cfg["alpha"]``,
which the user's Gaussian policy uses to perturb its mean action by ``U(-alpha, alpha)`` (the agent perturbs
nothing itself). The perturbation is drawn from torch's global random generator, so ``set_seed`` reproduces it.
"""

from typing import Any, Mapping, Optional, Tuple, Union

import gymnasium
import torch

from skrl_like.core.agents import rpo as neutral
from skrl_like.core.agents.config import check_config, with_backend_keys
from skrl_like.core.config import merge_config
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
    :param observation_space: observation space (or shape/size) of one environment.
    :param action_space: the ``Box`` action space (or shape/size) of one environment.
    :param device: device for the agent's computations (``None``: the default torch device).
    :param cfg: keys of ``RPO_DEFAULT_CONFIG``; unknown keys raise ``ValueError`` with the closest key, and
        every value is checked against its documented type and range.
    """

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        action_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        device: Optional[Union[str, torch.device]] = None,
        cfg: Optional[dict] = None,
    ) -> None:
        cfg = merge_config(RPO_DEFAULT_CONFIG, cfg, "RPO cfg")
        check_config(cfg, "RPO cfg")
        neutral.check_action_space(action_space)
        # PPO's own __init__ would merge PPO's defaults: set up the on-policy half directly
        super(PPO, self).__init__(models, memory, observation_space, action_space, device, cfg)
        self._setup_on_policy()
        self._setup_joint_optimizer(self.policy, self.value)
        self._setup_losses()

    def _model_inputs(self, states: torch.Tensor) -> dict:
        """Every policy and value call (acting, the rollout's log pi_old and values, the update) gets ``alpha``."""
        return {"states": states, "alpha": self.cfg["alpha"]}
