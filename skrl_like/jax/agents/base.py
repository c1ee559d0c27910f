"""The JAX ``Agent`` base: the neutral bookkeeping plus flax serialization of module states.

Checkpoint modules are models and preprocessors (objects with a ``state_dict`` whose ``params`` are saved)
and optimizers (immutable objects with an optax ``state``). Because optimizers are rebound after every
step (``opt = opt.step(...)``), algorithms keep them *in* ``checkpoint_modules`` and read them from there,
so what is saved is always the current state and a loaded state is what the next update uses.
"""

import copy
import pickle
from typing import Any, BinaryIO

import flax.serialization
import jax

from skrl_like import config
from skrl_like.core.agents.base import AgentCore
from skrl_like.jax.agents.tracking import EpisodeTracker
from skrl_like.jax.models.base import restore_tree


class Agent(AgentCore):
    __doc__ = AgentCore.__doc__

    checkpoint_extension = ".pickle"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._jax = config.jax.backend == "jax"

    def _parse_device(self, device: Any) -> jax.Device:
        return config.jax.parse_device(device)

    def _get_internal_value(self, module: Any) -> Any:
        if hasattr(module, "state_dict"):
            return module.state_dict.params
        if hasattr(module, "state"):  # optimizer: its optax state
            return module.state
        return module

    def _copy_state(self, state: Any) -> Any:
        with jax.default_device(self.device):
            return copy.deepcopy(state)

    def _write_states(self, states: Any, file: BinaryIO) -> None:
        if isinstance(states, dict):
            payload = {name: flax.serialization.to_bytes(state) for name, state in states.items()}
        else:
            payload = flax.serialization.to_bytes(states)
        pickle.dump(payload, file, protocol=4)

    def _read_states(self, path: str) -> Any:
        with open(path, "rb") as file:
            return pickle.load(file)

    def _check_state(self, name: str, module: Any, state: Any) -> Any:
        if not (hasattr(module, "state_dict") or hasattr(module, "state")):
            raise NotImplementedError(f"The '{name}' module ({type(module).__name__}) cannot load a state")
        return restore_tree(self._get_internal_value(module), state)

    def _restore_state(self, name: str, module: Any, state: Any) -> None:
        if hasattr(module, "state_dict"):
            module.state_dict = module.state_dict.replace(params=state)
        else:  # an optimizer: its entry rebinds the agent's attribute
            self.checkpoint_modules[name] = module.replace(state=state)

    def _make_tracker(self, capacity: int) -> EpisodeTracker:
        return EpisodeTracker(capacity)

    def _is_distributed_worker(self) -> bool:
        return config.jax.is_distributed and config.jax.rank != 0
