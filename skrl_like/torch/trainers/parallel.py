"""``ParallelTrainer``: several agents, each in its own process, stepping one vectorised environment together.

The main process owns the environment; agent ``i`` lives in a process started with ``torch.multiprocessing``
(spawn) and sees only its scope of the environments. Per timestep the main process writes each agent's states
into that agent's shared-memory tensors and asks every agent, at once, for the first half of a step (the neutral
loop's ``_before_env_step``: ``pre_interaction`` then the action), steps the environment with the gathered actions,
writes rewards, next states and done flags into the shared tensors and asks for the second half
(``_after_env_step``: ``record_transition``, environment-info tracking, ``post_interaction``). So call order, reset
handling and tracking are the sequential trainer's; only the plumbing below is new.
"""

import copy
import pickle
import random
import signal
import time
import traceback
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np
import torch
import torch.multiprocessing as mp

from skrl_like import logger
from skrl_like.core.checkpoints import CheckpointMismatchError
from skrl_like.core.trainer import TRAINER_DEFAULT_CONFIG, _scoped_infos
from skrl_like.torch.trainers.base import Trainer

PARALLEL_TRAINER_DEFAULT_CONFIG = copy.deepcopy(TRAINER_DEFAULT_CONFIG)

# seconds the agent processes get to finish their current command and exit before they are terminated
_STOP_TIMEOUT = 10.0


