"""What a trainer checks and builds at construction, kept beside the loop (:mod:`skrl_like.core.trainer`).

:class:`TrainerSetup` is the root of the trainer classes: the configuration's keys and values, the agents and their
scopes, the spaces and memories against the environment, and the run features a configuration adds (callbacks,
evaluation during training, curriculum) with the hook points they use on the agents
(:meth:`~skrl_like.core.agents.base.AgentCore.set_trainer_hooks`, ``add_result_listener``). Everything here fails at
construction with the fix, so a misconfiguration never surfaces hours into a run.
"""

import contextlib
import numbers
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

import numpy as np

from skrl_like import logger
from skrl_like.core.agents.privileged import check_env_state_space
from skrl_like.core.callbacks import EPISODE_HOOKS, UPDATE_HOOKS, AgentHooks, Callbacks, EpisodeHooks, make_callbacks
from skrl_like.core.curriculum import Curriculum
from skrl_like.core.evaluation import Evaluation
from skrl_like.core.spaces import compute_space_size

TRAINER_DEFAULT_CONFIG = {
    "timesteps": 100000,
    "headless": False,
    "disable_progressbar": False,
    "close_environment_at_exit": True,
    "environment_info": "episode",
    "stochastic_evaluation": False,
    "checkpoint_keep": 3,
    "evaluation_interval": 0,
    "evaluation_episodes": 10,
    "callbacks": None,
    "env_task_fn": None,
}

# what the base class falls back to for keys a (custom) subclass does not pass
_BASE_FALLBACKS = {**TRAINER_DEFAULT_CONFIG, "timesteps": 0}


def generate_equally_spaced_scopes(num_envs: int, num_simultaneous_agents: int) -> List[int]:
    """Split ``num_envs`` environments among agents: equal shares, the remainder to the last agent."""
    share = num_envs // num_simultaneous_agents
    if share == 0:
        raise ValueError(
            f"There are more agents ({num_simultaneous_agents}) than environments ({num_envs}): "
            "each agent needs at least one environment"
        )
    scopes = [share] * num_simultaneous_agents
    scopes[-1] += num_envs - share * num_simultaneous_agents
    return scopes


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not _is_bool(value)


def _is_callbacks(value: Any) -> bool:
    return isinstance(value, Callbacks) or (isinstance(value, type) and issubclass(value, Callbacks))


# key -> (is the value valid, what it must be, an example of a valid value)
_CFG_CHECKS = {
    "timesteps": (lambda v: _is_int(v) and v >= 1, "an int >= 1 (the number of loop iterations)", "1000"),
    "headless": (_is_bool, "a bool (False renders the environment every step)", "True"),
    "disable_progressbar": (
        lambda v: v is None or _is_bool(v),
        "a bool, or None to disable the bar when the output is not a terminal",
        "True",
    ),
    "close_environment_at_exit": (_is_bool, "a bool", "False"),
    "environment_info": (lambda v: isinstance(v, str), "a str: the infos key whose scalars are logged", "'episode'"),
    "stochastic_evaluation": (_is_bool, "a bool (True evaluates with sampled actions)", "True"),
    "checkpoint_keep": (
        lambda v: _is_int(v) and v >= 0,
        "an int >= 0: how many of the last full-state checkpoints to keep (0 keeps all)",
        "5",
    ),
    "evaluation_interval": (
        lambda v: _is_int(v) and v >= 0,
        "an int >= 0: timesteps between evaluations on evaluation_env (0 = no evaluation during training)",
        "10000",
    ),
    "evaluation_episodes": (lambda v: _is_int(v) and v >= 1, "an int >= 1: episodes per evaluation", "10"),
    "callbacks": (
        lambda v: v is None or _is_callbacks(v) or (isinstance(v, (list, tuple)) and all(map(_is_callbacks, v))),
        "None, a Callbacks subclass or instance (skrl_like.core.callbacks.Callbacks), or a list of them",
        "MyCallbacks()",
    ),
    "env_task_fn": (
        lambda v: v is None or callable(v),
        "None or a function (train_results, env, env_ctx) -> task (curriculum)",
        "lambda results, env, ctx: 1",
    ),
}


