"""ParallelTrainer: agents in their own processes give the sequential trainer's results; failures stop everything.

Spawning a process costs a few seconds (a fresh interpreter imports torch), so every run here is a few tens of steps.
The agents and models used in the processes are defined in this module, which the processes import by name.
"""

import copy
import json
import multiprocessing
import os
import pickle
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn

from skrl_like.core.checkpoints import CheckpointMismatchError
from skrl_like.torch.agents import Agent
from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.torch.agents.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.trainers import PARALLEL_TRAINER_DEFAULT_CONFIG, ParallelTrainer, SequentialTrainer

# the agent processes unpickle this module's classes by their module name (tests.torch.test_parallel_trainer);
# they start with the main process's sys.path, so the repository root must be on it
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.append(ROOT)

NO_FILES = {"experiment": {"write_interval": 0, "checkpoint_interval": 0}}
CFG = {"timesteps": 6, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


class DriftEnv:
    """A deterministic auto-resetting vector env: env ``k`` (counted from ``first``) starts at ``0.1 (k + 1)``, moves
    by ``0.1 * action``, earns ``-position**2`` and ends every ``k + 3`` steps. A slice of it is a ``DriftEnv`` too."""

    def __init__(self, num_envs=4, first=0, interrupt_at=None, pause_at=None):
        self.num_envs, self.first, self.interrupt_at, self.pause_at = num_envs, first, interrupt_at, pause_at
        self.num_agents = 1
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (1,))
        self.action_space = gymnasium.spaces.Box(-1, 1, (1,))
        self.device = torch.device("cpu")
        self.start = 0.1 * (torch.arange(num_envs, dtype=torch.float32) + first + 1).unsqueeze(-1)
        self.lengths = (torch.arange(num_envs) + first + 3).unsqueeze(-1)
        self.steps, self.closed, self.received_actions = 0, False, []

    def reset(self):
        self.position, self.age = self.start.clone(), torch.zeros(self.num_envs, 1, dtype=torch.long)
        return self.position.clone(), {}

    def step(self, actions):
        if self.interrupt_at is not None and self.steps == self.interrupt_at:
            raise KeyboardInterrupt  # what Ctrl-C raises in the main process
        if self.steps == self.pause_at:
            time.sleep(1.0)
        self.steps += 1
        self.received_actions.append(actions.clone())
        self.position = self.position + 0.1 * actions.clamp(-1, 1)
        self.age += 1
        rewards = -(self.position**2)
        truncated = self.age >= self.lengths
        next_states = self.position.clone()
        self.position = torch.where(truncated, self.start, self.position)
        self.age = torch.where(truncated, 0, self.age)
        infos = {"episode": {"mean_position": self.position.mean()}, "final_states": next_states.clone()}
        return next_states, rewards, torch.zeros_like(truncated), truncated, infos

    def render(self):
        pass

    def close(self):
        self.closed = True

    def run_state(self):  # what a full-state checkpoint saves of the env (as the env wrappers' run_state)
        return {"position": self.position.clone(), "age": self.age.clone(), "steps": self.steps}

    def load_run_state(self, state):
        self.position, self.age, self.steps = state["position"].clone(), state["age"].clone(), state["steps"]


