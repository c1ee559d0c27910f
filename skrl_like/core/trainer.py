"""The trainer loops, written once for both backends.

One hook style: a backend's ``Trainer`` subclasses :class:`TrainerCore` and overrides only its tensor hooks
(the no-grad context, how per-agent actions are stacked, which ``infos`` values are scalars worth logging,
conversion to NumPy, the distributed rank). The whole-run loop and the one-step loop live here too, so a
backend's ``SequentialTrainer``/``StepTrainer`` is a plain subclass of its ``Trainer`` that only picks one.
"""

import atexit
import contextlib
import numbers
import sys
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import tqdm

from skrl_like import logger
from skrl_like.core.config import merge_config
from skrl_like.core.spaces import compute_space_size

TRAINER_DEFAULT_CONFIG = {
    "timesteps": 100000,
    "headless": False,
    "disable_progressbar": False,
    "close_environment_at_exit": True,
    "environment_info": "episode",
    "stochastic_evaluation": False,
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
}


class TrainerCore:
    """Base class of every trainer (see a backend's ``Trainer`` for the public signature).

    :param env: a wrapped environment (``wrap_env(...)``).
    :param agents: one agent, or a list/tuple of distinct agents that share the environment (each with its own
        memory).
    :param agents_scope: number of environments for each agent, a list of ints >= 1 that sums to
        ``env.num_envs``; empty or ``None`` splits them equally.
    :param cfg: trainer configuration (keys of ``*_TRAINER_DEFAULT_CONFIG``), checked at construction.
    """

    #: the defaults a subclass's cfg is merged into (a trainer module's ``*_TRAINER_DEFAULT_CONFIG``)
    default_config: Mapping[str, Any] = _BASE_FALLBACKS

    def __init__(self, env: Any, agents: Any, agents_scope: Optional[Sequence[int]] = None, cfg: Optional[dict] = None):
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
        self.initial_timestep = 0
        if self._is_distributed_worker():
            self.disable_progressbar = True

        self._setup_agents()
        self._check_spaces()

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
        for key, (valid, expected, example) in _CFG_CHECKS.items():
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
        for agent in self._agent_list:
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

    def _step(self, states: Any, timestep: int, timesteps: int, evaluate: bool) -> Tuple[Any, ...]:
        """pre_interaction -> act -> env.step -> record_transition -> post_interaction, for every agent."""
        actions = self._before_env_step(states, timestep, timesteps, evaluate)
        with self._no_grad():
            next_states, rewards, terminated, truncated, infos = self.env.step(actions)
            if not self.headless:
                self.env.render()
        self._after_env_step(states, actions, next_states, rewards, terminated, truncated, infos, timestep, timesteps)
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
    ) -> None:
        """(no-grad) every agent's record_transition on its scope and the env-info tracking, then post_interaction."""
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

    def _progress(self) -> Iterator[int]:
        return tqdm.tqdm(
            range(self.initial_timestep, self.timesteps), disable=self.disable_progressbar, file=sys.stdout
        )

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
        states, shared_states = self._multi_agent_reset()
        for timestep in self._progress():
            _, (states, shared_states) = self._multi_agent_step(
                states, shared_states, timestep, self.timesteps, evaluate
            )

    def _loop(self, evaluate: bool) -> None:
        """The whole run: ``timesteps - initial_timestep`` interaction steps (``SequentialTrainer``)."""
        if self._is_multi_agent():
            return self._multi_agent_loop(evaluate)
        self._set_running_mode("eval" if evaluate else "train")
        states, _ = self.env.reset()
        for timestep in self._progress():
            next_states, _, terminated, truncated, _ = self._step(states, timestep, self.timesteps, evaluate)
            states, _ = self._next_states(next_states, terminated, truncated)

    def _prepare_stepping(self) -> None:
        """State kept between :meth:`_one_step` calls (``StepTrainer``): the counter, the bar, the states."""
        self._timestep = 0
        self._progress_bar: Optional[tqdm.tqdm] = None
        self.states = None

    def _one_step(self, evaluate: bool, timestep: Optional[int], timesteps: Optional[int]) -> Tuple[Any, ...]:
        """Exactly one interaction step; returns ``(next_states, rewards, terminated, truncated, infos)``."""
        if timestep is None:
            self._timestep += 1
            timestep = self._timestep
        timesteps = self.timesteps if timesteps is None else timesteps
        if self._progress_bar is None:
            self._progress_bar = tqdm.tqdm(total=timesteps, disable=self.disable_progressbar, file=sys.stdout)
        self._progress_bar.update(1)
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
        outputs = self._step(self.states, timestep, timesteps, evaluate)
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
        agent = self._agent_list[0]
        num_envs = self.env.num_envs
        per_env = -(-num_episodes // num_envs)
        previous_mode = agent.training
        agent.set_running_mode("eval")
        returns: List[List[float]] = [[] for _ in range(num_envs)]
        running = np.zeros(num_envs)
        partial = np.full(num_envs, num_envs > 1)  # the episode each sub-env is in may have begun in training
        states, _ = self.env.reset()
        try:
            for timestep in range(max_timesteps):
                with self._no_grad():
                    actions = self._act(states, timestep, self.timesteps, evaluate=True)
                    next_states, rewards, terminated, truncated, _ = self.env.step(actions)
                running += self._to_numpy(rewards).reshape(-1)
                done = (self._to_numpy(terminated) | self._to_numpy(truncated)).reshape(-1).astype(bool)
                for index in np.nonzero(done & ~partial)[0]:
                    returns[index].append(float(running[index]))
                partial[done] = False
                running[done] = 0.0
                if all(len(env_returns) >= per_env for env_returns in returns):
                    return [value for env_returns in returns for value in env_returns[:per_env]][:num_episodes]
                states, _ = self._next_states(next_states, terminated, truncated)
        finally:
            agent.set_running_mode("train" if previous_mode else "eval")
        finished = sum(len(env_returns) for env_returns in returns)
        raise RuntimeError(f"Only {finished} of {num_episodes} episodes ended within {max_timesteps} steps")

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
