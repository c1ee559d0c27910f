"""The interaction step has one owner: ``AgentCore.record_transition`` stores what ``transition_to_store`` builds
(the only hook an algorithm extends) in every memory, and ``AgentCore.post_interaction`` updates when the algorithm's
``schedule`` says so. No algorithm of either backend defines either method."""

import importlib

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn

from skrl_like.core.agents.base import AgentCore
from skrl_like.core.agents.transition import Transition
from skrl_like.torch.agents.dqn import DQN
from skrl_like.torch.agents.ppo import PPO
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import CategoricalMixin, DeterministicMixin, Model

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(2)

ALGORITHMS = {
    "torch": ["a2c.A2C", "amp.AMP", "cem.CEM", "ddpg.DDPG", "dqn.DQN", "dqn.DDQN", "ppo.PPO", "q_learning.Q_LEARNING",
              "rpo.RPO", "sac.SAC", "sarsa.SARSA", "td3.TD3", "trpo.TRPO"],
    "jax": ["a2c.A2C", "cem.CEM", "ddpg.DDPG", "dqn.DQN", "dqn.DDQN", "ppo.PPO", "rpo.RPO", "sac.SAC", "td3.TD3",
            "trpo.TRPO"],
}  # fmt: skip


def algorithm_classes():
    for backend, names in ALGORITHMS.items():
        for name in names:
            package, class_name = name.split(".")
            yield pytest.param(backend, package, class_name, id=f"{backend}-{class_name}")


@pytest.mark.parametrize("backend,package,class_name", algorithm_classes())
def test_no_algorithm_defines_the_interaction_step(backend, package, class_name):
    if backend == "jax":
        pytest.importorskip("jax")
    algorithm = getattr(importlib.import_module(f"skrl_like.{backend}.agents.{package}"), class_name)
    for method in ("record_transition", "post_interaction"):
        owners = [cls.__qualname__ for cls in algorithm.__mro__ if method in vars(cls)]
        assert owners == ["AgentCore"], f"{class_name}.{method} is defined by {owners}"


class QNetwork(DeterministicMixin, Model):
    def __init__(self):
        Model.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        DeterministicMixin.__init__(self)
        self.net = nn.Linear(2, 2)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def make_dqn(memories, **cfg):
    models = {role: QNetwork() for role in ("q_network", "target_q_network")}
    cfg = {"experiment": NO_FILES, "batch_size": 2, **cfg}
    return DQN(models=models, memory=memories, observation_space=OBSERVATIONS, action_space=ACTIONS, cfg=cfg)


def step(num_envs=2, final_states=None):
    rows = torch.arange(num_envs, dtype=torch.float32).view(-1, 1)
    return {
        "states": rows.repeat(1, 2),
        "actions": torch.ones(num_envs, 1, dtype=torch.int64),
        "rewards": rows + 1,
        "next_states": -rows.repeat(1, 2),
        "terminated": torch.tensor([[False], [True]]),
        "truncated": torch.tensor([[True], [False]]),
        "infos": {} if final_states is None else {"final_states": final_states},
        "timestep": 3,
        "timesteps": 10,
    }


def test_transition_to_store_shapes_the_rewards_and_keeps_the_terminal_observations():
    agent = make_dqn(RandomMemory(memory_size=4, num_envs=2, device="cpu"), rewards_shaper=lambda r, t, T: r * t / T)
    final_states = torch.full((2, 2), 7.0)
    transition = agent.transition_to_store(**step(final_states=final_states))
    assert isinstance(transition, Transition) and transition.extras == {}
    torch.testing.assert_close(transition.rewards, torch.tensor([[0.3], [0.6]]))
    torch.testing.assert_close(transition.next_states, final_states)
    torch.testing.assert_close(transition.states, step()["states"])


