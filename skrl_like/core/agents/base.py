"""The backend-neutral half of ``Agent``: experiment directory, tracking, TensorBoard, checkpoints, hooks.

A backend's ``Agent`` subclasses :class:`AgentCore` and supplies only what touches tensors:
device parsing, placing models, reading/writing module states, and the episode-tracker buffers.
"""

import collections
import contextlib
import datetime
import os
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import gymnasium
import numpy as np

from skrl_like import logger
from skrl_like.core.agents.checks import policy_output_size
from skrl_like.core.agents.deployment import actions_for_env, as_numpy, batch_size_of, observation_space_of
from skrl_like.core.agents.off_policy import stored_next_states
from skrl_like.core.config import did_you_mean
from skrl_like.core.io import atomic_write
from skrl_like.core.memory_index import MemoryBase
from skrl_like.core.network_definition import NetworkInputError
from skrl_like.core.results import RESULTS_FILE, append_result_row
from skrl_like.core.spaces import compute_space_size
from skrl_like.core.tensorboard import SummaryWriter
from skrl_like.core.tracking import EpisodeTracker

_WORST_REWARD = -(2**31)
# with TensorBoard writing off, each tag keeps its most recent values only (between this and twice this many)
TRACKING_HISTORY = 10_000
# the timestep compute_action acts at: past every warm-up (random_timesteps) and exploration decay, inside int32
_DEPLOYMENT_TIMESTEP = 2**30

# attributes a resume does not take from the checkpoint: derived from the trainer's configuration (the intervals),
# set by the loop (the running mode, the results clock) or naming where this process writes
_NOT_RUN_STATE = frozenset(
    {
        "write_interval",
        "checkpoint_interval",
        "checkpoint_store_separately",
        "checkpoint_memory",
        "cfg",
        "result_listeners",
        "trainer_hooks",
        "training",
        "environments_per_timestep",
        "_results_clock",
    }
)
# how deep a container attribute (a dict of lists, a tuple of arrays) is looked into for plain values
_MAX_PLAIN_DEPTH = 6


class RecentValues(list):
    """A tag's tracked values when nothing writes them (``write_interval`` 0): a list that keeps its newest
    :data:`TRACKING_HISTORY` to twice that many values, so a long run without TensorBoard does not grow by a few
    floats per update (inspecting ``agent.tracking_data`` after a short run works as before)."""

    def append(self, value: Any) -> None:
        super().append(value)
        if len(self) > 2 * TRACKING_HISTORY:  # trimmed in blocks: amortised O(1) per value
            del self[:-TRACKING_HISTORY]

    def extend(self, values: Iterable[Any]) -> None:
        super().extend(values)
        if len(self) > 2 * TRACKING_HISTORY:
            del self[:-TRACKING_HISTORY]


