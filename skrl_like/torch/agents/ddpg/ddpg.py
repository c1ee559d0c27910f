"""Deep Deterministic Policy Gradient (DDPG), torch backend.

Lillicrap et al., "Continuous control with deep reinforcement learning", 2015. TD3 without its three changes: one
critic, a policy step (and the polyak update of both targets) after every critic step, and no target policy
smoothing; so it is :class:`~skrl_like.torch.agents.td3.TD3` configured that way (as Stable-Baselines3 writes
``DDPG(TD3)``), behind skrl's names, ``DDPG_DEFAULT_CONFIG`` and checkpoint modules (``policy``, ``target_policy``,
``critic``, ``target_critic``, ``policy_optimizer``, ``critic_optimizer``). The update follows skrl 1.4.3: for each of
``gradient_steps`` gradient steps a fresh replay batch, the TD target from the target actor and target critic, a
critic step on the mean squared TD error, an actor step on ``-Q(s, mu(s))`` with the just-updated critic, and a polyak
update of both targets.
"""

from typing import Any, Optional, Tuple

from skrl_like.core.agents import ddpg as neutral
from skrl_like.core.agents.config import with_backend_keys
from skrl_like.torch.agents.td3 import TD3

__all__ = ["DDPG", "DDPG_DEFAULT_CONFIG"]

DDPG_DEFAULT_CONFIG = with_backend_keys(
    neutral.DDPG_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)


class DDPG(TD3):
    """Deep Deterministic Policy Gradient.

    :param models: ``{"policy", "target_policy", "critic", "target_critic"}``: deterministic actors that output
        one number per action dimension, and Q-functions of ``{"states", "taken_actions"}`` that output one value;
        each target has the architecture of its online model (it starts as a copy of it).
    :param memory: a replay memory of at least ``cfg["batch_size"]`` rows, or a list of memories (the first one
        is used for learning).
    :param action_space: the ``Box`` action space of one environment (its bounds clip the exploration noise).
    :param cfg: keys of ``DDPG_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.torch.agents.base.Agent`).
    """

    default_config = DDPG_DEFAULT_CONFIG
    _critic_roles = ("critic",)
    _privileged_state_roles = ("critic", "target_critic")
    _checked_roles = ("critic", "policy")
    _tracks_policy_q_values = True  # skrl's DDPG tracks Q(s, mu(s)) as Q1 [compat]

    def _warn_about_settings(self) -> None:
        """Nothing to warn about: DDPG has no target policy smoothing and one critic by definition."""

    def _delay_and_smoothing(self) -> Tuple[int, Optional[Any], float]:
        return 1, None, 0.0
