"""Multi-Agent PPO (MAPPO), torch backend.

Yu et al., "The Surprising Effectiveness of PPO in Cooperative Multi-Agent Games", 2022. IPPO with a centralised
critic: each agent's value model reads the environment's shared state (``env.state()``, passed by the trainer as
``infos["shared_states"]``/``infos["shared_next_states"]``) instead of the agent's observations. Each agent is a
:class:`~skrl_like.torch.agents.ppo.PPO` learner whose value inputs are the stored shared states.
"""

from typing import Any, Mapping, Optional, Sequence, Union

import gymnasium
import torch

from skrl_like.core.agents.config import with_backend_keys
from skrl_like.core.multi_agents import ippo as neutral
from skrl_like.core.multi_agents.base import SharedStatesMixin, check_shared_critic_spaces
from skrl_like.torch.agents.ppo import PPO
from skrl_like.torch.multi_agents.base import MultiAgent

MAPPO_DEFAULT_CONFIG = with_backend_keys(
    neutral.MAPPO_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)

_SHARED_KEYS = ("shared_state_preprocessor", "shared_state_preprocessor_kwargs")


class SharedCriticPPO(PPO):
    """PPO whose value model reads the shared states stored beside the rollout (one MAPPO agent)."""

    keeps_acting_pass = False  # act has no shared states: the update evaluates the rollout's values

    def __init__(self, shared_observation_space: Any, cfg: dict, **kwargs: Any) -> None:
        self.shared_observation_space = shared_observation_space
        shared = {key: cfg.pop(key) for key in _SHARED_KEYS}
        super().__init__(cfg=cfg, **kwargs)
        self.cfg.update(shared)
        self._shared_state_preprocessor = self._build_preprocessor("shared_state_preprocessor")

    def _check_model_spaces(self) -> None:
        """The policy reads the agent's observations, the value model the shared state."""
        check_shared_critic_spaces(self)

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        super().init(trainer_cfg)
        if self.memory is not None:
            for name in ("shared_states", "shared_next_states"):
                self.memory.create_tensor(name=name, size=self.shared_observation_space, dtype=torch.float32)

    def _rollout_value_inputs(self, processed: torch.Tensor) -> dict:
        shared = self.memory.get_tensor_by_name("shared_states")
        rows = torch.cat(
            [shared.reshape(-1, shared.shape[-1]), self.memory.get_tensor_by_name("shared_next_states")[-1]]
        )
        return self._model_inputs(self._shared_state_preprocessor(rows))

    def _rollout_batch(self, timestep: int) -> Any:
        batch = super()._rollout_batch(timestep)
        shared = self.memory.get_tensor_by_name("shared_states")
        self._shared_rows = shared.reshape(-1, shared.shape[-1])
        return batch

    def _value_inputs(self, inputs: dict, batch: slice, epoch: int) -> dict:
        # the shared-state statistics are updated in the first epoch only, as the states'
        return self._model_inputs(self._shared_state_preprocessor(self._shared_rows[batch], train=not epoch))


class MAPPO(SharedStatesMixin, MultiAgent):
    """Multi-Agent Proximal Policy Optimization (a centralised critic per agent).

    :param models: ``{uid: {"policy": ..., "value": ...}}``; each value model reads the shared state.
    :param memories: ``{uid: memory}``, each of ``memory_size == cfg["rollouts"]``.
    :param cfg: keys of ``MAPPO_DEFAULT_CONFIG``; the per-agent keys may be ``{uid: value}`` dicts (the other
        parameters: :class:`~skrl_like.torch.multi_agents.base.MultiAgent`).
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
        device: Optional[Union[str, torch.device]] = None,
        cfg: Optional[dict] = None,
        shared_observation_spaces: Optional[Mapping[str, Union[int, Sequence[int], gymnasium.Space]]] = None,
    ) -> None:
        self._set_shared_observation_spaces(possible_agents, shared_observation_spaces)
        super().__init__(possible_agents, models, memories, observation_spaces, action_spaces, device, cfg)


__all__ = ["MAPPO", "MAPPO_DEFAULT_CONFIG"]
