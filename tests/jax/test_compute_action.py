"""Agent.compute_action (JAX): NumPy in and out, the state preprocessor applied, the deterministic action equal to
the trainer's evaluation action, one observation or a batch, after loading a checkpoint, and shape errors."""

import gymnasium
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.utils.model_instantiators import categorical_model, deterministic_model, gaussian_model
from skrl_like.utils import set_seed

NETWORK = [{"name": "net", "input": "OBSERVATIONS", "layers": [8], "activations": "tanh"}]
NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
BOX = gymnasium.spaces.Box(-1.0, 1.0, (3,), np.float32)
ACTIONS = gymnasium.spaces.Box(-2.0, 2.0, (2,), np.float32)


def make_ppo(observation_space, action_space, seed=0):
    set_seed(seed)
    if isinstance(action_space, gymnasium.spaces.Discrete):
        policy = categorical_model(observation_space, action_space, network=NETWORK, output="ACTIONS")
    else:
        policy = gaussian_model(observation_space, action_space, network=NETWORK, output="ACTIONS")
    value = deterministic_model(observation_space, action_space, network=NETWORK, output="ONE")
    models = {"policy": policy, "value": value}
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": observation_space},
        "experiment": NO_FILES,
    }
    return PPO(models=models, memory=None, cfg=cfg, observation_space=observation_space, action_space=action_space)


@pytest.fixture
def agent():
    agent = make_ppo(BOX, ACTIONS)
    batch = np.random.default_rng(0).normal(3.0, 2.0, (64, 3)).astype(np.float32)
    agent._state_preprocessor(jnp.asarray(batch), train=True)
    return agent


def test_deterministic_action_is_the_policy_mean_of_the_standardized_observation(agent):
    observation = np.array([0.5, -1.0, 4.0], dtype=np.float32)
    scaler = agent._state_preprocessor
    mean, variance = np.asarray(scaler.running_mean), np.asarray(scaler.running_variance)
    standardized = np.clip((observation - mean) / np.sqrt(variance + scaler.epsilon), -5.0, 5.0)
    expected = agent.policy.apply(agent.policy.state_dict.params, {"states": standardized[None]}, "policy")[0][0]

    action = agent.compute_action(observation)
    assert isinstance(action, np.ndarray) and action.shape == (2,) and action.dtype == np.float32
    np.testing.assert_allclose(action, np.asarray(expected), rtol=1e-5, atol=1e-6)


def test_equals_the_deterministic_act_of_a_trainer_evaluation_and_batches_agree(agent):
    observations = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)
    agent.init()  # what a trainer does before acting (compute_action does it when no trainer did)
    agent.set_running_mode("eval")
    mean_actions = np.asarray(agent.act(jnp.asarray(observations), timestep=0, timesteps=1)[-1]["mean_actions"])
    agent.set_running_mode("train")
    batch = agent.compute_action(observations)
    assert batch.shape == (5, 2)
    np.testing.assert_allclose(batch, mean_actions, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(agent.compute_action(observations[2]), mean_actions[2], rtol=1e-6, atol=1e-7)
    assert agent.training, "compute_action left the agent's running mode as it was"
    np.testing.assert_array_equal(agent.compute_action(observations), batch)


def test_explore_samples_around_the_mean(agent):
    observation = np.zeros(3, dtype=np.float32)
    samples = np.stack([agent.compute_action(observation, explore=True) for _ in range(200)])
    mean = agent.compute_action(observation)
    assert samples.std(axis=0).min() > 0.5
    np.testing.assert_allclose(samples.mean(axis=0), mean, atol=0.25)


def test_a_checkpoint_loaded_into_a_fresh_agent_gives_the_same_actions(agent, tmp_path):
    observations = np.random.default_rng(2).normal(size=(4, 3)).astype(np.float32)
    path = str(tmp_path / "agent.pickle")
    agent.save(path)
    fresh = make_ppo(BOX, ACTIONS, seed=1)
    assert not np.array_equal(fresh.compute_action(observations), agent.compute_action(observations))
    fresh.load(path)
    np.testing.assert_array_equal(fresh.compute_action(observations), agent.compute_action(observations))


def test_discrete_actions_come_in_the_layout_gymnasium_envs_take():
    env = gymnasium.make("CartPole-v1")
    agent = make_ppo(env.observation_space, env.action_space)
    observation, _ = env.reset(seed=0)
    action = agent.compute_action(observation)
    assert isinstance(action, np.integer) and env.action_space.contains(action)
    env.step(action)
    observations = np.stack([observation, observation * 0.5])
    actions = agent.compute_action(observations)
    assert actions.shape == (2,) and actions.dtype == env.action_space.dtype
    logits = agent.policy.apply(agent.policy.state_dict.params, {"states": observations}, "policy")[0]
    np.testing.assert_array_equal(actions, np.argmax(np.asarray(logits), axis=1))


@pytest.mark.parametrize("shape", [(4,), (2, 4), (3, 1), ()])
def test_a_wrong_observation_shape_names_the_shapes(agent, shape):
    with pytest.raises(
        ValueError,
        match=r"PPO.compute_action: the observation has shape .* observation space .* "
        r"one observation of shape \(3,\) or a batch of shape \('batch', 3\)",
    ):
        agent.compute_action(np.zeros(shape, dtype=np.float32))
