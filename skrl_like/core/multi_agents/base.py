"""The backend-neutral half of ``MultiAgent``: per-agent configs, learners, tracking and checkpoints.

A multi-agent algorithm (IPPO, MAPPO) is one single-agent on-policy *learner* per agent name (uid): a backend's PPO
(or a subclass of it) built with that agent's models, memory, spaces and configuration. The learners collect and
learn exactly as PPO does; this class routes the per-agent dicts the trainer exchanges to them, sums the agents'
rewards for the episode statistics, tags each learner's tracked values with its uid, and writes one checkpoint
laid out ``{uid: {name: state}}``. A backend's ``MultiAgent`` mixes this class with its ``Agent`` (devices, state
dicts, the episode-tracker buffers); nothing here touches tensors.
"""

import copy
import datetime
import functools
import operator
import os
from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from skrl_like import logger
from skrl_like.core.agents.base import _WORST_REWARD, AgentCore
from skrl_like.core.agents.transition import Transition
from skrl_like.core.config import merge_config
from skrl_like.core.spaces import compute_space_size


def as_per_agent(value: Any, possible_agents: Sequence[str]) -> Dict[str, Any]:
    """``value`` as ``{uid: value}``: a mapping whose keys cover ``possible_agents`` is taken as per-agent values, a
    non-empty mapping whose keys are a strict subset of them is an error, and anything else is copied for each uid.

    :raises ValueError: the mapping names some of the agents but not all.
    """
    agents = set(possible_agents)
    if isinstance(value, Mapping) and value:
        keys = set(value)
        if keys < agents:
            raise ValueError(
                f"The per-agent value {value!r} does not match possible agents {list(possible_agents)}: it has no "
                f"entry for {sorted(agents - keys)}; give one entry per agent, or one value for all agents"
            )
        if keys >= agents:
            return dict(value)
    per_agent = {}
    for uid in possible_agents:
        try:
            per_agent[uid] = copy.deepcopy(value)
        except Exception:  # e.g. a JAX function or a class with state that cannot be copied
            per_agent[uid] = value
    return per_agent


