"""Independent PPO (IPPO), JAX backend.

de Witt et al., "Is Independent Learning All You Need in the StarCraft Multi-Agent Challenge?", 2020. Each agent is
an independent PPO learner (:class:`~skrl_like.jax.agents.ppo.PPO`: one jitted update per agent, its own models,
memory, optimizers and preprocessors) on its own observations; this class only routes the per-agent dicts and writes
for all of them. The entropy bonus is optimised (skrl 1.4.3's JAX IPPO only logged it).
"""

import copy

from skrl_like.core.multi_agents import ippo as neutral
from skrl_like.jax.agents.ppo import PPO
from skrl_like.jax.multi_agents.base import MultiAgent

IPPO_DEFAULT_CONFIG = copy.deepcopy(neutral.IPPO_DEFAULT_CONFIG)  # JAX adds no keys


class IPPO(MultiAgent):
    """Independent Proximal Policy Optimization.

    :param models: ``{uid: {"policy": ..., "value": ...}}``, with parameters; each value model reads that agent's
        observations.
    :param memories: ``{uid: memory}``, each of ``memory_size == cfg["rollouts"]``.
    :param cfg: keys of ``IPPO_DEFAULT_CONFIG``; the per-agent keys may be ``{uid: value}`` dicts (the other
        parameters: :class:`~skrl_like.jax.multi_agents.base.MultiAgent`).
    """

    algorithm = "IPPO"
    per_agent_keys = neutral.IPPO_PER_AGENT_KEYS
    default_config = IPPO_DEFAULT_CONFIG
    learner_base = PPO


__all__ = ["IPPO", "IPPO_DEFAULT_CONFIG"]
