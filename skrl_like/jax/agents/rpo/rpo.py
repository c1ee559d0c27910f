"""Robust Policy Optimization (RPO), JAX backend.

Rahman and Xue, "Robust Policy Optimization in Deep Reinforcement Learning", 2022. Exactly PPO (same rollout,
losses, epochs and mini-batches, the same compiled update) with one more input to every policy and value call:
``"alpha": cfg["alpha"]``, which the user's Gaussian policy uses to perturb its mean action by
``U(-alpha, alpha)`` drawn with ``inputs["key"]``. Acting passes a fresh key per step; the update carries a key of
its own through the compiled function and splits it for the rollout's log pi_old and for every mini-batch, so each
mini-batch of each update draws new noise (skrl 1.4.3 passes no key there).
"""

from typing import Any, Mapping, Optional, Tuple, Union

import gymnasium
import jax

from skrl_like import config
from skrl_like.core.agents import rpo as neutral
from skrl_like.core.agents.config import TORCH_ONLY_KEYS, check_config
from skrl_like.core.agents.rpo import RPO_DEFAULT_CONFIG  # JAX adds no keys
from skrl_like.core.config import merge_config
from skrl_like.jax.agents.on_policy import UNUSED_KEY
from skrl_like.jax.agents.ppo import PPO

__all__ = ["RPO", "RPO_DEFAULT_CONFIG"]


class RPO(PPO):
    """Robust Policy Optimization: PPO whose policy and value models receive ``inputs["alpha"]``.

    :param models: ``{"policy": ..., "value": ...}``, each with parameters (``model.init_state_dict(role)``); the
        policy is Gaussian and adds ``U(-alpha, alpha)`` noise, drawn with ``inputs["key"]``, to its mean action.
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param observation_space: observation space (or shape/size) of one environment.
    :param action_space: the ``Box`` action space (or shape/size) of one environment.
    :param device: JAX device for the agent's computations (``None``: the default device).
    :param cfg: keys of ``RPO_DEFAULT_CONFIG``; unknown keys raise ``ValueError`` with the closest key, and
        every value is checked against its documented type and range.
    """

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        action_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        device: Optional[Union[str, jax.Device]] = None,
        cfg: Optional[dict] = None,
    ) -> None:
        cfg = merge_config(RPO_DEFAULT_CONFIG, cfg, "RPO cfg", ignored=TORCH_ONLY_KEYS)
        check_config(cfg, "RPO cfg")
        neutral.check_action_space(action_space)
        # PPO's own __init__ would merge PPO's defaults: set up the on-policy half directly
        super(PPO, self).__init__(models, memory, observation_space, action_space, device, cfg)
        self._setup_on_policy()

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        super().init(trainer_cfg)
        # the update's own random stream, split off the run's key (set_seed makes it reproducible)
        config.jax.key, self._update_key = jax.random.split(config.jax.key)

    def _model_inputs(self, states: jax.Array, key: Any = UNUSED_KEY) -> dict:
        """Every policy and value call (acting, the rollout's log pi_old and values, the update) gets ``alpha``."""
        return {"states": states, "key": key, "alpha": self.cfg["alpha"]}
