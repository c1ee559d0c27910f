"""An agent's checkpoint files: its checkpoint modules written at their interval (and the best agent so far),
``save``/``load``, ``migrate``, and the backend hooks that read and write one module's state.

:class:`AgentCheckpoints` is the second of the agent's bases (after
:class:`~skrl_like.core.agents.tracking.AgentTracking`, whose tracked mean reward picks the best agent).
"""

import datetime
import os
from typing import Any, Dict, Mapping, Optional, Union

import numpy as np

from skrl_like import logger
from skrl_like.core.agents.tracking import AgentTracking
from skrl_like.core.io import atomic_write

_WORST_REWARD = -(2**31)


class AgentCheckpoints(AgentTracking):
    """The agent's checkpoint files (see :class:`~skrl_like.core.agents.base.AgentCore`)."""

    checkpoint_extension = ""  # ".pt" (torch) or ".pickle" (JAX)

    def _setup_checkpoints(self, experiment: Mapping[str, Any]) -> None:
        """The checkpoint attributes, from ``cfg["experiment"]``; algorithms register their modules in
        ``checkpoint_modules``."""
        self.checkpoint_interval: Union[int, str] = experiment.get("checkpoint_interval", "auto")
        self.checkpoint_store_separately = experiment.get("store_separately", False)
        self.checkpoint_modules: Dict[str, Any] = {}
        self.checkpoint_best_modules = {"timestep": 0, "reward": _WORST_REWARD, "saved": False, "modules": {}}
        self.checkpoint_memory: Union[str, bool] = experiment.get("checkpoint_memory", "auto")

    def _get_internal_value(self, module: Any) -> Any:
        """The savable state of a checkpoint module."""
        raise NotImplementedError

    def _copy_state(self, state: Any) -> Any:
        raise NotImplementedError

    def _write_states(self, states: Any, file: Any) -> None:
        """Serialize ``states`` (a module state or a dict of them) into an open binary file."""
        raise NotImplementedError

    def _write_module(self, state: Any, file: Any) -> None:
        """Write one module's state (``store_separately``) in the format its ``Model.load`` reads."""
        self._write_states(state, file)

    def _read_states(self, path: str) -> Any:
        raise NotImplementedError

    def _check_state(self, name: str, module: Any, state: Any) -> Any:
        """Check that ``state`` fits ``module`` without changing anything; return it ready for :meth:`_restore_state`.

        :raises ValueError: naming every entry whose key, shape or dtype differs (wrapped by :meth:`load`).
        :raises NotImplementedError: ``module`` cannot load a state.
        """
        raise NotImplementedError

    def _restore_state(self, name: str, module: Any, state: Any) -> None:
        """Load a state that :meth:`_check_state` returned into ``module``."""
        raise NotImplementedError

    def _write_when_due(self, timestep: int, timesteps: int) -> None:
        """Write checkpoints (and the best agent so far) and TensorBoard data when their intervals come round."""
        timestep += 1
        checkpoint_due = timestep > 1 and self.checkpoint_interval > 0 and timestep % self.checkpoint_interval == 0
        write_due = timestep > 1 and self.write_interval > 0 and timestep % self.write_interval == 0
        if checkpoint_due or write_due or timestep >= timesteps:  # the steps that read the host
            self._read_reports()
        if checkpoint_due:
            self._collect_episodes()
            reward = np.mean(self.tracking_data.get("Reward / Total reward (mean)", [_WORST_REWARD]))
            if reward > self.checkpoint_best_modules["reward"]:
                self.checkpoint_best_modules.update(
                    timestep=timestep,
                    reward=reward,
                    saved=False,
                    modules={
                        name: self._copy_state(self._get_internal_value(module))
                        for name, module in self.checkpoint_modules.items()
                    },
                )
            self.write_checkpoint(timestep, timesteps)
        if write_due:
            self.write_tracking_data(timestep, timesteps)

    def write_checkpoint(self, timestep: Optional[int], timesteps: int) -> None:
        """Write the checkpoint modules to ``<experiment_dir>/checkpoints/`` (atomically), and the best ones."""
        tag = str(timestep) if timestep is not None else datetime.datetime.now().strftime("%y-%m-%d_%H-%M-%S-%f")
        directory = os.path.join(self.experiment_dir, "checkpoints")
        ext = self.checkpoint_extension
        if self.checkpoint_store_separately:
            for name, module in self.checkpoint_modules.items():
                self._write_file(os.path.join(directory, f"{name}_{tag}{ext}"), self._get_internal_value(module), True)
        else:
            states = {name: self._get_internal_value(module) for name, module in self.checkpoint_modules.items()}
            self._write_file(os.path.join(directory, f"agent_{tag}{ext}"), states)

        best = self.checkpoint_best_modules
        if best["modules"] and not best["saved"]:
            if self.checkpoint_store_separately:
                for name, state in best["modules"].items():
                    self._write_file(os.path.join(directory, f"best_{name}{ext}"), state, True)
            else:
                self._write_file(os.path.join(directory, f"best_agent{ext}"), best["modules"])
            best["saved"] = True

    def _write_file(self, path: str, states: Any, one_module: bool = False) -> None:
        write = self._write_module if one_module else self._write_states
        atomic_write(path, lambda file: write(states, file))

    def save(self, path: str) -> None:
        """Save every checkpoint module to ``path`` (written atomically: an existing file is never torn)."""
        self._write_file(path, {name: self._get_internal_value(m) for name, m in self.checkpoint_modules.items()})

    def load(self, path: str) -> None:
        """Load a file written by :meth:`save` or a whole-agent checkpoint.

        :raises FileNotFoundError: ``path`` does not exist.
        :raises ValueError: the file is corrupt, not an agent checkpoint, or does not match this agent; every module
            is checked (keys, shapes, dtypes) before any is loaded, so then the agent is left unchanged.
        """
        if not os.path.isfile(path):
            raise FileNotFoundError(f"Checkpoint '{path}' does not exist")
        try:
            states = self._read_states(path)
        except Exception as error:
            raise ValueError(
                f"Checkpoint '{path}' could not be read ({type(error).__name__}: {error}); "
                "the file is corrupt or was not written by Agent.save / a checkpoint"
            ) from error
        if not isinstance(states, dict):
            raise ValueError(
                f"Checkpoint '{path}' holds a {type(states).__name__}, not an agent's modules; "
                "to load one model's weights use model.load(path)"
            )
        unknown = sorted(set(states) - set(self.checkpoint_modules))
        if unknown and not set(states) & set(self.checkpoint_modules):
            raise ValueError(
                f"Checkpoint '{path}' has modules {sorted(states)}, none of which this "
                f"{type(self).__name__} has ({sorted(self.checkpoint_modules)})"
            )
        # every module is checked before any is changed: a mismatch leaves the whole agent as it was
        checked, mismatches = {}, []
        for name, state in states.items():
            if name not in self.checkpoint_modules:
                continue
            try:
                checked[name] = self._check_state(name, self.checkpoint_modules[name], state)
            except (RuntimeError, ValueError, KeyError, TypeError) as error:
                mismatches.append(f"'{name}' module ({error})")
        if mismatches:
            raise ValueError(
                f"Checkpoint '{path}' does not match this agent's {' and '.join(mismatches)}; nothing was loaded: "
                "build the agent with the models, preprocessors and optimizers of the agent that saved it"
            )
        for name in unknown:
            logger.warning(f"Cannot load the '{name}' module: {type(self).__name__} has no such module")
        for name in sorted(set(self.checkpoint_modules) - set(states)):
            logger.warning(f"Checkpoint '{path}' has no '{name}' module: it keeps its current state")
        for name, state in checked.items():
            self._restore_state(name, self.checkpoint_modules[name], state)

    def migrate(self, path: str, name_map: Mapping = {}, auto_mapping: bool = True, verbose: bool = False) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.migrate (rl_games import) is not available in skrl_like")
