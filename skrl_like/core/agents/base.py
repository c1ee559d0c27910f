"""The agent base every algorithm of both backends subclasses: the part the loop calls, in the order it calls it.

``AgentCore`` holds the models and memories, the construction checks, ``init``, acting (``act``,
``compute_action``), the interaction step (``record_transition`` stores the :class:`Transition` that
``transition_to_store`` builds; ``post_interaction`` updates on the algorithm's ``schedule`` and then writes), and
the learning rates. What it writes and saves lives beside it, in the bases it extends, one after the other:
:class:`~skrl_like.core.agents.tracking.AgentTracking` (tracked values, TensorBoard, ``results.jsonl``),
:class:`~skrl_like.core.agents.checkpointing.AgentCheckpoints` (checkpoint files, best agent, ``save``/``load``) and
:class:`~skrl_like.core.agents.run_state.AgentRunState` (the whole state for an exact resume).

A backend's ``Agent`` subclasses :class:`AgentCore` and supplies only what touches tensors:
device parsing, placing models, reading/writing module states, and the episode-tracker buffers.
"""

import contextlib
import inspect
import os
from typing import Any, Iterable, Mapping, Optional, Tuple, Union

import gymnasium
import numpy as np

from skrl_like import logger
from skrl_like.core.agents.checkpointing import _WORST_REWARD
from skrl_like.core.agents.checks import policy_output_size
from skrl_like.core.agents.config import check_config
from skrl_like.core.agents.deployment import actions_for_env, as_numpy, batch_size_of, observation_space_of
from skrl_like.core.agents.off_policy import check_memory_to_learn, stored_next_states
from skrl_like.core.agents.privileged import (
    NEXT_PRIVILEGED_STATES,
    PRIVILEGED_STATES,
    privileged_extras,
    privileged_roles,
    privileged_state_space,
)
from skrl_like.core.agents.recurrent import check_model_kinds, hidden_states_apart
from skrl_like.core.agents.run_state import _NOT_RUN_STATE, AgentRunState
from skrl_like.core.agents.tracking import TRACKING_HISTORY, RecentValues
from skrl_like.core.agents.transition import Transition
from skrl_like.core.config import did_you_mean, merge_config
from skrl_like.core.network_definition import NetworkInputError
from skrl_like.core.spaces import compute_space_size

__all__ = ["AgentCore", "RecentValues", "TRACKING_HISTORY", "Transition", "_NOT_RUN_STATE", "_WORST_REWARD"]

# the timestep compute_action acts at: past every warm-up (random_timesteps) and exploration decay, inside int32
_DEPLOYMENT_TIMESTEP = 2**30