class LoggingAgent(Agent):
    """Acts with ``+1`` (sampled) and ``-1`` (mean); appends every hook call to a JSON-lines file (it runs in
    another process); raises at ``fail_at`` or kills its own process at ``die_at``."""

    def __init__(self, path, fail_at=None, die_at=None, die_idle_after=None, experiment=None):
        cfg = {"experiment": experiment} if experiment else NO_FILES
        super().__init__(models={}, memory=None, observation_space=None, action_space=None, device="cpu", cfg=cfg)
        self.path, self.fail_at, self.die_at, self.die_idle_after = str(path), fail_at, die_at, die_idle_after

    def _log(self, *entry):
        with open(self.path, "a") as file:
            file.write(json.dumps([*entry, os.getpid()]) + "\n")

    def init(self, trainer_cfg=None):
        super().init(trainer_cfg)
        self._log("init")

    def pre_interaction(self, timestep, timesteps):
        self._log("pre_interaction", timestep)

    def act(self, states, timestep, timesteps):
        if timestep == self.fail_at:
            raise ValueError(f"agent failure at timestep {timestep}")
        if timestep == self.die_at:
            os.kill(os.getpid(), signal.SIGKILL)
        self._log("act", timestep, states[:, 0].tolist(), torch.is_grad_enabled())
        n = states.shape[0]
        return torch.ones(n, 1), None, {"mean_actions": -torch.ones(n, 1)}

    def record_transition(self, **kwargs):
        super().record_transition(**kwargs)
        row = [kwargs[name][:, 0].tolist() for name in ("states", "actions", "rewards", "next_states", "truncated")]
        self._log("record_transition", kwargs["timestep"], row, kwargs["infos"]["final_states"][:, 0].tolist())

    def track_data(self, tag, value):
        super().track_data(tag, value)
        self._log("track_data", tag, float(value))

    def post_interaction(self, timestep, timesteps):
        self._log("post_interaction", timestep, self.training)
        if timestep == self.die_idle_after:  # killed a moment later, while it waits for the next command
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGKILL)).start()
        super().post_interaction(timestep, timesteps)


def read_log(path):
    with open(path) as file:
        return [json.loads(line) for line in file]


def assert_all_gone(pids):
    """No agent process left running (or unreaped), and no shared-memory file of ours left in /dev/shm."""
    assert multiprocessing.active_children() == []
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    ours = [str(pid) for pid in [os.getpid(), *pids]]
    leftovers = [name for name in os.listdir("/dev/shm") if any(pid in name for pid in ours)]
    assert leftovers == []


