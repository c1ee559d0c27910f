"""``CompiledTrainer``: a whole training run as one compiled function, for JAX agents on JAX-native environments.

With an environment written in JAX (gymnax, Brax or MuJoCo Playground: the ``JaxNativeWrapper`` subclasses), nothing
in a training run needs the host: the run is ``lax.scan`` over updates of (``lax.scan`` over ``rollouts`` environment
steps, then the agent's update), compiled once. The trainer drives the agent through its public compiled-agent protocol
(``docs/compiled-trainer.md``): ``compiled_start`` (learner state and acting stream), ``compiled_act``,
``compiled_transition`` (the :class:`~skrl_like.core.agents.transition.Transition` ``record_transition`` stores),
``compiled_learn`` and ``compiled_commit``, each the pure function behind the agent's Python hook under
:class:`~skrl_like.jax.trainers.SequentialTrainer`, and applies the agent's ``schedule`` (warm-up and update cadence)
traced; the algorithm is written once. The same weights, keys and data give the same update under both trainers.
A recurrent on-policy agent (PPO_RNN, A2C_RNN, RPO_RNN, TRPO_RNN) carries its hidden states in its acting state, and
``compiled_end_step`` stores and resets them after each environment step as ``record_transition`` does.

Off-policy agents (SAC, DQN, DDQN, DDPG, TD3) run the same way with one environment step per iteration: act, store
the transition in the replay memory, kept as arrays in the run's state (a ring with a write position, sampled
uniformly with a key), then, when its schedule says so (``lax.cond``), the agent's update on batches laid out as the
ordinary update's.

Several runs go into one compiled call with ``vmap``: ``cfg["seeds"]`` (each run draws its parameters, optimizer
states, environment and action keys from its seed) and ``cfg["sweep"]`` (one config value per run). Metrics come
back per update as arrays (:attr:`CompiledTrainer.metrics`) and are written to TensorBoard after the run, or after
every chunk of ``cfg["updates_per_chunk"]`` updates.
"""

import contextlib
import copy
import numbers
import os
import sys
import time
import warnings
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import tqdm

from skrl_like import config
from skrl_like.core.agents.schedule import RolloutSchedule
from skrl_like.core.config import did_you_mean
from skrl_like.core.tensorboard import SummaryWriter
from skrl_like.core.trainer import TRAINER_DEFAULT_CONFIG
from skrl_like.jax.agents.base import Agent
from skrl_like.jax.agents.off_policy import (
    Replay,
    empty_replay,
    random_actions,
    replay_add,
    replay_batches,
    replay_from_memory,
    replay_indices,
    replay_to_memory,
)
from skrl_like.jax.trainers.base import Trainer

COMPILED_TRAINER_DEFAULT_CONFIG = {
    **copy.deepcopy(TRAINER_DEFAULT_CONFIG),
    "updates_per_chunk": 0,  # updates per compiled call (TensorBoard, checkpoints, progress after each); 0: all
    "seeds": None,  # None: one run from the agent's state; a list of ints: one run per seed, vmapped
    "sweep": None,  # None, or {"cfg key": [values]}: one run per value, vmapped (zipped with the seeds)
}


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


_COMPILED_CFG_CHECKS = {
    "updates_per_chunk": (
        lambda v: _is_int(v) and v >= 0,
        "an int >= 0 (updates per compiled call; 0 runs the whole of timesteps in one call)",
        "10",
    ),
    "seeds": (
        lambda v: v is None or (isinstance(v, (list, tuple)) and len(v) > 0 and all(_is_int(s) for s in v)),
        "None (one run from the agent's own state) or a non-empty list of int seeds (one vmapped run each)",
        "[0, 1, 2, 3]",
    ),
    "sweep": (
        lambda v: (
            v is None
            or (
                isinstance(v, dict)
                and len(v) == 1
                and all(isinstance(k, str) for k in v)
                and all(
                    isinstance(vs, (list, tuple)) and len(vs) > 0 and all(_is_number(x) for x in vs)
                    for vs in v.values()
                )
            )
        ),
        "None or a dict of one agent cfg key to a non-empty list of numbers (one vmapped run per value)",
        "{'learning_rate': [1e-3, 3e-4]}",
    ),
}


