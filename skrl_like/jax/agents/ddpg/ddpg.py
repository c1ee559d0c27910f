"""Deep Deterministic Policy Gradient (DDPG), JAX backend: a configuration of :class:`~skrl_like.jax.agents.td3.TD3`.

Lillicrap et al., "Continuous control with deep reinforcement learning", 2015. The same algorithm as the torch
backend (same config, same update rule). Its gradient step is TD3's with one critic (``critic``/``target_critic``,
skrl's names), a policy step and a polyak update of both targets at every critic step, and no target smoothing: the
TD target from the target actor and target critic, a critic step on the mean squared TD error, an actor step on
``-Q(s, mu(s))`` with the just-updated critic, then the learning-rate schedule, as SB3 writes ``DDPG(TD3)``. Config
(``DDPG_DEFAULT_CONFIG``), checkpoint entries and TensorBoard tags are skrl's DDPG ones.
"""

from typing import Any, Dict, NamedTuple

import jax

from skrl_like.core.agents import ddpg as neutral
from skrl_like.jax.agents.off_policy import REPLAY_FIXED_KEYS
from skrl_like.jax.agents.td3.td3 import TD3, StepRecord

__all__ = ["DDPG", "DDPG_DEFAULT_CONFIG"]

DDPG_DEFAULT_CONFIG = neutral.DDPG_DEFAULT_CONFIG  # JAX adds no keys


class LearnerState(NamedTuple):
    """Everything an update changes, named after the checkpoint entries."""

    policy: Any  # the parameters of each model
    target_policy: Any
    critic: Any
    target_critic: Any
    policy_optimizer: Any
    critic_optimizer: Any
    state_preprocessor: Any  # running statistics (``()`` without a preprocessor)
    policy_learning_rate: jax.Array
    critic_learning_rate: jax.Array
    critic_updates: jax.Array  # critic steps so far (one policy step each)
    scheduler_steps: jax.Array  # the learning-rate schedulers' steps so far (what LinearLR's factor depends on)
    privileged_state_preprocessor: Any = ()  # the privileged states' running statistics (``()``: none)


class DDPG(TD3):
    """Deep Deterministic Policy Gradient.

    :param models: ``{"policy", "target_policy", "critic", "target_critic"}``, each with parameters
        (``model.init_state_dict(role)``): deterministic actors that output one number per action dimension, and
        Q-functions of ``{"states", "taken_actions"}`` that output one value; each target has the parameter tree of
        its online model (it starts as a copy of it).
    :param memory: a replay memory of at least ``cfg["batch_size"]`` rows, or a list of memories (the first one
        is used for learning).
    :param action_space: the ``Box`` action space of one environment (its bounds clip the exploration noise).
    :param cfg: keys of ``DDPG_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.jax.agents.base.Agent`).
    """

    learner_type = LearnerState
    default_config = DDPG_DEFAULT_CONFIG
    critic_roles = ("critic",)
    _privileged_state_roles = ("critic", "target_critic")
    delayed_policy = False
    compiled_fixed_keys = REPLAY_FIXED_KEYS + ("grad_norm_clip",)
    _checked_roles = ("critic", "policy")

    def tracked_values(self, records: StepRecord, learning_rates: bool = False) -> Dict[str, Any]:
        """What an update tracks, under skrl's DDPG tags, one value per gradient step (the last axis): ``Q1`` is the
        critic's value of the actor's actions in the actor step. The learning rates are tracked with a schedule, or
        with ``learning_rates`` (a compiled run that sweeps one: each run's own rates)."""
        tracked = {"Loss / Policy loss": records.policy_loss, "Loss / Critic loss": records.critic_loss}
        for index, reduction in enumerate(("max", "min", "mean")):
            tracked[f"Q-network / Q1 ({reduction})"] = records.policy_values[..., index]
            tracked[f"Target / Target ({reduction})"] = records.target_values[..., index]
        if self._learning_rate_schedule is not None or learning_rates:
            tracked["Learning / Policy learning rate"] = records.policy_learning_rate
            tracked["Learning / Critic learning rate"] = records.critic_learning_rate
        return tracked