def test_default_config_is_the_sequential_one():
    assert PARALLEL_TRAINER_DEFAULT_CONFIG == {
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


def test_two_agent_processes_follow_the_sequential_call_order_on_their_scopes(tmp_path):
    env = DriftEnv(num_envs=4)
    agents = [LoggingAgent(tmp_path / "a.jsonl"), LoggingAgent(tmp_path / "b.jsonl")]
    ParallelTrainer(env=env, agents=agents, agents_scope=[1, 3], cfg={**CFG, "timesteps": 3}).train()
    first, second = read_log(tmp_path / "a.jsonl"), read_log(tmp_path / "b.jsonl")
    # each agent in a process of its own, not the main one
    pids = {entry[-1] for entry in first} | {entry[-1] for entry in second}
    assert len(pids) == 2 and os.getpid() not in pids
    calls = [entry[0] if entry[0] != "track_data" else "track" for entry in first]
    assert calls == ["init"] + ["pre_interaction", "act", "record_transition", "track", "post_interaction"] * 3
    # act under no-grad on its own rows only; the first observations are the env's starting positions
    acts = [entry for entry in second if entry[0] == "act"]
    assert acts[0][2] == pytest.approx([0.2, 0.3, 0.4]) and acts[0][3] is False
    assert [entry[2][0] for entry in first if entry[0] == "act"] == pytest.approx([0.1, 0.2, 0.3])
    # sampled actions (+1) in training; the step's data of the agent's rows; the final states cut to its scope
    record = [entry for entry in second if entry[0] == "record_transition"][0]
    states, actions, rewards, next_states, truncated = record[2]
    assert states == pytest.approx([0.2, 0.3, 0.4]) and actions == [1.0, 1.0, 1.0]
    assert next_states == pytest.approx([0.3, 0.4, 0.5]) and rewards == pytest.approx([-0.09, -0.16, -0.25])
    assert truncated == [False, False, False] and record[3] == pytest.approx([0.3, 0.4, 0.5])
    # env 0 (agent a) ends after 3 steps: the next state of step 2 is 0.4 and the env has reset itself to 0.1
    last = [entry for entry in first if entry[0] == "record_transition"][-1]
    assert last[2][3] == pytest.approx([0.4]) and last[2][4] == [True]
    # the env info scalars are tracked on every agent, in training mode; the env saw both agents' actions stacked
    assert [entry[1] for entry in second if entry[0] == "track_data"] == ["Info / mean_position"] * 3
    assert all(entry[2] is True for entry in first if entry[0] == "post_interaction")
    assert all(torch.equal(a, torch.ones(4, 1)) for a in env.received_actions) and len(env.received_actions) == 3
    assert_all_gone(pids)
    # the sequential trainer's log of the same agents and scopes, entry for entry (without the process ids)
    sequential_env = DriftEnv(num_envs=4)
    agents = [LoggingAgent(tmp_path / "c.jsonl"), LoggingAgent(tmp_path / "d.jsonl")]
    SequentialTrainer(env=sequential_env, agents=agents, agents_scope=[1, 3], cfg={**CFG, "timesteps": 3}).train()
    for parallel_log, sequential_log in [(first, "c.jsonl"), (second, "d.jsonl")]:
        assert [entry[:-1] for entry in parallel_log] == [entry[:-1] for entry in read_log(tmp_path / sequential_log)]


@pytest.mark.parametrize("stochastic", [False, True])
def test_eval_uses_mean_actions_unless_stochastic_evaluation(tmp_path, stochastic):
    env = DriftEnv(num_envs=2)
    agents = [LoggingAgent(tmp_path / "a.jsonl"), LoggingAgent(tmp_path / "b.jsonl")]
    cfg = {**CFG, "timesteps": 2, "stochastic_evaluation": stochastic}
    ParallelTrainer(env=env, agents=agents, cfg=cfg).eval()
    expected = torch.ones(2, 1) if stochastic else -torch.ones(2, 1)
    assert all(torch.equal(a, expected) for a in env.received_actions) and len(env.received_actions) == 2
    posts = [entry for entry in read_log(tmp_path / "b.jsonl") if entry[0] == "post_interaction"]
    assert [entry[2] for entry in posts] == [False, False]  # the agent's own hook, in "eval" running mode


def test_a_single_agent_runs_in_the_main_process(tmp_path):
    env, agent = DriftEnv(num_envs=2), LoggingAgent(tmp_path / "a.jsonl")
    trainer = ParallelTrainer(env=env, agents=agent, cfg={**CFG, "timesteps": 2})
    trainer.train()
    trainer.eval()
    log = read_log(tmp_path / "a.jsonl")
    assert {entry[-1] for entry in log} == {os.getpid()}
    # initialised once, by the constructor, as under SequentialTrainer (a second call continues the run: at every
    # call, as the agent processes are, it got a second writer and lost the running episodes' returns)
    assert [entry[0] for entry in log].count("init") == 1
    assert [a[0, 0].item() for a in env.received_actions] == [1.0, 1.0, -1.0, -1.0]


# -- same results as the sequential trainer ----------------------------------------------------------------------


class Policy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 8), nn.Tanh(), nn.Linear(8, self.num_actions))
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        return torch.tanh(self.net(inputs["states"])), self.log_std_parameter, {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device, with_actions=False):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.with_actions = with_actions
        inputs = self.num_observations + (self.num_actions if with_actions else 0)
        self.net = nn.Sequential(nn.Linear(inputs, 8), nn.Tanh(), nn.Linear(8, 1))

    def compute(self, inputs, role):
        x = inputs["states"]
        if self.with_actions:
            x = torch.cat([x, inputs["taken_actions"]], dim=-1)
        return self.net(x), {}


def make_ppo(env, num_envs):
    cfg = {**PPO_DEFAULT_CONFIG, "rollouts": 4, "learning_epochs": 2, "mini_batches": 2, **NO_FILES}
    models = {"policy": Policy(env.observation_space, env.action_space, "cpu")}
    models["value"] = Value(env.observation_space, env.action_space, "cpu")
    memory = RandomMemory(memory_size=4, num_envs=num_envs, device="cpu")
    return PPO(models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
               action_space=env.action_space, device="cpu")  # fmt: skip


def make_sac(env, num_envs):
    cfg = {**SAC_DEFAULT_CONFIG, "batch_size": 4, "learning_starts": 3, "learn_entropy": True, **NO_FILES}
    models = {"policy": Policy(env.observation_space, env.action_space, "cpu")}
    for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
        models[role] = Value(env.observation_space, env.action_space, "cpu", with_actions=True)
    memory = RandomMemory(memory_size=32, num_envs=num_envs, device="cpu")
    return SAC(models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
               action_space=env.action_space, device="cpu")  # fmt: skip


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def parameters(agent):
    return {
        f"{role}.{name}": p.detach().clone() for role, m in agent.models.items() for name, p in m.named_parameters()
    }