class RunState(NamedTuple):
    """Everything a compiled run carries from one iteration to the next (one per run when vmapped)."""

    learner: Any  # the agent's learner state
    env: Any  # the environment's state (GymnaxState, BraxState)
    states: jax.Array  # the observations the next step acts on
    act_key: Any  # the agent's acting state (``compiled_start``): its key; a recurrent agent's with its hidden states
    episode_returns: jax.Array  # (num_envs,) of the running episodes
    episode_lengths: jax.Array
    replay: Any = ()  # off-policy: the replay memory (a ``Replay``)


class UpdateMetrics(NamedTuple):
    """One per iteration (the scan stacks them): the agent's report and the episodes that ended in it."""

    report: Any  # the update's report (on-policy: UpdateReport; off-policy: the gradient steps' records)
    episodes: jax.Array  # how many ended
    episode_return: jax.Array  # their mean return (NaN when none ended)
    episode_length: jax.Array
    reward: jax.Array  # the mean reward of the iteration's steps
    updated: jax.Array  # whether the iteration ended in an update (off-policy: from ``learning_starts`` on)


def _episode_metrics(report: Any, ended: tuple, rewards: jax.Array, updated: Any) -> UpdateMetrics:
    """The iteration's metrics from ``ended`` (done flags, returns and lengths of the episodes that ended, any
    leading shape) and its rewards."""
    done, returns, lengths = ended
    episodes = done.sum()
    count = jnp.maximum(episodes, 1)
    return UpdateMetrics(
        report=report,
        episodes=episodes,
        episode_return=jnp.where(episodes > 0, returns.sum() / count, jnp.nan),
        episode_length=jnp.where(episodes > 0, lengths.sum() / count, jnp.nan),
        reward=rewards.mean(),
        updated=jnp.asarray(updated),
    )


def _reduce(tag: str, values: Any, axis: Any) -> np.ndarray:
    """Reduce tracked values as the agents' writers do: ``(max)``/``(min)`` tags by max/min, the others by the mean,
    leaving NaN (no value) out; NaN where there is no value at all."""
    reduce = np.nanmax if tag.endswith("(max)") else np.nanmin if tag.endswith("(min)") else np.nanmean
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN slice stays NaN
        return reduce(np.asarray(values, np.float64), axis=axis)


class _OnPolicyRun:
    """The compiled iteration of an on-policy agent (PPO, A2C, RPO, TRPO): a rollout of ``rollouts`` steps with the
    run's current policy, then the agent's update on it."""

    sweep_examples = "discount_factor, lambda, ratio_clip, value_clip or value_loss_scale"  # besides the rates

    def __init__(self, trainer: "CompiledTrainer") -> None:
        self.trainer, self.agent = trainer, trainer.agent
        self.fixed_keys = self.agent.compiled_fixed_keys
        self.steps = self.agent.schedule.rollouts  # environment steps per iteration

    def check(self) -> None:
        agent = self.agent
        memory_envs = agent.memory.num_envs
        if memory_envs != self.trainer.env.num_envs:
            raise ValueError(
                f"{type(agent).__name__}'s memory has num_envs={memory_envs}, the environment "
                f"{self.trainer.env.num_envs}: create it with RandomMemory(memory_size={self.steps}, "
                "num_envs=env.num_envs)"
            )

    def iteration(self, run: RunState, update: jax.Array) -> tuple:
        """One rollout of ``rollouts`` steps with the run's current policy, then the agent's update (traced)."""
        trainer, agent = self.trainer, self.agent
        rollouts = self.steps
        first_timestep = update * rollouts
        learner = run.learner

        def env_step(carry: tuple, timestep: jax.Array) -> tuple:
            env_state, states, key, returns, lengths = carry
            _, key, actions = agent.compiled_act(learner, key, states, timestep, trainer.timesteps)
            env_state, out, transition, returns, lengths, ended = trainer._env_step(
                env_state, states, actions, returns, lengths, timestep
            )
            key, transition = agent.compiled_end_step(key, transition)  # a recurrent agent's hidden states
            return (env_state, out.next_states, key, returns, lengths), (transition, ended)

        carry = (run.env, run.states, run.act_key, run.episode_returns, run.episode_lengths)
        carry, (rollout, ended) = jax.lax.scan(env_step, carry, first_timestep + jnp.arange(rollouts, dtype=jnp.int32))
        learner, report = agent.compiled_learn(learner, rollout, first_timestep + rollouts - 1, carry[2])
        return RunState(learner, *carry, run.replay), _episode_metrics(report, ended, rollout.rewards, True)

    def initial_replay(self) -> Any:
        return ()

    def fresh_replay(self, replay: Any, key: jax.Array) -> Any:
        return ()

    def commit(self, run: RunState) -> None:
        self.agent.compiled_commit(run.learner, run.act_key)

    def flags_ok(self, report: Any) -> np.ndarray:
        """Per iteration (the last axis): every finite flag of its update is set."""
        step_finite = report.step_finite.reshape(*report.step_finite.shape[:-3], -1)
        return np.logical_and(report.rollout_finite.all(axis=-1), step_finite.all(-1))

    def scalars(self, metrics: UpdateMetrics, learning_rates: bool) -> Dict[str, Any]:
        """The agent's tracked values, one per update (the rates also without a schedule when ``learning_rates``)."""
        return self.agent.tracked_values(metrics.report, learning_rates)

    def write_group(self) -> int:
        return 1  # one TensorBoard point per update


