"""The torch BraxWrapper/PlaygroundWrapper: the JAX wrapper's steps as torch tensors shared by DLPack (no copy), bool
flags, wrap_env's detection, and a torch PPO agent training on it with the SequentialTrainer."""

import jax.numpy as jnp
import numpy as np
import pytest
import torch

from skrl_like import config
from skrl_like.jax.envs.wrappers import wrap_env as jax_wrap_env
from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import BraxWrapper, PlaygroundWrapper, wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.torch.utils.model_instantiators import deterministic_model, gaussian_model
from tests.brax_standin import PlaygroundPointMass, PointMass


def test_the_steps_are_the_jax_wrappers_as_torch_tensors_shared_without_a_copy():
    env = wrap_env(PointMass(), verbose=False, num_envs=3, episode_length=4, seed=5)
    backend = config.jax.backend
    config.jax.backend = "jax"
    try:
        reference = jax_wrap_env(PointMass(), verbose=False, num_envs=3, episode_length=4, seed=5)
    finally:
        config.jax.backend = backend
    assert isinstance(env, BraxWrapper) and env.device == torch.device("cpu") and env.num_envs == 3
    assert env.observation_space == reference.observation_space and env.action_space == reference.action_space
    states, _ = env.reset()
    np.testing.assert_array_equal(states.numpy(), np.asarray(reference.reset()[0]))
    actions = torch.tensor([[0.5], [-1.0], [1.0]])
    for _ in range(5):  # through a truncation at step 4
        next_states, rewards, terminated, truncated, info = env.step(actions)
        expected = reference.step(jnp.asarray(actions.numpy()))
        assert next_states.dtype == torch.float32 and rewards.shape == (3, 1)
        assert terminated.dtype == torch.bool and truncated.dtype == torch.bool
        for got, want in zip(
            (next_states, rewards, terminated, truncated, info["final_states"]),
            (*expected[:4], expected[4]["final_states"]),
        ):
            np.testing.assert_array_equal(got.numpy(), np.asarray(want))
    # the tensors are the JAX outputs' memory, not copies of them
    outputs = []
    transition = env._transition_fn
    env._transition_fn = lambda carry, actions: outputs.append(transition(carry, actions)) or outputs[-1]
    next_states, rewards, *_ = env.step(actions)
    assert next_states.data_ptr() == outputs[-1][1].next_states.unsafe_buffer_pointer()
    assert rewards.data_ptr() == outputs[-1][1].rewards.unsafe_buffer_pointer()


def test_playground_privileged_states_and_detection():
    env = wrap_env(PlaygroundPointMass(), verbose=False, num_envs=2)
    assert isinstance(env, PlaygroundWrapper) and env.state_space.shape == (3,)
    assert env.state() is None  # before the first reset
    states, _ = env.reset()
    privileged = env.state()
    assert isinstance(privileged, torch.Tensor) and privileged.shape == (2, 3)
    torch.testing.assert_close(privileged[:, :2], states)
    with pytest.raises(TypeError, match="only Brax and Playground environments take wrapper arguments"):
        wrap_env(PointMass(), wrapper="gymnasium", verbose=False, num_envs=2)


def test_a_torch_ppo_agent_trains_on_it():
    env = wrap_env(PointMass(), verbose=False, num_envs=4, episode_length=10, seed=0)
    models = {
        "policy": gaussian_model(
            env.observation_space,
            env.action_space,
            network=[{"name": "net", "input": "STATES", "layers": [16], "activations": "tanh"}],
            output="ACTIONS",
        ),
        "value": deterministic_model(
            env.observation_space,
            env.action_space,
            network=[{"name": "net", "input": "STATES", "layers": [16], "activations": "tanh"}],
            output="ONE",
        ),
    }
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": 8,
        "mini_batches": 2,
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    agent = PPO(
        models=models,
        memory=RandomMemory(memory_size=8, num_envs=4),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
    )
    before = [p.detach().clone() for p in agent.policy.parameters()]
    SequentialTrainer(
        env=env,
        agents=agent,
        cfg={"timesteps": 16, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False},
    ).train()
    assert any(not torch.equal(a, b) for a, b in zip(before, agent.policy.parameters()))