@pytest.mark.parametrize("make_agent", [make_ppo, make_sac], ids=["PPO", "SAC"])
def test_parallel_agents_learn_what_each_learns_alone_under_the_sequential_trainer(make_agent):
    env, scopes = DriftEnv(num_envs=5), [2, 3]
    seed_everything(0)
    agents = [make_agent(env, 2), make_agent(env, 3)]
    alone = copy.deepcopy(agents)
    initial = [parameters(agent) for agent in agents]
    timesteps = 12  # three PPO updates (rollouts 4); SAC learns from step 3 on
    seed_everything(1)
    ParallelTrainer(env=env, agents=agents, agents_scope=scopes, cfg={**CFG, "timesteps": timesteps}).train()

    for index, (agent, start, count) in enumerate(zip(alone, [0, 2], scopes)):
        seed_everything(1)  # each agent process starts from the main process's random state at train()
        SequentialTrainer(
            env=DriftEnv(num_envs=count, first=start), agents=agent, cfg={**CFG, "timesteps": timesteps}
        ).train()
        trained_in_parallel, trained_alone = parameters(agents[index]), parameters(agent)
        for name, value in trained_alone.items():
            assert not torch.equal(value, initial[index][name]) or "target" in name  # it did learn
            torch.testing.assert_close(trained_in_parallel[name], value, rtol=1e-5, atol=1e-6, msg=name)
    assert_all_gone([])


def test_agents_sharing_a_replay_memory_are_rejected_since_each_process_would_hold_a_copy():
    env = DriftEnv(num_envs=2)
    agents = [make_sac(env, 2), make_sac(env, 2)]
    agents[1].memory = agents[0].memory
    with pytest.raises(ValueError, match=r"share one replay memory, but ParallelTrainer runs each agent in a process"):
        ParallelTrainer(env=env, agents=agents, agents_scope=[1, 1], cfg=CFG)


# -- failures ------------------------------------------------------------------------------------------------------


def test_an_agent_that_raises_stops_every_process_and_its_error_is_reraised_with_the_child_traceback(tmp_path):
    env = DriftEnv(num_envs=2)
    agents = [LoggingAgent(tmp_path / "a.jsonl"), LoggingAgent(tmp_path / "b.jsonl", fail_at=3)]
    begin = time.monotonic()
    with pytest.raises(ValueError, match="agent failure at timestep 3") as raised:
        ParallelTrainer(env=env, agents=agents, cfg={**CFG, "timesteps": 50}).train()
    assert time.monotonic() - begin < 60
    assert "in act" in str(raised.value.__cause__) and "raise ValueError" in str(raised.value.__cause__)
    failed_pid = read_log(tmp_path / "b.jsonl")[0][-1]
    assert raised.value.__notes__ == [
        f"Raised in the process of agent 1 (LoggingAgent, process {failed_pid}) at timestep 3 (pre_interaction/act); "
        "its traceback is shown above"
    ]
    assert len(env.received_actions) == 3  # steps 0..2 ran; nothing after the failure
    pids = {entry[-1] for entry in read_log(tmp_path / "a.jsonl") + read_log(tmp_path / "b.jsonl")}
    assert_all_gone(pids)


@pytest.mark.parametrize("when", ["acting", "idle"])
def test_an_agent_process_killed_without_raising_is_detected_at_once(tmp_path, when):
    # "idle": it dies after its post_interaction of step 2, while the main process spends a second in env.step
    env = DriftEnv(num_envs=2, pause_at=3)
    kill = {"die_at": 2} if when == "acting" else {"die_idle_after": 2}
    agents = [LoggingAgent(tmp_path / "a.jsonl"), LoggingAgent(tmp_path / "b.jsonl", **kill)]
    trainer = ParallelTrainer(env=env, agents=agents, cfg={**CFG, "timesteps": 50})
    # it died during a command that held two halves of steps; the message names both
    expected = "timestep 1 .record_transition/post_interaction. or 2 .pre_interaction/act."
    if when == "idle":
        expected = "timestep 3 .record_transition/post_interaction. or 4 .pre_interaction/act."
    begin = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"agent 1 \(LoggingAgent.*{expected}.*died.*exit code -9"):
        trainer.train()
    assert time.monotonic() - begin < 60
    pids = {entry[-1] for entry in read_log(tmp_path / "a.jsonl") + read_log(tmp_path / "b.jsonl")}
    assert_all_gone(pids)


