"""An agent's whole state for an exact resume (``trainer.save`` / ``trainer.restore``, see
:mod:`skrl_like.core.checkpoints`): collected generically from its modules, plain attributes, helper objects and
memories, and loaded back only after everything was checked.

:class:`AgentRunState` is the third of the agent's bases (after
:class:`~skrl_like.core.agents.checkpointing.AgentCheckpoints`, whose modules it saves).
"""

from typing import Any, Callable, Dict, Iterable, List, Mapping

import numpy as np

from skrl_like import logger
from skrl_like.core.agents.checkpointing import AgentCheckpoints
from skrl_like.core.memory_index import MemoryBase
from skrl_like.core.tensorboard import SummaryWriter

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


class AgentRunState(AgentCheckpoints):
    """The agent's state for an exact resume (see :class:`~skrl_like.core.agents.base.AgentCore`)."""

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
                and not isinstance(value, (AgentRunState, MemoryBase, SummaryWriter, type))
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