def test_record_transition_stores_the_built_transition_with_its_extras_in_every_memory():
    class MarkedDQN(DQN):
        def transition_to_store(self, *args, **kwargs):
            transition = super().transition_to_store(*args, **kwargs)
            return transition.with_extras(marks=transition.rewards * 10)

    memories = [RandomMemory(memory_size=4, num_envs=2, device="cpu") for _ in range(2)]
    agent = MarkedDQN(
        models={role: QNetwork() for role in ("q_network", "target_q_network")},
        memory=memories,
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        cfg={"experiment": NO_FILES, "batch_size": 2},
    )
    agent.init()
    memories[1].create_tensor("states", 2, torch.float32)
    for memory in memories:
        memory.create_tensor("marks", 1, torch.float32)
    agent.record_transition(**step())
    for memory in memories:
        torch.testing.assert_close(memory.get_tensor_by_name("marks")[0], torch.tensor([[10.0], [20.0]]))
    torch.testing.assert_close(memories[1].get_tensor_by_name("states")[0], step()["states"])
    # in eval mode nothing is stored
    agent.set_running_mode("eval")
    agent.record_transition(**step())
    assert memories[0].memory_index == 1


class Policy(CategoricalMixin, Model):
    def __init__(self):
        Model.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        CategoricalMixin.__init__(self)
        self.net = nn.Linear(2, 2)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class Value(DeterministicMixin, Model):
    def __init__(self):
        Model.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        DeterministicMixin.__init__(self)
        self.net = nn.Linear(2, 1)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


@pytest.mark.parametrize("algorithm,switches", [("ppo", True), ("dqn", False)])
def test_post_interaction_updates_when_the_schedule_says_and_switches_modes_where_declared(algorithm, switches):
    if algorithm == "ppo":
        agent = PPO(
            models={"policy": Policy(), "value": Value()},
            memory=RandomMemory(memory_size=2, num_envs=2, device="cpu"),
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
            cfg={"experiment": NO_FILES, "rollouts": 2, "mini_batches": 1},
        )
    else:
        agent = make_dqn(RandomMemory(memory_size=4, num_envs=2, device="cpu"), update_interval=2)
    agent.init()
    calls = []
    agent._update = lambda timestep, timesteps: calls.append(("update", timestep))
    agent.set_mode = lambda mode: calls.append(("mode", mode))
    for timestep in range(2):
        agent.record_transition(**{**step(), "timestep": timestep})
        agent.post_interaction(timestep, 10)
    update = ("update", 1) if algorithm == "ppo" else ("update", 0)
    assert calls == ([("mode", "train"), update, ("mode", "eval")] if switches else [update])


def test_an_agent_without_a_schedule_never_updates():
    class Recorder(AgentCore):
        def _parse_device(self, device):
            return device

        def _update(self, timestep, timesteps):
            raise AssertionError("no schedule: no update")

    agent = Recorder(models={}, cfg={"experiment": NO_FILES})
    agent.init()
    agent.post_interaction(0, 10)
    assert agent.schedule is None


def test_the_agent_base_holds_the_loop_and_its_bases_the_writing_checkpoints_and_run_state():
    from skrl_like.core.agents import base
    from skrl_like.core.agents.checkpointing import AgentCheckpoints
    from skrl_like.core.agents.run_state import AgentRunState
    from skrl_like.core.agents.tracking import AgentTracking
    from skrl_like.torch.agents.base import Agent

    assert Agent.__mro__[1:6] == (AgentCore, AgentRunState, AgentCheckpoints, AgentTracking, object)
    loop = {"init", "act", "compute_action", "record_transition", "transition_to_store", "post_interaction"}
    assert loop <= set(vars(AgentCore))
    assert {"track_data", "write_tracking_data"} <= set(vars(AgentTracking))
    assert {"write_checkpoint", "save", "load", "migrate"} <= set(vars(AgentCheckpoints))
    assert {"run_state", "load_run_state"} <= set(vars(AgentRunState))
    assert not (set(vars(AgentCore)) & {"track_data", "write_checkpoint", "save", "load", "run_state"})
    # the names users and tests import from base.py stay there
    assert base.TRACKING_HISTORY == 10_000 and base.RecentValues and base.Transition is Transition