class _OffPolicyRun:
    """The compiled iteration of an off-policy agent (SAC, DQN, DDQN, DDPG, TD3): one environment step, the transition
    written to the replay in the run's state, then, when the agent's schedule says so (from ``learning_starts`` on,
    every ``update_interval`` steps), the agent's update on batches sampled from it."""

    sweep_examples = "discount_factor or polyak"  # besides the rates

    def __init__(self, trainer: "CompiledTrainer") -> None:
        self.trainer, self.agent = trainer, trainer.agent
        self.steps = 1
        self.fixed_keys = self.agent.compiled_fixed_keys
        # the replay's draws and warm-up actions: NumPy's global generator in the ordinary trainers, a key here
        config.jax.key, self.replay_key = jax.random.split(config.jax.key)

    def check(self) -> None:
        pass  # the trainer checks the memory's num_envs; the agent lists its obstacles

    def iteration(self, run: RunState, timestep: jax.Array) -> tuple:
        """Act, step, store, and update when due (traced)."""
        trainer, agent, schedule = self.trainer, self.agent, self.agent.schedule
        cfg = agent.cfg
        replay_key, random_key, sample_key, learn_key = jax.random.split(run.replay.key, 4)
        learner, act_key, actions = agent.compiled_act(
            run.learner, run.act_key, run.states, timestep, trainer.timesteps
        )
        if schedule.random_timesteps > 0:  # warm-up: uniform actions, and the agent's streams untouched, as act() does
            explore = schedule.acts_randomly(timestep)
            uniform = random_actions(random_key, trainer.env.action_space, trainer.env.num_envs)
            actions = jnp.where(explore, uniform.astype(actions.dtype), actions)
            learner, act_key = jax.tree_util.tree_map(
                lambda old, new: jnp.where(explore, old, new), (run.learner, run.act_key), (learner, act_key)
            )
        env_state, out, transition, returns, lengths, ended = trainer._env_step(
            run.env, run.states, actions, run.episode_returns, run.episode_lengths, timestep
        )
        replay = replay_add(run.replay, transition)._replace(key=replay_key)

        def learn(learner: Any) -> tuple:
            indices = trainer._replay_indices(sample_key, replay, cfg["batch_size"], cfg["gradient_steps"])
            return agent.compiled_learn(learner, replay_batches(replay, indices), timestep, learn_key)

        def skip(learner: Any) -> tuple:
            report = jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape, x.dtype), jax.eval_shape(learn, learner)[1])
            return learner, report._replace(finite=jnp.ones_like(report.finite))

        updated = schedule.updates(timestep)
        learner, report = jax.lax.cond(updated, learn, skip, learner)
        run = RunState(learner, env_state, out.next_states, act_key, returns, lengths, replay)
        return run, _episode_metrics(report, ended, out.rewards, updated)

    def initial_replay(self) -> Replay:
        return replay_from_memory(self.agent.memory, self.replay_key)

    def fresh_replay(self, replay: Replay, key: jax.Array) -> Replay:
        return empty_replay(replay, key)

    def commit(self, run: RunState) -> None:
        self.agent.compiled_commit(run.learner, run.act_key)
        self.replay_key = run.replay.key
        replay_to_memory(run.replay, self.agent.memory)

    def flags_ok(self, report: Any) -> np.ndarray:
        return report.finite.reshape(*report.finite.shape[:-2], -1).all(-1)

    def scalars(self, metrics: UpdateMetrics, learning_rates: bool) -> Dict[str, Any]:
        """The agent's tracked values (reduced over each update's gradient steps when it tracks one per step; the
        rates also without a schedule when ``learning_rates``); NaN where no update was due."""
        updated = np.asarray(metrics.updated)
        scalars = {}
        for tag, values in self.agent.tracked_values(metrics.report, learning_rates).items():
            values = np.asarray(values, np.float64)
            if values.ndim > updated.ndim:  # one value per gradient step
                values = _reduce(tag, values, -1)
            scalars[tag] = np.where(updated, values, np.nan)
        return scalars

    def write_group(self) -> int:
        # one TensorBoard point per write_interval steps (the reduction of the steps'), as in the ordinary trainers
        return max(1, int(self.agent.write_interval))