class ParallelTrainer(Trainer):
    """Train or evaluate several agents at once, each in its own process, on one vectorised environment.

    Each agent acts and learns on its scope of the environments (``agents_scope``) exactly as under
    :class:`~skrl_like.torch.trainers.SequentialTrainer`, but in a process of its own, so the agents' updates run in
    parallel. A single agent runs in the main process (nothing to parallelise).

    Each agent process starts from the main process's random state at the start of ``train()``/``eval()``, so agent
    ``i`` produces the data (and weights) it would produce trained alone by a ``SequentialTrainer`` on its scope from
    that state. Agents are initialised (``agent.init``) inside their process at every ``train()``/``eval()`` call;
    the models' parameters are shared with the main process, so the main process's agents hold the trained weights
    afterwards. At each full-state checkpoint and at the end of ``train()`` every agent process sends back its agent's
    run state and its random states: :meth:`save` writes those (the layout of
    :mod:`~skrl_like.core.checkpoints`), and the next ``train()`` (after :meth:`restore`, or continuing a finished
    one) loads them into the agents in their processes right after ``agent.init``.

    :param env: the wrapped environment (``wrap_env(...)``, single-agent, usually vectorised).
    :param agents: an agent, or a list of distinct agents (each with its own memory) sharing the environment; their
        classes (and their models' classes) must be importable by name, since each is pickled into its process.
    :param agents_scope: environments per agent, ints >= 1 summing to ``env.num_envs``; ``None`` splits equally.
    :param cfg: keys of ``PARALLEL_TRAINER_DEFAULT_CONFIG`` (unknown keys or bad values raise ``ValueError``).
    :param evaluation_env: a second wrapped env built like ``env``, for ``cfg["evaluation_interval"]`` (a single agent
        only, which runs in the main process).
    """

    default_config = PARALLEL_TRAINER_DEFAULT_CONFIG
    shares_replay_memories = False  # each agent process holds its own copy of its memory

    def _setup(self) -> None:
        if self.num_simultaneous_agents == 1:
            self._init_agents()  # once, as SequentialTrainer does: a second train() continues the first
        else:
            self._refuse_run_features(
                "its agents run in processes of their own; use SequentialTrainer for these hooks, or a ParallelTrainer "
                "with one agent (which runs in the main process)"
            )
            if self._reads_env_states:
                raise ValueError(
                    "ParallelTrainer: an agent's model asks for the environment's privileged states (state_space), "
                    "which the agent processes are not sent: use SequentialTrainer, or a ParallelTrainer with one agent"
                )
        # a spawn context, not set_start_method("spawn", force=True): the program's own start method is left alone
        self._context = mp.get_context("spawn")
        # the agent processes' states gathered at the last save point or the end of the last train() (several agents)
        self._agent_states: Optional[List[Dict[str, Any]]] = None
        # the agents' states a restore() left, loaded after agent.init when the next run starts (see _run)
        self._pending_states: Optional[List[Dict[str, Any]]] = None
        self._resolved_checkpoint_interval = 0  # agent 0's checkpoint interval as its process resolved it

    # -- full-state checkpoints: the agents' states come from their processes -------------------------------------

    def save(self, path: Optional[str] = None) -> str:
        """As ``SequentialTrainer.save``; with several agents, the agents' states (and each agent process's random
        states) are those the processes sent back at the last checkpoint or the end of the last ``train()`` (or those
        a :meth:`restore` left, before the next run).

        :raises RuntimeError: several agents that have not run yet (they are initialised in their processes)."""
        return super().save(path)

    def restore(self, path: str) -> None:
        """As ``SequentialTrainer.restore``; the agents' states are loaded when the next ``train()``/``eval()`` starts,
        right after ``agent.init`` (in each agent's process with several agents, which also starts from its saved
        random state when training). The trainer-level parts (backend, environments, agents' classes and scopes) are
        checked here; an agent's own state (modules, shapes, memories) only once it is initialised, so such a mismatch
        raises :class:`~skrl_like.core.checkpoints.CheckpointMismatchError` from that ``train()``/``eval()``."""
        super().restore(path)

    def _agent_run_states(self) -> List[Dict[str, Any]]:
        if self.num_simultaneous_agents == 1:
            if self._pending_states:  # restored, not run yet: the agent is not initialised
                return [state["agent"] for state in self._pending_states]
            return super()._agent_run_states()
        return [state["agent"] for state in self._process_states()]

    def _process_random_states(self) -> Optional[List[Any]]:
        if self.num_simultaneous_agents == 1:
            return None
        return [state["random"] for state in self._process_states()]

    def _process_states(self) -> List[Dict[str, Any]]:
        """The agent processes' states (``{"agent": run_state, "random": process random state}`` per agent): those
        gathered at the last save point or the end of the last ``train()``, or those a ``restore`` left for the next
        ``train()``."""
        states = self._agent_states or self._pending_states
        if not states:
            raise RuntimeError(
                "ParallelTrainer.save: the agents have not run yet, so there is no state to save (each agent is "
                "initialised in its process at train()): call train() first, or restore() a checkpoint"
            )
        return states

    def _check_agent_run_states(self, payload: Mapping[str, Any], where: str) -> Callable[[], None]:
        """Agents are initialised (their memories and trackers built) only when a run starts, in their processes: their
        states are checked and loaded there, right after ``agent.init``, at the next ``train()``/``eval()``."""
        randoms = payload.get("processes")
        if self.num_simultaneous_agents > 1 and randoms is None:
            logger.warning(
                f"{where} was written by a trainer whose agents shared its process: each agent process starts from "
                "the restored random state of the main process, so the resumed run is not the uninterrupted one bit "
                "for bit"
            )
        pending = []
        for index, state in enumerate(payload["agents"]):
            random_state = randoms[index] if randoms is not None and self.num_simultaneous_agents > 1 else None
            pending.append(
                {"agent": state, "random": random_state, "where": f"{where}: agent {index} ({state['class']})"}
            )

        def load() -> None:
            self._pending_states = pending
            self._agent_states = None

        return load

    def _checkpoint_interval(self) -> int:
        if self.num_simultaneous_agents == 1:
            return super()._checkpoint_interval()
        return self._resolved_checkpoint_interval

    def _is_best_checkpoint(self, timestep: int) -> bool:
        if self.num_simultaneous_agents == 1:
            return super()._is_best_checkpoint(timestep)
        best = self._process_states()[0]["agent"]["attributes"].get("checkpoint_best_modules") or {}
        return best.get("timestep") == timestep and bool(best.get("modules"))

    def train(self) -> None:
        """Train the agents for ``cfg["timesteps"]`` steps (from ``initial_timestep``), each in its own process."""
        self._run(evaluate=False)

    def eval(self) -> None:
        """Evaluate the agents (no learning): mean actions unless ``cfg["stochastic_evaluation"]``."""
        self._run(evaluate=True)

    def _run(self, evaluate: bool) -> None:
        processes = None
        try:
            if self.num_simultaneous_agents == 1:
                if self._pending_states:  # restored: loaded into the agent initialised by the constructor
                    _load_agent_state(self._agent_list[0], self._pending_states[0])
                    if not evaluate:  # (an eval() in between leaves them for the train() that resumes)
                        self._pending_states = None
                self._loop(evaluate)
                return
            self._check_single_agent_env()
            if not evaluate and self.initial_timestep >= self.timesteps:
                return  # nothing left to train: no processes to start
            processes = _AgentProcesses(self._context, self._agent_list, self._scopes)
            # a continuing run (after restore(), or a train() after another) starts from the agents' saved states
            states = self._agent_states or self._pending_states
            intervals = processes.start(self.cfg, evaluate, states)
            if not evaluate:  # (an eval() in between leaves them for the train() that resumes)
                self._pending_states = None
            self._resolved_checkpoint_interval = intervals[0]
            self._parallel_loop(processes, evaluate)
        except KeyboardInterrupt:
            if processes is not None:
                logger.warning("Interrupted: stopping the agent processes")
                processes.stop()
            if self.close_environment_at_exit:
                self._close_environment()
            raise
        finally:
            if processes is not None:
                processes.stop()

    def _parallel_loop(self, processes: "_AgentProcesses", evaluate: bool) -> None:
        """The sequential loop's run (``TrainerCore._loop``) with the agents' halves of a step in their processes.

        One round trip per timestep, except at a checkpoint (and after the last step): there the second half of the
        step goes alone, then every process sends its agent's run state and its random state, the checkpoint is
        written from those, and the next step's first half follows."""
        start = 0 if evaluate else self.initial_timestep
        if start >= self.timesteps:
            return
        states = self._start_states(evaluate)
        save_at = self._next_save_timestep(evaluate)
        with self._run_guard(evaluate):
            actions = processes.step(self.timesteps, None, {"timestep": start, "evaluate": evaluate, "states": states})
            for timestep in self._progress(start):
                with self._no_grad():
                    next_states, rewards, terminated, truncated, infos = self.env.step(actions)
                    if not self.headless:
                        self.env.render()
                states, _ = self._next_states(next_states, terminated, truncated)
                record = {"timestep": timestep, "infos": infos, "next_states": next_states, "rewards": rewards}
                record.update(terminated=terminated, truncated=truncated)
                has_next = timestep + 1 < self.timesteps
                act = {"timestep": timestep + 1, "evaluate": evaluate, "states": states} if has_next else None
                at_save_point = timestep == save_at or self._stop_requested
                if not evaluate and (at_save_point or not has_next):
                    processes.step(self.timesteps, record, None)
                    self._agent_states = processes.run_states()
                    if at_save_point:
                        save_at = self._at_save_point(timestep, states)
                    actions = processes.step(self.timesteps, None, act) if has_next else None
                else:
                    actions = processes.step(self.timesteps, record, act)
            self._finish_loop(evaluate, states)


