"""The trainer loops, written once for both backends.

One hook style: a backend's ``Trainer`` subclasses :class:`TrainerCore` and overrides only its tensor hooks
(the no-grad context, how per-agent actions are stacked, which ``infos`` values are scalars worth logging,
conversion to NumPy, the distributed rank). The whole-run loop and the one-step loop live here too, so a
backend's ``SequentialTrainer``/``StepTrainer`` is a plain subclass of its ``Trainer`` that only picks one.
"""

import atexit
import contextlib
import numbers
import os
import random
import signal
import sys
import threading
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import tqdm

from skrl_like import logger
from skrl_like.core import checkpoints
from skrl_like.core.callbacks import EPISODE_HOOKS, UPDATE_HOOKS, AgentHooks, Callbacks, EpisodeHooks, make_callbacks
from skrl_like.core.config import merge_config
from skrl_like.core.curriculum import Curriculum
from skrl_like.core.evaluation import Evaluation, play_episodes
from skrl_like.core.results import RESULTS_FILE, truncate_results, write_params
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


def _scoped_infos(infos: Any, start: int, end: int) -> Any:
    """The step's infos for the agent of environments ``start:end``: the per-environment terminal observations
    (``infos["final_states"]``, one row per environment) cut to its scope, everything else as it is."""
    if isinstance(infos, Mapping) and infos.get("final_states") is not None:
        return {**infos, "final_states": infos["final_states"][start:end]}
    return infos


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