class CompiledTrainer(Trainer):
    """Train one JAX agent on a JAX-native environment with the whole run compiled: an on-policy agent (PPO, A2C,
    RPO, TRPO, and their recurrent ``_RNN`` forms) or an off-policy one (SAC, DQN, DDQN, DDPG, TD3).

    The agent is built as usual (models, memory, cfg; an on-policy agent's memory of ``memory_size=rollouts``, an
    off-policy agent's replay memory of any size); after :meth:`train` it holds the trained state (``save``, ``load``,
    ``act`` and :meth:`eval` work on it, and an off-policy agent's memory holds the replay): with several runs, run
    0's, and :meth:`load_run` puts any other into it. ``timesteps`` counts environment steps per sub-environment, as
    in the other trainers. The page ``docs/compiled-trainer.md`` describes the configuration and what cannot be
    compiled.

    :param env: a wrapped JAX-native environment: gymnax, Brax or Playground (``wrap_env(env, num_envs=...)``).
    :param agents: one JAX agent with a compiled form.
    :param agents_scope: unused (one agent steps every sub-environment).
    :param cfg: keys of ``COMPILED_TRAINER_DEFAULT_CONFIG`` (unknown keys or bad values raise ``ValueError``).
    """

    default_config = COMPILED_TRAINER_DEFAULT_CONFIG
    extra_cfg_checks = _COMPILED_CFG_CHECKS

    def __init__(self, env: Any, agents: Any, agents_scope: Optional[Sequence[int]] = None, cfg: Optional[dict] = None):
        for method in ("initial_state", "transition"):
            if not callable(getattr(env, method, None)):
                raise TypeError(
                    f"CompiledTrainer needs an environment written in JAX, stepped by pure functions (a gymnax, Brax "
                    f"or MuJoCo Playground env wrapped with wrap_env(env, num_envs=...)); {type(env).__name__} has no '{method}': it steps in "
                    "Python, so train on it with SequentialTrainer"
                )
        super().__init__(env, agents, agents_scope, cfg)
        if self.num_simultaneous_agents != 1:
            raise ValueError(
                "CompiledTrainer trains one agent: pass a single agent (compile simultaneous runs with "
                "cfg['seeds'] or cfg['sweep'])"
            )
        agent = self._agent_list[0]
        if isinstance(agent, Agent) and type(agent).compiled_act is not Agent.compiled_act:
            # one environment step per iteration for a replay agent, a rollout of them for an on-policy one
            family: Any = _OnPolicyRun if isinstance(agent.schedule, RolloutSchedule) else _OffPolicyRun
        else:
            raise TypeError(
                "CompiledTrainer runs the JAX on-policy agents (PPO, A2C, RPO, TRPO and their _RNN forms), SAC, DQN, "
                f"DDQN, DDPG and TD3; {type(agent).__name__} has no compiled form yet: train it with SequentialTrainer"
            )
        self.agent = agent
        self._init_agents()  # the memory's size and num_envs are checked here
        self._family = family(self)
        self._check_agent(agent)
        steps = self._family.steps
        if self.timesteps % steps:
            raise ValueError(
                f"CompiledTrainer cfg['timesteps'] ({self.timesteps}) is not a multiple of the agent's "
                f"cfg['rollouts'] ({steps}): every compiled update follows a whole rollout; use e.g. "
                f"timesteps={self.timesteps // steps * steps or steps}"
            )
        self.num_updates = self.timesteps // steps
        chunk = self.cfg["updates_per_chunk"] or self.num_updates
        if self.num_updates % chunk:
            raise ValueError(
                f"CompiledTrainer cfg['updates_per_chunk'] ({chunk}) does not divide the run's {self.num_updates} "
                f"updates ({'timesteps / rollouts' if steps > 1 else 'one per timestep'}): every chunk is one call "
                "of the same compiled function; pick a divisor, or 0 for a single call"
            )
        self.updates_per_chunk = chunk
        self._sweep_name, self._sweep_values = self._check_sweep(agent)
        # a swept learning rate goes into the learner state's field for it, one value per run (_initial_runs)
        self._swept_rate = agent.learning_rate_fields.get(self._sweep_name) if self._sweep_name is not None else None
        seeds = self.cfg["seeds"]
        if seeds is not None and self._sweep_values is not None and len(seeds) != len(self._sweep_values):
            raise ValueError(
                f"CompiledTrainer cfg['seeds'] has {len(seeds)} seeds but cfg['sweep'] {len(self._sweep_values)} "
                "values: run i uses seeds[i] and the i-th value, so give them the same length"
            )
        self.num_runs = len(seeds) if seeds is not None else len(self._sweep_values or [None])
        self._vmapped = seeds is not None or self._sweep_values is not None
        self._compiled: Any = None
        self.compilations = 0
        self.runs: Optional[RunState] = None  # after train(): every run's final state (a leading run axis if vmapped)
        self.metrics: Dict[str, np.ndarray] = {}
        self.timings: Dict[str, float] = {}

    # -- checks ------------------------------------------------------------------------------------------------

    def _check_agent(self, agent: Any) -> None:
        obstacles = agent.compiled_obstacles()
        if obstacles:
            raise ValueError(
                f"CompiledTrainer cannot compile {type(agent).__name__} with "
                + "; ".join(obstacles)
                + " (or train it with SequentialTrainer)"
            )
        self._family.check()

    def _check_sweep(self, agent: Any) -> tuple:
        sweep = self.cfg["sweep"]
        if sweep is None:
            return None, None
        ((name, values),) = sweep.items()
        where = f"CompiledTrainer cfg['sweep'] key '{name}'"
        if name not in agent.cfg:
            raise ValueError(f"{where} is not a key of the {type(agent).__name__} cfg.{did_you_mean(name, agent.cfg)}")
        rates = agent.learning_rate_keys()
        if name in agent.learning_rate_fields and name not in rates:
            raise ValueError(
                f"{where}: {type(agent).__name__} does not use {name!r} with this cfg (e.g. SAC's "
                f"entropy_learning_rate without learn_entropy), so the runs would not differ; its learning rates: "
                f"{', '.join(rates) or 'none'}"
            )
        if name not in rates and (name in self._family.fixed_keys or not _is_number(agent.cfg[name])):
            raise ValueError(
                f"{where}: {name!r} ({agent.cfg[name]!r}) is not a number the update reads as a value (it shapes the "
                f"compiled function or is read when the agent is built); sweep e.g. "
                f"{', '.join((*rates, self._family.sweep_examples))}"
            )
        return name, [float(value) for value in values]

    @contextlib.contextmanager
    def _swept(self, value: jax.Array) -> Iterator[None]:
        """While tracing: the agent reads the swept config value as ``value`` (traced, one per run). A swept learning
        rate is not read from the cfg: each run's learner state carries its own (:meth:`_initial_runs`)."""
        agent, name = self.agent, self._sweep_name
        if name is None or self._swept_rate is not None:
            yield
            return
        try:
            with agent.compiled_config({name: value}):
                yield
        except (jax.errors.TracerBoolConversionError, jax.errors.ConcretizationTypeError) as error:
            raise ValueError(
                f"CompiledTrainer cfg['sweep'] key '{name}': {type(agent).__name__} makes a Python decision on it "
                f"(e.g. 'if cfg[{name!r}]'), so it cannot differ between the runs of one compiled call; sweep another "
                "key or run each value separately"
            ) from error

    # -- the compiled run ------------------------------------------------------------------------------------

    def _env_step(
        self, env_state: Any, states: jax.Array, actions: jax.Array, returns: jax.Array, lengths: jax.Array, timestep
    ) -> tuple:
        """One step of every sub-environment (traced): ``(env_state, step, transition, returns, lengths, ended)``, the
        transition the agent stores (``compiled_transition``, as ``record_transition``), and the running episodes'
        returns and lengths with ``ended`` = (done, return, length) of those that ended."""
        env_state, out = self.env.transition(env_state, actions)
        infos = {"final_states": out.final_states}
        transition = self.agent.compiled_transition(
            states,
            actions,
            out.rewards,
            out.next_states,
            out.terminated,
            out.truncated,
            infos,
            timestep,
            self.timesteps,
        )
        returns = returns + out.rewards[:, 0]
        lengths = lengths + 1
        done = jnp.logical_or(out.terminated, out.truncated)[:, 0]
        ended = (done, jnp.where(done, returns, 0.0), jnp.where(done, lengths, 0))
        returns, lengths = jnp.where(done, 0.0, returns), jnp.where(done, 0, lengths)
        return env_state, out, transition, returns, lengths, ended

    def _replay_indices(self, key: jax.Array, replay: Replay, batch_size: int, gradient_steps: int) -> jax.Array:
        """The replay rows an off-policy update samples (:func:`replay_indices`; a test may draw others)."""
        return replay_indices(key, replay, batch_size, gradient_steps)

    def _chunk(self, run: RunState, first_update: jax.Array, swept: jax.Array) -> tuple:
        """``updates_per_chunk`` iterations from ``first_update`` (the function compiled once per run)."""
        with self._swept(swept):
            updates = first_update + jnp.arange(self.updates_per_chunk, dtype=jnp.int32)
            final, metrics = jax.lax.scan(self._family.iteration, run, updates)
        # the carry leaves its call with the types it came in with, so the next chunk reuses the compiled function
        return jax.tree_util.tree_map(lambda new, old: new.astype(old.dtype), final, run), metrics

    def _seeded_run(self, learner: Any, acting: Any, replay: Any, key: jax.Array) -> RunState:
        """A fresh run drawn from ``key``: parameters and optimizer states, environment and acting keys (a recurrent
        agent's zero hidden states), an empty replay."""
        model_key, env_key, act_key = jax.random.split(key, 3)
        env_state, states = self.env.initial_state(env_key)
        learner = self.agent.fresh_learner(learner, model_key)
        act_key = self.agent.fresh_acting(acting, act_key)
        replay = self._family.fresh_replay(replay, jax.random.fold_in(key, 1))
        return self._run_state(learner, env_state, states, act_key, replay)

    def _run_state(self, learner: Any, env_state: Any, states: Any, act_key: Any, replay: Any) -> RunState:
        num_envs = self.env.num_envs
        zeros = (jnp.zeros(num_envs, jnp.float32), jnp.zeros(num_envs, jnp.int32))
        return RunState(learner, env_state, states, act_key, *zeros, replay)

    def _initial_runs(self) -> RunState:
        learner, act_key = self.agent.compiled_start()
        replay = self._family.initial_replay()
        seeds = self.cfg["seeds"]
        if seeds is not None:
            keys = jnp.stack([jax.random.PRNGKey(seed) for seed in seeds])

            # one seed after another (lax.map, not vmap): a batched QR (the orthogonal initialisers of recurrent
            # kernels) splits over XLA's intra-op pool from inside it and deadlocked a 2-thread pool (session 15)
            def draw(learner: Any, act_key: Any, replay: Any, keys: jax.Array) -> RunState:
                return jax.lax.map(lambda key: self._seeded_run(learner, act_key, replay, key), keys)

            runs = jax.jit(draw)(learner, act_key, replay, keys)
        else:
            self.env.reset()
            env_state, states = self.env.carry
            runs = self._run_state(learner, env_state, states, act_key, replay)
            if self._vmapped:  # a sweep from the agent's own state: the same start for every run
                runs = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (self.num_runs, *jnp.shape(x))), runs)
        if self._swept_rate is not None:  # each run's own rate, from which its schedule (if any) goes on
            runs = runs._replace(learner=runs.learner._replace(**{self._swept_rate: self._swept_array()}))
        # strongly typed leaves, as the chunk returns them (a weakly typed one would compile a second time)
        return jax.tree_util.tree_map(lambda x: jnp.asarray(x, dtype=jnp.asarray(x).dtype), runs)

    def _swept_array(self) -> jax.Array:
        if self._sweep_values is None:
            return jnp.zeros(self.num_runs if self._vmapped else (), jnp.float32)
        return jnp.asarray(self._sweep_values, jnp.float32)

    def _vmapped_chunk(self, runs: RunState, first_update: jax.Array, swept: jax.Array) -> tuple:
        """Every run's chunk, vmapped. The learner fields the agent keeps equal in every run
        (``compiled_shared_fields``: TD3's count of critic steps, from the same start in every run) go in once,
        unbatched, so a ``lax.cond`` on them stays a branch: under ``vmap`` a batched predicate turns it into a select
        that computes both branches (TD3's policy step at every critic step instead of every ``policy_delay``-th)."""
        shared = tuple(getattr(self.agent, "compiled_shared_fields", ()))
        if not shared:
            return jax.vmap(self._chunk, in_axes=(0, None, 0))(runs, first_update, swept)
        absent = {name: () for name in shared}  # no leaves: the shared values travel beside the batched state

        def chunk(run: RunState, swept: jax.Array, common: dict) -> tuple:
            run, metrics = self._chunk(run._replace(learner=run.learner._replace(**common)), first_update, swept)
            common = {name: getattr(run.learner, name) for name in shared}
            return run._replace(learner=run.learner._replace(**absent)), metrics, common

        common = {name: getattr(runs.learner, name)[0] for name in shared}
        runs = runs._replace(learner=runs.learner._replace(**absent))
        runs, metrics, common = jax.vmap(chunk, in_axes=(0, 0, None), out_axes=(0, 0, None))(runs, swept, common)
        common = {name: jnp.broadcast_to(value, (self.num_runs, *value.shape)) for name, value in common.items()}
        return runs._replace(learner=runs.learner._replace(**common)), metrics

    def _compile(self, runs: RunState, first_update: jax.Array, swept: jax.Array) -> Any:
        chunk = self._vmapped_chunk if self._vmapped else self._chunk
        start, start_cpu = time.perf_counter(), time.process_time()
        compiled = jax.jit(chunk).lower(runs, first_update, swept).compile()
        self.compilations += 1
        self.timings["compile_seconds"] = time.perf_counter() - start
        self.timings["compile_cpu_seconds"] = time.process_time() - start_cpu
        return compiled

    # -- public API --------------------------------------------------------------------------------------------

    def train(self) -> Dict[str, np.ndarray]:
        """Run the whole of ``timesteps`` compiled (one call per chunk) and return the metrics per update.

        The agent (and the environment) then hold the trained state; with several runs (``seeds``/``sweep``) that
        of run 0, :attr:`runs` holds every run's and :meth:`load_run` puts any one into the agent.

        :return: :attr:`metrics`: arrays ``(updates,)`` (``(runs, updates)`` when vmapped) keyed by TensorBoard tag,
            plus ``"timestep"``; an off-policy agent makes one update per timestep (NaN before ``learning_starts``).
        :raises ValueError: an update produced a non-finite value (named); the agent keeps its state from before
            the chunk that produced it.
        """
        agent = self.agent
        agent.set_running_mode("train")
        runs = self._initial_runs()
        swept = self._swept_array()
        chunks = self.num_updates // self.updates_per_chunk
        collected: List[Any] = []
        run_seconds = run_cpu_seconds = 0.0
        writers = self._writers()
        with tqdm.tqdm(total=self.num_updates, disable=self.disable_progressbar, file=sys.stdout) as progress:
            for index in range(chunks):
                first_update = jnp.asarray(index * self.updates_per_chunk, jnp.int32)
                if self._compiled is None:
                    self._compiled = self._compile(runs, first_update, swept)
                start, start_cpu = time.perf_counter(), time.process_time()
                runs, metrics = jax.block_until_ready(self._compiled(runs, first_update, swept))
                run_seconds += time.perf_counter() - start
                run_cpu_seconds += time.process_time() - start_cpu
                metrics = jax.device_get(metrics)
                self._check_finite(runs, metrics, index * self.updates_per_chunk)
                self.runs = runs
                self._commit(jax.tree_util.tree_map(lambda x: x[0], runs) if self._vmapped else runs)
                collected.append(metrics)
                self._write(writers, metrics, index * self.updates_per_chunk)
                if agent.checkpoint_interval > 0:  # the agent's state (run 0's when vmapped) after every chunk
                    agent.write_checkpoint((index + 1) * self.updates_per_chunk * self._family.steps, self.timesteps)
                progress.update(self.updates_per_chunk)
        self.timings["run_seconds"] = run_seconds
        self.timings["run_cpu_seconds"] = run_cpu_seconds  # wall time minus waiting: steadier on a shared machine
        self.metrics = self._metric_arrays(collected)
        if self._vmapped:  # the per-run writers made for this call (the agent keeps its own)
            for writer in writers:
                writer.close()
        return self.metrics

    def load_run(self, index: int) -> None:
        """Put run ``index`` of the last vmapped :meth:`train` into the agent (parameters, optimizers,
        preprocessors, learning rate, keys, an off-policy agent's replay memory) and into the environment, as if
        it had been trained alone."""
        if self.runs is None:
            raise RuntimeError("CompiledTrainer.load_run: train() has not run yet")
        if not self._vmapped:
            if index != 0:
                raise IndexError(f"CompiledTrainer.load_run({index}): the last train() made one run (index 0)")
            return self._commit(self.runs)
        if not 0 <= index < self.num_runs:
            raise IndexError(f"CompiledTrainer.load_run({index}): the last train() made runs 0..{self.num_runs - 1}")
        self._commit(jax.tree_util.tree_map(lambda x: x[index], self.runs))

    def eval(self) -> None:
        """Evaluate the agent on the same environment with the ordinary loop (no learning)."""
        self._loop(evaluate=True)

    # -- after each chunk (host) ---------------------------------------------------------------------------------

    def _commit(self, run: RunState) -> None:
        self._family.commit(run)
        self.env.carry = (run.env, run.states)

    def _check_finite(self, runs: RunState, metrics: UpdateMetrics, first_update: int) -> None:
        """Raise naming the first non-finite quantity of the first update (of the first run) that produced one."""
        flags_ok = self._family.flags_ok(metrics.report)
        if flags_ok.all():
            return
        position = np.argwhere(~flags_ok)[0]
        run_index, update = (position[0], position[1]) if self._vmapped else (None, position[0])
        pick = (lambda x: x[run_index, update]) if self._vmapped else (lambda x: x[update])
        final = runs if not self._vmapped else jax.tree_util.tree_map(lambda x: x[run_index], runs)
        timestep = (first_update + int(update) + 1) * self._family.steps - 1
        prefix = "" if run_index is None else f"run {run_index}: "
        try:
            self.agent.check_update(timestep, final.learner, jax.tree_util.tree_map(pick, metrics.report))
        except ValueError as error:
            raise ValueError(f"CompiledTrainer {prefix}{error}") from error

    def _writers(self) -> List[Any]:
        agent = self.agent
        if agent.write_interval == 0 or agent.writer is None:
            return []
        if not self._vmapped:
            return [agent.writer]
        return [SummaryWriter(log_dir=os.path.join(agent.experiment_dir, f"run_{i}")) for i in range(self.num_runs)]

    def _scalars(self, metrics: UpdateMetrics) -> Dict[str, Any]:
        """The per-update arrays under the tags the agent tracks in the ordinary trainers."""
        return {
            "Reward / Total reward (mean)": metrics.episode_return,
            "Episode / Total timesteps (mean)": metrics.episode_length,
            "Reward / Instantaneous reward (mean)": metrics.reward,
            "Episode / Episodes": metrics.episodes,
            **self._family.scalars(metrics, self._swept_rate is not None),
        }

    def _write(self, writers: List[Any], metrics: UpdateMetrics, first_update: int) -> None:
        """One point per update (on-policy) or per ``write_interval`` updates (off-policy: their reduction)."""
        if not writers:
            return
        steps, group = self._family.steps, self._family.write_group()
        scalars = self._scalars(metrics)
        for run_index, writer in enumerate(writers):
            for tag, values in scalars.items():
                values = np.asarray(values)[run_index] if self._vmapped else np.asarray(values)
                for end in range(group, len(values) + 1, group):
                    value = values[end - 1] if group == 1 else _reduce(tag, values[end - group : end], None)
                    if np.isfinite(value):
                        writer.add_scalar(tag, float(value), (first_update + end) * steps)
            writer.flush()

    def _metric_arrays(self, collected: List[UpdateMetrics]) -> Dict[str, np.ndarray]:
        axis = 1 if self._vmapped else 0
        arrays = {
            tag: np.concatenate([np.asarray(self._scalars(chunk)[tag]) for chunk in collected], axis=axis)
            for tag in self._scalars(collected[0])
        }
        arrays["timestep"] = (np.arange(self.num_updates) + 1) * self._family.steps
        return arrays


__all__ = ["CompiledTrainer", "COMPILED_TRAINER_DEFAULT_CONFIG"]
