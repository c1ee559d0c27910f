"""Robust Policy Optimization (RPO), JAX backend.

Rahman and Xue, "Robust Policy Optimization in Deep Reinforcement Learning", 2022. Exactly PPO (same rollout,
losses, epochs and mini-batches, the same compiled update) with one more input to every policy and value call:
``"alpha": cfg["alpha"]``, which the user's Gaussian policy uses to perturb its mean action by
``U(-alpha, alpha)`` drawn with ``inputs["key"]``. Acting passes a fresh key per step; the update carries a key of
its own through the compiled function and splits it for the rollout's log pi_old and for every mini-batch, so each
mini-batch of each update draws new noise (skrl 1.4.3 passes no key there).
"""

from typing import Any, Mapping, Optional

import jax

from skrl_like import config
from skrl_like.core.agents import rpo as neutral
from skrl_like.core.agents.rpo import RPO_DEFAULT_CONFIG  # JAX adds no keys
from skrl_like.jax.agents.on_policy import UNUSED_KEY
from skrl_like.jax.agents.ppo import PPO

__all__ = ["RPO", "RPO_DEFAULT_CONFIG"]


class RPO(PPO):
    """Robust Policy Optimization: PPO whose policy and value models receive ``inputs["alpha"]``.

    :param models: ``{"policy": ..., "value": ...}``, each with parameters (``model.init_state_dict(role)``); the
        policy is Gaussian and adds ``U(-alpha, alpha)`` noise, drawn with ``inputs["key"]``, to its mean action.
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param action_space: the ``Box`` action space (or shape/size) of one environment.
    :param cfg: keys of ``RPO_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.jax.agents.base.Agent`).
    """

    default_config = RPO_DEFAULT_CONFIG

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        neutral.check_action_space(action_space)

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        super().init(trainer_cfg)
        self._update_key = self._split_run_key()

    def _model_inputs(self, states: jax.Array, key: Any = UNUSED_KEY) -> dict:
        """Every policy and value call (acting, the rollout's log pi_old and values, the update) gets ``alpha``."""
        return {"states": states, "key": key, "alpha": self.cfg["alpha"]}