class AgentCore(AgentRunState):
    """Base class of every agent: the constructor of every algorithm (skrl's signature), documented here once.

    :param models: ``{role: model}``, the roles the algorithm names; ``None`` values are allowed (an absent optional
        model).
    :param memory: a memory, ``None``, or a list/tuple of memories (the first is used for learning,
        the others receive copies of every sample, e.g. to export data).
    :param observation_space: the space, shape or size of one observation (of one environment).
    :param action_space: the space, shape or size of one action (of one environment).
    :param device: where the agent computes (a torch device or a JAX device, or its name); ``None`` picks the
        backend's default device.
    :param cfg: keys of the algorithm's :attr:`default_config` (its ``*_DEFAULT_CONFIG``), merged into a copy of
        it: unknown keys raise ``ValueError`` with the closest key, and every value is checked against its
        documented type and range.

    What a trainer (or a user's loop) plugs into an agent goes through three documented methods, never by setting
    attributes: :meth:`set_trainer_hooks` (code run around each update and before each results row: update
    callbacks, evaluation during training), and :meth:`add_result_listener` / :meth:`remove_result_listener`
    (functions handed every ``results.jsonl`` row: the progress bar, ``on_train_result``, curriculum, Tune).
    """

    #: the algorithm's ``*_DEFAULT_CONFIG``: the constructor merges ``cfg`` into a copy of it and checks every key
    #: (``None``: ``cfg`` is taken as it is)
    default_config: Optional[Mapping[str, Any]] = None
    #: keys accepted and dropped with a warning, each with what to set instead (``merge_config``'s ``ignored``; the
    #: JAX agents: the torch-only keys)
    ignored_config_keys: Optional[Mapping[str, str]] = None
    #: when the agent learns: the algorithm's :class:`~skrl_like.core.agents.schedule.RolloutSchedule` or
    #: :class:`~skrl_like.core.agents.schedule.OffPolicySchedule`, set in its ``_setup``; ``None``: it never updates
    schedule: Optional[Any] = None
    #: whether the models are put in train mode for an update and back in eval mode after it (skrl's torch DQN, CEM
    #: and tabular agents switch no modes: switching a torch model's mode walks all its submodules, twice per update)
    switches_modes_at_update = True
    #: the memory is a replay sampled at random (off-policy agents), so several agents may share one (the trainers
    #: check it); a rollout memory, read whole by its agent's update, is never shared
    samples_memory_at_random = False
    #: the roles the algorithm may feed the env's privileged states to (its value model or critics, with their targets)
    _privileged_state_roles: Tuple[str, ...] = ()
    #: the agent carries hidden states for recurrent models (the ``_RNN`` agents); others refuse recurrent models
    takes_recurrent_models = False

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        action_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        device: Optional[Any] = None,
        cfg: Optional[dict] = None,
    ) -> None:
        cfg = self._merge_config(cfg)
        self._check_arguments(cfg, observation_space, action_space)
        if not isinstance(models, Mapping):
            raise TypeError(
                f"{type(self).__name__}: models must be a dict mapping roles to models, e.g. "
                f"{{'policy': policy, 'value': value}}; got {type(models).__name__}"
            )
        self.models = dict(models)
        self.observation_space = observation_space
        self.action_space = action_space
        self.cfg = cfg
        self.device = self._parse_device(device)

        if isinstance(memory, (list, tuple)):
            self.memory = memory[0] if memory else None
            self.secondary_memories = list(memory[1:])
        else:
            self.memory = memory
            self.secondary_memories = []

        self._place_models()
        self._broadcast_models()
        #: the roles whose model reads the env's privileged states (core/agents/privileged.py); () for most agents
        self.privileged_roles = privileged_roles(type(self).__name__, self.models, self._privileged_state_roles)
        self._check_model_spaces()
        check_model_kinds(type(self).__name__, self.models, self.takes_recurrent_models)
        if self.privileged_roles and self.takes_recurrent_models:  # their sequence rows and the states' rows differ
            raise ValueError(
                f"{type(self).__name__}: the recurrent agents do not feed the env's privileged states yet (the "
                f"{', '.join(self.privileged_roles)} model has a state_space): build that model without state_space"
            )

        experiment = self.cfg.get("experiment", {})
        self._setup_tracking(experiment)
        self._setup_checkpoints(experiment)
        self.training = True
        self._initialized = False  # init() ran (a trainer calls it; compute_action calls it when no trainer did)
        self._setup()

    # -- algorithm hooks --------------------------------------------------------------------------------------

    def _merge_config(self, cfg: Optional[Mapping[str, Any]]) -> dict:
        """``cfg`` merged into a copy of :attr:`default_config` and checked key by key (``cfg`` as it is without
        defaults)."""
        if self.default_config is None:
            return cfg if cfg is not None else {}
        # named after the algorithm that sets the defaults (a subclass of PPO is configured by "PPO cfg")
        where = next(f"{cls.__name__} cfg" for cls in type(self).__mro__ if "default_config" in vars(cls))
        cfg = merge_config(self.default_config, cfg, where, ignored=self.ignored_config_keys)
        check_config(cfg, where)
        return cfg

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        """Checks that fail before anything is set up (the algorithm's kind of action space, its exploration
        settings): none by default."""

    def _setup(self) -> None:
        """The algorithm's own construction, run last by the constructor (models, schedule, optimizers,
        preprocessors): nothing by default."""

    # -- backend hooks ---------------------------------------------------------------------------------------

    def _parse_device(self, device: Any) -> Any:
        raise NotImplementedError

    def _place_models(self) -> None:
        """Move the models where the agent computes (torch); nothing to do in JAX."""

    def _broadcast_models(self) -> None:
        """In a distributed run, give every model the parameters of process 0's, once, before the algorithm builds
        its optimizers and copies its targets: every agent starts data-parallel learning from the same point."""

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
                if kind == "observation" and role in self.privileged_roles:
                    continue  # built on the state space: the trainer checks it against the env's
                model_space = getattr(model, f"{kind}_space", None)
                if size and model_space is not None and compute_space_size(model_space) != size:
                    raise ValueError(
                        f"{type(self).__name__}: the '{role}' model was built for an {kind} space of size "
                        f"{compute_space_size(model_space)}, but the agent's {kind} space has size {size}. "
                        f"Build the model with the environment's {kind}_space"
                    )

    #: backend: ``(mixin class, distribution name)`` pairs, most specific first
    _policy_distributions: Tuple[Tuple[type, str], ...] = ()

    def _run_on_zeros(
        self, model: Any, role: str, width: int, action_width: Optional[int] = None, action_value: float = 0.0
    ) -> Any:
        """Backend: ``model``'s network output for ``role`` on zero observations of shape ``(2, width)``, and
        ``taken_actions`` of shape ``(2, action_width)`` filled with ``action_value`` unless ``action_width`` is
        ``None`` (no gradients, no statistics updated); raises whatever the model raises."""
        raise NotImplementedError

    def _has_standard_deviation(self, role: str) -> bool:
        """Whether the model of ``role`` samples from a distribution with a standard deviation (a Gaussian): what an
        update tracks as ``Policy / Standard deviation`` (a categorical policy has none to track)."""
        model = self.models.get(role)
        return any(isinstance(model, cls) and name == "gaussian" for cls, name in self._policy_distributions)

    def _output_size(
        self, model: Any, role: str, action_width: Optional[int] = None
    ) -> Tuple[Optional[str], Optional[int]]:
        """``(distribution, outputs)`` of ``model`` for ``role``: the distribution its mixin samples
        (``"categorical"``, ``"multicategorical"``, ``"gaussian"`` or ``"deterministic"``) and the size of the last
        axis of its network output on a dummy batch laid out as the agent feeds observations, with zero taken actions
        of ``action_width`` columns for a critic (``None`` if the model cannot run on it alone: it is checked when it
        first runs).

        A model that runs on one-hot-sized observations but not on the stored layout (one integer column per
        ``Discrete`` part, as skrl stores them) is reported here, instead of as a shape error at the first step."""
        distribution = "deterministic"
        if role != "value" and action_width is None:
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
            output = self._run_on_zeros(model, role, stored, action_width)
        except NetworkInputError:  # a description error: say it now, not at the first step
            raise
        except Exception as error:
            if stored != num_observations and self._runs_on_zeros(model, role, num_observations, action_width):
                raise ValueError(
                    f"{type(self).__name__}: the '{role}' model ({type(model).__name__}) takes {num_observations} "
                    f"observation columns (num_observations, which counts Discrete parts one-hot), but the agent "
                    f"feeds {stored} (one integer column per Discrete part, the layout skrl stores) for the space "
                    f"{space}: one-hot those columns in compute() (one_hot_encoding), or size the first layer with "
                    f"compute_space_size(observation_space, occupied_size=True). The model raised: {error}"
                ) from error
            return distribution, None
        return distribution, int(output.shape[-1]) if np.ndim(output) else None

    def _runs_on_zeros(self, model: Any, role: str, width: int, action_width: Optional[int] = None) -> bool:
        try:
            self._run_on_zeros(model, role, width, action_width)
        except Exception:
            return False
        return True

    def _check_model_outputs(
        self, value_roles: Iterable[str] = (), policy_roles: Iterable[str] = (), critic_roles: Iterable[str] = ()
    ) -> None:
        """Each policy's output matches the action space, and each value model (of states) and critic (a Q-function
        of states and taken actions) gives one number per sample, checked at construction instead of failing (or
        sampling invalid actions, or training on a wrong shape) at some later step."""
        critic_roles = tuple(critic_roles)
        action_width = compute_space_size(self.action_space, occupied_size=True) if critic_roles else None
        checks = (
            [(role, "value", None) for role in value_roles]
            + [(role, "critic", action_width) for role in critic_roles]
            + [(role, "policy", None) for role in policy_roles]
        )
        ignoring = []
        for role, kind, actions in checks:
            model = self.models.get(role)
            if model is None:
                continue
            distribution, size = self._output_size(model, role, actions)
            if size is None:
                continue
            if kind == "critic" and self._ignores_actions(model, role, actions):
                ignoring.append(role)
            if kind != "policy":
                if size != 1:
                    what = "a value model" if kind == "value" else "a critic (one Q-value of a state and an action)"
                    raise ValueError(
                        f"{type(self).__name__}: the '{role}' model ({type(model).__name__}) is {what} and must "
                        f"produce one value per sample, but it produces {size} outputs per sample and needs 1: give "
                        "its last layer 1 output (output='ONE' in the model instantiators)"
                    )
                continue
            expected = policy_output_size(distribution, self.action_space)
            what = f"one output per {'class' if 'categorical' in str(distribution) else 'action dimension'}"
            if expected is not None and size != expected:
                raise ValueError(
                    f"{type(self).__name__}: the '{role}' model ({type(model).__name__}, {distribution} outputs) "
                    f"produces {size} outputs per sample, but {what} of the action space {self.action_space} "
                    f"needs {expected}: give its last layer {expected} outputs"
                )
        if ignoring:
            logger.warning(
                f"{type(self).__name__}: the critic(s) {ignoring} give the same value whatever the taken action (is "
                "their input STATES only?): the policy's gradient through them, with respect to the action, is then "
                "zero and it learns nothing from them (a DDPG or TD3 policy does not change at all, as in skrl). Give "
                "the critics the actions, e.g. input: concatenate([STATES, ACTIONS])"
            )

    def _ignores_actions(self, model: Any, role: str, action_width: int) -> bool:
        """Whether a critic's value is the same for zero and for unit taken actions (zero observations)."""
        space = getattr(model, "observation_space", None)
        width = compute_space_size(space, occupied_size=True) if isinstance(space, gymnasium.Space) else None
        width = width or getattr(model, "num_observations", None)
        if not width:
            return False
        try:
            at_zero = self._actions_to_numpy(self._run_on_zeros(model, role, width, action_width, 0.0))
            at_one = self._actions_to_numpy(self._run_on_zeros(model, role, width, action_width, 1.0))
        except Exception:  # reported by the output-size check, or at the first step
            return False
        return bool(np.array_equal(at_zero, at_one))

    def _build_preprocessor(self, name: str) -> Any:
        """The instance of ``cfg[name]`` (e.g. ``"state_preprocessor"``) built with ``cfg[name + "_kwargs"]`` and
        registered as a checkpoint module, or the identity when it is not configured. Kwargs that name no device
        get the agent's (a preprocessor on the framework's default device would meet the models on another)."""
        preprocessor_class = self.cfg.get(name)
        if not preprocessor_class:
            return self._empty_preprocessor
        kwargs = dict(self.cfg.get(f"{name}_kwargs") or {})
        if kwargs.get("device") is None and "device" in inspect.signature(preprocessor_class).parameters:
            kwargs["device"] = self.device
        preprocessor = preprocessor_class(**kwargs)
        self.checkpoint_modules[name] = preprocessor
        return preprocessor

    def transition_to_store(
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
    ) -> Transition:
        """The :class:`~skrl_like.core.agents.transition.Transition` a training step stores: the reward shaped by
        ``cfg["rewards_shaper"]``; a sub-environment that finished stores its terminal observation as next state
        (:func:`~skrl_like.core.agents.off_policy.stored_next_states`), so a truncation bootstraps from it.

        The one hook through which an algorithm changes what is stored: it extends the base's transition with named
        arrays (``super().transition_to_store(...).with_extras(...)``, as AMP does), and ``record_transition`` stores
        whatever this returns. Array operations only (pure with a pure shaper): the JAX ``CompiledTrainer`` traces it
        inside its scan."""
        shaper = self.cfg.get("rewards_shaper")
        if shaper is not None:
            rewards = shaper(rewards, timestep, timesteps)
        transition = Transition(
            states=states,
            actions=actions,
            rewards=rewards,
            next_states=stored_next_states(next_states, infos),
            terminated=terminated,
            truncated=truncated,
        )
        if self.privileged_roles:
            return transition.with_extras(**privileged_extras(type(self).__name__, infos))
        return transition

    def _create_privileged_state_tensors(self, dtype: Any) -> None:
        """The memory tensors of the privileged states before and after each step, only when a model reads them."""
        space = privileged_state_space(self)
        if space is None or self.memory is None:
            return
        for name in (PRIVILEGED_STATES, NEXT_PRIVILEGED_STATES):
            self.memory.create_tensor(name=name, size=space, dtype=dtype)

    def _store(self, transition: Transition) -> None:
        """Add ``transition`` (its six fields and extras, by name) to the memory and to every secondary memory (none
        without a memory)."""
        if self.memory is None:
            return
        fields = transition.fields()
        self.memory.add_samples(**fields)
        for memory in self.secondary_memories:
            memory.add_samples(**fields)

    def _update_when_due(self, timestep: int, timesteps: int) -> bool:
        """While training, run ``self._update`` when :attr:`schedule` says so, in train mode unless
        :attr:`switches_modes_at_update` is ``False``.

        The one place every agent updates, so the trainer's update hooks (:attr:`trainer_hooks`) run here, around
        ``_update``, for every agent without code of its own; with none set nothing more is called.

        :return: whether it updated.
        """
        if not (self.training and self.schedule.updates(timestep)):
            return False
        switch_modes = self.switches_modes_at_update
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
        self._start_writing()
        if self.checkpoint_interval > 0:
            os.makedirs(os.path.join(self.experiment_dir, "checkpoints"), exist_ok=True)

    def _is_distributed_worker(self) -> bool:
        return False

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
        """Tell the agent whether it is training (``"train"``) or evaluating (``"eval"``); a replay agent without a
        memory refuses to train (:func:`~skrl_like.core.agents.off_policy.check_memory_to_learn`)."""
        if mode not in ("train", "eval"):
            raise ValueError(f"Running mode must be 'train' or 'eval', got {mode!r}")
        if mode == "train" and self.samples_memory_at_random:
            check_memory_to_learn(type(self).__name__, self.memory)
        self.training = mode == "train"

    def act(self, states: Any, timestep: int, timesteps: int) -> Any:
        raise NotImplementedError

    def compute_action(
        self, observation: Any, explore: bool = False, *, hidden_states: Any = None, episode_start: Any = None
    ) -> Any:
        """The action for one observation or a batch, for deployment: NumPy in, NumPy out, no trainer, no env wrapper.

        The agent's state preprocessor is applied (with its statistics frozen), as in training. ``explore=False``
        gives the deterministic action a trainer's evaluation plays (``outputs["mean_actions"]``: the Gaussian mean,
        the categorical mode, the greedy Q-value action, the actor's action without noise); ``explore=True`` the
        action the agent samples when training ends (final exploration noise or epsilon, never warm-up random
        actions). Nothing is stored or learned. A JAX agent that samples draws from its own key stream.

        A recurrent (``_RNN``) agent takes the policy's hidden states and returns ``(actions, hidden_states)``: feed
        them back at the next call (``docs/recurrent.md``, "Deployment with state"). The training run's own hidden
        states are left as they were.

        :param observation: one observation shaped like the observation space (a dict/tuple for composite spaces),
            or a batch of them with a leading batch axis.
        :param explore: sample (``True``) instead of the deterministic action.
        :param hidden_states: recurrent agents only: the list the previous call returned (NumPy, one
            ``(num_layers, batch, hidden_size)`` array for a GRU or RNN policy, two for an LSTM; batch 1 for one
            observation), or ``None`` (zeros) at the start of the episodes.
        :param episode_start: recurrent agents only: a bool per observation (or one bool), true where a new episode
            begins: its hidden states are zeroed before acting.
        :return: one action (a NumPy integer for ``Discrete``), or ``(batch, ...)`` actions: ``Box`` actions shaped
            ``(batch, *shape)``, ``Discrete`` ones ``(batch,)``, as a gymnasium (vector) env takes them; for a
            recurrent agent the pair ``(actions, hidden_states)``.
        :raises ValueError: the observation is neither one observation of the space nor a batch of them, or the
            hidden states do not have the policy's shapes.
        """
        where = f"{type(self).__name__}.compute_action"
        if not self._initialized:  # e.g. an agent built and loaded for deployment: its act functions are made here
            self.init()
        if not self.takes_recurrent_models and (hidden_states is not None or episode_start is not None):
            raise ValueError(
                f"{where}: hidden_states and episode_start are for recurrent (_RNN) agents; "
                f"{type(self).__name__} carries no hidden states: call compute_action(observation)"
            )
        space = observation_space_of(self.observation_space)
        batch_size = batch_size_of(space, observation, where)
        states = self._observations_to_backend(space, as_numpy(space, observation))
        training = self.training
        self.training = False  # the eval running mode, without the checks of set_running_mode
        try:
            with hidden_states_apart(self, batch_size or 1) as carried, self._inference():
                if carried is not None:
                    carried.set_policy_states(hidden_states, episode_start, where)
                outputs = self.act(states, timestep=_DEPLOYMENT_TIMESTEP, timesteps=_DEPLOYMENT_TIMESTEP)
                new_hidden_states = None if carried is None else carried.policy_states_after_step()
        finally:
            self.training = training
        actions = outputs[0] if explore else (outputs[-1] or {}).get("mean_actions", outputs[0])
        actions = actions_for_env(self.action_space, self._actions_to_numpy(actions), single=batch_size is None)
        return actions if new_hidden_states is None else (actions, new_hidden_states)

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
        """Track episode statistics and, while training, store the step's transition (:meth:`transition_to_store`)
        in every memory (:meth:`_store`). Every agent stores through here; an algorithm changes what is stored by
        extending :meth:`transition_to_store`, not this method."""
        if self._tracker is not None:
            self._tracker.record(rewards, terminated, truncated)
        if self.training:
            self._store(
                self.transition_to_store(
                    states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
                )
            )
        self._advance_carried_state(terminated, truncated)

    def _advance_carried_state(self, terminated: Any, truncated: Any) -> None:
        """After each recorded step, training or not: what the agent carries from step to step moves on, reset where
        an episode ended (a recurrent agent's hidden states); nothing here."""

    def pre_interaction(self, timestep: int, timesteps: int) -> None:
        """Called before each interaction step (no-op for most algorithms)."""

    def post_interaction(self, timestep: int, timesteps: int) -> None:
        """While training, update when the algorithm's :attr:`schedule` says so (:meth:`_update_when_due`); then
        write checkpoints and TensorBoard data when their intervals come round."""
        if self.schedule is not None:
            self._update_when_due(timestep, timesteps)
        self._write_when_due(timestep, timesteps)

    def _update(self, timestep: int, timesteps: int) -> None:
        raise NotImplementedError

    def _empty_preprocessor(self, _input: Any, *args: Any, **kwargs: Any) -> Any:
        return _input
