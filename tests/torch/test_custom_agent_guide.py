"""The agent of docs/writing-an-agent.md (examples/torch/custom_agent_reinforce.py): the base stores its steps and
runs its update on its schedule, with no record_transition or post_interaction of its own."""

import importlib.util
import pathlib

import gymnasium as gym
import pytest
import torch

from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.trainers import SequentialTrainer

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "torch" / "custom_agent_reinforce.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("custom_agent_reinforce", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _env():
    return wrap_env(gym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"), verbose=False)


def test_the_guide_agent_defines_only_its_algorithm(example):
    defined = set(vars(example.REINFORCE))
    assert {"__init__", "init", "act", "_update"} <= defined
    assert not defined & {"record_transition", "post_interaction", "transition_to_store"}


def test_the_base_stores_every_step_and_updates_once_per_rollout(example, tmp_path):
    env = _env()
    agent = example.make_agent(env, experiment={"directory": str(tmp_path), "write_interval": 0})
    before = [p.detach().clone() for p in agent.policy.parameters()]
    updates = []
    original = agent._update
    agent._update = lambda t, T: (updates.append(t), original(t, T))
    rollouts = agent.cfg["rollouts"]
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 2 * rollouts + 3, "headless": True}).train()
    assert updates == [rollouts - 1, 2 * rollouts - 1]  # the schedule: after each full rollout
    # the memory holds the last rollout's steps as the base stored them
    assert agent.memory.get_tensor_by_name("states").shape == (rollouts, 2, 4)
    assert agent.memory.get_tensor_by_name("rewards").abs().sum() > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, agent.policy.parameters()))
    assert "Loss / Policy loss" in agent.tracking_data


def test_the_guide_agent_names_a_missing_model_and_an_unknown_key(example):
    env = _env()
    with pytest.raises(ValueError, match=r"needs a model for role\(s\) \['policy'\]"):
        example.REINFORCE(models={}, observation_space=env.observation_space, action_space=env.action_space)
    policy = example.Policy(env.observation_space, env.action_space, env.device)
    with pytest.raises(ValueError, match="discount_factor"):
        example.REINFORCE(
            models={"policy": policy},
            observation_space=env.observation_space,
            action_space=env.action_space,
            cfg={"discount_factr": 0.9},
        )
