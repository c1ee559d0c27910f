"""Independent PPO (IPPO), JAX backend.

de Witt et al., "Is Independent Learning All You Need in the StarCraft Multi-Agent Challenge?", 2020. Each agent is
an independent PPO learner (:class:`~skrl_like.jax.agents.ppo.PPO`: one jitted update per agent, its own models,
memory, optimizers and preprocessors) on its own observations; this class only routes the per-agent dicts and writes
for all of them. The entropy bonus is optimised (skrl 1.4.3's JAX IPPO only logged it).
"""

import copy
from typing import Any, Mapping, Optional, Sequence, Union

import jax

from skrl_like.core.multi_agents import ippo as neutral
from skrl_like.jax.agents.ppo import PPO
from skrl_like.jax.multi_agents.base import MultiAgent

IPPO_DEFAULT_CONFIG = copy.deepcopy(neutral.IPPO_DEFAULT_CONFIG)  # JAX adds no keys


def learner_class(algorithm: str, uid: str, base: type) -> type:
    """``base`` under the name ``<algorithm>[<uid>]``, so that a learner's messages name the agent."""
    # the multi-agent loop hands no privileged states: a learner's models read observations (MAPPO: the shared state)
    return type(f"{algorithm}[{uid}]", (base,), {"__module__": base.__module__, "_privileged_state_roles": ()})


class IPPO(MultiAgent):
    """Independent Proximal Policy Optimization.

    :param possible_agents: the agent names (``env.possible_agents``).
    :param models: ``{uid: {"policy": ..., "value": ...}}``, with parameters; each value model reads that agent's
        observations.
    :param memories: ``{uid: memory}``, each of ``memory_size == cfg["rollouts"]``.
    :param observation_spaces: ``{uid: space}`` (``env.observation_spaces``).
    :param action_spaces: ``{uid: space}`` (``env.action_spaces``).
    :param device: JAX device for the agents' computations (``None``: the default device).
    :param cfg: keys of ``IPPO_DEFAULT_CONFIG``; the per-agent keys may be ``{uid: value}`` dicts.
    """

    algorithm = "IPPO"
    per_agent_keys = neutral.IPPO_PER_AGENT_KEYS

    def __init__(
        self,
        possible_agents: Sequence[str],
        models: Mapping[str, Mapping[str, Any]],
        memories: Optional[Mapping[str, Any]] = None,
        observation_spaces: Optional[Mapping[str, Any]] = None,
        action_spaces: Optional[Mapping[str, Any]] = None,
        device: Optional[Union[str, jax.Device]] = None,
        cfg: Optional[dict] = None,
    ) -> None:
        super().__init__(
            possible_agents, models, memories, observation_spaces, action_spaces, device, cfg, IPPO_DEFAULT_CONFIG
        )

    def _make_learner(self, uid: str, cfg: dict) -> PPO:
        cfg["random_timesteps"] = 0  # skrl 1.4.3's IPPO has no random-action branch
        return learner_class(self.algorithm, uid, PPO)(
            models=self.models[uid],
            memory=self.memories[uid],
            observation_space=self.observation_spaces[uid],
            action_space=self.action_spaces[uid],
            device=self.device,
            cfg=cfg,
        )


__all__ = ["IPPO", "IPPO_DEFAULT_CONFIG"]
