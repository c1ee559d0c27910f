"""Multi-Agent PPO (MAPPO), JAX backend.

Yu et al., "The Surprising Effectiveness of PPO in Cooperative Multi-Agent Games", 2022. IPPO with a centralised
critic: each agent's value model reads the environment's shared state (``env.state()``, passed by the trainer as
``infos["shared_states"]``/``infos["shared_next_states"]``). Each agent is a :class:`~skrl_like.jax.agents.ppo.PPO`
learner whose compiled update carries the shared states and their preprocessor's statistics beside PPO's.
"""

import copy
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import gymnasium
import jax
import jax.numpy as jnp

from skrl_like.core.agents.transition import Transition
from skrl_like.core.multi_agents import ippo as neutral
from skrl_like.core.multi_agents.base import SharedStatesMixin, check_shared_critic_spaces
from skrl_like.jax.agents.mechanics import FunctionalPreprocessor
from skrl_like.jax.agents.ppo import PPO
from skrl_like.jax.multi_agents.base import MultiAgent

MAPPO_DEFAULT_CONFIG = copy.deepcopy(neutral.MAPPO_DEFAULT_CONFIG)  # JAX adds no keys

_SHARED_KEYS = ("shared_state_preprocessor", "shared_state_preprocessor_kwargs")


class SharedLearnerState(NamedTuple):
    """PPO's learner state and the shared-state preprocessor's statistics."""

    policy: Any
    value: Any
    policy_optimizer: Any
    value_optimizer: Any
    state_preprocessor: Any
    value_preprocessor: Any
    learning_rate: jax.Array
    scheduler_steps: jax.Array
    update_key: Any
    shared_state_preprocessor: Any


class SharedRolloutBatch(NamedTuple):
    """PPO's rollout batch and the shared states, one row per sample."""

    states: jax.Array
    actions: jax.Array
    log_prob: jax.Array
    values: jax.Array
    returns: jax.Array
    advantages: jax.Array
    shared_states: jax.Array


class SharedCriticPPO(PPO):
    """PPO whose value model reads the shared states stored beside the rollout (one MAPPO agent)."""

    learner_type = SharedLearnerState
    _rollout_extras = ("shared_states", "shared_next_states")  # the shared states before and after each step

    def __init__(self, shared_observation_space: Any, cfg: dict, **kwargs: Any) -> None:
        self.shared_observation_space = shared_observation_space
        shared = {key: cfg.pop(key) for key in _SHARED_KEYS}
        super().__init__(cfg=cfg, **kwargs)
        self.cfg.update(shared)
        self._shared_state_preprocessor = self._build_preprocessor("shared_state_preprocessor")
        self._shared_state_functional = FunctionalPreprocessor(self.checkpoint_modules.get("shared_state_preprocessor"))

    def _check_model_spaces(self) -> None:
        """The policy reads the agent's observations, the value model the shared state."""
        check_shared_critic_spaces(self)

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        super().init(trainer_cfg)
        if self.memory is not None:
            for name in ("shared_states", "shared_next_states"):
                self.memory.create_tensor(name=name, size=self.shared_observation_space, dtype=jnp.float32)

    # -- the compiled update: PPO's, with the shared states beside the states ------------------------------------

    def _rollout_value_inputs(self, learner: Any, rollout: Transition, processed: jax.Array, key: Any) -> dict:
        shared = rollout.extras["shared_states"]
        rows = jnp.concatenate([shared.reshape(-1, shared.shape[-1]), rollout.extras["shared_next_states"][-1]])
        _, processed_shared = self._shared_state_functional(learner.shared_state_preprocessor, rows)
        return self._model_inputs(processed_shared, key)

    def _rollout_batch(self, learner: Any, rollout: Transition) -> Tuple[Any, SharedRolloutBatch, jax.Array]:
        learner, batch, rollout_finite = super()._rollout_batch(learner, rollout)
        shared = rollout.extras["shared_states"]
        shared = shared.reshape(-1, shared.shape[-1])
        return learner, SharedRolloutBatch(*batch[:6], shared_states=shared), rollout_finite

    def _preprocess_mini_batch(self, learner: Any, batch: SharedRolloutBatch, train: Any) -> Tuple[Any, Any]:
        # the shared-state statistics are updated in the first epoch only, as the states'
        learner, batch = super()._preprocess_mini_batch(learner, batch, train)
        statistics, shared = self._shared_state_functional(
            learner.shared_state_preprocessor, batch.shared_states, train
        )
        return learner._replace(shared_state_preprocessor=statistics), batch._replace(shared_states=shared)

    def _value_inputs(self, inputs: dict, batch: SharedRolloutBatch, key: Any) -> dict:
        return self._model_inputs(batch.shared_states, key)


class MAPPO(SharedStatesMixin, MultiAgent):
    """Multi-Agent Proximal Policy Optimization (a centralised critic per agent).

    :param models: ``{uid: {"policy": ..., "value": ...}}``, with parameters; each value model reads the shared
        state.
    :param memories: ``{uid: memory}``, each of ``memory_size == cfg["rollouts"]``.
    :param cfg: keys of ``MAPPO_DEFAULT_CONFIG``; the per-agent keys may be ``{uid: value}`` dicts (the other
        parameters: :class:`~skrl_like.jax.multi_agents.base.MultiAgent`).
    :param shared_observation_spaces: ``{uid: space}`` of the shared state (``env.state_spaces``).
    """

    algorithm = "MAPPO"
    per_agent_keys = neutral.MAPPO_PER_AGENT_KEYS
    default_config = MAPPO_DEFAULT_CONFIG
    learner_base = SharedCriticPPO

    def __init__(
        self,
        possible_agents: Sequence[str],
        models: Mapping[str, Mapping[str, Any]],
        memories: Optional[Mapping[str, Any]] = None,
        observation_spaces: Optional[Mapping[str, Any]] = None,
        action_spaces: Optional[Mapping[str, Any]] = None,
        device: Optional[Union[str, jax.Device]] = None,
        cfg: Optional[dict] = None,
        shared_observation_spaces: Optional[Mapping[str, Union[int, Sequence[int], gymnasium.Space]]] = None,
    ) -> None:
        self._set_shared_observation_spaces(possible_agents, shared_observation_spaces)
        super().__init__(possible_agents, models, memories, observation_spaces, action_spaces, device, cfg)


__all__ = ["MAPPO", "MAPPO_DEFAULT_CONFIG"]
