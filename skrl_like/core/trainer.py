"""The trainer loops, written once for both backends.

A backend's trainer supplies three tensor-specific pieces: the no-grad context, how per-agent actions
are stacked, and which ``infos`` values are scalars worth logging.
"""

import atexit
import contextlib
import sys
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import tqdm

from skrl_like import logger
from skrl_like.core.agents.base import AgentCore
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


class TrainerCore:
    """Base class of every trainer (see a backend's ``Trainer`` for the public signature).

    :param env: a wrapped environment (``wrap_env(...)``).
    :param agents: one agent, or a list/tuple of agents that share the environment.
    :param agents_scope: number of environments for each agent (must sum to ``env.num_envs``);
        empty or ``None`` splits them equally.
    :param cfg: trainer configuration (keys of ``*_TRAINER_DEFAULT_CONFIG``).
    """

    def __init__(self, env: Any, agents: Any, agents_scope: Optional[Sequence[int]] = None, cfg: Optional[dict] = None):
        self.cfg = merge_config(_BASE_FALLBACKS, cfg, f"{type(self).__name__} cfg")
        self.env = env
        self.agents = agents
        self.agents_scope = list(agents_scope) if agents_scope is not None else []
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

            @atexit.register
            def close_env() -> None:
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
                if any(count <= 0 for count in counts):
                    raise ValueError(f"agents_scope {counts} has an empty scope: each agent needs >= 1 environment")
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
        self._agent_list = agent_list
        starts = [sum(counts[:i]) for i in range(len(counts))]
        self._scopes: List[Tuple[int, int]] = [(s, s + c) for s, c in zip(starts, counts)]

    def _check_spaces(self) -> None:
        """Each agent's spaces and memory must fit the environment and its scope."""
        if getattr(self.env, "num_agents", 1) > 1:
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
            if memory_envs is not None and memory_envs != end - start:
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
        if getattr(self.env, "num_agents", 1) > 1:
            raise NotImplementedError(
                "Multi-agent environments need a MultiAgent (IPPO/MAPPO), which skrl_like does not provide yet"
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
        agents = self._agent_list
        for agent in agents:
            agent.pre_interaction(timestep=timestep, timesteps=timesteps)
        with self._no_grad():
            actions = self._act(states, timestep, timesteps, evaluate)
            next_states, rewards, terminated, truncated, infos = self.env.step(actions)
            if not self.headless:
                self.env.render()
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
                        infos=infos,
                        timestep=timestep,
                        timesteps=timesteps,
                    )
            self._log_environment_info(infos)
        for agent in agents:
            if evaluate:  # only the base hook: TensorBoard and checkpoints, never a learning update
                AgentCore.post_interaction(agent, timestep=timestep, timesteps=timesteps)
            else:
                agent.post_interaction(timestep=timestep, timesteps=timesteps)
        return next_states, rewards, terminated, truncated, infos

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

    def _loop(self, evaluate: bool) -> None:
        self._check_single_agent_env()
        self._set_running_mode("eval" if evaluate else "train")
        states, _ = self.env.reset()
        for timestep in self._progress():
            next_states, _, terminated, truncated, _ = self._step(states, timestep, self.timesteps, evaluate)
            states, _ = self._next_states(next_states, terminated, truncated)

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
        self._loop(evaluate=False)

    def single_agent_eval(self) -> None:
        self._loop(evaluate=True)

    def multi_agent_train(self) -> None:
        self._check_single_agent_env()

    def multi_agent_eval(self) -> None:
        self._check_single_agent_env()


class SequentialTrainerCore(TrainerCore):
    """Agents run one after another inside each timestep; ``train()``/``eval()`` run the whole loop.

    Combined with a backend's ``Trainer``: ``class SequentialTrainer(SequentialTrainerCore, Trainer)``.
    """

    default_config = TRAINER_DEFAULT_CONFIG  # the backend module's *_TRAINER_DEFAULT_CONFIG

    def __init__(self, env: Any, agents: Any, agents_scope: Optional[Sequence[int]] = None, cfg: Optional[dict] = None):
        super().__init__(
            env, agents, agents_scope, merge_config(self.default_config, cfg, f"{type(self).__name__} cfg")
        )
        self._init_agents()

    def train(self) -> None:
        """Train the agent(s) for ``cfg["timesteps"]`` steps (from ``initial_timestep``)."""
        self._loop(evaluate=False)

    def eval(self) -> None:
        """Evaluate the agent(s): deterministic actions unless ``stochastic_evaluation``, no learning."""
        self._loop(evaluate=True)


class StepTrainerCore(TrainerCore):
    """Each ``train()``/``eval()`` call runs exactly one interaction step and returns its outputs."""

    default_config = TRAINER_DEFAULT_CONFIG

    def __init__(self, env: Any, agents: Any, agents_scope: Optional[Sequence[int]] = None, cfg: Optional[dict] = None):
        super().__init__(
            env, agents, agents_scope, merge_config(self.default_config, cfg, f"{type(self).__name__} cfg")
        )
        self._check_single_agent_env()
        self._init_agents()
        self._timestep = 0
        self._progress_bar: Optional[tqdm.tqdm] = None
        self.states = None

    def _one_step(self, evaluate: bool, timestep: Optional[int], timesteps: Optional[int]) -> Tuple[Any, ...]:
        if timestep is None:
            self._timestep += 1
            timestep = self._timestep
        timesteps = self.timesteps if timesteps is None else timesteps
        if self._progress_bar is None:
            self._progress_bar = tqdm.tqdm(total=timesteps, disable=self.disable_progressbar, file=sys.stdout)
        self._progress_bar.update(1)
        self._set_running_mode("eval" if evaluate else "train")
        if self.states is None:
            self.states, _ = self.env.reset()
        outputs = self._step(self.states, timestep, timesteps, evaluate)
        self.states, _ = self._next_states(outputs[0], outputs[2], outputs[3])
        return outputs

    def train(self, timestep: Optional[int] = None, timesteps: Optional[int] = None) -> Tuple[Any, ...]:
        """Run one training step; return ``(next_states, rewards, terminated, truncated, infos)``.

        :param timestep: the step's index (``None``: an internal counter, starting at 1).
        :param timesteps: the run's length, for schedules (``None``: ``cfg["timesteps"]``).
        """
        return self._one_step(False, timestep, timesteps)

    def eval(self, timestep: Optional[int] = None, timesteps: Optional[int] = None) -> Tuple[Any, ...]:
        """Run one evaluation step (no learning); return the step's outputs as :meth:`train` does."""
        return self._one_step(True, timestep, timesteps)