def _load_agent_state(agent: Any, state: Mapping[str, Any]) -> None:
    """Load a saved agent state (``{"agent": run_state, ...}``; ``"where"`` names a restored one's checkpoint) into an
    initialised agent."""
    try:
        agent.load_run_state(state["agent"], state.get("where", type(agent).__name__))
    except ValueError as error:
        raise CheckpointMismatchError(str(error)) from error


class _AgentSide(Trainer):
    """The agent half of the trainer inside an agent process: the neutral loop's step halves for one agent.

    It deliberately skips ``Trainer.__init__`` (there is no environment here); its scope is its whole input, since
    the main process sends only the agent's rows.
    """

    def __init__(self, agent: Any, cfg: Dict[str, Any], num_envs: int):
        self.cfg = cfg
        self.stochastic_evaluation = cfg["stochastic_evaluation"]
        self.environment_info = cfg["environment_info"]
        self.headless = True
        self._agent_list = [agent]
        self._scopes = [(0, num_envs)]


class _RemoteTraceback(Exception):
    """The traceback of an exception raised in an agent process, as the cause of its re-raise in the main process."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return "\n\n" + self.text


def _random_state(devices: List[torch.device]) -> Dict[str, Any]:
    cuda_states = {str(device): torch.cuda.get_rng_state(device) for device in devices if device.type == "cuda"}
    return {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
        "cuda": cuda_states,
    }


def _set_random_state(state: Dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    for device, cuda_state in state["cuda"].items():
        torch.cuda.set_rng_state(cuda_state, device)


def _synchronize(device: torch.device) -> None:
    # a CUDA tensor shared between processes is only safe to read once the writer's kernels are done
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class _MainProcessGone(Exception):
    """The main process closed its end of the pipe (it ended or was killed): an agent process just exits."""


def _receive(connection: Connection) -> Any:
    try:
        return connection.recv()
    except (EOFError, ConnectionResetError) as error:
        raise _MainProcessGone from error


def _agent_process(index: int, connection: Connection) -> None:
    """Body of agent process ``index``: set up, then answer the main process's commands until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is handled by the main process, which stops us
    agent = None
    where = "at start-up"  # reported with an exception
    try:
        command, setup = _receive(connection)
        agent = setup["agent"]
        device = torch.device(getattr(agent, "device", "cpu"))
        if device.type == "cuda":
            torch.cuda.set_device(device)
        torch.set_num_threads(setup["num_threads"])
        _set_random_state(setup["random_state"])
        agent.init(trainer_cfg=setup["cfg"])
        saved = setup["saved"]
        if saved is not None:  # a continuing run: after init, which rebuilt the memories and the episode tracker
            where = "loading its saved state"
            _load_agent_state(agent, saved)
            if saved["random"] is not None and not setup["evaluate"]:
                _set_random_state(saved["random"])
        agent.set_running_mode("eval" if setup["evaluate"] else "train")
        side = _AgentSide(agent, setup["cfg"], setup["num_envs"])
        interval = getattr(agent, "checkpoint_interval", 0)
        connection.send(("ok", interval if isinstance(interval, int) else 0))
        buffers: Dict[str, torch.Tensor] = {}
        states = actions = None
        while True:
            command, message = _receive(connection)
            if command == "stop":
                break
            if command == "state":  # between two steps: a snapshot (plain pickle: copied, not shared memory)
                where = "saving its state"
                state = {"agent": agent.run_state(), "random": _random_state([device])}
                connection.send(("state", pickle.dumps(state)))
                continue
            if command != "step":
                raise RuntimeError(f"agent process {index} got an unknown command {command!r}")
            buffers.update(message["buffers"])
            timesteps = message["timesteps"]
            if message["record"] is not None:  # the second half of the last step
                where = f"at timestep {message['record']['timestep']} (record_transition/post_interaction)"
                step = [buffers[name].clone() for name in ("next_states", "rewards", "terminated", "truncated")]
                infos = pickle.loads(message["record"]["infos"])
                side._after_env_step(states, actions, *step, infos, message["record"]["timestep"], timesteps)
            if message["act"] is None:  # the run's last step
                connection.send(("ok", None))
                continue
            # the first half of the next step
            where = f"at timestep {message['act']['timestep']} (pre_interaction/act)"
            states = buffers["states"].clone()  # the agent may keep it; the buffer is rewritten next step
            actions = side._before_env_step(states, message["act"]["timestep"], timesteps, message["act"]["evaluate"])
            if "actions" in buffers:
                buffers["actions"].copy_(actions)
                _synchronize(device)
                connection.send(("ok", None))
            else:  # first step: the main process learns the actions' shape and dtype and shares a buffer
                connection.send(("actions", pickle.dumps(actions.cpu())))
    except _MainProcessGone:
        pass  # nothing to report to
    except BaseException as error:  # reported to the main process, which stops every process and re-raises it
        text = traceback.format_exc()
        try:
            pickled: Optional[bytes] = pickle.dumps(error)
            pickle.loads(pickled)
        except Exception:
            pickled = None
        try:
            connection.send(("error", (pickled, text, where)))
        except (OSError, EOFError):
            pass
    finally:
        writer = getattr(agent, "writer", None)
        if writer is not None:
            writer.close()
        connection.close()