class AgentCore:
    """Base class of every agent (see a backend's ``Agent`` for the public signature).

    :param models: ``{role: model}``; ``None`` values are allowed (an absent optional model).
    :param memory: a memory, ``None``, or a list/tuple of memories (the first is used for learning,
        the others receive copies of every sample, e.g. to export data).
    :param observation_space: the space, shape or size of one observation.
    :param action_space: the space, shape or size of one action.
    :param device: where the agent computes; ``None`` picks the backend's default device.
    :param cfg: the agent's configuration (already merged with its defaults by the algorithm).
    """

    checkpoint_extension = ""  # ".pt" (torch) or ".pickle" (JAX)
    #: the memory is a replay sampled at random (off-policy agents), so several agents may share one (the trainers
    #: check it); a rollout memory, read whole by its agent's update, is never shared
    samples_memory_at_random = False

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Any = None,
        action_space: Any = None,
        device: Any = None,
        cfg: Optional[dict] = None,
    ) -> None:
        if not isinstance(models, Mapping):
            raise TypeError(
                f"{type(self).__name__}: models must be a dict mapping roles to models, e.g. "
                f"{{'policy': policy, 'value': value}}; got {type(models).__name__}"
            )
        self.models = dict(models)
        self.observation_space = observation_space
        self.action_space = action_space
        self.cfg = cfg if cfg is not None else {}
        self.device = self._parse_device(device)

        if isinstance(memory, (list, tuple)):
            self.memory = memory[0] if memory else None
            self.secondary_memories = list(memory[1:])
        else:
            self.memory = memory
            self.secondary_memories = []

        self._place_models()
        self._broadcast_models()
        self._check_model_spaces()

        experiment = self.cfg.get("experiment", {})
        self.tracking_data: Dict[str, list] = collections.defaultdict(list)
        self.write_interval: Union[int, str] = experiment.get("write_interval", "auto")
        self.checkpoint_interval: Union[int, str] = experiment.get("checkpoint_interval", "auto")
        self.checkpoint_store_separately = experiment.get("store_separately", False)
        self.checkpoint_modules: Dict[str, Any] = {}
        self.checkpoint_best_modules = {"timestep": 0, "reward": _WORST_REWARD, "saved": False, "modules": {}}
        self.training = True
        self.writer: Optional[SummaryWriter] = None
        self._tracker: Optional[EpisodeTracker] = None
        #: functions called with every ``results.jsonl`` row (a dict) right after it is written
        self.result_listeners: List[Callable[[Dict[str, Any]], None]] = []
        #: the trainer's hooks at this agent's updates and results writes (a
        #: :class:`~skrl_like.core.callbacks.AgentHooks`), set while a trainer trains with update callbacks or
        #: evaluation; ``None`` otherwise, so that nothing is called
        self.trainer_hooks: Optional[Any] = None
        #: environments this agent steps per timestep (set by the trainer; rows report env steps from it)
        self.environments_per_timestep = 1
        self._results_clock: Optional[Tuple[int, float]] = None  # (timestep, time) of the last row or the run start
        self.checkpoint_memory: Union[str, bool] = experiment.get("checkpoint_memory", "auto")
        self._initialized = False  # init() ran (a trainer calls it; compute_action calls it when no trainer did)

        directory = experiment.get("directory", "") or os.path.join(os.getcwd(), "runs")
        name = experiment.get("experiment_name", "") or "{}_{}".format(
            datetime.datetime.now().strftime("%y-%m-%d_%H-%M-%S-%f"), type(self).__name__
        )
        self.experiment_dir = os.path.join(directory, name)

    # -- backend hooks ---------------------------------------------------------------------------------------

    def _parse_device(self, device: Any) -> Any:
        raise NotImplementedError

    def _place_models(self) -> None:
        """Move the models where the agent computes (torch); nothing to do in JAX."""

    def _broadcast_models(self) -> None:
        """In a distributed run, give every model the parameters of process 0's, once, before the algorithm builds
        its optimizers and copies its targets: every agent starts data-parallel learning from the same point."""

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

    def _make_tracker(self, capacity: int) -> EpisodeTracker:
        raise NotImplementedError

    def _observations_to_backend(self, space: gymnasium.Space, observations: Any) -> Any:
        """A batch of observations of ``space`` (NumPy values) as the flat ``(batch, size)`` array or tensor the
        agent acts on, laid out as the backend's env wrappers lay it out."""
        raise NotImplementedError

    def _inference(self) -> Any:
        """The context ``compute_action`` acts in (torch: ``no_grad``)."""
        return contextlib.nullcontext()

    def _actions_to_numpy(self, actions: Any) -> np.ndarray:
        raise NotImplementedError

    # -- validation helpers used by algorithms -----------------------------------------------------------------

    def _require_models(self, roles: Iterable[str]) -> None:
        """Fail clearly when a role the algorithm needs has no model."""
        missing = [role for role in roles if self.models.get(role) is None]
        if missing:
            given = sorted(role for role, model in self.models.items() if model is not None)
            raise ValueError(
                f"{type(self).__name__} needs a model for role(s) {missing}; got models for {given}. "
                f"Pass models={{{', '.join(repr(r) + ': ...' for r in roles)}}}"
            )

    def _check_model_spaces(self) -> None:
        """Each model must have been built for the agent's observation and action spaces."""
        expected = {
            "observation": compute_space_size(self.observation_space),
            "action": compute_space_size(self.action_space),
        }
        for role, model in self.models.items():
            if model is None:
                continue
            for kind, size in expected.items():
                model_space = getattr(model, f"{kind}_space", None)
                if size and model_space is not None and compute_space_size(model_space) != size:
                    raise ValueError(
                        f"{type(self).__name__}: the '{role}' model was built for an {kind} space of size "
                        f"{compute_space_size(model_space)}, but the agent's {kind} space has size {size}. "
                        f"Build the model with the environment's {kind}_space"
                    )

    #: backend: ``(mixin class, distribution name)`` pairs, most specific first
    _policy_distributions: Tuple[Tuple[type, str], ...] = ()

    def _run_on_zeros(self, model: Any, role: str, width: int) -> Any:
        """Backend: ``model``'s network output for ``role`` on zero observations of shape ``(2, width)``
        (no gradients, no statistics updated); raises whatever the model raises."""
        raise NotImplementedError

    def _output_size(self, model: Any, role: str) -> Tuple[Optional[str], Optional[int]]:
        """``(distribution, outputs)`` of ``model`` for ``role``: the distribution its mixin samples
        (``"categorical"``, ``"multicategorical"``, ``"gaussian"`` or ``"deterministic"``) and the size of the last
        axis of its network output on a dummy batch laid out as the agent feeds observations (``None`` if the model
        cannot run on it alone, e.g. a critic that also takes actions: it is checked when it first runs).

        A model that runs on one-hot-sized observations but not on the stored layout (one integer column per
        ``Discrete`` part, as skrl stores them) is reported here, instead of as a shape error at the first step."""
        distribution = "deterministic"
        if role != "value":
            distribution = next(
                (name for cls, name in self._policy_distributions if isinstance(model, cls)), distribution
            )
        num_observations = getattr(model, "num_observations", None)
        if not num_observations:
            return distribution, None
        space = getattr(model, "observation_space", None)
        stored = (
            compute_space_size(space, occupied_size=True) if isinstance(space, gymnasium.Space) else num_observations
        )
        try:
            output = self._run_on_zeros(model, role, stored)
        except NetworkInputError:  # a description error: say it now, not at the first step
            raise
        except Exception as error:
            if stored != num_observations and self._runs_on_zeros(model, role, num_observations):
                raise ValueError(
                    f"{type(self).__name__}: the '{role}' model ({type(model).__name__}) takes {num_observations} "
                    f"observation columns (num_observations, which counts Discrete parts one-hot), but the agent "
                    f"feeds {stored} (one integer column per Discrete part, the layout skrl stores) for the space "
                    f"{space}: one-hot those columns in compute() (one_hot_encoding), or size the first layer with "
                    f"compute_space_size(observation_space, occupied_size=True). The model raised: {error}"
                ) from error
            return distribution, None
        return distribution, int(output.shape[-1]) if np.ndim(output) else None

    def _runs_on_zeros(self, model: Any, role: str, width: int) -> bool:
        try:
            self._run_on_zeros(model, role, width)
        except Exception:
            return False
        return True

    def _check_model_outputs(self, value_roles: Iterable[str] = (), policy_roles: Iterable[str] = ()) -> None:
        """Each policy's output matches the action space and each value model gives one number, checked at
        construction instead of failing (or sampling invalid actions) at some later step."""
        checks = [(role, "value") for role in value_roles] + [(role, "policy") for role in policy_roles]
        for role, kind in checks:
            model = self.models.get(role)
            if model is None:
                continue
            distribution, size = self._output_size(model, role)
            if size is None:
                continue
            if kind == "value":
                expected, what = 1, "one value per sample"
            else:
                expected = policy_output_size(distribution, self.action_space)
                what = f"one output per {'class' if 'categorical' in str(distribution) else 'action dimension'}"
            if expected is not None and size != expected:
                raise ValueError(
                    f"{type(self).__name__}: the '{role}' model ({type(model).__name__}, {distribution} outputs) "
                    f"produces {size} outputs per sample, but {what} of the action space {self.action_space} "
                    f"needs {expected}: give its last layer {expected} outputs"
                )

    def _build_preprocessor(self, name: str) -> Any:
        """The instance of ``cfg[name]`` (e.g. ``"state_preprocessor"``) built with ``cfg[name + "_kwargs"]`` and
        registered as a checkpoint module, or the identity when it is not configured."""
        preprocessor_class = self.cfg.get(name)
        if not preprocessor_class:
            return self._empty_preprocessor
        preprocessor = preprocessor_class(**self.cfg.get(f"{name}_kwargs", {}))
        self.checkpoint_modules[name] = preprocessor
        return preprocessor

    def _store_transition(self, **sample: Any) -> None:
        """Add one step to the memory and to every secondary memory."""
        self.memory.add_samples(**sample)
        for memory in self.secondary_memories:
            memory.add_samples(**sample)

    def _store_training_transition(
        self,
        states: Any,
        actions: Any,
        rewards: Any,
        next_states: Any,
        terminated: Any,
        truncated: Any,
        infos: Any,
        timestep: int,
        timesteps: int,
    ) -> None:
        """While training, store the transition (:meth:`_training_transition`)."""
        if self.memory is None or not self.training:
            return
        self._store_transition(
            **self._training_transition(
                states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
            )
        )

    def _training_transition(
        self,
        states: Any,
        actions: Any,
        rewards: Any,
        next_states: Any,
        terminated: Any,
        truncated: Any,
        infos: Any,
        timestep: Any,
        timesteps: int,
    ) -> Dict[str, Any]:
        """The sample a training step stores: the reward shaped by ``cfg["rewards_shaper"]``; a sub-environment that
        finished stores its terminal observation as next state
        (:func:`~skrl_like.core.agents.off_policy.stored_next_states`), so a truncation bootstraps from it. Array
        operations only (pure with a pure shaper): the JAX ``CompiledTrainer`` traces it inside its scan."""
        shaper = self.cfg.get("rewards_shaper")
        if shaper is not None:
            rewards = shaper(rewards, timestep, timesteps)
        return {
            "states": states,
            "actions": actions,
            "rewards": rewards,
            "next_states": stored_next_states(next_states, infos),
            "terminated": terminated,
            "truncated": truncated,
        }

    def _update_when_due(self, schedule: Any, timestep: int, timesteps: int, switch_modes: bool = True) -> bool:
        """While training, run ``self._update`` in train mode when ``schedule.updates(timestep)`` says so (a
        :class:`~skrl_like.core.agents.schedule.RolloutSchedule` or an
        :class:`~skrl_like.core.agents.schedule.OffPolicySchedule`). ``switch_modes=False`` leaves the models' mode
        alone (skrl's torch DQN; switching a torch model's mode walks all its submodules, twice per update).

        The one place every agent updates, so the trainer's update hooks (:attr:`trainer_hooks`) run here, around
        ``_update``, for every agent without code of its own; with none set nothing more is called.

        :return: whether it updated.
        """
        if not (self.training and schedule.updates(timestep)):
            return False
        if switch_modes:
            self.set_mode("train")
        hooks = self.trainer_hooks
        if hooks is None:
            self._update(timestep, timesteps)
        else:
            hooks.update_start(self, timestep)
            self._update(timestep, timesteps)
            hooks.update_end(self, timestep)
        if switch_modes:
            self.set_mode("eval")
        return True

    # -- public API --------------------------------------------------------------------------------------------

    def __str__(self) -> str:
        lines = [f"Agent: {repr(self)}"]
        for key, value in self.cfg.items():
            if isinstance(value, dict):
                lines.append(f"  |-- {key}")
                lines.extend(f"  |     |-- {k}: {v}" for k, v in value.items())
            else:
                lines.append(f"  |-- {key}: {value}")
        return "\n".join(lines)

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Resolve ``"auto"`` intervals from ``trainer_cfg["timesteps"]`` and create the writer and folders."""
        trainer_cfg = trainer_cfg or {}
        self._initialized = True
        if self._is_distributed_worker():
            self.write_interval = 0
            self.checkpoint_interval = 0
        timesteps = trainer_cfg.get("timesteps", 0)
        if self.write_interval == "auto":
            self.write_interval = int(timesteps / 100)
        if self.checkpoint_interval == "auto":
            self.checkpoint_interval = int(timesteps / 10)
        for name in ("write_interval", "checkpoint_interval"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"cfg['experiment']['{name}'] must be 'auto' or an int >= 0, got {value!r}")

        if self.cfg.get("experiment", {}).get("wandb", False) and not self._is_distributed_worker():
            self._init_wandb(trainer_cfg)
        if self.write_interval > 0:
            self.writer = SummaryWriter(log_dir=self.experiment_dir)
            self._tracker = self._make_tracker(min(self.write_interval, 4096))
        else:  # never cleared by a write: keep the recent values only
            recent = collections.defaultdict(RecentValues)
            recent.update((tag, RecentValues(values)) for tag, values in self.tracking_data.items())
            self.tracking_data = recent
        if self.checkpoint_interval > 0:
            os.makedirs(os.path.join(self.experiment_dir, "checkpoints"), exist_ok=True)

    def _is_distributed_worker(self) -> bool:
        return False

    def _init_wandb(self, trainer_cfg: Mapping[str, Any]) -> None:
        import copy

        import wandb  # optional dependency, imported only when asked for

        kwargs = copy.deepcopy(self.cfg["experiment"].get("wandb_kwargs", {}))
        kwargs.setdefault("name", os.path.basename(self.experiment_dir))
        kwargs.setdefault("sync_tensorboard", True)
        kwargs.setdefault("config", {})
        kwargs["config"].update({**self.cfg, **trainer_cfg})
        wandb.init(**kwargs)

    def track_data(self, tag: str, value: Any) -> None:
        """Record a value for ``tag``; it is reduced (mean, or min/max by suffix) at the next write.

        ``value`` may be a device scalar: it is converted only when written, so tracking never syncs.
        """
        self.tracking_data[tag].append(value)

    def write_tracking_data(self, timestep: int, timesteps: int) -> None:
        """Write the reduced tracking data at ``timestep`` to TensorBoard and as one ``results.jsonl`` row, clear it,
        and hand the row to every function in :attr:`result_listeners`. The trainer's :attr:`trainer_hooks` run
        first (evaluation during training: its results go into this row)."""
        if self.trainer_hooks is not None:
            self.trainer_hooks.before_write(self, timestep)
        self._collect_episodes()
        row: Dict[str, Any] = {}
        for tag, values in self.tracking_data.items():
            numbers = [float(v) for v in values]
            if tag.endswith("(min)"):
                value = np.min(numbers)
            elif tag.endswith("(max)"):
                value = np.max(numbers)
            else:
                value = np.mean(numbers)
            row[tag] = float(value)
            if self.writer is not None:
                self.writer.add_scalar(tag, value, timestep)
        if self.writer is not None:
            self.writer.flush()
        self.tracking_data.clear()
        self._write_result_row(timestep, row)

    def mark_run_start(self, timestep: int) -> None:
        """Start the clock of the ``env_steps_per_second`` column at ``timestep`` (the trainer calls it when a loop
        starts, so that a row's rate covers stepping only, not the set-up)."""
        self._results_clock = (int(timestep), time.perf_counter())

    def _write_result_row(self, timestep: int, values: Dict[str, float]) -> None:
        """One ``results.jsonl`` row: the step counters, the wall time, the env-steps rate since the previous row (or
        the run's start), then the reduced tracked values; appended while TensorBoard writing is on."""
        now = time.perf_counter()
        start_timestep, start_time = self._results_clock or (timestep, now)
        elapsed = now - start_time
        rate = (timestep - start_timestep) * self.environments_per_timestep / elapsed if elapsed > 0 else None
        self._results_clock = (timestep, now)
        row = {
            "timestep": int(timestep),
            "env_steps": int(timestep) * self.environments_per_timestep,
            "wall_time": time.time(),
            "env_steps_per_second": rate,
            **values,
        }
        if self.writer is not None:
            append_result_row(os.path.join(self.experiment_dir, RESULTS_FILE), row)
        for listener in self.result_listeners:
            listener(row)

    def _collect_episodes(self) -> None:
        if self._tracker is not None:
            for tag, values in self._tracker.collect().items():
                self.tracking_data[tag].extend(values)

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

    # -- full-state checkpoints (trainer.save / trainer.restore) -----------------------------------------------

    def _saves_memory_contents(self, memory: Any) -> bool:
        """``cfg["experiment"]["checkpoint_memory"]``: ``True``/``False`` always/never save the memory contents;
        ``"auto"`` saves those of a replay (:attr:`samples_memory_at_random`: the data off-policy agents learn from)
        and those of any other agent's memory only in the middle of a rollout (at a rollout's end every row is
        rewritten before it is read again, so nothing of it is needed)."""
        if self.checkpoint_memory != "auto":
            return bool(self.checkpoint_memory)
        return self.samples_memory_at_random or bool(memory.memory_index or memory.env_index)

    def _is_array(self, value: Any) -> bool:
        """Backend: ``value`` is one of the backend's arrays (not a trainable parameter)."""
        return False

    def _encode_state(self, state: Any) -> Any:
        """Backend: a module state as it is pickled into a run checkpoint (read back by :meth:`_check_state`)."""
        return state

    def _assign_attribute(self, owner: Any, name: str, value: Any) -> None:
        """Backend: restore one plain attribute (torch copies into a same-shaped tensor, so views stay valid)."""
        object.__setattr__(owner, name, value)

    def _stateful_attributes(self) -> Dict[str, Any]:
        """Backend: attributes with a state of their own outside ``checkpoint_modules`` (e.g. torch learning-rate
        schedulers), saved with :meth:`_get_internal_value` and restored like checkpoint modules."""
        return {}

    def _is_plain(self, value: Any, depth: int = 0) -> bool:
        """Numbers, arrays, keys and containers of them: what a run checkpoint copies attribute by attribute."""
        if value is None or isinstance(value, (bool, int, float, complex, np.generic, np.ndarray)):
            return True
        if self._is_array(value):
            return True
        if depth >= _MAX_PLAIN_DEPTH:
            return False
        if isinstance(value, (list, tuple)):
            return all(isinstance(item, str) or self._is_plain(item, depth + 1) for item in value)
        if isinstance(value, dict):
            return all(
                isinstance(key, (str, int)) and (isinstance(item, str) or self._is_plain(item, depth + 1))
                for key, item in value.items()
            )
        return False

    def _helper_objects(self) -> Dict[str, Any]:
        """The agent's own helper objects (schedules, noises, the episode tracker, ...): instances of skrl_like
        classes held as attributes that are neither modules, memories nor agents; their plain attributes are saved."""
        module_ids = {id(module) for module in self.checkpoint_modules.values()}
        module_ids.update(id(model) for model in self.models.values() if model is not None)
        helpers = {}
        for name, value in vars(self).items():
            module = type(value).__module__ or ""
            if (
                name not in _NOT_RUN_STATE  # e.g. the trainer's hooks
                and module.startswith("skrl_like.")
                and id(value) not in module_ids
                and not isinstance(value, (AgentCore, MemoryBase, SummaryWriter, type))
                and not callable(value)
                and hasattr(value, "__dict__")
            ):
                helpers[name] = value
        return helpers

    def _plain_attributes(self, owner: Any, skip: Iterable[str] = ()) -> Dict[str, Any]:
        skip = set(skip)
        return {
            name: value
            for name, value in vars(owner).items()
            if name not in skip and not isinstance(value, str) and self._is_plain(value)
        }

    def _memories(self) -> Dict[str, Any]:
        """The agent's memories by attribute name (``memory``, ``secondary_memories/0``, e.g. AMP's ``reply_buffer``)."""
        found = {}
        for name, value in vars(self).items():
            if isinstance(value, MemoryBase):
                found[name] = value
            elif isinstance(value, (list, tuple)):
                found.update({f"{name}/{i}": item for i, item in enumerate(value) if isinstance(item, MemoryBase)})
        return found

    def _state_modules(self) -> Dict[str, Any]:
        """Every module a run checkpoint saves: the checkpoint modules, models that are not among them, and the
        backend's stateful attributes (learning-rate schedulers)."""
        modules = {name: module for name, module in self.checkpoint_modules.items() if not isinstance(module, Mapping)}
        known = {id(module) for module in modules.values()}
        for role, model in self.models.items():
            if model is not None and not isinstance(model, Mapping) and id(model) not in known:
                modules[f"models/{role}"] = model
                known.add(id(model))
        for name, value in self._stateful_attributes().items():
            if id(value) not in known:
                modules[f"attributes/{name}"] = value
        return modules

    def run_state(self) -> Dict[str, Any]:
        """Everything an exact resume needs from this agent, as one picklable dict (see :mod:`skrl_like.core.checkpoints`).

        Collected generically, so every agent has it without code of its own: the states of its modules
        (checkpoint modules, models, learning-rate schedulers), the plain attributes (counters, key streams, the
        JAX learning rate a KL-adaptive schedule changed, tracked data, the best checkpoint so far) of the agent and
        of its helper objects (schedules, noises, episode tracker), the memory contents where
        :meth:`_saves_memory_contents` says so (the write cursor always), and the learners of a
        multi-agent algorithm.
        """
        memories = {}
        for name, memory in self._memories().items():
            contents = self._saves_memory_contents(memory)
            memories[name] = memory.run_state(contents=contents)
            if not contents and "rollouts" in self.cfg and (memory.memory_index or memory.env_index):
                logger.warning(
                    f"{type(self).__name__}: the checkpoint is taken in the middle of a rollout and "
                    "cfg['experiment']['checkpoint_memory'] is False, so a resumed run collects a different rollout; "
                    "leave it 'auto' (or True) for an exact resume"
                )
        modules = self._state_modules()
        return {
            "class": type(self).__name__,
            "modules": {name: self._encode_state(self._get_internal_value(module)) for name, module in modules.items()},
            "module_classes": {name: type(module).__name__ for name, module in modules.items()},
            "attributes": self._plain_attributes(self, skip=_NOT_RUN_STATE),
            "helpers": {name: self._plain_attributes(helper) for name, helper in self._helper_objects().items()},
            "memories": memories,
            "learners": {uid: learner.run_state() for uid, learner in getattr(self, "learners", {}).items()},
        }

    def load_run_state(self, state: Mapping[str, Any], where: str = "") -> None:
        """Load what :meth:`run_state` returned (in another process, into an agent built the same way).

        Everything is checked before anything is changed.

        :raises ValueError: naming what does not match (the agent's class, module names, shapes or dtypes, memory
            tensors); the agent is then left unchanged.
        """
        self._load_run_state(self._check_run_state(state, where or type(self).__name__))

    def _check_run_state(self, state: Mapping[str, Any], where: str) -> List[Callable[[], None]]:
        """Check ``state`` against this agent and return the assignments that load it."""
        name = type(self).__name__
        if state.get("class") != name:
            raise ValueError(f"{where}: the checkpoint holds a {state.get('class')} agent, this is a {name}")
        modules = self._state_modules()
        saved = state["modules"]
        problems = []
        if set(saved) != set(modules):
            missing, extra = sorted(set(modules) - set(saved)), sorted(set(saved) - set(modules))
            problems.append(f"modules differ (missing in the checkpoint: {missing}, only in the checkpoint: {extra})")
        actions: List[Callable[[], None]] = []
        for module_name in sorted(set(saved) & set(modules)):
            module = modules[module_name]
            saved_class = state["module_classes"][module_name]
            if saved_class != type(module).__name__:
                problems.append(f"'{module_name}' is a {saved_class} in the checkpoint, a {type(module).__name__} here")
                continue
            try:
                checked = self._check_state(module_name, module, saved[module_name])
            except (RuntimeError, ValueError, KeyError, TypeError, NotImplementedError) as error:
                problems.append(f"module '{module_name}' ({error})")
                continue
            actions.append(lambda n=module_name, m=module, c=checked: self._restore_state(n, m, c))
        memories = self._memories()
        if set(state["memories"]) != set(memories):
            problems.append(f"memories differ (checkpoint: {sorted(state['memories'])}, here: {sorted(memories)})")
        for memory_name in sorted(set(state["memories"]) & set(memories)):
            try:
                memories[memory_name].check_run_state(state["memories"][memory_name])
            except ValueError as error:
                problems.append(f"memory '{memory_name}' ({error})")
                continue
            actions.append(lambda m=memories[memory_name], s=state["memories"][memory_name]: m.load_run_state(s))
        learners = getattr(self, "learners", {})
        if set(state.get("learners", {})) != set(learners):
            problems.append(
                f"agents differ (checkpoint: {sorted(state.get('learners', {}))}, here: {sorted(learners)})"
            )
        for uid in sorted(set(state.get("learners", {})) & set(learners)):
            try:
                actions.extend(learners[uid]._check_run_state(state["learners"][uid], f"{where} agent '{uid}'"))
            except ValueError as error:
                problems.append(str(error))
        if problems:
            raise ValueError(f"{where}: the checkpoint does not match this agent's {'; '.join(problems)}")
        for attribute, value in state["attributes"].items():
            if attribute not in _NOT_RUN_STATE:
                actions.append(lambda a=attribute, v=value: self._assign_attribute(self, a, v))
        helpers = self._helper_objects()
        for helper_name, attributes in state["helpers"].items():
            helper = helpers.get(helper_name)
            if helper is None:  # e.g. no episode tracker in a process that does not write
                continue
            for attribute, value in attributes.items():
                actions.append(lambda h=helper, a=attribute, v=value: self._assign_attribute(h, a, v))
        return actions

    @staticmethod
    def _load_run_state(actions: List[Callable[[], None]]) -> None:
        for action in actions:
            action()

    def migrate(self, path: str, name_map: Mapping = {}, auto_mapping: bool = True, verbose: bool = False) -> bool:
        raise NotImplementedError(f"{type(self).__name__}.migrate (rl_games import) is not available in skrl_like")

    # -- learning rates at run time ------------------------------------------------------------------------------

    #: torch: the algorithm's learning rates by config key, each with its optimizer's and scheduler's attribute names
    #: (a key whose optimizer is absent is not a rate of that agent). The JAX agents name the learner-state field of
    #: each rate instead (``learning_rate_fields``) and override :meth:`learning_rate_keys`.
    _learning_rates: Mapping[str, Any] = {}

    def learning_rate_keys(self) -> Tuple[str, ...]:
        """The config keys of the learning rates :meth:`set_learning_rate` changes: ``("learning_rate",)`` for PPO,
        ``("actor_learning_rate", "critic_learning_rate", "entropy_learning_rate")`` for SAC, ..."""
        return tuple(key for key in self._learning_rates if self._has_learning_rate(key))

    def set_learning_rate(self, value: float, key: Optional[str] = None) -> None:
        """Make the optimizer(s) step at ``value`` from the next update on, e.g. after a Tune PBT exploit restored a
        donor's checkpoint (whose optimizer state holds the donor's rate) with a mutated ``learning_rate``.

        The rate replaces the current one and, with a ``learning_rate_scheduler``, becomes the scheduler's base rate:
        the schedule continues from it (``KLAdaptiveLR`` adapts it as usual). ``cfg[key]`` is updated too. Nothing
        is rebuilt or recompiled (the JAX updates take the rate as a traced argument).

        :param value: the new learning rate (a finite number >= 0).
        :param key: one config key of :meth:`learning_rate_keys` (``"critic_learning_rate"``); ``None``: all of them.
        :raises ValueError: ``value`` is not a finite number >= 0, or the agent has no learning rate ``key``.
        """
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not np.isfinite(value):
            raise ValueError(
                f"{type(self).__name__}.set_learning_rate: the rate must be a finite number, got {value!r}"
            )
        if value < 0:
            raise ValueError(f"{type(self).__name__}.set_learning_rate: the rate must be >= 0, got {value!r}")
        keys = self.learning_rate_keys()
        if key is not None and key not in keys:
            raise ValueError(
                f"{type(self).__name__} has no learning rate '{key}'.{did_you_mean(key, keys)} "
                f"Its learning rates: {', '.join(keys) or 'none'}"
            )
        for name in keys if key is None else (key,):
            self._apply_learning_rate(name, float(value))
            self.cfg[name] = float(value)

    def _has_learning_rate(self, key: str) -> bool:
        """Backend: whether this agent has the learning rate ``key`` of :attr:`_learning_rates`."""
        return False

    def _apply_learning_rate(self, key: str, value: float) -> None:
        """Backend: make the rate ``key`` (one of :meth:`learning_rate_keys`) ``value``."""
        raise NotImplementedError

    def set_mode(self, mode: str) -> None:
        """Put every model in ``"train"`` or ``"eval"`` mode."""
        for model in self.models.values():
            if model is not None:
                model.set_mode(mode)

    def set_running_mode(self, mode: str) -> None:
        """Tell the agent whether it is training (``"train"``) or evaluating (``"eval"``)."""
        if mode not in ("train", "eval"):
            raise ValueError(f"Running mode must be 'train' or 'eval', got {mode!r}")
        self.training = mode == "train"

    def act(self, states: Any, timestep: int, timesteps: int) -> Any:
        raise NotImplementedError

    def compute_action(self, observation: Any, explore: bool = False) -> Any:
        """The action for one observation or a batch, for deployment: NumPy in, NumPy out, no trainer, no env wrapper.

        The agent's state preprocessor is applied (with its statistics frozen), as in training. ``explore=False``
        gives the deterministic action a trainer's evaluation plays (``outputs["mean_actions"]``: the Gaussian mean,
        the categorical mode, the greedy Q-value action, the actor's action without noise); ``explore=True`` the
        action the agent samples when training ends (final exploration noise or epsilon, never warm-up random
        actions). Nothing is stored or learned. A JAX agent that samples draws from its own key stream.

        :param observation: one observation shaped like the observation space (a dict/tuple for composite spaces),
            or a batch of them with a leading batch axis.
        :param explore: sample (``True``) instead of the deterministic action.
        :return: one action (a NumPy integer for ``Discrete``), or ``(batch, ...)`` actions: ``Box`` actions shaped
            ``(batch, *shape)``, ``Discrete`` ones ``(batch,)``, as a gymnasium (vector) env takes them.
        :raises ValueError: the observation is neither one observation of the space nor a batch of them.
        """
        if not self._initialized:  # e.g. an agent built and loaded for deployment: its act functions are made here
            self.init()
        space = observation_space_of(self.observation_space)
        batch_size = batch_size_of(space, observation, f"{type(self).__name__}.compute_action")
        states = self._observations_to_backend(space, as_numpy(space, observation))
        training = self.training
        self.training = False  # the eval running mode, without the checks of set_running_mode
        try:
            with self._inference():
                outputs = self.act(states, timestep=_DEPLOYMENT_TIMESTEP, timesteps=_DEPLOYMENT_TIMESTEP)
        finally:
            self.training = training
        actions = outputs[0] if explore else (outputs[-1] or {}).get("mean_actions", outputs[0])
        return actions_for_env(self.action_space, self._actions_to_numpy(actions), single=batch_size is None)

    def record_transition(
        self,
        states: Any,
        actions: Any,
        rewards: Any,
        next_states: Any,
        terminated: Any,
        truncated: Any,
        infos: Any,
        timestep: int,
        timesteps: int,
    ) -> None:
        """Track episode statistics (only when writing to TensorBoard); algorithms then store the transition."""
        if self._tracker is not None:
            self._tracker.record(rewards, terminated, truncated)

    def pre_interaction(self, timestep: int, timesteps: int) -> None:
        """Called before each interaction step (no-op for most algorithms)."""

    def post_interaction(self, timestep: int, timesteps: int) -> None:
        """Write checkpoints and TensorBoard data when their intervals come round."""
        timestep += 1
        if timestep > 1 and self.checkpoint_interval > 0 and timestep % self.checkpoint_interval == 0:
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
        if timestep > 1 and self.write_interval > 0 and timestep % self.write_interval == 0:
            self.write_tracking_data(timestep, timesteps)

    def _update(self, timestep: int, timesteps: int) -> None:
        raise NotImplementedError

    def _empty_preprocessor(self, _input: Any, *args: Any, **kwargs: Any) -> Any:
        return _input