def test_keyboard_interrupt_stops_the_processes_closes_the_env_and_flushes_tensorboard(tmp_path):
    env = DriftEnv(num_envs=2, interrupt_at=4)
    experiment = {"directory": str(tmp_path), "experiment_name": "run", "write_interval": 1, "checkpoint_interval": 0}
    agents = [LoggingAgent(tmp_path / "a.jsonl", experiment=experiment), LoggingAgent(tmp_path / "b.jsonl")]
    trainer = ParallelTrainer(env=env, agents=agents, cfg={**CFG, "timesteps": 50, "close_environment_at_exit": True})
    with pytest.raises(KeyboardInterrupt):
        trainer.train()
    assert env.closed
    events = [name for name in os.listdir(tmp_path / "run") if name.startswith("events")]
    assert len(events) == 1 and os.path.getsize(tmp_path / "run" / events[0]) > 0
    pids = {entry[-1] for entry in read_log(tmp_path / "a.jsonl") + read_log(tmp_path / "b.jsonl")}
    assert_all_gone(pids)


def running(pid):
    """Whether ``pid`` is a live process (a zombie left for a reaper that never comes counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("how", ["ctrl-c", "kill-main"])
def test_ctrl_c_or_a_killed_main_process_leaves_no_agent_process_behind(tmp_path, how):
    """A real SIGINT to the whole process group (what a terminal sends) ends the run with KeyboardInterrupt after the
    current step, a full-state checkpoint of the agent processes' states and the agent processes (which ignore SIGINT)
    being stopped; a SIGKILLed main process leaves agent processes that see their pipe close and exit on their own."""
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {ROOT!r})
        from tests.torch import test_parallel_trainer as t

        class SlowEnv(t.DriftEnv):
            def step(self, actions):
                if self.steps == 2:
                    print("running", flush=True)
                time.sleep(0.05)
                return super().step(actions)

        if __name__ == "__main__":
            env = SlowEnv(num_envs=2)
            experiment = {{"directory": {str(tmp_path)!r}, "experiment_name": "run", "write_interval": 0,
                           "checkpoint_interval": 1000000}}  # only the Ctrl-C checkpoint
            agents = [t.LoggingAgent({str(tmp_path / "a.jsonl")!r}, experiment=experiment),
                      t.LoggingAgent({str(tmp_path / "b.jsonl")!r})]
            trainer = t.ParallelTrainer(env=env, agents=agents, cfg={{**t.CFG, "timesteps": 100000}})
            try:
                trainer.train()
            except KeyboardInterrupt:
                print("interrupted", flush=True)
        """
    )
    path = tmp_path / "run.py"
    path.write_text(script)
    process = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stdout.readline().strip() == "running"
        pids = {entry[-1] for entry in read_log(tmp_path / "a.jsonl") + read_log(tmp_path / "b.jsonl")}
        assert len(pids) == 2 and all(running(pid) for pid in pids)
        if how == "ctrl-c":
            os.killpg(process.pid, signal.SIGINT)
            out, _ = process.communicate(timeout=60)
            assert "interrupted" in out and process.returncode == 0
            (name,) = os.listdir(tmp_path / "run" / "checkpoints")
            with open(tmp_path / "run" / "checkpoints" / name, "rb") as file:
                payload = pickle.load(file)
            # named by the step it resumes at: every agent recorded the steps before it, none acted in it
            log = read_log(tmp_path / "b.jsonl")
            steps = [entry[1] for entry in log if entry[0] == "post_interaction"]
            acts = [entry[1] for entry in log if entry[0] == "act"]
            assert name == f"run_{payload['timestep']}.ckpt" and steps[-1] == acts[-1] == payload["timestep"] - 1
            assert [state["class"] for state in payload["agents"]] == ["LoggingAgent"] * 2
            assert len(payload["processes"]) == 2
        else:
            process.kill()
            process.wait(timeout=30)
        deadline = time.monotonic() + 30
        while any(running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(running(pid) for pid in pids)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def test_the_parallel_pendulum_example_runs_ddpg_td3_and_sac_in_their_processes(tmp_path):
    command = [sys.executable, "parallel_pendulum.py", "--timesteps", "120", "--hidden", "16", "--episodes", "1"]
    command += ["--directory", str(tmp_path)]
    result = subprocess.run(
        command, cwd=os.path.join(ROOT, "examples", "torch"), capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "parallel trainer, 3 agent(s), 120 steps" in result.stdout
    for name in ("DDPG", "TD3", "SAC"):
        assert f"{name}: mean return" in result.stdout


def test_a_multi_agent_algorithm_on_a_pettingzoo_env_runs_the_sequential_multi_agent_loop():
    from tests.torch.test_ippo import make_env_and_agent  # IPPO on a tiny PettingZoo env with 3-step episodes

    env, agent = make_env_and_agent()
    seen = []
    record = agent.record_transition
    agent.record_transition = lambda **kwargs: (seen.append(kwargs), record(**kwargs))
    ParallelTrainer(env=env, agents=agent, cfg={**CFG, "timesteps": 8}).train()
    assert [float(step["infos"]["shared_states"][0, 0]) for step in seen] == [0, 1, 2, 0, 1, 2, 0, 1]


# -- full-state checkpoints: the agents' states come from their processes ------------------------------------------


def make_resumable_agents(env, directory):
    """PPO (scope 2) and SAC (scope 3) writing a full-state checkpoint every 6 steps into ``directory``: the first
    one is in the middle of PPO's second rollout and after SAC's first updates (memory contents, optimizer moments,
    sampling indexes, process random streams all matter)."""
    experiment = {"directory": str(directory), "experiment_name": "run", "write_interval": 0, "checkpoint_interval": 6}
    seed_everything(0)
    agents = [make_ppo(env, 2), make_sac(env, 3)]
    for agent, name in zip(agents, ["run", "sac"]):  # (run checkpoints go to the first agent's directory)
        agent.cfg["experiment"] = {**agent.cfg["experiment"], **experiment, "experiment_name": name}
        agent.checkpoint_interval = 6
        agent.experiment_dir = os.path.join(str(directory), name)
    return agents


@pytest.fixture(scope="module")
def uninterrupted_run(tmp_path_factory):
    """12 steps of PPO + SAC in two processes, with the periodic checkpoint at 6 and the end-of-run one at 12."""
    directory = tmp_path_factory.mktemp("uninterrupted")
    env = DriftEnv(num_envs=5)
    agents = make_resumable_agents(env, directory)
    seed_everything(1)
    trainer = ParallelTrainer(env=env, agents=agents, agents_scope=[2, 3], cfg={**CFG, "timesteps": 12})
    trainer.train()
    return directory / "run" / "checkpoints", [parameters(agent) for agent in agents], trainer


def test_parallel_training_resumed_from_a_checkpoint_ends_bit_identical_to_the_uninterrupted_run(
    uninterrupted_run, tmp_path
):
    checkpoints_dir, expected, _ = uninterrupted_run
    written = sorted(name for name in os.listdir(checkpoints_dir) if name.startswith("run_"))
    assert written == ["run_12.ckpt", "run_6.ckpt"]
    env = DriftEnv(num_envs=5)
    agents = make_resumable_agents(env, tmp_path)
    seed_everything(2)  # everything the run draws from is restored: the main process's and each agent process's
    trainer = ParallelTrainer(env=env, agents=agents, agents_scope=[2, 3], cfg={**CFG, "timesteps": 9})
    trainer.restore(str(checkpoints_dir / "run_6.ckpt"))
    assert trainer.initial_timestep == 6
    trainer.train()
    # a second train() continues from the states the processes sent back at the end of the first
    trainer.timesteps = 12
    trainer.train()
    for index, agent in enumerate(agents):
        resumed = parameters(agent)
        assert resumed.keys() == expected[index].keys()
        for name, value in expected[index].items():
            assert torch.equal(resumed[name], value), (index, name)
    # the resumed run wrote its own end-of-run checkpoint; save() after train() holds the processes' final states
    assert os.path.isfile(tmp_path / "run" / "checkpoints" / "run_12.ckpt")
    with open(checkpoints_dir / "run_12.ckpt", "rb") as file:
        uninterrupted_end = pickle.load(file)
    with open(trainer.save(str(tmp_path / "again.ckpt")), "rb") as file:
        resumed_end = pickle.load(file)
    assert resumed_end["timestep"] == uninterrupted_end["timestep"] == 12
    assert len(resumed_end["processes"]) == 2
    for saved, again in zip(uninterrupted_end["processes"], resumed_end["processes"]):
        assert torch.equal(saved["torch"], again["torch"]) and saved["numpy"][1].tolist() == again["numpy"][1].tolist()
    assert [s["attributes"].get("_update_count", None) for s in resumed_end["agents"]] == [
        s["attributes"].get("_update_count", None) for s in uninterrupted_end["agents"]
    ]


def test_a_checkpoint_of_another_set_of_agent_processes_is_refused_with_what_differs(
    uninterrupted_run, tmp_path, caplog
):
    checkpoints_dir, _, finished = uninterrupted_run
    env = DriftEnv(num_envs=5)
    agents = [make_ppo(env, 1), make_ppo(env, 2), make_sac(env, 2)]
    other = ParallelTrainer(env=env, agents=agents, agents_scope=[1, 2, 2], cfg={**CFG, "timesteps": 12})
    with pytest.raises(ValueError, match=r"holds the agents \['PPO', 'SAC'\], this trainer \['PPO', 'PPO', 'SAC'\]"):
        other.restore(str(checkpoints_dir / "run_6.ckpt"))
    assert other.initial_timestep == 0
    # an agent's own state is checked in its process, after agent.init (which builds its memory)
    agents = make_resumable_agents(env, tmp_path)
    agents[1].memory = RandomMemory(memory_size=16, num_envs=3, device="cpu")
    trainer = ParallelTrainer(env=env, agents=agents, agents_scope=[2, 3], cfg={**CFG, "timesteps": 12})
    trainer.restore(str(checkpoints_dir / "run_6.ckpt"))
    with pytest.raises(
        CheckpointMismatchError, match=r"agent 1 \(SAC\): .*\(memory_size=32, num_envs=3 in the checkpoint"
    ) as error:
        trainer.train()
    assert "Raised in the process of agent 1 (SAC" in "".join(getattr(error.value, "__notes__", []))
    # a trainer whose agents never ran has nothing to save
    with pytest.raises(RuntimeError, match="agents have not run yet, .* call train\\(\\) first, or restore\\(\\)"):
        other.save(str(tmp_path / "nothing.ckpt"))
    # a SequentialTrainer loads the checkpoint too, saying that the processes' random streams are not restored
    sequential = SequentialTrainer(env=env, agents=make_resumable_agents(env, tmp_path / "s"), agents_scope=[2, 3],
                                   cfg={**CFG, "timesteps": 12})  # fmt: skip
    with caplog.at_level("WARNING", logger="skrl_like"):
        sequential.restore(str(checkpoints_dir / "run_6.ckpt"))
    assert sequential.initial_timestep == 6 and "their random streams are not restored here" in caplog.text
    # the finished run's trainer saves the states its processes sent back at the end
    assert finished.initial_timestep == 12
    with open(finished.save(str(tmp_path / "end.ckpt")), "rb") as file:
        assert [state["class"] for state in pickle.load(file)["agents"]] == ["PPO", "SAC"]


def test_a_single_agent_in_the_main_process_resumes_exactly_too(tmp_path):
    runs = []
    for resume in (False, True):
        env = DriftEnv(num_envs=2)
        agents = make_resumable_agents(env, tmp_path / str(resume))[:1]
        seed_everything(1)
        trainer = ParallelTrainer(env=env, agents=agents, cfg={**CFG, "timesteps": 12})
        if resume:
            trainer.restore(str(tmp_path / "False" / "run" / "checkpoints" / "run_6.ckpt"))
        trainer.train()
        runs.append(parameters(agents[0]))
    assert all(torch.equal(runs[0][name], runs[1][name]) for name in runs[0])
