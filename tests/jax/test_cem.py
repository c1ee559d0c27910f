"""CEM (JAX): config, acting under both JAX backends, one update on a hand-made two-env rollout against NumPy, one
compilation across updates with different numbers of elite rows, episodes across rollouts, save/load, determinism,
bad input, short runs on single and vector envs."""

import math

import flax.linen as nn
import gymnasium
import jax
import numpy as np
import pytest
from cem_reference import (
    DONES,
    GAMMA,
    HAND_MASK,
    HAND_RETURNS,
    HAND_THRESHOLD,
    REWARDS,
    elite_rows,
    linear_cross_entropy_step,
)

from skrl_like import config
from skrl_like.jax.agents.cem import CEM, CEM_DEFAULT_CONFIG
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import CategoricalMixin, Model
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.jax.models import LinearDeterministicPolicy, cartpole

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(3)


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        hidden = nn.relu(nn.Dense(32, name="hidden")(inputs["states"]))
        return nn.Dense(self.num_actions, name="output")(hidden), {}


class LinearPolicy(CategoricalMixin, Model):
    """logits = W s + b: small enough to differentiate by hand."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(3, name="linear")(inputs["states"]), {}


def make_agent(env, rollouts=200, **cfg):
    policy = Policy(env.observation_space, env.action_space)
    policy.init_state_dict("policy")
    return CEM(
        models={"policy": policy},
        memory=RandomMemory(memory_size=rollouts, num_envs=env.num_envs),
        cfg={"experiment": NO_FILES, "rollouts": rollouts, **cfg},
        observation_space=env.observation_space,
        action_space=env.action_space,
    )


def test_default_config_has_the_spec_keys_and_defaults():
    expected = {
        "rollouts": 16,
        "percentile": 0.70,
        "discount_factor": 0.99,
        "learning_rate": 1e-2,
        "learning_rate_scheduler": None,
        "learning_rate_scheduler_kwargs": {},
        "state_preprocessor": None,
        "state_preprocessor_kwargs": {},
        "random_timesteps": 0,
        "learning_starts": 0,
        "rewards_shaper": None,
    }
    assert list(CEM_DEFAULT_CONFIG) == [*expected, "experiment"]  # no mixed_precision in JAX
    assert {key: CEM_DEFAULT_CONFIG[key] for key in expected} == expected


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_act_samples_from_the_policy_in_both_backends(monkeypatch, backend):
    monkeypatch.setattr(config.jax, "backend", backend)
    agent = make_agent(cartpole(), random_timesteps=5)
    agent.init()
    params = jax.tree_util.tree_map(np.zeros_like, agent.policy.state_dict.params)
    params["params"]["output"]["bias"] = np.array([-30.0, 30.0], np.float32)  # always action 1
    agent.policy.state_dict = agent.policy.state_dict.replace(params=params)
    states = np.zeros((64, 4), np.float32)
    for timestep in (5, 6):
        actions, log_prob, outputs = agent.act(states, timestep=timestep, timesteps=10)
        assert isinstance(actions, jax.Array if backend == "jax" else np.ndarray)
        assert actions.shape == (64, 1) and actions.dtype == np.int32 and bool((np.asarray(actions) == 1).all())
        assert outputs["net_output"].shape == (64, 2)
    assert agent._act_fn._cache_size() == 1
    random_actions = np.asarray(agent.act(states, timestep=0, timesteps=10)[0])
    assert random_actions.shape == (64, 1) and 0 < int((random_actions == 0).sum()) < 64


def _hand_made_agent(**cfg):
    """A linear policy and the hand-made 6-step rollout of 2 environments (tests/cem_reference.py) in memory."""
    policy = LinearPolicy()
    policy.init_state_dict("policy")
    agent = CEM(
        models={"policy": policy},
        memory=RandomMemory(memory_size=6, num_envs=2),
        cfg={"experiment": NO_FILES, "rollouts": 6, "discount_factor": GAMMA, "percentile": 0.5, **cfg},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
    )
    agent.init()
    rng = np.random.default_rng(0)
    states = rng.normal(size=(6, 2, 2)).astype(np.float32)
    actions = rng.integers(0, 3, size=(6, 2, 1))
    for t in range(6):
        agent.memory.add_samples(
            states=states[t],
            actions=actions[t],
            rewards=REWARDS[t][:, None],
            next_states=states[t],
            terminated=DONES[t][:, None],
            truncated=np.zeros((2, 1), bool),
        )
    return agent, states.reshape(12, 2), actions.reshape(12, 1)


def _linear(agent):
    layer = agent.policy.state_dict.params["params"]["linear"]
    return np.asarray(layer["kernel"]).T.copy(), np.asarray(layer["bias"]).copy()


def test_one_update_on_a_hand_made_rollout_of_two_envs_matches_numpy():
    agent, states, actions = _hand_made_agent(learning_rate=0.05)
    weight, bias = _linear(agent)
    agent._update(timestep=5, timesteps=10)

    loss, new_weight, new_bias = linear_cross_entropy_step(weight, bias, states, actions, HAND_MASK, 0.05)
    assert float(agent.tracking_data["Loss / Policy loss"][0]) == pytest.approx(loss, rel=1e-5)
    assert agent.tracking_data["Coefficient / Return threshold"] == [pytest.approx(HAND_THRESHOLD)]
    assert agent.tracking_data["Coefficient / Mean discounted returns"] == [pytest.approx(np.mean(HAND_RETURNS))]
    weight, bias = _linear(agent)
    np.testing.assert_allclose(weight, new_weight, atol=1e-6)
    np.testing.assert_allclose(bias, new_bias, atol=1e-6)


def test_updates_with_different_elite_counts_share_one_compilation():
    agent, states, actions = _hand_made_agent(learning_rate=0.05)
    agent._update(timestep=5, timesteps=10)  # 7 elite rows
    # another rollout: every row of env 0 ends an episode, env 1 runs on (6 elite rows of 12)
    dones = np.zeros((6, 2, 1), bool)
    dones[:, 0] = True
    agent.memory.tensors["terminated"] = agent.memory.tensors["terminated"].at[:].set(dones) if agent._jax else dones
    weight, bias = _linear(agent)
    agent._update(timestep=11, timesteps=20)
    assert len(agent.tracking_data["Loss / Policy loss"]) == 2
    assert agent._update_fn._cache_size() == 1
    # and the second update used its own window, from the state after the first: env 0's episode from the first
    # rollout's row 5 to the second's row 0 (5 * 0.5 + 1 = 3.5), then five one-step episodes
    returns, _, mask = elite_rows(
        np.concatenate([REWARDS, REWARDS]), np.concatenate([DONES, dones[..., 0]]), 6, GAMMA, 0.5
    )
    np.testing.assert_allclose(returns, [3.5, 2, 0, 1, 3, 5])
    loss, _, _ = linear_cross_entropy_step(
        weight, bias, np.concatenate([states, states]), np.concatenate([actions, actions]), mask, 0.05
    )
    assert float(agent.tracking_data["Loss / Policy loss"][1]) == pytest.approx(loss, rel=1e-5)


def test_a_scheduler_is_applied_and_tracked_without_recompiling():
    import optax

    agent, _, _ = _hand_made_agent(
        learning_rate=0.1,
        learning_rate_scheduler=optax.constant_schedule,
        learning_rate_scheduler_kwargs={"value": 0.5},
    )
    agent._update(timestep=5, timesteps=10)
    agent._update(timestep=6, timesteps=10)
    assert [float(v) for v in agent.tracking_data["Learning / Learning rate"]] == [
        pytest.approx(0.05),
        pytest.approx(0.025),
    ]
    assert agent._update_fn._cache_size() == 1


def test_non_finite_rewards_are_named():
    agent, _, _ = _hand_made_agent()
    rewards = np.array(agent.memory.get_tensor_by_name("rewards"))
    rewards[2, 0] = np.nan
    agent.memory.tensors["rewards"] = rewards if not agent._jax else jax.numpy.asarray(rewards)
    with pytest.raises(FloatingPointError, match="rollout's rewards"):
        agent._update(timestep=5, timesteps=10)


def test_updates_come_every_rollout_and_an_episode_crossing_the_boundary_counts_whole():
    agent, states, actions = _hand_made_agent(learning_starts=6, learning_rate=0.05)
    weight, bias = _linear(agent)
    for timestep in range(6):  # before learning_starts: no update, but the rollout's rows are kept
        agent.post_interaction(timestep, 20)
    assert "Loss / Policy loss" not in agent.tracking_data
    for timestep in range(6, 12):
        agent.post_interaction(timestep, 20)
    # env 0's episode from rollout 1's row 5 to rollout 2's row 1 counts whole: 5 * 0.25 + 1 * 0.5 + 2 = 3.75
    returns, threshold, mask = elite_rows(
        np.concatenate([REWARDS, REWARDS]), np.concatenate([DONES, DONES]), 6, GAMMA, 0.5
    )
    np.testing.assert_allclose(returns, [3.75, 3.5, 3.5, 4, 1.5])
    assert agent.tracking_data["Coefficient / Mean discounted returns"] == [pytest.approx(np.mean(returns))]
    assert agent.tracking_data["Coefficient / Return threshold"] == [pytest.approx(threshold)]
    loss, new_weight, new_bias = linear_cross_entropy_step(
        weight, bias, np.concatenate([states, states]), np.concatenate([actions, actions]), mask, 0.05
    )
    assert float(agent.tracking_data["Loss / Policy loss"][0]) == pytest.approx(loss, rel=1e-5)
    weight, bias = _linear(agent)
    np.testing.assert_allclose(weight, new_weight, atol=1e-6)
    np.testing.assert_allclose(bias, new_bias, atol=1e-6)


def test_save_load_round_trip(tmp_path):
    from skrl_like.jax.resources.preprocessors import RunningStandardScaler

    set_seed(0)
    env = cartpole()
    scaler = {"state_preprocessor": RunningStandardScaler, "state_preprocessor_kwargs": {"size": 4}}
    first = make_agent(env, rollouts=100, **scaler)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 200}).train()
    path = str(tmp_path / "agent.pickle")
    first.save(path)

    second = make_agent(env, rollouts=100, **scaler)
    second.init()
    second.load(path)
    first_leaves = jax.tree_util.tree_leaves(first.policy.state_dict.params)
    for a, b in zip(first_leaves, jax.tree_util.tree_leaves(second.policy.state_dict.params)):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(
        jax.tree_util.tree_leaves(first.optimizer.state), jax.tree_util.tree_leaves(second.optimizer.state)
    ):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first._state_preprocessor.running_mean, second._state_preprocessor.running_mean)
    assert sorted(second.checkpoint_modules) == ["optimizer", "policy", "state_preprocessor"]


def _short_run(seed):
    set_seed(seed)
    env = cartpole()
    env._env.reset(seed=seed)
    agent = make_agent(env, rollouts=100)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 500}).train()
    return [float(loss) for loss in agent.tracking_data["Loss / Policy loss"]]


def test_a_fixed_seed_reproduces_a_short_run():
    first = _short_run(3)
    assert len(first) == 5 and first == _short_run(3)
    assert first != _short_run(4)


def test_bad_input_is_refused():
    box = gymnasium.spaces.Box(-1, 1, (2,))
    with pytest.raises(ValueError, match="CEM needs Discrete actions"):
        CEM(models={"policy": LinearPolicy()}, observation_space=OBSERVATIONS, action_space=box)
    deterministic = LinearDeterministicPolicy(OBSERVATIONS, ACTIONS)
    deterministic.init_state_dict("policy")
    with pytest.raises(ValueError, match="categorical policy.*deterministic one.*CategoricalMixin"):
        CEM(models={"policy": deterministic}, observation_space=OBSERVATIONS, action_space=ACTIONS)
    with pytest.raises(ValueError, match=r"no parameters yet.*init_state_dict\('policy'\)"):
        CEM(models={"policy": LinearPolicy()}, observation_space=OBSERVATIONS, action_space=ACTIONS)
    policy = LinearPolicy()
    policy.init_state_dict("policy")
    with pytest.raises(ValueError, match=r"memory holds 100 steps.*cfg\['rollouts'\] is 16"):
        CEM(
            models={"policy": policy},
            memory=RandomMemory(memory_size=100, num_envs=1),
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
        )


def test_episodes_longer_than_two_rollouts_raise_at_the_second_update():
    env = cartpole()
    agent = make_agent(env, rollouts=3)  # CartPole's episodes last at least 8 steps: none ends in 2 x 3 steps
    with pytest.raises(ValueError, match=r"cfg\['rollouts'\] = 3 steps.*2 x 3 steps.*memory_size"):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 10}).train()


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("num_envs", [1, 3])
def test_short_runs_on_single_and_vector_envs(monkeypatch, backend, num_envs):
    monkeypatch.setattr(config.jax, "backend", backend)
    set_seed(0)
    env = cartpole(num_envs)
    agent = make_agent(env, rollouts=60, random_timesteps=10)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 120}).train()
    losses = [float(loss) for loss in agent.tracking_data["Loss / Policy loss"]]
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)
    actions = agent.memory.get_tensor_by_name("actions")
    assert actions.dtype == np.int32 and actions.shape == (60, num_envs, 1)
    assert agent._update_fn._cache_size() == 1 and agent._act_fn._cache_size() == 1


def test_the_example_builds_and_trains_on_a_vector_env():
    from examples import load_example

    example = load_example("jax", "cem_cartpole")
    set_seed(0)
    env = example.make_env(num_envs=2)
    agent = example.make_agent(env, experiment=NO_FILES, rollouts=100, learning_starts=0)
    assert agent.cfg["percentile"] == example.HYPERPARAMETERS["percentile"]
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 200}).train()
    assert len(agent.tracking_data["Loss / Policy loss"]) == 2