class _AgentProcesses:
    """The agent processes, their command pipes and their shared-memory tensors, seen from the main process."""

    def __init__(self, context: Any, agents: List[Any], scopes: List[Tuple[int, int]]):
        self.context = context
        self.agents = agents
        self.scopes = scopes
        self.devices = [torch.device(getattr(agent, "device", "cpu")) for agent in agents]
        self.processes: List[Any] = []
        self.connections: List[Connection] = []
        self.buffers: List[Dict[str, torch.Tensor]] = [{} for _ in agents]
        self.unsent: List[Dict[str, torch.Tensor]] = [{} for _ in agents]
        self.command = "at start-up"  # what the last command asked, for a process that dies without a word

    def start(self, cfg: Dict[str, Any], evaluate: bool, saved: Optional[List[Dict[str, Any]]] = None) -> List[int]:
        """Start the agent processes (each agent initialised in its process, then given its ``saved`` state if any);
        return their agents' resolved checkpoint intervals."""
        random_state = _random_state(self.devices)
        num_threads = max(1, torch.get_num_threads() // len(self.agents))
        for index in range(len(self.agents)):
            parent_end, child_end = self.context.Pipe()
            process = self.context.Process(
                target=_agent_process, args=(index, child_end), daemon=True, name=f"skrl_like-agent-{index}"
            )
            process.start()
            child_end.close()
            self.processes.append(process)
            self.connections.append(parent_end)
        # sent once every process is starting (a large agent may fill the pipe until its process reads it); the agent
        # travels through torch's pickler, so its parameters and buffers become shared memory
        for index, (agent, (start, end)) in enumerate(zip(self.agents, self.scopes)):
            setup = {"agent": agent, "cfg": cfg, "evaluate": evaluate, "num_envs": end - start}
            setup["saved"] = None if saved is None else saved[index]
            self._send(index, ("setup", {**setup, "random_state": random_state, "num_threads": num_threads}))
        replies = self._gather()
        for index, (agent, (start, end)) in enumerate(zip(self.agents, self.scopes)):
            logger.info(f"Agent process {index}: {type(agent).__name__} on {self.devices[index]}, scope {start}:{end}")
        return [interval for _, interval in replies]

    def run_states(self) -> List[Dict[str, Any]]:
        """Every agent process's state between two steps: its agent's ``run_state()`` and its random state."""
        self.command = "saving its state"
        for index in range(len(self.connections)):
            self._send(index, ("state", None))
        return [pickle.loads(payload) for _, payload in self._gather()]

    def _send(self, index: int, message: Any) -> None:
        try:
            self.connections[index].send(message)
        except (BrokenPipeError, ConnectionResetError):  # it died (while idle, or before reading its agent)
            self._raise_died(index)

    def _new_buffer(self, index: int, like: torch.Tensor) -> torch.Tensor:
        buffer = torch.zeros(like.shape, dtype=like.dtype, device=self.devices[index])
        return buffer.share_memory_() if buffer.device.type == "cpu" else buffer

    def _write(self, index: int, named: Dict[str, torch.Tensor]) -> None:
        """Copy agent ``index``'s rows of each tensor into its shared buffer of that name (made on first use)."""
        start, end = self.scopes[index]
        for name, tensor in named.items():
            rows = tensor[start:end]
            if name not in self.buffers[index]:
                self.buffers[index][name] = self.unsent[index][name] = self._new_buffer(index, rows)
            self.buffers[index][name].copy_(rows)
        _synchronize(self.devices[index])

    def _take(self, index: int) -> Dict[str, torch.Tensor]:
        """The buffers agent ``index``'s process does not have yet (sent once, through torch's pickler)."""
        unsent, self.unsent[index] = self.unsent[index], {}
        return unsent

    def step(self, timesteps: int, record: Optional[Dict[str, Any]], act: Optional[Dict[str, Any]]) -> Any:
        """One command to every agent process: the second half of the last step (``record``: its timestep and the
        env's outputs), then the first half of the next one (``act``: its timestep, evaluate and the states);
        returns the next step's actions, stacked (``None`` without ``act``).

        One round trip per timestep, not two: nothing happens in the main process between an agent's
        ``post_interaction`` of one step and its ``pre_interaction`` of the next but the reset handling, done
        before this call."""
        halves = [f"{record['timestep']} (record_transition/post_interaction)"] if record is not None else []
        halves += [f"{act['timestep']} (pre_interaction/act)"] if act is not None else []
        self.command = "at timestep " + " or ".join(halves)
        for index in range(len(self.connections)):
            message: Dict[str, Any] = {"timesteps": timesteps, "record": None, "act": None}
            if record is not None:
                self._write(
                    index, {name: record[name] for name in ("next_states", "rewards", "terminated", "truncated")}
                )
                start, end = self.scopes[index]
                # plain pickle: the infos' tensors are copied, not moved to a new shared-memory segment every step
                infos = pickle.dumps(_scoped_infos(record["infos"], start, end))
                message["record"] = {"timestep": record["timestep"], "infos": infos}
            if act is not None:
                self._write(index, {"states": act["states"]})
                message["act"] = {"timestep": act["timestep"], "evaluate": act["evaluate"]}
            message["buffers"] = self._take(index)
            self._send(index, ("step", message))
        replies = self._gather()
        if act is None:
            return None
        device = act["states"].device
        actions = []
        for index, (kind, payload) in enumerate(replies):
            if kind == "actions":  # first step: share a buffer of this shape and dtype from the next command on
                first = pickle.loads(payload)
                self.buffers[index]["actions"] = self.unsent[index]["actions"] = self._new_buffer(index, first)
                actions.append(first.to(device))
            else:
                actions.append(self.buffers[index]["actions"].to(device))
        return torch.vstack(actions)

    def _gather(self) -> List[Tuple[str, Any]]:
        """Every agent process's reply to the last command; raise (after stopping all) if one failed or died."""
        replies: Dict[int, Tuple[str, Any]] = {}
        waiting = set(range(len(self.processes)))
        while waiting:
            objects = [self.connections[i] for i in waiting] + [self.processes[i].sentinel for i in waiting]
            for ready in wait(objects):
                index = next(
                    i for i in range(len(self.processes)) if ready in (self.connections[i], self.processes[i].sentinel)
                )
                if index in replies:
                    continue
                connection = self.connections[index]
                if connection.poll():
                    try:
                        kind, payload = connection.recv()
                    except (EOFError, OSError):  # the process died while writing
                        self._raise_died(index)
                    if kind == "error":
                        self._raise_error(index, *payload)
                    replies[index] = (kind, payload)
                    waiting.discard(index)
                elif not self.processes[index].is_alive():
                    self._raise_died(index)
        return [replies[index] for index in range(len(self.processes))]

    def _where(self, index: int, at: str) -> str:
        return f"agent {index} ({type(self.agents[index]).__name__}, process {self.processes[index].pid}) {at}"

    def _raise_error(self, index: int, pickled: Optional[bytes], text: str, at: str) -> None:
        where = self._where(index, at)
        self.stop()
        if pickled is not None:
            error = pickle.loads(pickled)
            error.add_note(f"Raised in the process of {where}; its traceback is shown above")
            raise error from _RemoteTraceback(text)
        raise RuntimeError(f"{where} raised an exception (not picklable, its traceback follows):\n{text}")

    def _raise_died(self, index: int) -> None:
        process = self.processes[index]
        process.join(timeout=1.0)
        where = self._where(index, self.command)
        self.stop()
        raise RuntimeError(
            f"The process of {where} died without reporting an error (exit code {process.exitcode}; a negative code "
            "is the signal that killed it, e.g. -9 when the system ran out of memory): every agent process has been "
            "stopped; check the system log and the agent's memory use"
        )

    def stop(self) -> None:
        """Ask every agent process to stop, then terminate those still running after a grace period; idempotent."""
        for process, connection in zip(self.processes, self.connections):
            if process.is_alive() and not connection.closed:
                try:
                    connection.send(("stop", None))
                except (OSError, EOFError):
                    pass
        deadline = time.monotonic() + _STOP_TIMEOUT
        for process in self.processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
        for process in self.processes:
            if process.is_alive():
                logger.warning(f"Agent process {process.pid} did not stop within {_STOP_TIMEOUT} s: terminating it")
                process.terminate()
                process.join(timeout=2.0)
            if process.is_alive():
                process.kill()
                process.join(timeout=2.0)
        for connection in self.connections:
            connection.close()
        self.buffers = [{} for _ in self.agents]


__all__ = ["ParallelTrainer", "PARALLEL_TRAINER_DEFAULT_CONFIG"]