class MultiAgentCore(AgentCore):
    """Base class of the multi-agent algorithms (see a backend's ``MultiAgent`` for the public signature).

    Subclasses set :attr:`default_config`, :attr:`per_agent_keys` (config keys that may be given per agent) and
    :attr:`learner_base`, the single-agent class each agent's learner is built with from its models, memory, spaces
    and config.
    """

    #: config keys resolved with :meth:`_as_dict` (the others are shared by every agent)
    per_agent_keys: Sequence[str] = ()
    #: the algorithm's name in messages and in the default experiment name
    algorithm = "MultiAgent"
    #: the single-agent class every agent learns with (the backend's PPO; MAPPO's: PPO with a shared-state critic)
    learner_base: type = type(None)

    def __init__(
        self,
        possible_agents: Sequence[str],
        models: Mapping[str, Mapping[str, Any]],
        memories: Optional[Mapping[str, Any]] = None,
        observation_spaces: Optional[Mapping[str, Any]] = None,
        action_spaces: Optional[Mapping[str, Any]] = None,
        device: Any = None,
        cfg: Optional[dict] = None,
    ) -> None:
        name = self.algorithm
        if isinstance(possible_agents, str) or not isinstance(possible_agents, Sequence) or not possible_agents:
            raise TypeError(
                f"{name}: possible_agents must be a non-empty list of agent names, got {possible_agents!r}: pass "
                "possible_agents=env.possible_agents"
            )
        self.possible_agents = list(possible_agents)
        self.num_agents = len(self.possible_agents)
        self._check_per_agent(models, "models", "{'policy': ..., 'value': ...}", required=True)
        self._check_per_agent(memories, "memories", "RandomMemory(memory_size=cfg['rollouts'], num_envs=...)")
        self._check_per_agent(observation_spaces, "observation_spaces", "env.observation_spaces", required=True)
        self._check_per_agent(action_spaces, "action_spaces", "env.action_spaces", required=True)
        super().__init__({}, None, None, None, device, cfg)
        self.models = {uid: dict(models[uid]) for uid in self.possible_agents}
        self.memories = {uid: (memories or {}).get(uid) for uid in self.possible_agents}
        self.observation_spaces = {uid: observation_spaces[uid] for uid in self.possible_agents}
        self.action_spaces = {uid: action_spaces[uid] for uid in self.possible_agents}
        self.memory = None  # the trainer's shared-memory check looks for it
        # the agents that stored a transition in this step's record_transition: post_interaction counts their rollouts
        self._stored: List[str] = []

        # one learner per agent, configured with that agent's values of the per-agent keys
        per_agent = {key: self._as_dict(self.cfg[key]) for key in self.per_agent_keys if key in self.cfg}
        self.learners: Dict[str, Any] = {}
        self.checkpoint_modules = {}
        for uid in self.possible_agents:
            learner_cfg = {key: value for key, value in self.cfg.items() if key not in per_agent}
            learner_cfg.update({key: values[uid] for key, values in per_agent.items()})
            # the learner neither writes nor checkpoints: this object does, for all agents
            learner_cfg["experiment"] = {
                **self.cfg["experiment"],
                "write_interval": 0,
                "checkpoint_interval": 0,
                "wandb": False,
            }
            try:
                learner = self._make_learner(uid, learner_cfg)
            except (ValueError, TypeError) as error:
                if f"{name}[{uid}]" in str(error):  # the learner's own message names the agent already
                    raise
                raise type(error)(f"{name} agent '{uid}': {error}") from error
            learner.track_data = self._tagger(uid)
            self.learners[uid] = learner
            self.checkpoint_modules[uid] = learner.checkpoint_modules  # the learner's own dict: always current

    def _check_per_agent(self, value: Any, name: str, example: str, required: bool = False) -> None:
        if value is None and not required:
            return
        if not isinstance(value, Mapping):
            raise TypeError(
                f"{self.algorithm}: {name} must be a dict keyed by agent name ({self.possible_agents}), got "
                f"{type(value).__name__}: pass e.g. {name}={{uid: {example} for uid in env.possible_agents}}"
            )
        missing = [uid for uid in self.possible_agents if value.get(uid) is None]
        if missing:
            raise ValueError(
                f"{self.algorithm}: {name} has no entry for agent(s) {missing} (it has {sorted(value)}); every one "
                f"of possible_agents {self.possible_agents} needs one: pass {name}={{uid: {example} for uid in "
                "env.possible_agents}"
            )

    def _tagger(self, uid: str) -> Any:
        def track_data(tag: str, value: Any) -> None:
            self.track_data(f"{tag} ({uid})", value)

        return track_data

    def _merge_config(self, cfg: Optional[Mapping[str, Any]]) -> dict:
        # not checked here: the per-agent keys may be {uid: value} dicts, and each learner checks its own values
        return merge_config(self.default_config or {}, cfg, f"{self.algorithm} cfg", ignored=self.ignored_config_keys)

    def _make_learner(self, uid: str, cfg: dict) -> Any:
        """The single-agent learner of agent ``uid`` with configuration ``cfg`` (per-agent values resolved): a
        :attr:`learner_base` named ``<algorithm>[<uid>]``, so that its messages name the agent."""
        cfg["random_timesteps"] = 0  # skrl 1.4.3's IPPO and MAPPO have no random-action branch
        base = self.learner_base
        # the multi-agent loop hands no privileged states: a learner's models read observations (MAPPO: the shared state)
        attributes = {"__module__": base.__module__, "_privileged_state_roles": ()}
        learner_type = type(f"{self.algorithm}[{uid}]", (base,), attributes)
        return learner_type(
            models=self.models[uid],
            memory=self.memories[uid],
            observation_space=self.observation_spaces[uid],
            action_space=self.action_spaces[uid],
            device=self.device,
            cfg=cfg,
            **self._learner_arguments(uid),
        )

    def _learner_arguments(self, uid: str) -> Dict[str, Any]:
        """What else agent ``uid``'s learner is built with (MAPPO: its shared observation space)."""
        return {}

    def _as_dict(self, value: Any) -> Dict[str, Any]:
        """A config value as ``{uid: value}`` (see :func:`as_per_agent`)."""
        return as_per_agent(value, self.possible_agents)

    # -- public API --------------------------------------------------------------------------------------------

    def __str__(self) -> str:
        return super().__str__().replace("Agent: ", "Multi-agent: ", 1)

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Resolve the intervals and create the writer (as ``Agent.init``), then each learner's memory tensors."""
        super().init(trainer_cfg)
        # the episode statistics of the summed rewards are accumulated always (skrl), written when writing
        if self._tracker is None:
            self._tracker = self._make_tracker(min(self.write_interval, 4096) if self.write_interval else 4096)
        for learner in self.learners.values():
            learner.init(trainer_cfg)

    def learning_rate_keys(self) -> Tuple[str, ...]:
        """The learning rates of the agents' learners (each learner has its own optimizers)."""
        keys = [key for learner in self.learners.values() for key in learner.learning_rate_keys()]
        return tuple(dict.fromkeys(keys))

    def _has_learning_rate(self, key: str) -> bool:
        return key in self.learning_rate_keys()

    def _apply_learning_rate(self, key: str, value: float) -> None:
        # one rate for every agent (a per-agent rate: set it on ``learners[uid]``)
        for learner in self.learners.values():
            if key in learner.learning_rate_keys():
                learner.set_learning_rate(value, key)

    def set_mode(self, mode: str) -> None:
        for learner in self.learners.values():
            learner.set_mode(mode)

    def set_running_mode(self, mode: str) -> None:
        super().set_running_mode(mode)
        for learner in self.learners.values():
            learner.set_running_mode(mode)

    def _present(self, values: Mapping[str, Any]) -> Iterable[str]:
        """The agents of ``values`` in ``possible_agents`` order (PettingZoo drops agents that left the episode)."""
        unknown = [uid for uid in values if uid not in self.learners]
        if unknown:
            raise KeyError(
                f"{self.algorithm} has no agent {unknown} (its possible agents are {self.possible_agents}): build it "
                "with possible_agents=env.possible_agents"
            )
        return [uid for uid in self.possible_agents if uid in values]

    def act(self, states: Mapping[str, Any], timestep: int, timesteps: int) -> tuple:
        """Each present agent's policy on its observations: ``(actions, log_prob, outputs)``, dicts keyed by uid."""
        actions, log_prob, outputs = {}, {}, {}
        for uid in self._present(states):
            actions[uid], log_prob[uid], outputs[uid] = self.learners[uid].act(states[uid], timestep, timesteps)
        return actions, log_prob, outputs

    def compute_action(self, observation: Mapping[str, Any], explore: bool = False) -> Dict[str, Any]:
        """Deployment: ``{uid: observation}`` (one or a batch each) in, ``{uid: action}`` out, for the agents given;
        each agent's learner computes its own (see :meth:`AgentCore.compute_action`)."""
        if not isinstance(observation, Mapping):
            raise ValueError(
                f"{self.algorithm}.compute_action takes a dict {{agent name: observation}} for some of "
                f"{self.possible_agents}, got {type(observation).__name__}"
            )
        return {uid: self.learners[uid].compute_action(observation[uid], explore) for uid in self._present(observation)}

    def _sum_rewards(self, rewards: Mapping[str, Any]) -> Any:
        return sum(rewards[uid] for uid in self._present(rewards))

    def _departure_columns(self, states: Any) -> tuple:
        """``(rewards, terminated, truncated)`` for an agent the environment dropped from a step's outputs, shaped
        ``(num_envs, 1)`` like ``states``' rows: no reward, terminated, not truncated (backend hook)."""
        raise NotImplementedError

    def record_transition(
        self,
        states: Mapping[str, Any],
        actions: Mapping[str, Any],
        rewards: Mapping[str, Any],
        next_states: Mapping[str, Any],
        terminated: Mapping[str, Any],
        truncated: Mapping[str, Any],
        infos: Any,
        timestep: int,
        timesteps: int,
    ) -> None:
        """Track the episode of the summed rewards, then, while training, store each acting agent's transition in
        its memory.

        An episode (for the statistics) ends when every agent that acted is done: an agent leaving early does not
        end it. Each agent's memory holds that agent's own transitions, in order: one that leaves the episode
        early stores its last transition with its done flag, then nothing until the reset (it does not act), and
        its learner counts only stored transitions (see :meth:`post_interaction`), so a rollout never holds rows of
        another rollout. An agent that acted but that the environment left out of the step's outputs stores its
        done transition once: no reward, ``terminated``, its observation as next state (never bootstrapped from).
        """
        acting = self._present(actions)
        flags = [terminated[uid] | truncated[uid] for uid in acting if uid in terminated and uid in truncated]
        if flags and self._tracker is not None:
            episode_over = functools.reduce(operator.and_, flags)
            self._tracker.record(self._sum_rewards(rewards), episode_over, episode_over)
        self._stored = []
        for uid in acting:
            agent_infos = infos.get(uid) if isinstance(infos, Mapping) else None
            if uid in next_states and uid in rewards and uid in terminated and uid in truncated:
                step = (rewards[uid], next_states[uid], terminated[uid], truncated[uid])
            else:
                departure_rewards, departure_terminated, departure_truncated = self._departure_columns(states[uid])
                step = (departure_rewards, states[uid], departure_terminated, departure_truncated)
            self._store_agent_transition(
                uid, states[uid], actions[uid], step[0], step[1], step[2], step[3], agent_infos, infos, timestep,
                timesteps,
            )  # fmt: skip
            self._stored.append(uid)

    def _store_agent_transition(self, uid: str, *args: Any) -> None:
        """While its learner trains, store one agent's transition (its learner's ``transition_to_store``) in its
        memories."""
        states, actions, rewards, next_states, terminated, truncated, agent_infos, infos, timestep, timesteps = args
        learner = self.learners[uid]
        if learner.training:
            transition = learner.transition_to_store(
                states, actions, rewards, next_states, terminated, truncated, agent_infos, timestep, timesteps
            )
            learner._store(self._agent_transition(uid, transition, infos))

    def _agent_transition(self, uid: str, transition: Transition, infos: Any) -> Transition:
        """Agent ``uid``'s transition as its memory stores it (``infos``: the step's, of every agent): as its learner
        built it; MAPPO adds the shared states."""
        return transition

    def post_interaction(self, timestep: int, timesteps: int) -> None:
        """While training, each learner that stored a transition this step updates when its rollout is full (an
        agent out of the episode collects nothing, so its rollout counter waits); then checkpoints and TensorBoard."""
        for uid in self._stored:
            learner = self.learners[uid]
            learner._update_when_due(timestep, timesteps)
        self._stored = []
        MultiAgentCore._write_when_due(self, timestep, timesteps)

    # -- writing and checkpoints ---------------------------------------------------------------------------------

    def _states(self) -> Dict[str, Dict[str, Any]]:
        return {
            uid: {name: learner._get_internal_value(module) for name, module in learner.checkpoint_modules.items()}
            for uid, learner in self.learners.items()
        }

    def _write_when_due(self, timestep: int, timesteps: int) -> None:
        """The base ``post_interaction``: checkpoints (and the best one) and TensorBoard, at their intervals."""
        timestep += 1
        if timestep > 1 and self.checkpoint_interval > 0 and timestep % self.checkpoint_interval == 0:
            self._collect_episodes()
            reward = np.mean(self.tracking_data.get("Reward / Total reward (mean)", [_WORST_REWARD]))
            best = self.checkpoint_best_modules
            if reward > best["reward"]:
                modules = {
                    uid: {name: self._copy_state(state) for name, state in states.items()}
                    for uid, states in self._states().items()
                }
                best.update(timestep=timestep, reward=reward, saved=False, modules=modules)
            self.write_checkpoint(timestep, timesteps)
        if timestep > 1 and self.write_interval > 0 and timestep % self.write_interval == 0:
            self.write_tracking_data(timestep, timesteps)

    def write_checkpoint(self, timestep: Optional[int], timesteps: int) -> None:
        """``agent_<tag>`` holding ``{uid: {name: state}}``, or ``<uid>_<name>_<tag>`` files when storing
        separately; the best modules as ``best_agent`` / ``best_<uid>_<name>``."""
        tag = str(timestep) if timestep is not None else datetime.datetime.now().strftime("%y-%m-%d_%H-%M-%S-%f")
        directory = os.path.join(self.experiment_dir, "checkpoints")
        ext = self.checkpoint_extension
        states = self._states()
        if self.checkpoint_store_separately:
            for uid, modules in states.items():
                for name, state in modules.items():
                    self._write_file(os.path.join(directory, f"{uid}_{name}_{tag}{ext}"), state, True)
        else:
            self._write_file(os.path.join(directory, f"agent_{tag}{ext}"), states)
        best = self.checkpoint_best_modules
        if best["modules"] and not best["saved"]:
            if self.checkpoint_store_separately:
                for uid, modules in best["modules"].items():
                    for name, state in modules.items():
                        self._write_file(os.path.join(directory, f"best_{uid}_{name}{ext}"), state, True)
            else:
                self._write_file(os.path.join(directory, f"best_agent{ext}"), best["modules"])
            best["saved"] = True

    def save(self, path: str) -> None:
        """Save every agent's modules to ``path`` as ``{uid: {name: state}}`` (written atomically)."""
        self._write_file(path, self._states())

    def load(self, path: str) -> None:
        """Load a file written by :meth:`save` or a checkpoint: every agent's modules are checked before any is
        loaded. An agent missing from the file keeps its state (warning), as does a module unknown to an agent.

        :raises FileNotFoundError: ``path`` does not exist.
        :raises ValueError: the file is not a multi-agent checkpoint, or a module does not match.
        """
        if not os.path.isfile(path):
            raise FileNotFoundError(f"Checkpoint '{path}' does not exist")
        try:
            states = self._read_states(path)
        except Exception as error:
            raise ValueError(
                f"Checkpoint '{path}' could not be read ({type(error).__name__}: {error}); the file is corrupt or "
                f"was not written by {self.algorithm}.save / a checkpoint"
            ) from error
        if not isinstance(states, dict) or not all(isinstance(value, dict) for value in states.values()):
            raise ValueError(
                f"Checkpoint '{path}' is not a multi-agent checkpoint ({{uid: {{name: state}}}}): it was written by "
                "a single-agent Agent.save? load it into that agent"
            )
        if states and not set(states) & set(self.learners):
            raise ValueError(
                f"Checkpoint '{path}' has agents {sorted(states)}, none of which this {self.algorithm} has "
                f"({self.possible_agents})"
            )
        checked, mismatches, unknown = {}, [], []
        for uid, modules in states.items():
            learner = self.learners.get(uid)
            if learner is None:
                logger.warning(f"Cannot load agent '{uid}' of '{path}': {self.algorithm} has no such agent")
                continue
            for name, state in modules.items():
                if name not in learner.checkpoint_modules:
                    unknown.append(f"{uid}:{name}")
                    continue
                try:
                    checked[(uid, name)] = learner._check_state(name, learner.checkpoint_modules[name], state)
                except (RuntimeError, ValueError, KeyError, TypeError) as error:
                    mismatches.append(f"'{uid}:{name}' module ({error})")
        if mismatches:
            raise ValueError(
                f"Checkpoint '{path}' does not match this {self.algorithm}'s {' and '.join(mismatches)}; nothing "
                "was loaded: build it with the models, preprocessors and optimizers of the one that saved it"
            )
        for name in unknown:
            logger.warning(f"Cannot load the '{name}' module: {self.algorithm} has no such module")
        for uid in self.possible_agents:
            if uid not in states:
                logger.warning(f"Checkpoint '{path}' has no agent '{uid}': it keeps its current state")
        for (uid, name), state in checked.items():
            learner = self.learners[uid]
            learner._restore_state(name, learner.checkpoint_modules[name], state)

    def migrate(self, *args: Any, **kwargs: Any) -> bool:
        raise NotImplementedError(f"{self.algorithm}.migrate is not available (as in skrl 1.4.3)")