class TrainerSetup:
    """The construction-time half of :class:`~skrl_like.core.trainer.TrainerCore`: checks and run features."""

    #: the defaults a subclass's cfg is merged into (a trainer module's ``*_TRAINER_DEFAULT_CONFIG``)
    default_config: Mapping[str, Any] = _BASE_FALLBACKS
    #: the checks of a subclass's own keys, in ``_CFG_CHECKS``'s form
    extra_cfg_checks: Mapping[str, Tuple[Any, str, str]] = {}

    def _check_cfg(self, where: str, given: Mapping[str, Any]) -> None:
        """Type- and range-check every key, so a bad value fails here and not deep inside a run."""
        for key, (valid, expected, example) in {**_CFG_CHECKS, **self.extra_cfg_checks}.items():
            value = self.cfg[key]
            if key == "timesteps" and key not in given and value == 0 and self.default_config is _BASE_FALLBACKS:
                continue  # the base class's fallback for a custom subclass that passes no timesteps (as in skrl)
            if not valid(value):
                raise ValueError(
                    f"{where}['{key}'] must be {expected}, got {value!r} ({type(value).__name__}): "
                    f"pass e.g. cfg={{'{key}': {example}}}"
                )
        self.cfg["timesteps"] = int(self.cfg["timesteps"])  # a NumPy int becomes a plain int

    @staticmethod
    def _check_agents_scope(agents_scope: Any) -> List[int]:
        """``agents_scope`` as a list of counts; anything else (ranges, floats, <= 0) fails with the fix."""
        if agents_scope is None:
            return []
        fix = "pass one number of environments per agent, e.g. agents_scope=[3, 5] for 8 environments"
        if not isinstance(agents_scope, (list, tuple)):
            raise TypeError(f"agents_scope must be a list of ints, got {type(agents_scope).__name__}: {fix}")
        for index, count in enumerate(agents_scope):
            if isinstance(count, (list, tuple, range)):
                raise TypeError(
                    f"agents_scope[{index}] is {count!r}, a range: agents_scope holds counts, not (start, end) "
                    f"ranges; {fix} (the trainer computes the ranges)"
                )
            if not _is_int(count):
                raise TypeError(f"agents_scope[{index}] is {count!r} ({type(count).__name__}), not an int: {fix}")
            if count < 1:
                raise ValueError(f"agents_scope[{index}] is {count}: each agent needs at least one environment; {fix}")
        return [int(count) for count in agents_scope]

    #: whether agents may share one replay memory (False where each agent runs in a process of its own)
    shares_replay_memories = True

    def _check_distinct_agents(self, agents: List[Any], counts: List[int]) -> None:
        """Every entry is its own agent; a memory shared by several agents is a replay they all sample at random.

        Off-policy agents (``samples_memory_at_random``: DDPG, TD3, SAC, DQN) may share one replay memory, as in
        skrl's shared-memory example: each step the sharing agents write their scopes' rows side by side, in the
        order of ``agents``, so the memory must have ``num_envs`` equal to the sum of their scopes; each then samples
        from every agent's transitions. A rollout memory (on-policy agents) belongs to one agent: shared, the
        agents' rollouts would interleave and each would learn from the other's actions.
        """
        first_index = {}
        for index, agent in enumerate(agents):
            if id(agent) in first_index:
                raise ValueError(
                    f"agents[{index}] is the same object as agents[{first_index[id(agent)]}] "
                    f"({type(agent).__name__}): it would act and learn twice per timestep, mixing the two scopes' "
                    "rollouts in one memory; create one agent (with its own models and memory) per scope"
                )
            first_index[id(agent)] = index
        users: Dict[int, Tuple[Any, List[int]]] = {}  # id(memory) -> (memory, indexes of the agents using it)
        for index, agent in enumerate(agents):
            for memory in [getattr(agent, "memory", None), *(getattr(agent, "secondary_memories", None) or [])]:
                if memory is None:
                    continue
                _, indexes = users.setdefault(id(memory), (memory, []))
                if index not in indexes:
                    indexes.append(index)
        self._shared_memories = {key for key, (_, indexes) in users.items() if len(indexes) > 1}
        for memory, indexes in users.values():
            if len(indexes) > 1:
                self._check_shared_memory(agents, counts, memory, indexes)

    def _check_shared_memory(self, agents: List[Any], counts: List[int], memory: Any, indexes: List[int]) -> None:
        """``memory`` is used by ``agents[i]`` for every ``i`` in ``indexes`` (two or more)."""
        names = " and ".join(f"agents[{index}]" for index in indexes)
        own_memory = "give each agent its own memory, e.g. RandomMemory(memory_size=..., num_envs=<that agent's scope>)"
        rollout = [index for index in indexes if not getattr(agents[index], "samples_memory_at_random", False)]
        if rollout:
            raise ValueError(
                f"{names} share one memory object ({type(memory).__name__}), but agents[{rollout[0]}] "
                f"({type(agents[rollout[0]]).__name__}) learns from its own rollout in it: their transitions would "
                f"interleave in it; {own_memory}. Only off-policy agents (DDPG, TD3, SAC, DQN), which sample their "
                "replay memory at random, may share one"
            )
        if not self.shares_replay_memories:
            raise ValueError(
                f"{names} share one replay memory, but {type(self).__name__} runs each agent in a process of its own, "
                f"with its own copy of the memory: {own_memory}, or train them with the SequentialTrainer"
            )
        scopes = [counts[index] for index in indexes]
        num_envs = getattr(memory, "num_envs", None)
        if num_envs is not None and num_envs != sum(scopes):
            held = " + ".join(str(count) for count in scopes)
            raise ValueError(
                f"{names} share one replay memory of num_envs={num_envs}, but their scopes hold {held} = "
                f"{sum(scopes)} environments: each step they write their rows side by side, so create it with "
                f"num_envs={sum(scopes)}"
            )

    def _setup_agents(self) -> None:
        """Normalise ``agents`` to a list and ``agents_scope`` to ``(start, end)`` ranges (``self._scopes``)."""
        num_envs = self.env.num_envs
        if isinstance(self.agents, (list, tuple)):
            if not self.agents:
                raise ValueError("agents is empty: pass an agent or a list of agents")
            if len(self.agents) == 1:
                self.num_simultaneous_agents = 1
                self.agents = self.agents[0]
                self.agents_scope = [1]
                agent_list = [self.agents]
                counts = [num_envs]
            else:
                self.num_simultaneous_agents = len(self.agents)
                agent_list = list(self.agents)
                if not self.agents_scope:
                    logger.warning("The agents' scopes are empty: the environments are split equally among agents")
                    counts = generate_equally_spaced_scopes(num_envs, self.num_simultaneous_agents)
                elif len(self.agents_scope) != len(self.agents):
                    raise ValueError(
                        f"agents_scope has {len(self.agents_scope)} entries but there are {len(self.agents)} "
                        "agents: give one number of environments per agent"
                    )
                elif sum(self.agents_scope) != num_envs:
                    raise ValueError(
                        f"agents_scope {self.agents_scope} sums to {sum(self.agents_scope)}, but the environment "
                        f"has {num_envs} environments: the scopes must add up to env.num_envs"
                    )
                else:
                    counts = list(self.agents_scope)
                starts = [sum(counts[:i]) for i in range(len(counts))]
                self.agents_scope = [(start, start + count) for start, count in zip(starts, counts)]
        else:
            self.num_simultaneous_agents = 1
            agent_list = [self.agents]
            counts = [num_envs]
        for agent in agent_list:
            for hook in ("act", "record_transition", "pre_interaction", "post_interaction", "init"):
                if not callable(getattr(agent, hook, None)):
                    raise TypeError(f"{agent!r} is not an agent: it has no '{hook}' method")
        self._check_distinct_agents(agent_list, counts)
        self._agent_list = agent_list
        starts = [sum(counts[:i]) for i in range(len(counts))]
        self._scopes: List[Tuple[int, int]] = [(s, s + c) for s, c in zip(starts, counts)]

    def _is_multi_agent(self) -> bool:
        """A multi-agent run: a multi-agent (PettingZoo) environment with one ``MultiAgent`` (IPPO, MAPPO).

        :raises ValueError: the environment and the agent(s) do not fit (one is multi-agent, the other not).
        """
        env_multi = getattr(self.env, "possible_agents", None) is not None
        agents_multi = [hasattr(agent, "possible_agents") for agent in self._agent_list]
        if not env_multi and not any(agents_multi):
            return False
        if not env_multi:
            raise ValueError(
                f"{type(self._agent_list[agents_multi.index(True)]).__name__} is a multi-agent algorithm, but the "
                f"environment ({type(self.env).__name__}) is not a multi-agent environment: give it a PettingZoo "
                "parallel environment wrapped with wrap_env(env, wrapper='pettingzoo'), or use a single-agent "
                "algorithm (e.g. PPO)"
            )
        if len(self._agent_list) != 1 or not agents_multi[0]:
            raise ValueError(
                f"The environment is a multi-agent environment (agents {list(self.env.possible_agents)}): train it "
                "with one multi-agent algorithm (IPPO or MAPPO, built with possible_agents=env.possible_agents), not "
                f"{', '.join(type(agent).__name__ for agent in self._agent_list)}"
            )
        return True

    def _check_multi_agent_spaces(self) -> None:
        """The MultiAgent has every env agent, with spaces of the env's sizes and memories of its num_envs."""
        agent = self._agent_list[0]
        name = type(agent).__name__
        env_agents = list(self.env.possible_agents)
        missing = [uid for uid in env_agents if uid not in agent.possible_agents]
        if missing:
            raise ValueError(
                f"{name} has no agent {missing} of the environment (its possible agents are "
                f"{list(agent.possible_agents)}, the environment's {env_agents}): build it with "
                "possible_agents=env.possible_agents"
            )
        for kind in ("observation", "action"):
            env_spaces = getattr(self.env, f"{kind}_spaces")
            agent_spaces = getattr(agent, f"{kind}_spaces")
            for uid in env_agents:
                agent_size = compute_space_size(agent_spaces.get(uid))
                env_size = compute_space_size(env_spaces[uid])
                if agent_spaces.get(uid) is not None and agent_size != env_size:
                    raise ValueError(
                        f"{name}'s agent '{uid}' has an {kind} space of size {agent_size}, but the environment's "
                        f"agent '{uid}' has size {env_size}: build it with {kind}_spaces=env.{kind}_spaces"
                    )
        for uid, memory in (getattr(agent, "memories", None) or {}).items():
            memory_envs = getattr(memory, "num_envs", None)
            if memory_envs is not None and memory_envs != self.env.num_envs:
                raise ValueError(
                    f"{name}'s memory of agent '{uid}' was created with num_envs={memory_envs}, but the environment "
                    f"has {self.env.num_envs}: create it with num_envs=env.num_envs"
                )

    def _check_spaces(self) -> None:
        """Each agent's spaces and memory must fit the environment and its scope."""
        #: whether the loop reads env.state() around each training step (an agent's model asks for the states)
        self._reads_env_states = False
        if self._is_multi_agent():
            self._check_multi_agent_spaces()
            return
        env_sizes = {
            "observation": compute_space_size(self.env.observation_space),
            "action": compute_space_size(self.env.action_space),
        }
        for index, (agent, (start, end)) in enumerate(zip(self._agent_list, self._scopes)):
            name = f"agent {index} ({type(agent).__name__})"
            for kind, env_size in env_sizes.items():
                agent_space = getattr(agent, f"{kind}_space", None)
                if agent_space is not None and compute_space_size(agent_space) != env_size:
                    raise ValueError(
                        f"{name} has an {kind} space of size {compute_space_size(agent_space)}, but the "
                        f"environment's has size {env_size}: create the agent with env.{kind}_space"
                    )
            check_env_state_space(name, agent, getattr(self.env, "state_space", None))
            self._reads_env_states |= bool(getattr(agent, "privileged_roles", ()))
            memory = getattr(agent, "memory", None)
            memory_envs = getattr(memory, "num_envs", None)
            shared = id(memory) in self._shared_memories  # its num_envs was checked against all its agents' scopes
            if memory_envs is not None and memory_envs != end - start and not shared:
                raise ValueError(
                    f"{name}'s memory was created with num_envs={memory_envs}, but the agent steps {end - start} "
                    f"environment(s): create its memory with num_envs={end - start}"
                )

    # -- callbacks, evaluation during training, curriculum ------------------------------------------------------

    def _setup_run_features(self, evaluation_env: Any) -> None:
        """Build and check ``cfg["callbacks"]``, ``evaluation_interval`` (with ``evaluation_env``) and
        ``env_task_fn`` now, so a misconfiguration fails at construction and not hours into a run."""
        self.callbacks: Optional[Callbacks] = make_callbacks(self.cfg["callbacks"])
        self._running_episodes: Optional[List[Any]] = None  # the episode objects, kept between train()/eval() calls
        self.evaluation_env = evaluation_env
        interval = self.cfg["evaluation_interval"]
        self._evaluation: Optional[Evaluation] = None
        self._curriculum: Optional[Curriculum] = None
        configured = [
            key for key in ("callbacks", "evaluation_interval", "env_task_fn") if self.cfg[key] not in (None, 0)
        ]
        if configured and self._is_multi_agent():
            raise ValueError(
                f"{type(self).__name__}: cfg {configured} are not supported with a multi-agent environment yet: "
                "remove them from the trainer's cfg"
            )
        if interval > 0:
            if evaluation_env is None:
                raise ValueError(
                    f"{type(self).__name__}: cfg['evaluation_interval'] = {interval} needs an evaluation "
                    "environment: pass evaluation_env=wrap_env(<an env built like the training one>) to the trainer "
                    "(evaluating on the training env would cut its episodes and change the run)"
                )
            if evaluation_env is self.env:
                raise ValueError(
                    f"{type(self).__name__}: evaluation_env is the training env: build a second env the same way "
                    "(evaluating on the training env would cut its episodes and change the run)"
                )
            if len(self._agent_list) != 1:
                raise ValueError(
                    f"{type(self).__name__}: cfg['evaluation_interval'] evaluates a single agent, but there are "
                    f"{len(self._agent_list)}: train them with one trainer each, or set evaluation_interval to 0"
                )
            for kind in ("observation", "action"):
                sizes = [compute_space_size(getattr(e, f"{kind}_space")) for e in (self.env, evaluation_env)]
                if sizes[0] != sizes[1]:
                    raise ValueError(
                        f"{type(self).__name__}: evaluation_env's {kind} space has size {sizes[1]}, the training "
                        f"env's {sizes[0]}: build the evaluation env like the training one"
                    )
            self._evaluation = Evaluation(self, evaluation_env, interval, self.cfg["evaluation_episodes"])
        elif evaluation_env is not None:
            logger.warning(
                f"{type(self).__name__}: evaluation_env is given but cfg['evaluation_interval'] is 0, so it is not "
                "used: set evaluation_interval (timesteps between evaluations) to evaluate during training"
            )
        if self.cfg["env_task_fn"] is not None:
            self._curriculum = Curriculum(self.cfg["env_task_fn"], self.env)
        callbacks = self.callbacks
        update_callbacks = callbacks if callbacks is not None and any(map(callbacks.overrides, UPDATE_HOOKS)) else None
        self._agent_hooks: Optional[AgentHooks] = None  # set on the agents while training, when anything needs it
        if update_callbacks is not None or self._evaluation is not None:
            self._agent_hooks = AgentHooks(self, update_callbacks, self._evaluation)

    @property
    def last_evaluation(self) -> Optional[dict]:
        """The latest evaluation during training (``None`` before the first, or without ``evaluation_interval``):
        ``timestep``, ``returns`` and ``lengths`` of the episodes played, and the tracked ``Evaluation / ...``
        values."""
        return None if self._evaluation is None else self._evaluation.last_results

    @contextlib.contextmanager
    def _run_hooks(self, evaluate: bool, continuing: bool) -> Iterator[Optional[Callable]]:
        """For one train()/eval() call: install the hooks its configuration needs (:meth:`_install_agent_hooks`),
        begin the episodes of the episode callbacks (or go on with the running ones when the env goes on where it
        was, ``continuing``), and yield the per-step observer for :meth:`_step` (``None``, so nothing runs per step,
        unless a callback overrides an episode hook); remove the hooks when the call ends."""
        episodes = self._episode_hooks()
        installed = self._install_agent_hooks(evaluate)
        try:
            if episodes is not None:
                episodes.start(self._running_episodes if continuing else None)
                self._running_episodes = episodes.episodes
            yield None if episodes is None else episodes.step
        finally:
            self._remove_agent_hooks(installed)

    def _refuse_run_features(self, why: str) -> None:
        """For a trainer whose loop cannot run the hooks: fail at construction when any is configured."""
        configured = [
            key for key in ("callbacks", "evaluation_interval", "env_task_fn") if self.cfg[key] not in (None, 0)
        ]
        if configured:
            raise ValueError(f"{type(self).__name__} does not run cfg {configured}: {why}")

    def _install_agent_hooks(self, evaluate: bool) -> List[Callable[[], None]]:
        """For one training call: plug the run features into the agents through their documented extension points,
        :meth:`~skrl_like.core.agents.base.AgentCore.set_trainer_hooks` (update callbacks, evaluation) and
        :meth:`~skrl_like.core.agents.base.AgentCore.add_result_listener` (``on_train_result``, curriculum). No agent
        needs code of its own for this. Returns the functions :meth:`_remove_agent_hooks` calls to undo it."""
        undo: List[Callable[[], None]] = []
        if evaluate:
            return undo
        callbacks = self.callbacks
        first = self._agent_list[0]
        if self._agent_hooks is not None:
            if self._evaluation is not None:
                self._check_evaluation_interval(first)
            for agent in self._agent_list:
                previous = agent.set_trainer_hooks(self._agent_hooks)
                undo.append(lambda agent=agent, previous=previous: agent.set_trainer_hooks(previous))
        if self._curriculum is not None and not getattr(first, "write_interval", 0):
            raise ValueError(
                f"{type(self).__name__}: cfg['env_task_fn'] is called after each results row (a training iteration), "
                "but the agent writes none: set its cfg['experiment']['write_interval'] to 'auto' or a number of "
                "timesteps > 0"
            )
        if self._curriculum is not None or (callbacks is not None and callbacks.overrides("on_train_result")):
            first.add_result_listener(self._on_train_result)
            undo.append(lambda: first.remove_result_listener(self._on_train_result))
        return undo

    @staticmethod
    def _remove_agent_hooks(undo: List[Callable[[], None]]) -> None:
        for step in reversed(undo):
            step()

    def _check_evaluation_interval(self, agent: Any) -> None:
        """Evaluation runs right before a write (so its results land in that interval's row and describe the
        policy the row does): the interval must be a multiple of the agent's (resolved) write interval."""
        interval, write_interval = self.cfg["evaluation_interval"], getattr(agent, "write_interval", 0)
        if not write_interval:
            raise ValueError(
                f"{type(self).__name__}: cfg['evaluation_interval'] = {interval} needs the agent to write results "
                "(its evaluation results go to TensorBoard and the results file at each write): set the agent's "
                "cfg['experiment']['write_interval'] to 'auto' or a number of timesteps > 0"
            )
        if interval % write_interval:
            raise ValueError(
                f"{type(self).__name__}: cfg['evaluation_interval'] = {interval} is not a multiple of the agent's "
                f"write interval ({write_interval} timesteps; evaluation runs right before a write): use e.g. "
                f"evaluation_interval={max(1, round(interval / write_interval)) * write_interval}"
            )

    def _on_train_result(self, result: Mapping[str, Any]) -> None:
        """A results row was written: the callbacks' ``on_train_result``, then the curriculum's next task (for rows
        of training steps only: a ``StepTrainer``'s eval steps write rows too)."""
        if not self._agent_list[0].training:
            return
        if self.callbacks is not None:
            self.callbacks.on_train_result(trainer=self, result=result)
        if self._curriculum is not None:
            self._curriculum.on_result(result)

    def _episode_hooks(self) -> Optional[EpisodeHooks]:
        """The per-sub-environment episode bookkeeping, when a callback overrides an episode hook."""
        callbacks = self.callbacks
        if callbacks is None or not any(callbacks.overrides(hook) for hook in EPISODE_HOOKS):
            return None
        env_agents = [agent for agent, (start, end) in zip(self._agent_list, self._scopes) for _ in range(start, end)]
        return EpisodeHooks(self, callbacks, env_agents, self._to_numpy)

    def __str__(self) -> str:
        lines = [f"Trainer: {repr(self)}", f"  |-- Number of parallelizable environments: {self.env.num_envs}"]
        lines.append(f"  |-- Number of simultaneous agents: {self.num_simultaneous_agents}")
        lines.append("  |-- Agents and scopes:")
        if self.num_simultaneous_agents > 1:
            for agent, (start, end) in zip(self._agent_list, self._scopes):
                lines.append(f"  |     |-- agent: {type(agent)}")
                lines.append(f"  |     |     |-- scope: {end - start} environments ({start}:{end})")
        else:
            lines.append(f"  |     |-- agent: {type(self._agent_list[0])}")
            lines.append(f"  |     |     |-- scope: {self.env.num_envs} environment(s)")
        return "\n".join(lines)

    def _check_single_agent_env(self) -> None:
        if self._is_multi_agent():
            raise NotImplementedError(
                f"{type(self).__name__}: this method takes single-agent environments; a multi-agent environment is "
                "trained and evaluated with train() and eval()"
            )
