"""The JAX ``MultiAgent`` base: the neutral per-agent bookkeeping plus the JAX ``Agent``'s array hooks."""

import pickle
from typing import Any, BinaryIO, Tuple

import flax.serialization
import jax.numpy as jnp

from skrl_like.core.multi_agents.base import MultiAgentCore
from skrl_like.jax.agents.base import Agent


class MultiAgent(MultiAgentCore, Agent):
    """Base class of the multi-agent algorithms.

    :param possible_agents: the agent names (``env.possible_agents``).
    :param models: ``{uid: {role: model}}``, each model with parameters (``model.init_state_dict(role)``).
    :param memories: ``{uid: memory}``.
    :param observation_spaces: ``{uid: space}`` (``env.observation_spaces``).
    :param action_spaces: ``{uid: space}`` (``env.action_spaces``).
    :param device: JAX device for the agents' computations (``None``: the default device).
    :param cfg: the algorithm's configuration; keys of its per-agent set may be ``{uid: value}`` dicts.
    """

    def _departure_columns(self, states: Any) -> Tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
        column = (states.shape[0], 1)
        return jnp.zeros(column, jnp.float32), jnp.ones(column, bool), jnp.zeros(column, bool)

    def _write_states(self, states: Any, file: BinaryIO) -> None:
        # {uid: {name: bytes}}: each module serialised as a single agent's checkpoint stores it
        if isinstance(states, dict) and states and set(states) <= set(self.learners):
            payload = {
                uid: {name: flax.serialization.to_bytes(state) for name, state in modules.items()}
                for uid, modules in states.items()
            }
            pickle.dump(payload, file, protocol=4)
        else:
            super()._write_states(states, file)


__all__ = ["MultiAgent"]