class TrainerCore:
    """Base class of every trainer (see a backend's ``Trainer`` for the public signature).

    :param env: a wrapped environment (``wrap_env(...)``).
    :param agents: one agent, or a list/tuple of distinct agents that share the environment (each with its own
        memory).
    :param agents_scope: number of environments for each agent, a list of ints >= 1 that sums to
        ``env.num_envs``; empty or ``None`` splits them equally.
    :param cfg: trainer configuration (keys of ``*_TRAINER_DEFAULT_CONFIG``), checked at construction.
    :param evaluation_env: a second wrapped environment, built like ``env``, on which ``cfg["evaluation_interval"]``
        evaluates during training (so the training env's episodes are never cut); needed only for that.
    """

    #: the defaults a subclass's cfg is merged into (a trainer module's ``*_TRAINER_DEFAULT_CONFIG``)
    default_config: Mapping[str, Any] = _BASE_FALLBACKS
    #: the checks of a subclass's own keys, in ``_CFG_CHECKS``'s form
    extra_cfg_checks: Mapping[str, Tuple[Any, str, str]] = {}

    def __init__(
        self,
        env: Any,
        agents: Any,
        agents_scope: Optional[Sequence[int]] = None,
        cfg: Optional[dict] = None,
        evaluation_env: Any = None,
    ):
        where = f"{type(self).__name__} cfg"
        self.cfg = merge_config(self.default_config, cfg, where)
        self._check_cfg(where, given=cfg or {})
        self.env = env
        self.agents = agents
        self.agents_scope = self._check_agents_scope(agents_scope)
        self.timesteps = self.cfg["timesteps"]
        self.headless = self.cfg["headless"]
        self.disable_progressbar = self.cfg["disable_progressbar"]
        self.close_environment_at_exit = self.cfg["close_environment_at_exit"]
        self.environment_info = self.cfg["environment_info"]
        self.stochastic_evaluation = self.cfg["stochastic_evaluation"]
        self.checkpoint_keep = self.cfg["checkpoint_keep"]
        #: the timestep the next ``train()`` starts from: 0, then where the last ``train()`` or ``restore`` left off
        self.initial_timestep = 0
        self._resume_states: Any = None  # the observations the next train() continues from (None: reset the env)
        self._stop_requested = False  # set by Ctrl-C during train(): stop after the current step
        self._loop_bar: Optional[tqdm.tqdm] = None
        self._params_written = False
        if self._is_distributed_worker():
            self.disable_progressbar = True

        self._setup_agents()
        self._check_spaces()
        self._setup_run_features(evaluation_env)

        if self.close_environment_at_exit:
            atexit.register(self._close_environment)

    def _close_environment(self) -> None:
        """Close the environment (at exit, or earlier on an interrupt, when ``close_environment_at_exit``) once."""
        atexit.unregister(self._close_environment)
        logger.info("Closing environment")
        self.env.close()
        logger.info("Environment closed")

    # -- backend hooks -------------------------------------------------------------------------------------

    def _no_grad(self) -> Any:
        return contextlib.nullcontext()

    def _stack(self, arrays: List[Any]) -> Any:
        raise NotImplementedError

    def _info_scalar(self, value: Any) -> Any:
        """``value`` if it is a single-element array worth logging as ``Info / <key>``, else ``None``."""
        return None

    def _is_distributed_worker(self) -> bool:
        return False

    def _to_numpy(self, array: Any) -> Any:
        raise NotImplementedError

    # -- set-up and validation -----------------------------------------------------------------------------

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
        ``timestep``, ``returns`` and ``lengths`` of the episodes played, and the tracked ``Evaluation / ...`` values."""
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

    def _install_agent_hooks(self, evaluate: bool) -> List[Tuple[Any, Any]]:
        """For one training call: set the agents' hook point (``trainer_hooks``, run by the agent base class around
        updates and before results writes: update callbacks, evaluation) and register the results listener
        (``on_train_result``, curriculum). No agent needs code of its own for this. Returns what
        :meth:`_remove_agent_hooks` undoes."""
        installed: List[Tuple[Any, Any]] = []  # (agent, its previous trainer_hooks) or (listeners, the listener)
        if evaluate:
            return installed
        callbacks = self.callbacks
        first = self._agent_list[0]
        if self._agent_hooks is not None:
            if self._evaluation is not None:
                self._check_evaluation_interval(first)
            for agent in self._agent_list:
                installed.append((agent, getattr(agent, "trainer_hooks", None)))
                agent.trainer_hooks = self._agent_hooks
        if self._curriculum is not None and not getattr(first, "write_interval", 0):
            raise ValueError(
                f"{type(self).__name__}: cfg['env_task_fn'] is called after each results row (a training iteration), "
                "but the agent writes none: set its cfg['experiment']['write_interval'] to 'auto' or a number of "
                "timesteps > 0"
            )
        if self._curriculum is not None or (callbacks is not None and callbacks.overrides("on_train_result")):
            listeners = first.result_listeners
            listeners.append(self._on_train_result)
            installed.append((listeners, self._on_train_result))
        return installed

    @staticmethod
    def _remove_agent_hooks(installed: List[Tuple[Any, Any]]) -> None:
        for owner, value in reversed(installed):
            if isinstance(owner, list):  # a listener appended to a result_listeners list
                owner.remove(value)
            else:
                owner.trainer_hooks = value

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

    def _init_agents(self) -> None:
        for agent, (start, end) in zip(self._agent_list, self._scopes):
            agent.environments_per_timestep = end - start
            agent.init(trainer_cfg=self.cfg)

    def _set_running_mode(self, mode: str) -> None:
        for agent in self._agent_list:
            agent.set_running_mode(mode)

    def _check_single_agent_env(self) -> None:
        if self._is_multi_agent():
            raise NotImplementedError(
                f"{type(self).__name__}: this method takes single-agent environments; a multi-agent environment is "
                "trained and evaluated with train() and eval()"
            )

    # -- one interaction step, shared by every loop ----------------------------------------------------------

    def _act(self, states: Any, timestep: int, timesteps: int, evaluate: bool) -> Any:
        actions = []
        single = len(self._agent_list) == 1
        for agent, (start, end) in zip(self._agent_list, self._scopes):
            outputs = agent.act(states if single else states[start:end], timestep=timestep, timesteps=timesteps)
            if evaluate and not self.stochastic_evaluation:
                extra = outputs[-1] or {}  # some agents return None instead of an outputs dict
                actions.append(extra.get("mean_actions", outputs[0]))
            else:
                actions.append(outputs[0])
        return actions[0] if single else self._stack(actions)

    def _step(
        self, states: Any, timestep: int, timesteps: int, evaluate: bool, observe: Optional[Callable] = None
    ) -> Tuple[Any, ...]:
        """pre_interaction -> act -> env.step -> record_transition -> post_interaction, for every agent
        (``observe``: see :meth:`_after_env_step`)."""
        actions = self._before_env_step(states, timestep, timesteps, evaluate)
        with self._no_grad():
            next_states, rewards, terminated, truncated, infos = self.env.step(actions)
            if not self.headless:
                self.env.render()
        self._after_env_step(
            states, actions, next_states, rewards, terminated, truncated, infos, timestep, timesteps, observe
        )
        return next_states, rewards, terminated, truncated, infos

    # the two agent halves of a step, split around env.step so that ParallelTrainer's agent processes run them too
    def _before_env_step(self, states: Any, timestep: int, timesteps: int, evaluate: bool) -> Any:
        """Every agent's pre_interaction, then (no-grad) its action on its scope; returns the stacked actions."""
        for agent in self._agent_list:
            agent.pre_interaction(timestep=timestep, timesteps=timesteps)
        with self._no_grad():
            return self._act(states, timestep, timesteps, evaluate)

    def _after_env_step(
        self,
        states: Any,
        actions: Any,
        next_states: Any,
        rewards: Any,
        terminated: Any,
        truncated: Any,
        infos: Any,
        timestep: int,
        timesteps: int,
        observe: Optional[Callable] = None,
    ) -> None:
        """(no-grad) every agent's record_transition on its scope and the env-info tracking, then post_interaction.

        ``observe(next_states, rewards, terminated, truncated, infos)``, when given (the episode callbacks), runs
        between the two: after the step is recorded, before the agents learn and write, so what it tracks (custom
        metrics) lands in the same results row as the step's episode statistics."""
        agents = self._agent_list
        with self._no_grad():
            if len(agents) == 1:
                agents[0].record_transition(
                    states=states,
                    actions=actions,
                    rewards=rewards,
                    next_states=next_states,
                    terminated=terminated,
                    truncated=truncated,
                    infos=infos,
                    timestep=timestep,
                    timesteps=timesteps,
                )
            else:
                for agent, (start, end) in zip(agents, self._scopes):
                    agent.record_transition(
                        states=states[start:end],
                        actions=actions[start:end],
                        rewards=rewards[start:end],
                        next_states=next_states[start:end],
                        terminated=terminated[start:end],
                        truncated=truncated[start:end],
                        infos=_scoped_infos(infos, start, end),
                        timestep=timestep,
                        timesteps=timesteps,
                    )
            self._log_environment_info(infos)
        if observe is not None:
            observe(next_states, rewards, terminated, truncated, infos)
        # in eval too: an agent in "eval" running mode does not learn but still writes checkpoints and TensorBoard
        for agent in agents:
            agent.post_interaction(timestep=timestep, timesteps=timesteps)

    def _next_states(self, next_states: Any, terminated: Any, truncated: Any) -> Tuple[Any, Any]:
        """The states for the next step: vector envs reset themselves; a single env is reset here."""
        if self.env.num_envs == 1 and (terminated.any() or truncated.any()):
            with self._no_grad():
                return self.env.reset()
        return next_states, None

    def _log_environment_info(self, infos: Any) -> None:
        if not isinstance(infos, dict) or self.environment_info not in infos:
            return
        entries = infos[self.environment_info]
        if not isinstance(entries, dict):
            return
        for key, value in entries.items():
            scalar = self._info_scalar(value)
            if scalar is not None:
                for agent in self._agent_list:
                    agent.track_data(f"Info / {key}", scalar)

    def _progress(self, start: Optional[int] = None) -> Iterator[int]:
        """The loop's timesteps ``start`` (default ``initial_timestep``) to ``timesteps``, under a bar that counts
        from ``start`` (a resumed run's bar continues where it stopped)."""
        start = self.initial_timestep if start is None else start
        self._loop_bar = tqdm.tqdm(
            range(start, self.timesteps),
            initial=start,
            total=self.timesteps,
            disable=self.disable_progressbar,
            file=sys.stdout,
        )
        return self._loop_bar

    # -- the two loops a concrete trainer picks from --------------------------------------------------------

    # -- multi-agent environments (per-agent dicts) -----------------------------------------------------------

    def _multi_agent_reset(self) -> Tuple[Any, Any]:
        with self._no_grad():
            states, _ = self.env.reset()
            return states, self.env.state()

    def _multi_agent_step(
        self, states: Any, shared_states: Any, timestep: int, timesteps: int, evaluate: bool
    ) -> Tuple[Any, ...]:
        """One step of a multi-agent env; returns the step's outputs and the states (and shared states) to go on
        from: the next ones, only of the agents still in the episode, or a reset's when every agent is done."""
        agent = self._agent_list[0]
        agent.pre_interaction(timestep=timestep, timesteps=timesteps)
        with self._no_grad():
            outputs = agent.act(states, timestep=timestep, timesteps=timesteps)
            if evaluate and not self.stochastic_evaluation:
                actions = {uid: outputs[-1][uid].get("mean_actions", outputs[0][uid]) for uid in outputs[-1]}
            else:
                actions = outputs[0]
            next_states, rewards, terminated, truncated, infos = self.env.step(actions)
            shared_next_states = self.env.state()
            infos = {**(infos or {}), "shared_states": shared_states, "shared_next_states": shared_next_states}
            if not self.headless:
                self.env.render()
            agent.record_transition(
                states=states,
                actions=actions,
                rewards=rewards,
                next_states=next_states,
                terminated=terminated,
                truncated=truncated,
                infos=infos,
                timestep=timestep,
                timesteps=timesteps,
            )
            self._log_environment_info(infos)
        agent.post_interaction(timestep=timestep, timesteps=timesteps)
        alive = list(self.env.agents)
        if not alive:  # PettingZoo empties `agents` when every agent is done
            following = self._multi_agent_reset()
        else:  # agents that left the episode early act no more in it
            following = ({uid: next_states[uid] for uid in alive if uid in next_states}, shared_next_states)
        return (next_states, rewards, terminated, truncated, infos), following

    def _multi_agent_loop(self, evaluate: bool) -> None:
        self._set_running_mode("eval" if evaluate else "train")
        states, shared_states = self._start_states(evaluate, multi_agent=True)
        save_at = self._next_save_timestep(evaluate)
        with self._run_guard(evaluate):
            for timestep in self._progress(0 if evaluate else None):
                _, (states, shared_states) = self._multi_agent_step(
                    states, shared_states, timestep, self.timesteps, evaluate
                )
                if timestep == save_at or self._stop_requested:
                    save_at = self._at_save_point(timestep, (states, shared_states))
            self._finish_loop(evaluate, (states, shared_states))

    def _loop(self, evaluate: bool) -> None:
        """The whole run: ``timesteps - initial_timestep`` interaction steps (``SequentialTrainer``); training
        continues from where the last ``train()`` or :meth:`restore` left off, evaluation starts at timestep 0."""
        if self._is_multi_agent():
            return self._multi_agent_loop(evaluate)
        self._set_running_mode("eval" if evaluate else "train")
        continuing = self.env.num_envs > 1 or (not evaluate and self._resume_states is not None)
        states = self._start_states(evaluate)
        save_at = self._next_save_timestep(evaluate)
        with self._run_guard(evaluate), self._run_hooks(evaluate, continuing) as observe:
            for timestep in self._progress(0 if evaluate else None):
                next_states, _, terminated, truncated, _ = self._step(
                    states, timestep, self.timesteps, evaluate, observe
                )
                states, _ = self._next_states(next_states, terminated, truncated)
                if timestep == save_at or self._stop_requested:
                    save_at = self._at_save_point(timestep, states)
            self._finish_loop(evaluate, states)

    #: whether this trainer is stepped from outside (``StepTrainer``: :meth:`_one_step`), not by a whole-run loop
    _stepping = False

    def _prepare_stepping(self) -> None:
        """State kept between :meth:`_one_step` calls (``StepTrainer``): the counter, the bar, the states (all of it
        goes into a full-state checkpoint, :meth:`save`), and the run features' hooks, set up once here (after the
        agents' ``init``) and kept for the trainer's life: the agent hooks and result listeners act on training steps
        only, and the per-step episode observer is ``None`` unless a callback overrides an episode hook."""
        self._stepping = True
        self._timestep = 0
        self._progress_bar: Optional[tqdm.tqdm] = None
        self._bar_start = 0  # where the bar starts counting (a restored run's bar continues from its counter)
        self.states = None
        self._shared_states = None
        self._install_agent_hooks(evaluate=False)
        self._step_episodes = self._episode_hooks()
        self._step_observer = None if self._step_episodes is None else self._step_episodes.step

    def _one_step(self, evaluate: bool, timestep: Optional[int], timesteps: Optional[int]) -> Tuple[Any, ...]:
        """Exactly one interaction step; returns ``(next_states, rewards, terminated, truncated, infos)``."""
        if timestep is None:
            self._timestep += 1
            timestep = self._timestep
        timesteps = self.timesteps if timesteps is None else timesteps
        if self._progress_bar is None:
            self._progress_bar = tqdm.tqdm(
                total=timesteps, initial=self._bar_start, disable=self.disable_progressbar, file=sys.stdout
            )
        self._progress_bar.update(1)
        # the timestep the next step takes (as a loop's initial_timestep): a checkpoint is named by it, and the
        # results rows after it are the ones a restore drops (this step's row, if any, is labelled timestep + 1)
        self.initial_timestep = timestep + 1
        self._set_running_mode("eval" if evaluate else "train")
        if self._is_multi_agent():
            if self.states is None:
                self.states, self._shared_states = self._multi_agent_reset()
            outputs, (self.states, self._shared_states) = self._multi_agent_step(
                self.states, self._shared_states, timestep, timesteps, evaluate
            )
            return outputs
        if self.states is None:
            self.states, _ = self.env.reset()
            if self._step_episodes is not None:
                self._step_episodes.start()
        outputs = self._step(self.states, timestep, timesteps, evaluate, self._step_observer)
        self.states, _ = self._next_states(outputs[0], outputs[2], outputs[3])
        return outputs

    def evaluate_episodes(self, num_episodes: int = 20, max_timesteps: int = 1_000_000) -> List[float]:
        """Play ``num_episodes`` whole episodes with exploration off and return their undiscounted returns.

        Actions are the policy's deterministic ``mean_actions`` (the mode, for discrete policies) unless
        ``cfg["stochastic_evaluation"]``; nothing is learned or stored. With a vector env of ``N`` sub-envs each
        sub-env plays the same number of episodes (``ceil(num_episodes / N)``, the first ones it finishes), so
        short episodes are not over-represented, as they would be by keeping the first episodes to end. A vector
        env is not reset by ``reset()`` (its sub-envs are mid-episode after training), so each sub-env's first,
        partial episode is played out and not counted.

        :param num_episodes: how many episodes to play.
        :param max_timesteps: a bound on interaction steps, so a policy that never ends an episode cannot hang.
        """
        self._check_single_agent_env()
        if len(self._agent_list) != 1:
            raise ValueError("evaluate_episodes needs a single agent (evaluate simultaneous agents one by one)")
        self._resume_states = None  # the episodes played here move the env on: the next train() asks it again
        returns, _ = play_episodes(self, self.env, num_episodes, max_timesteps)
        return returns

    # -- continuation, full-state checkpoints, run directory (issue 14) ---------------------------------------------
    # Kept apart from the loops: a loop calls _start_states, _next_save_timestep, _run_guard, _at_save_point and
    # _finish_loop, and only _at_save_point runs inside it (at checkpoint timesteps and after a Ctrl-C).

    def _backend_random_state(self) -> Any:
        """Backend: the backend's global random state (torch's generators, the JAX root key stream)."""
        return None

    def _set_backend_random_state(self, state: Any) -> None:
        """Backend: restore :meth:`_backend_random_state`'s value."""

    backend = ""  # "torch" or "jax": a checkpoint of one backend is not loaded by the other

    def _start_states(self, evaluate: bool, multi_agent: bool = False) -> Any:
        """Where a loop starts: training continues from the observations the last ``train()`` (or :meth:`restore`)
        left; otherwise (and always for evaluation) the environment is reset."""
        if not evaluate:
            self._write_params()
            for agent in self._agent_list:
                if hasattr(agent, "mark_run_start"):  # (a duck-typed agent may not have it)
                    agent.mark_run_start(self.initial_timestep)
            if self._resume_states is not None:
                states, self._resume_states = self._resume_states, None
                return states
        if multi_agent:
            return self._multi_agent_reset()
        with self._no_grad():
            return self.env.reset()[0]

    def _checkpoint_interval(self) -> int:
        """The first agent's (resolved) checkpoint interval: full-state checkpoints are written with its files."""
        interval = getattr(self._agent_list[0], "checkpoint_interval", 0)
        return interval if isinstance(interval, (int, np.integer)) else 0

    def _next_save_timestep(self, evaluate: bool, after: Optional[int] = None) -> int:
        """The loop timestep after which the next periodic full-state checkpoint is written (-1: none): the step
        whose ``post_interaction`` writes the agent's checkpoint, ``(timestep + 1) % checkpoint_interval == 0``."""
        interval = self._checkpoint_interval()
        if evaluate or interval <= 0:
            return -1
        first = self.initial_timestep if after is None else after + 1
        return max(-(-(first + 1) // interval) * interval - 1, interval - 1)

    @contextlib.contextmanager
    def _run_guard(self, evaluate: bool) -> Iterator[None]:
        """While training: Ctrl-C asks the loop to stop after the current step (a second one interrupts at once),
        and the bar shows the latest row's mean return and env-steps/s (updated only when a row is written)."""
        if evaluate:
            yield
            return
        self._stop_requested = False
        previous_handler = None
        if threading.current_thread() is threading.main_thread() and not self._is_distributed_worker():

            def request_stop(signum: int, frame: Any) -> None:
                if self._stop_requested:
                    raise KeyboardInterrupt
                self._stop_requested = True
                logger.warning("Interrupted: stopping after this step and writing a checkpoint (Ctrl-C again to abort)")

            try:
                previous_handler = signal.signal(signal.SIGINT, request_stop)
            except ValueError:  # signals unavailable here (e.g. an embedded interpreter)
                previous_handler = None
        listener = self._show_result
        listeners = getattr(self._agent_list[0], "result_listeners", [])
        listeners.append(listener)
        try:
            yield
        except BaseException as error:
            if self._stop_requested and not isinstance(error, KeyboardInterrupt):
                raise KeyboardInterrupt(f"interrupted during a step ({type(error).__name__}: {error})") from error
            raise
        finally:
            if listener in listeners:
                listeners.remove(listener)
            if previous_handler is not None:
                signal.signal(signal.SIGINT, previous_handler)
            self._stop_requested = False

    def _show_result(self, row: Mapping[str, Any]) -> None:
        """Result listener: the latest mean return and env-steps/s in the progress bar's postfix."""
        bar = self._loop_bar
        if bar is None or bar.disable:
            return
        postfix = {}
        mean_return = row.get("Reward / Total reward (mean)")
        if mean_return is not None:
            postfix["return"] = f"{mean_return:.4g}"
        if row.get("env_steps_per_second") is not None:
            postfix["env steps/s"] = f"{row['env_steps_per_second']:.4g}"
        if postfix:
            bar.set_postfix(postfix, refresh=False)

    def _at_save_point(self, timestep: int, states: Any) -> int:
        """After loop step ``timestep``: write the periodic full-state checkpoint when due, or, after a Ctrl-C, write
        one and stop (raising ``KeyboardInterrupt``). Returns the next checkpoint timestep."""
        self.initial_timestep, self._resume_states = timestep + 1, states
        if self._checkpoint_interval() > 0:
            path = self.save()
            if self._is_best_checkpoint(timestep + 1):
                checkpoints.copy_checkpoint(path, os.path.join(os.path.dirname(path), checkpoints.BEST_NAME))
        if self._stop_requested:
            raise KeyboardInterrupt(f"training stopped by Ctrl-C after timestep {timestep + 1}")
        return self._next_save_timestep(False, after=timestep)

    def _is_best_checkpoint(self, timestep: int) -> bool:
        """Whether the checkpoint at ``timestep`` is the best so far: with evaluation during training, an evaluation
        ran at this timestep and its mean return is the highest so far; otherwise the first agent found a new best
        mean training return at this timestep (its ``best_agent`` file is written now too)."""
        if self._evaluation is not None:
            return self._evaluation.best_timestep == timestep
        best = getattr(self._agent_list[0], "checkpoint_best_modules", None) or {}
        return best.get("timestep") == timestep and bool(best.get("modules"))

    def _finish_loop(self, evaluate: bool, states: Any) -> None:
        """After a training loop: remember where it stopped (a later ``train()`` continues from there) and write the
        run's final full-state checkpoint (unless the last step just wrote one)."""
        if evaluate:
            return
        ran = self.timesteps > self.initial_timestep
        already_saved = self.initial_timestep == self.timesteps and self._resume_states is states
        self.initial_timestep, self._resume_states = max(self.timesteps, self.initial_timestep), states
        if ran and not already_saved and self._checkpoint_interval() > 0:
            self.save()

    def _checkpoint_directory(self) -> str:
        return os.path.join(getattr(self._agent_list[0], "experiment_dir", "runs"), "checkpoints")

    def _random_state(self) -> Dict[str, Any]:
        return {"python": random.getstate(), "numpy": np.random.get_state(), "backend": self._backend_random_state()}

    def _set_random_state(self, state: Mapping[str, Any]) -> None:
        random.setstate(state["python"])
        np.random.set_state(state["numpy"])
        self._set_backend_random_state(state["backend"])

    def _environment_state(self) -> Any:
        run_state = getattr(type(self.env), "run_state", None)
        if run_state is None:
            logger.warning(
                f"The environment wrapper ({type(self.env).__name__}) cannot save its environment's state: a run "
                "resumed from this checkpoint resets the environment, so it does not continue exactly"
            )
            return None
        return self.env.run_state()

    def _current_states(self) -> Any:
        """The observations the next step acts on (``None``: the next step resets the env): a loop's resume states,
        or a ``StepTrainer``'s ``states`` (with the shared states, for a multi-agent env)."""
        if not self._stepping:
            return self._resume_states
        if self.states is None:
            return None
        return (self.states, self._shared_states) if self._is_multi_agent() else self.states

    def _stepping_state(self) -> Optional[Dict[str, Any]]:
        """A ``StepTrainer``'s own counter for a checkpoint (``None`` for a whole-run loop): the timestep of its last
        ``train()``/``eval()`` call made without a ``timestep``."""
        return {"counter": self._timestep} if self._stepping else None

    def _load_stepping_state(self, state: Optional[Mapping[str, Any]], states: Any) -> None:
        """Continue a ``StepTrainer`` from a checkpoint: its counter (from a loop's checkpoint: the counter that makes
        the next step's timestep the loop's next one), the bar from there, and the observations to act on."""
        self._timestep = max(self.initial_timestep - 1, 0) if state is None else int(state["counter"])
        self._bar_start = self._timestep
        if self._progress_bar is not None:
            self._progress_bar.close()
            self._progress_bar = None
        self._resume_states = None  # a step goes on from self.states
        if states is not None and self._is_multi_agent():
            self.states, self._shared_states = states
        else:
            self.states, self._shared_states = states, None
        if states is not None and self._step_episodes is not None:
            self._step_episodes.start()  # the running episodes' earlier steps belong to the run that saved

    def save(self, path: Optional[str] = None) -> str:
        """Write a full-state checkpoint of the run (atomically) and return its path.

        It holds what :meth:`restore` needs to continue exactly: every agent's state (models, optimizers, learning
        rate schedulers, preprocessors, key streams, counters, tracking, memories per
        ``cfg["experiment"]["checkpoint_memory"]``), the timestep the next ``train()`` starts from, the current
        observations, the environment's state where it can be saved, and the random states of Python, NumPy and the
        backend. Without ``path`` it goes to the first agent's ``<experiment_dir>/checkpoints/run_<timestep>.ckpt``
        and only the last ``cfg["checkpoint_keep"]`` such files (and ``run_best.ckpt``) are kept. A ``StepTrainer``
        saves between two calls: its ``states``, its step counter, and ``<timestep>`` is its next step's timestep.

        :param path: where to write it (a file path); ``None`` for the default location.
        """
        default = path is None
        if default:
            path = checkpoints.checkpoint_path(self._checkpoint_directory(), self.initial_timestep)
        states = self._current_states()
        env_state = self._environment_state() if states is not None else None
        payload = {
            "backend": self.backend,
            "timestep": self.initial_timestep,
            "trainer": {
                "class": type(self).__name__,
                "num_envs": self.env.num_envs,
                "scopes": list(self._scopes),
                "states": states if env_state is not None else None,
                "stepping": self._stepping_state(),
            },
            "agents": self._agent_run_states(),
            "random": self._random_state(),
            # the random states of processes of their own that agents run in (ParallelTrainer; None: they share the
            # trainer's process and its "random" states)
            "processes": self._process_random_states(),
            "env": env_state,
            # the evaluation env's state and the best evaluation so far: a resumed run evaluates as the uninterrupted
            # one and keeps choosing its best checkpoint against it
            "evaluation": None if self._evaluation is None else self._evaluation.run_state(),
        }
        checkpoints.write_checkpoint(path, payload)
        if default:
            checkpoints.prune_checkpoints(os.path.dirname(path), self.checkpoint_keep, protect=path)
        if self.callbacks is not None:
            self.callbacks.on_checkpoint(trainer=self, path=path)
        return path

    def _agent_run_states(self) -> List[Dict[str, Any]]:
        """Every agent's :meth:`~skrl_like.core.agents.base.AgentCore.run_state`, for :meth:`save`."""
        return [agent.run_state() for agent in self._agent_list]

    def _process_random_states(self) -> Optional[List[Any]]:
        """The random states of the agents' own processes, for :meth:`save` (``None``: they run in this one)."""
        return None

    def _check_agent_run_states(self, payload: Mapping[str, Any], where: str) -> Callable[[], None]:
        """Check a checkpoint's agent states against this trainer's agents (raising
        :class:`~skrl_like.core.checkpoints.CheckpointMismatchError`) and return the function that loads them."""
        if payload.get("processes") is not None:
            logger.warning(
                f"{where} was written by a trainer whose agents ran in processes of their own: their random streams "
                "are not restored here, so the resumed run is not the uninterrupted one bit for bit"
            )
        actions = []
        for index, (agent, state) in enumerate(zip(self._agent_list, payload["agents"])):
            try:
                actions.append(agent._check_run_state(state, f"agent {index} ({state['class']})"))
            except ValueError as error:
                raise checkpoints.CheckpointMismatchError(f"{where}: {error}") from error

        def load() -> None:
            for agent, agent_actions in zip(self._agent_list, actions):
                agent._load_run_state(agent_actions)

        return load

    def restore(self, path: str) -> None:
        """Load a full-state checkpoint written by :meth:`save` into this trainer (built the same way: the same
        agents, models, memories and environment) so that the next ``train()`` continues the run exactly: from the
        saved timestep (the progress bar and TensorBoard steps continue from it) up to ``cfg["timesteps"]``. A
        ``StepTrainer`` continues with its saved ``states`` and step counter (from a whole-run loop's checkpoint: the
        counter whose next step is the loop's next timestep).

        Everything is checked before anything is changed. Rows of the agents' ``results.jsonl`` after the saved
        timestep (written by the run after its checkpoint, before it stopped) are dropped: the resumed run writes
        them again.

        :param path: a checkpoint file, or a run directory (its last checkpoint, see
            :func:`~skrl_like.core.checkpoints.find_checkpoint`).
        :raises FileNotFoundError: no checkpoint there.
        :raises ValueError: (:class:`~skrl_like.core.checkpoints.CheckpointMismatchError`) the file is corrupt, or
            does not match this trainer (the message names what differs: backend, trainer, environments, agents,
            modules, shapes, memories); the trainer is then unchanged.
        """
        path = checkpoints.find_checkpoint(path) if os.path.isdir(path) else path
        payload = checkpoints.read_checkpoint(path)
        where = f"Run checkpoint '{path}'"
        trainer = payload["trainer"]
        problems = []
        if payload["backend"] != self.backend:
            problems.append(f"it was written by the {payload['backend']} backend, this trainer is {self.backend}")
        if trainer["num_envs"] != self.env.num_envs:
            problems.append(f"it has {trainer['num_envs']} environments, this trainer {self.env.num_envs}")
        saved_agents = [state["class"] for state in payload["agents"]]
        agents = [type(agent).__name__ for agent in self._agent_list]
        if saved_agents != agents:
            problems.append(f"it holds the agents {saved_agents}, this trainer {agents}")
        elif [tuple(scope) for scope in trainer["scopes"]] != [tuple(scope) for scope in self._scopes]:
            problems.append(f"its agents' scopes are {trainer['scopes']}, this trainer's {self._scopes}")
        if problems:
            raise checkpoints.CheckpointMismatchError(f"{where} does not match this trainer: {'; '.join(problems)}")
        load_agents = self._check_agent_run_states(payload, where)
        load_agents()
        self._set_random_state(payload["random"])
        states = trainer["states"]
        if payload["env"] is not None and getattr(type(self.env), "load_run_state", None) is not None:
            self.env.load_run_state(payload["env"])
        else:
            states = None
            if payload["env"] is None:
                logger.warning(f"{where} holds no environment state: the environment is reset when training resumes")
        self.initial_timestep, self._resume_states = int(payload["timestep"]), states
        if self._stepping:
            self._load_stepping_state(trainer.get("stepping"), states)
        if self._evaluation is not None and payload.get("evaluation") is not None:
            self._evaluation.load_run_state(payload["evaluation"], where)
        for agent in self._agent_list:
            if hasattr(agent, "experiment_dir"):
                truncate_results(os.path.join(agent.experiment_dir, RESULTS_FILE), self.initial_timestep)

    def _write_params(self) -> None:
        """``params.json`` in every agent's run directory that gets files (the first time a training loop starts)."""
        if self._params_written:
            return
        self._params_written = True
        env = self.env
        spec = getattr(getattr(env, "_env", None), "spec", None) or getattr(env, "spec", None)
        params = {
            "trainer": {"class": type(self).__name__, "backend": self.backend, "cfg": self.cfg},
            "env": {
                "class": type(env).__name__,
                "id": getattr(spec, "id", None),
                "num_envs": env.num_envs,
                "observation_space": str(getattr(env, "observation_space", None)),
                "action_space": str(getattr(env, "action_space", None)),
                "device": str(getattr(env, "device", None)),
            },
            "agents": [
                {
                    "class": type(agent).__name__,
                    "experiment_dir": getattr(agent, "experiment_dir", None),
                    "scope": list(scope),
                    "models": {role: type(model).__name__ for role, model in getattr(agent, "models", {}).items()},
                    "cfg": getattr(agent, "cfg", None),
                }
                for agent, scope in zip(self._agent_list, self._scopes)
            ],
        }
        for agent in self._agent_list:
            if getattr(agent, "write_interval", 0) or getattr(agent, "checkpoint_interval", 0):
                write_params(agent.experiment_dir, params)

    # -- public API (skrl names) -----------------------------------------------------------------------------

    def train(self) -> None:
        raise NotImplementedError

    def eval(self) -> None:
        raise NotImplementedError

    def single_agent_train(self) -> None:
        self._check_single_agent_env()
        self._loop(evaluate=False)

    def single_agent_eval(self) -> None:
        self._check_single_agent_env()
        self._loop(evaluate=True)

    def multi_agent_train(self) -> None:
        if not self._is_multi_agent():
            raise ValueError("multi_agent_train needs a multi-agent environment and a multi-agent algorithm")
        self._multi_agent_loop(evaluate=False)

    def multi_agent_eval(self) -> None:
        if not self._is_multi_agent():
            raise ValueError("multi_agent_eval needs a multi-agent environment and a multi-agent algorithm")
        self._multi_agent_loop(evaluate=True)
