"""The trainer loops, written once for both backends.

One hook style: a backend's ``Trainer`` subclasses :class:`TrainerCore` and overrides only its tensor hooks
(the no-grad context, how per-agent actions are stacked, which ``infos`` values are scalars worth logging,
conversion to NumPy, the distributed rank). The whole-run loop and the one-step loop live here too, so a
backend's ``SequentialTrainer``/``StepTrainer`` is a plain subclass of its ``Trainer`` that sets its defaults, inits
the agents in ``_setup`` and picks one loop.

This file reads as the loop. Beside it, one concept each: :mod:`skrl_like.core.trainer_setup` (configuration,
agents, scopes and spaces checked at construction; the run features and their hooks on the agents) and
:mod:`skrl_like.core.trainer_state` (full-state checkpoints: save, restore, continuation).
"""

import atexit
import contextlib
import signal
import sys
import threading
from typing import Any, Callable, Iterator, List, Mapping, Optional, Sequence, Tuple

import tqdm

from skrl_like import logger
from skrl_like.core.agents.privileged import NEXT_PRIVILEGED_STATES, PRIVILEGED_STATES, with_privileged_states
from skrl_like.core.config import merge_config
from skrl_like.core.evaluation import play_episodes
from skrl_like.core.trainer_setup import TRAINER_DEFAULT_CONFIG, generate_equally_spaced_scopes
from skrl_like.core.trainer_state import TrainerRunState

PRIVILEGED_NAMES = (PRIVILEGED_STATES, NEXT_PRIVILEGED_STATES)


def _scoped_infos(infos: Any, start: int, end: int) -> Any:
    """The step's infos for the agent of environments ``start:end``: the per-environment terminal observations
    (``infos["final_states"]``, one row per environment) and privileged states cut to its scope, everything else as
    it is."""
    if not isinstance(infos, Mapping):
        return infos
    rows = [name for name in ("final_states", *PRIVILEGED_NAMES) if infos.get(name) is not None]
    return {**infos, **{name: infos[name][start:end] for name in rows}} if rows else infos


class TrainerCore(TrainerRunState):
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
        self._guarding = False  # inside a training loop's _run_guard: an interrupted env.step writes a checkpoint
        self._loop_bar: Optional[tqdm.tqdm] = None
        self._params_written = False
        if self._is_distributed_worker():
            self.disable_progressbar = True

        self._setup_agents()
        self._check_spaces()
        self._setup_run_features(evaluation_env)

        if self.close_environment_at_exit:
            atexit.register(self._close_environment)
        self._setup()

    def _setup(self) -> None:
        """What a kind of trainer prepares once everything is checked (``SequentialTrainer``: the agents' ``init``)."""

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

    def _init_agents(self) -> None:
        for agent, (start, end) in zip(self._agent_list, self._scopes):
            agent.environments_per_timestep = end - start
            agent.init(trainer_cfg=self.cfg)

    def _set_running_mode(self, mode: str) -> None:
        for agent in self._agent_list:
            agent.set_running_mode(mode)

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
            # the env's privileged states, read only for an agent whose models ask for them (and that stores them)
            privileged = self.env.state() if self._reads_env_states and not evaluate else None
            try:
                next_states, rewards, terminated, truncated, infos = self.env.step(actions)
            except BaseException as error:
                self._stop_in_env_step(error, timestep)
                raise
            if privileged is not None:
                infos = with_privileged_states(infos, privileged, self.env.state())
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

    def _start_states(self, evaluate: bool, multi_agent: bool = False) -> Any:
        """Where a loop starts: training continues from the observations the last ``train()`` (or :meth:`restore`)
        left; otherwise (and always for evaluation) the environment is reset."""
        if not evaluate:
            self._write_params()
            self._remove_leftovers()
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

    @contextlib.contextmanager
    def _run_guard(self, evaluate: bool) -> Iterator[None]:
        """While training: Ctrl-C asks the loop to stop after the current step (a second one interrupts at once),
        and the bar shows the latest row's mean return and env-steps/s (updated only when a row is written)."""
        if evaluate:
            yield
            return
        self._stop_requested = False
        self._guarding = True
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
        first = self._agent_list[0]
        listens = callable(getattr(first, "add_result_listener", None))  # (a duck-typed agent may not have it)
        if listens:
            first.add_result_listener(listener)
        try:
            yield
        except BaseException as error:
            if self._stop_requested and not isinstance(error, KeyboardInterrupt):
                raise KeyboardInterrupt(f"interrupted during a step ({type(error).__name__}: {error})") from error
            raise
        finally:
            if listens:
                first.remove_result_listener(listener)
            if previous_handler is not None:
                signal.signal(signal.SIGINT, previous_handler)
            self._stop_requested = self._guarding = False

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


__all__ = ["TRAINER_DEFAULT_CONFIG", "TrainerCore", "generate_equally_spaced_scopes"]
