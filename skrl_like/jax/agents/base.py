"""The JAX ``Agent`` base: the neutral bookkeeping plus flax serialization of module states.

Checkpoint modules are models and preprocessors (objects with a ``state_dict`` whose ``params`` are saved)
and optimizers.

Optimizers and jitted learners, one convention:

* The agent owns its optimizers as attributes (``agent.policy_optimizer``, ...): immutable ``Optimizer`` pytrees,
  rebound after every step. ``checkpoint_modules[name]`` holds no optimizer state of its own: it is an
  :class:`OptimizerEntry` (registered with ``_register_optimizer(name)``) whose ``state`` reads and writes through
  to ``getattr(agent, name)``. Saving reads the current optimizer; loading rebinds the attribute, so the next update
  starts from the loaded state. Nothing is written back into ``checkpoint_modules`` after an update.
* A jitted update takes and returns one ``NamedTuple`` pytree of everything it changes, its fields named after the
  checkpoint entries (``policy``, ``value``, ``policy_optimizer``, ``value_optimizer``, ``state_preprocessor``,
  ``value_preprocessor``, plus e.g. ``learning_rate``). The algorithm gathers it from the agent before the update
  and commits the returned one after the host has checked it, each with one small helper; a failed check leaves
  the agent untouched.
"""

import copy
import pickle
from typing import Any, BinaryIO, Optional

import flax.serialization
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.agents.base import AgentCore
from skrl_like.jax import models
from skrl_like.jax.agents.tracking import EpisodeTracker
from skrl_like.jax.envs.wrappers.base import flat_observations
from skrl_like.jax.models.base import restore_tree


class Agent(AgentCore):
    __doc__ = AgentCore.__doc__

    checkpoint_extension = ".pickle"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._jax = config.jax.backend == "jax"

    def _parse_device(self, device: Any) -> jax.Device:
        return config.jax.parse_device(device)

    def _broadcast_models(self) -> None:
        # a model without parameters yet is left to the algorithm's check, which names the missing init_state_dict
        if config.jax.is_distributed:
            for model in {id(model): model for model in self.models.values() if model is not None}.values():
                if getattr(model, "state_dict", None) is not None:
                    model.broadcast_parameters()

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

    def _write_module(self, state: Any, file: BinaryIO) -> None:
        file.write(flax.serialization.to_bytes(state))  # the format of Model.save, which Model.load reads

    def _read_states(self, path: str) -> Any:
        with open(path, "rb") as file:
            return pickle.load(file)

    def _check_state(self, name: str, module: Any, state: Any) -> Any:
        if not (hasattr(module, "state_dict") or hasattr(module, "state")):
            raise NotImplementedError(f"The '{name}' module ({type(module).__name__}) cannot load a state")
        return restore_tree(self._get_internal_value(module), state)

    def _restore_state(self, name: str, module: Any, state: Any) -> None:
        # flax restores NumPy arrays: make them arrays like the ones an update returns (uncommitted, on the agent's
        # device), or the next compiled update would be compiled again for NumPy arguments (after every restore)
        with jax.default_device(self.device):
            state = jax.tree_util.tree_map(jnp.asarray, state)
        if hasattr(module, "state_dict"):
            module.state_dict = module.state_dict.replace(params=state)
        else:  # an optimizer: its entry rebinds the agent's attribute
            self.checkpoint_modules[name] = module.replace(state=state)

    def _is_array(self, value: Any) -> bool:
        return isinstance(value, jax.Array)

    def _stateful_attributes(self) -> dict:
        # parameter holders outside checkpoint_modules (e.g. SAC's log entropy coefficient, learned with its own Adam)
        return {
            name: value
            for name, value in vars(self).items()
            if hasattr(getattr(value, "state_dict", None), "params") and not isinstance(value, type)
        }

    def _encode_state(self, state: Any) -> Any:
        return flax.serialization.to_bytes(state)  # what _check_state reads, as from a file of Agent.save

    def track_data(self, tag: str, value: Any) -> None:
        """Record a value for ``tag``; it is reduced (mean, or min/max by suffix) at the next write.

        A one-element array on an accelerator is kept as it is (converted when written, so tracking never waits for
        the device); on the CPU it is converted now, as the torch agents do (kept arrays held their buffers: a JAX
        DQN run with writing off grew by ~7 kB per update).
        """
        if isinstance(value, jax.Array) and value.size == 1 and value.devices().pop().platform == "cpu":
            value = value.item()
        super().track_data(tag, value)

    def _make_tracker(self, capacity: int) -> EpisodeTracker:
        return EpisodeTracker(capacity)

    def _observations_to_backend(self, space: gymnasium.Space, observations: Any) -> Any:
        flat = flat_observations(space, observations)  # the layout and dtypes of the JAX env wrappers
        return jax.device_put(flat, self.device) if self._jax else flat

    def _actions_to_numpy(self, actions: Any) -> np.ndarray:
        array = np.asarray(jax.device_get(actions))
        return array.astype(np.float32) if array.dtype == jnp.bfloat16 else array

    def _is_distributed_worker(self) -> bool:
        return config.jax.is_distributed and config.jax.rank != 0

    # the learner-state field each learning rate's update reads it from, a traced argument of the optimizers (held
    # between updates in the attribute "_<field>" and gathered into the learner state before one; a CompiledTrainer
    # sweep over the key puts one rate per run into that field); agents with other rates declare them
    _learning_rates = {"learning_rate": "learning_rate"}

    def _has_learning_rate(self, key: str) -> bool:
        return key in self._learning_rates and hasattr(self, f"_{self._learning_rates[key]}")

    def _apply_learning_rate(self, key: str, value: float) -> None:
        # the next gather puts it into the learner state: a new value of a traced argument, nothing recompiles
        setattr(self, f"_{self._learning_rates[key]}", jnp.asarray(value, jnp.float32))

    def _register_optimizer(self, name: str) -> None:
        """Make the optimizer held in ``self.<name>`` the checkpoint entry ``name`` (read and written through)."""
        self.checkpoint_modules[name] = OptimizerEntry(self, name)

    _policy_distributions = (
        (models.CategoricalMixin, "categorical"),
        (models.MultiCategoricalMixin, "multicategorical"),
        (models.GaussianMixin, "gaussian"),
    )

    def _run_on_zeros(
        self, model: Any, role: str, width: int, action_width: Optional[int] = None, action_value: float = 0.0
    ) -> jax.Array:
        if not hasattr(model, "state_dict"):
            raise ValueError("the model has no parameters yet")
        inputs = {"states": jnp.zeros((2, width), jnp.float32)}
        if action_width is not None:
            inputs["taken_actions"] = jnp.full((2, action_width), action_value, jnp.float32)
        return model.apply(model.state_dict.params, inputs, role)[0]


class OptimizerEntry:
    """The checkpoint entry of an optimizer that an agent owns as ``agent.<name>`` (see the module docstring).

    ``state`` reads the optimizer's optax state and assigning it rebinds ``agent.<name>`` to the optimizer with that
    state; ``replace(state=...)`` does the same and returns the entry (the ``flax.struct`` interface the loader uses).
    """

    def __init__(self, agent: Any, name: str) -> None:
        self._agent = agent
        self._name = name

    @property
    def state(self) -> Any:
        return getattr(self._agent, self._name).state

    @state.setter
    def state(self, state: Any) -> None:
        setattr(self._agent, self._name, getattr(self._agent, self._name).replace(state=state))

    def replace(self, state: Any) -> "OptimizerEntry":
        self.state = state
        return self
