"""A trainer's run state, kept beside the loop (:mod:`skrl_like.core.trainer`): full-state checkpoints.

:class:`TrainerRunState` writes (:meth:`~TrainerRunState.save`) and reads (:meth:`~TrainerRunState.restore`) what a
run needs to continue exactly, and the run directory's ``params.json``. A loop asks ``_next_save_timestep`` where
its next checkpoint falls and calls ``_at_save_point`` there (and after a Ctrl-C), ``_finish_loop`` at its end and
``_stop_in_env_step`` when an ``env.step`` dies of a Ctrl-C; nothing else here runs inside a step.
"""

import os
import random
from typing import Any, Callable, Dict, List, Mapping, Optional

import numpy as np

from skrl_like import logger
from skrl_like.core import checkpoints
from skrl_like.core.io import remove_leftover_temporaries
from skrl_like.core.results import RESULTS_FILE, truncate_results, write_params
from skrl_like.core.trainer_setup import TrainerSetup


class TrainerRunState(TrainerSetup):
    """Continuation, full-state checkpoints and the run directory of :class:`~skrl_like.core.trainer.TrainerCore`."""

    #: set by the loop (:class:`~skrl_like.core.trainer.TrainerCore`): a Ctrl-C asked it to stop; it runs inside a
    #: training loop's Ctrl-C guard
    _stop_requested = False
    _guarding = False
    #: whether this trainer is stepped from outside (``StepTrainer``: :meth:`_one_step`), not by a whole-run loop
    _stepping = False

    def _backend_random_state(self) -> Any:
        """Backend: the backend's global random state (torch's generators, the JAX root key stream)."""
        return None

    def _set_backend_random_state(self, state: Any) -> None:
        """Backend: restore :meth:`_backend_random_state`'s value."""

    backend = ""  # "torch" or "jax": a checkpoint of one backend is not loaded by the other

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

    def _finish_loop(self, evaluate: bool, states: Any) -> None:
        """After a training loop: remember where it stopped (a later ``train()`` continues from there) and write the
        run's final full-state checkpoint (unless the last step just wrote one)."""
        if evaluate:
            return
        self._remove_leftovers()
        ran = self.timesteps > self.initial_timestep
        already_saved = self.initial_timestep == self.timesteps and self._resume_states is states
        self.initial_timestep, self._resume_states = max(self.timesteps, self.initial_timestep), states
        if ran and not already_saved and self._checkpoint_interval() > 0:
            self.save()

    def _stop_in_env_step(self, error: BaseException, timestep: int) -> None:
        """``env.step`` of training step ``timestep`` failed after a Ctrl-C (or with the ``KeyboardInterrupt`` an
        ``AsyncVectorEnv`` worker hands back: a terminal sends SIGINT to the whole process group, so the workers die
        in the step): write the checkpoint now, from the run as it was before the step (the step is taken again on
        resume, the environment reset, since its state died with it), and stop with ``KeyboardInterrupt``. Any
        other failure, or one outside a training loop, goes on as it is."""
        if not self._guarding or not (self._stop_requested or isinstance(error, KeyboardInterrupt)):
            return
        self._stop_requested = True
        self.initial_timestep, self._resume_states = timestep, None
        if self._checkpoint_interval() > 0:
            self.save()
        raise KeyboardInterrupt(f"training stopped by Ctrl-C at timestep {timestep}") from error

    def _is_best_checkpoint(self, timestep: int) -> bool:
        """Whether the checkpoint at ``timestep`` is the best so far: with evaluation during training, an evaluation
        ran at this timestep and its mean return is the highest so far; otherwise the first agent found a new best
        mean training return at this timestep (its ``best_agent`` file is written now too)."""
        if self._evaluation is not None:
            return self._evaluation.best_timestep == timestep
        best = getattr(self._agent_list[0], "checkpoint_best_modules", None) or {}
        return best.get("timestep") == timestep and bool(best.get("modules"))

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
        and only the last ``cfg["checkpoint_keep"]`` such files (and ``run_best.ckpt``) are kept, with the agent's
        ``agent_<timestep>`` files of their timesteps and later ones (``best_agent`` files are always kept). A
        ``StepTrainer`` saves between two calls: its ``states``, its step counter, and ``<timestep>`` is its next
        step's timestep.

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
            checkpoints.prune_agent_files(os.path.dirname(path), self.checkpoint_keep)
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

    def _remove_leftovers(self) -> None:
        """The temporary files killed writes left in the agents' run directories and their ``checkpoints/`` folders
        (a training loop's start and end; see :func:`~skrl_like.core.io.remove_leftover_temporaries`)."""
        for agent in self._agent_list:
            run_dir = getattr(agent, "experiment_dir", None)
            if run_dir and os.path.isdir(run_dir):
                remove_leftover_temporaries(run_dir)
                remove_leftover_temporaries(os.path.join(run_dir, "checkpoints"))

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