def check_spaces_fit(algorithm: str, uid: str, kind: str, agent_space: Any, env_space: Any) -> None:
    """Raise when ``agent_space`` (of agent ``uid``) and the environment's differ in size."""
    if agent_space is None or env_space is None:
        return
    if compute_space_size(agent_space) != compute_space_size(env_space):
        raise ValueError(
            f"{algorithm}: agent '{uid}' has an {kind} space of size {compute_space_size(agent_space)} but the "
            f"environment's agent '{uid}' has size {compute_space_size(env_space)}: build the agent with "
            f"{kind}_spaces=env.{kind}_spaces"
        )


class SharedStatesMixin:
    """MAPPO's neutral half (mixed before a backend's ``MultiAgent``): the shared observation spaces, and each
    agent's shared states before and after the step (``infos["shared_states"]``/``["shared_next_states"]``, added
    by the trainer) handed to its learner with the transition."""

    def _set_shared_observation_spaces(self, possible_agents: Sequence[str], spaces: Any) -> None:
        self.possible_agents = list(possible_agents) if isinstance(possible_agents, Sequence) else possible_agents
        self._check_per_agent(spaces, "shared_observation_spaces", "env.state_spaces", True)
        self.shared_observation_spaces = {uid: spaces[uid] for uid in self.possible_agents}

    def _learner_arguments(self, uid: str) -> Dict[str, Any]:
        return {"shared_observation_space": self.shared_observation_spaces[uid]}

    def _store_agent_transition(self, uid: str, *args: Any) -> None:
        infos = args[7]
        if not isinstance(infos, Mapping) or "shared_states" not in infos or "shared_next_states" not in infos:
            raise KeyError(
                f"{self.algorithm}.record_transition: infos has no 'shared_states'/'shared_next_states' (the "
                "environment's state before and after the step): train with a skrl_like trainer, which adds "
                "env.state() there, or add them to infos yourself"
            )
        super()._store_agent_transition(uid, *args)

    def _agent_transition(self, uid: str, transition: Transition, infos: Any) -> Transition:
        return transition.with_extras(
            shared_states=infos["shared_states"], shared_next_states=infos["shared_next_states"]
        )


def check_shared_critic_spaces(learner: Any) -> None:
    """A MAPPO learner's policy reads the agent's observations and its value model the shared state."""
    for role, space in (("policy", learner.observation_space), ("value", learner.shared_observation_space)):
        model_space = getattr(learner.models.get(role), "observation_space", None)
        if model_space is None or space is None:
            continue
        if compute_space_size(model_space) != compute_space_size(space):
            what, argument = (
                ("the observation space", "observation_spaces[uid]")
                if role == "policy"
                else ("the shared (state) space", "shared_observation_spaces[uid]")
            )
            raise ValueError(
                f"{type(learner).__name__}: the '{role}' model was built for an observation space of size "
                f"{compute_space_size(model_space)}, but {what} has size {compute_space_size(space)}: build it with "
                f"{argument}"
            )
