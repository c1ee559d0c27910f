"""Agent.compute_action (torch): NumPy in and out, the state preprocessor applied, the deterministic action equal to
the trainer's evaluation action, one observation or a batch, after loading a checkpoint, and shape errors."""

import gymnasium
import numpy as np
import pytest
import torch

from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.utils.model_instantiators import categorical_model, deterministic_model, gaussian_model

NETWORK = [{"name": "net", "input": "OBSERVATIONS", "layers": [8], "activations": "tanh"}]
NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}


def make_ppo(observation_space, action_space, seed=0, network=NETWORK):
    torch.manual_seed(seed)
    if isinstance(action_space, gymnasium.spaces.Discrete):
        policy = categorical_model(observation_space, action_space, "cpu", network=network, output="ACTIONS")
    else:
        policy = gaussian_model(observation_space, action_space, "cpu", network=network, output="ACTIONS")
    value = deterministic_model(observation_space, action_space, "cpu", network=network, output="ONE")
    models = {"policy": policy, "value": value}
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": observation_space, "device": "cpu"},
        "experiment": NO_FILES,
    }
    return PPO(models=models, memory=None, cfg=cfg, observation_space=observation_space, action_space=action_space)


BOX = gymnasium.spaces.Box(-1.0, 1.0, (3,), np.float32)
ACTIONS = gymnasium.spaces.Box(-2.0, 2.0, (2,), np.float32)


@pytest.fixture
def agent():
    agent = make_ppo(BOX, ACTIONS)
    # statistics far from (0, 1), so that a skipped preprocessor changes the actions
    batch = torch.tensor(np.random.default_rng(0).normal(3.0, 2.0, (64, 3)), dtype=torch.float32)
    agent._state_preprocessor(batch, train=True)
    return agent


def test_deterministic_action_is_the_policy_mean_of_the_standardized_observation(agent):
    observation = np.array([0.5, -1.0, 4.0], dtype=np.float32)
    scaler = agent._state_preprocessor
    mean, variance = scaler.running_mean.numpy(), scaler.running_variance.numpy()
    standardized = np.clip((observation - mean) / np.sqrt(variance + scaler.epsilon), -5.0, 5.0)
    net = agent.policy.net_container  # Linear(3, 8), tanh, Linear(8, 2)
    weights = [p.detach().numpy().astype(np.float64) for p in net.parameters()]
    expected = np.tanh(standardized @ weights[0].T + weights[1]) @ weights[2].T + weights[3]

    action = agent.compute_action(observation)
    assert isinstance(action, np.ndarray) and action.shape == (2,) and action.dtype == np.float32
    np.testing.assert_allclose(action, expected, rtol=1e-5, atol=1e-6)


def test_equals_the_deterministic_act_of_a_trainer_evaluation_and_batches_agree(agent):
    observations = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)
    agent.set_running_mode("eval")
    with torch.no_grad():
        mean_actions = agent.act(torch.from_numpy(observations), timestep=0, timesteps=1)[-1]["mean_actions"].numpy()
    agent.set_running_mode("train")
    batch = agent.compute_action(observations)
    assert batch.shape == (5, 2)
    np.testing.assert_array_equal(batch, mean_actions)
    np.testing.assert_array_equal(agent.compute_action(observations[2]), mean_actions[2])
    assert agent.training, "compute_action left the agent's running mode as it was"
    # statistics frozen: acting did not move them
    np.testing.assert_array_equal(agent.compute_action(observations), batch)


def test_explore_samples_around_the_mean(agent):
    observation = np.zeros(3, dtype=np.float32)
    torch.manual_seed(0)
    samples = np.stack([agent.compute_action(observation, explore=True) for _ in range(200)])
    mean = agent.compute_action(observation)
    assert samples.std(axis=0).min() > 0.5  # log std 0: standard deviation 1
    np.testing.assert_allclose(samples.mean(axis=0), mean, atol=0.25)


def test_a_checkpoint_loaded_into_a_fresh_agent_gives_the_same_actions(agent, tmp_path):
    observations = np.random.default_rng(2).normal(size=(4, 3)).astype(np.float32)
    path = str(tmp_path / "agent.pt")
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
    logits = agent.policy.compute({"states": torch.from_numpy(observations)}, "policy")[0]
    np.testing.assert_array_equal(actions, torch.argmax(logits, dim=1).numpy())


@pytest.mark.parametrize("shape", [(4,), (2, 4), (3, 1), ()])
def test_a_wrong_observation_shape_names_the_shapes(agent, shape):
    with pytest.raises(
        ValueError,
        match=r"PPO.compute_action: the observation has shape .* observation space .* "
        r"one observation of shape \(3,\) or a batch of shape \('batch', 3\)",
    ):
        agent.compute_action(np.zeros(shape, dtype=np.float32))


def test_composite_observations_one_or_a_batch():
    space = gymnasium.spaces.Dict({"position": gymnasium.spaces.Box(-1, 1, (2,)), "mode": gymnasium.spaces.Discrete(3)})
    network = [{**NETWORK[0], "input": "concatenate([OBSERVATIONS['position'], OBSERVATIONS['mode']])"}]
    agent = make_ppo(space, ACTIONS, network=network)
    one = {"position": np.array([0.1, 0.2], dtype=np.float32), "mode": 2}
    batch = {"position": np.array([[0.1, 0.2], [0.3, -0.4]], dtype=np.float32), "mode": np.array([2, 0])}
    assert agent.compute_action(one).shape == (2,)
    np.testing.assert_array_equal(agent.compute_action(batch)[0], agent.compute_action(one))
    with pytest.raises(ValueError, match=r"Dict with keys \['mode', 'position'\]: give a dict with exactly those keys"):
        agent.compute_action({"position": one["position"]})
    with pytest.raises(ValueError, match="different batch sizes"):
        agent.compute_action({"position": batch["position"], "mode": np.array([1, 2, 0])})


def test_multi_agent_compute_action_per_agent():
    pytest.importorskip("mpe2")
    from skrl_like.cli import _build, read_yaml, resolve_config_path

    cfg = read_yaml(resolve_config_path("ippo_simple_spread"))
    cfg["agent"]["experiment"] = {"write_interval": 0, "checkpoint_interval": 0}
    runner = _build(cfg, "torch")
    agent, env = runner.agent, runner.trainer.env
    observations = {uid: env.observation_space(uid).sample() for uid in agent.possible_agents[:2]}
    actions = agent.compute_action(observations)
    assert sorted(actions) == sorted(observations)
    agent.set_running_mode("eval")
    with torch.no_grad():
        _, _, outputs = agent.act({uid: torch.from_numpy(o)[None] for uid, o in observations.items()}, 0, 1)
    for uid, action in actions.items():
        assert isinstance(action, np.integer) and action == outputs[uid]["mean_actions"].item()
    with pytest.raises(ValueError, match=r"IPPO.compute_action takes a dict \{agent name: observation\}"):
        agent.compute_action(observations[agent.possible_agents[0]])
    env.close()
