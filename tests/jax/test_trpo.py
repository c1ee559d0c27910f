"""TRPO (JAX): conjugate gradient, the Gaussian KL, the line search, one policy step on a tiny hand-made problem
against an independent NumPy reference, one compilation across updates, save/load, seeding and bad input."""

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like.core.agents.trpo import TRPO_DEFAULT_CONFIG as NEUTRAL_CONFIG
from skrl_like.jax.agents.trpo import TRPO, TRPO_DEFAULT_CONFIG
from skrl_like.jax.agents.trpo.trpo import Trial, conjugate_gradient, gaussian_kl, line_search
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import GaussianMixin, Model
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.jax.models import LinearCategoricalPolicy, ValueMlp

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (2,))
ACTIONS = gymnasium.spaces.Box(-1.0, 1.0, (1,))


class LinearPolicy(GaussianMixin, Model):
    """mean = s W + b, a state-independent log standard deviation of -0.5."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self, clip_actions=False)

    @nn.compact
    def __call__(self, inputs, role):
        log_std = self.param("log_std_parameter", lambda _: jnp.full(self.num_actions, -0.5, jnp.float32))
        return nn.Dense(self.num_actions, name="linear")(inputs["states"]), log_std, {}


class Value(ValueMlp):
    """This file's value model: 32 hidden units."""

    hidden = 32


def make_trpo(rollouts=8, num_envs=2, policy=None, observation_space=OBSERVATIONS, action_space=ACTIONS, **cfg):
    models = {
        "policy": policy or LinearPolicy(observation_space, action_space),
        "value": Value(observation_space, action_space),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    return TRPO(
        models=models,
        memory=RandomMemory(memory_size=rollouts, num_envs=num_envs),
        cfg={"rollouts": rollouts, "experiment": NO_FILES, **cfg},
        observation_space=observation_space,
        action_space=action_space,
    )


def pendulum(num_envs=2):
    return wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def test_the_jax_config_is_the_neutral_one_without_mixed_precision():
    assert TRPO_DEFAULT_CONFIG is NEUTRAL_CONFIG and "mixed_precision" not in TRPO_DEFAULT_CONFIG


def test_conjugate_gradient_solves_a_small_spd_system():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(6, 6)).astype(np.float32)
    a = m @ m.T + 6 * np.eye(6, dtype=np.float32)
    b = rng.normal(size=6).astype(np.float32)
    x = jax.jit(lambda b: conjugate_gradient(lambda v: jnp.asarray(a) @ v, b, iterations=6))(b)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a.astype(np.float64), b), rtol=1e-4, atol=1e-5)


def test_conjugate_gradient_stops_at_the_tolerance_without_dividing_by_zero():
    x = conjugate_gradient(lambda v: v, jnp.array([1.0, -2.0, 3.0]), iterations=5)
    np.testing.assert_allclose(np.asarray(x), [1.0, -2.0, 3.0])


def test_gaussian_kl_matches_the_closed_form_in_numpy():
    mean_1, log_std_1 = np.array([[0.1, -0.3], [0.5, 0.0]]), np.array([[-0.5, 0.2], [-0.5, 0.2]])
    mean_2, log_std_2 = np.array([[0.3, -0.1], [0.2, 0.4]]), np.array([[0.1, -0.1], [0.1, -0.1]])
    var_1, var_2 = np.exp(2 * log_std_1), np.exp(2 * log_std_2)
    expected = np.mean(np.sum(0.5 * (np.log(var_2 / var_1) + (var_1 + (mean_1 - mean_2) ** 2) / var_2 - 1), -1))
    assert float(gaussian_kl(mean_1, log_std_1, mean_2, log_std_2)) == pytest.approx(expected, rel=1e-5)


def test_line_search_expects_each_fractions_own_share_and_restores_the_start():
    def linear(slope):
        return lambda flat: Trial(slope * flat.sum(), jnp.zeros(()), flat.sum())

    start_trial = Trial(jnp.zeros(()), jnp.zeros(()), jnp.asarray(7.0))
    search = jax.jit(
        lambda slope: line_search(
            linear(slope), jnp.zeros(1), jnp.ones(1), jnp.asarray(1.0), start_trial, 0.01, 0.5, 1.0, 10
        )
    )
    # 0.3 x the expected improvement at every fraction: never accepted (skrl's cumulative product would accept)
    parameters, accepted, trial = search(0.3)
    assert not bool(accepted) and float(parameters[0]) == 0.0 and float(trial.stddev) == 7.0
    parameters, accepted, trial = search(0.6)
    assert bool(accepted) and float(parameters[0]) == 1.0 and float(trial.stddev) == 1.0

    def quadratic_kl(flat):
        return Trial(flat.sum(), (flat**2).sum(), flat.sum())

    parameters, accepted, _ = line_search(
        quadratic_kl, jnp.zeros(1), jnp.ones(1), jnp.asarray(1.0), start_trial, 0.01, 0.5, 1.0, 10
    )
    assert bool(accepted) and float(parameters[0]) == 0.0625


def _tiny_problem(seed=0, samples=64):
    rng = np.random.default_rng(seed)
    states = rng.normal(size=(samples, 2)).astype(np.float32)
    target = 0.8 * states[:, :1] - 0.5 * states[:, 1:]
    actions = (target + 0.3 * rng.normal(size=(samples, 1))).astype(np.float32)
    advantages = -np.abs(actions - target)
    advantages = ((advantages - advantages.mean()) / advantages.std()).astype(np.float32)
    return states, actions, advantages


def _numpy_distribution(params, states):
    layer = params["params"]["linear"]
    mean = states.astype(np.float64) @ np.asarray(layer["kernel"], np.float64) + np.asarray(layer["bias"], np.float64)
    log_std = np.broadcast_to(np.asarray(params["params"]["log_std_parameter"], np.float64), mean.shape)
    return mean, log_std


def _numpy_log_prob(mean, log_std, actions):
    return np.sum(-((actions - mean) ** 2) / (2 * np.exp(2 * log_std)) - log_std - 0.5 * np.log(2 * np.pi), -1)


@pytest.mark.parametrize("max_kl", [0.001, 0.01, 0.05])
def test_one_policy_step_stays_within_the_kl_bound_and_improves_the_surrogate(max_kl):
    agent = make_trpo(max_kl_divergence=max_kl)
    states, actions, advantages = _tiny_problem()
    params = agent.policy.state_dict.params
    old_mean, old_log_std = _numpy_distribution(params, states)
    old_log_prob = _numpy_log_prob(old_mean, old_log_std, actions)[:, None].astype(np.float32)

    new_params, surrogate_before, trial = jax.jit(agent._policy_step)(
        params, agent._model_inputs(states), actions, old_log_prob, advantages
    )

    mean, log_std = _numpy_distribution(new_params, states)
    var_1, var_2 = np.exp(2 * old_log_std), np.exp(2 * log_std)
    kl = np.mean(np.sum(0.5 * (np.log(var_2 / var_1) + (var_1 + (old_mean - mean) ** 2) / var_2 - 1), -1))
    ratio = np.exp(_numpy_log_prob(mean, log_std, actions)[:, None] - old_log_prob)
    surrogate = np.mean(advantages * ratio)
    assert float(surrogate_before) == pytest.approx(float(advantages.mean()), abs=1e-6)
    assert max_kl / 4**3 < kl < max_kl
    assert surrogate > float(surrogate_before) + 1e-4
    assert float(trial.stddev) == pytest.approx(float(np.exp(log_std).mean()), rel=1e-5)


def test_the_line_search_restores_the_policy_when_no_trial_is_accepted():
    agent = make_trpo(accept_ratio=1e9)
    states, actions, advantages = _tiny_problem()
    params = agent.policy.state_dict.params
    old_log_prob = _numpy_log_prob(*_numpy_distribution(params, states), actions)[:, None].astype(np.float32)
    new_params, _, trial = agent._policy_step(params, agent._model_inputs(states), actions, old_log_prob, advantages)
    for a, b in zip(jax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(new_params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert float(trial.stddev) == pytest.approx(float(np.exp(-0.5)), rel=1e-6)


def test_updates_compile_once_and_track_skrls_names():
    from skrl_like.jax.resources.schedulers import KLAdaptiveLR

    set_seed(0)
    env = pendulum(2)
    agent = make_trpo(
        rollouts=8,
        observation_space=env.observation_space,
        action_space=env.action_space,
        learning_rate_scheduler=KLAdaptiveLR,
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 24}).train()  # three updates
    data = agent.tracking_data
    assert len(data["Loss / Policy loss"]) == 3
    for tag in ("Loss / Value loss", "Policy / Standard deviation", "Learning / Value learning rate"):
        assert len(data[tag]) == 3
    assert "Loss / Entropy loss" not in data and "Learning / Learning rate" not in data
    # KLAdaptiveLR without a KL (TRPO's value optimizer) leaves the rate unchanged, as skrl's torch scheduler
    assert float(data["Learning / Value learning rate"][-1]) == pytest.approx(1e-3)
    assert agent._update_fn._cache_size() == 1
    assert agent._act_fn._cache_size() == 1


def test_checkpoint_modules_and_save_load_round_trip(tmp_path):
    set_seed(0)
    env = pendulum(2)
    first = make_trpo(rollouts=8, observation_space=env.observation_space, action_space=env.action_space)
    assert {"policy", "value", "value_optimizer"} <= set(first.checkpoint_modules)
    assert "policy_optimizer" not in first.checkpoint_modules and first.policy_optimizer is None
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 16}).train()
    path = str(tmp_path / "agent.pickle")
    first.save(path)
    second = make_trpo(rollouts=8, observation_space=env.observation_space, action_space=env.action_space)
    second.init(trainer_cfg={"timesteps": 1})
    second.load(path)
    for model in ("policy", "value"):
        for a, b in zip(
            jax.tree_util.tree_leaves(getattr(first, model).state_dict.params),
            jax.tree_util.tree_leaves(getattr(second, model).state_dict.params),
        ):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _short_run(seed):
    set_seed(seed)
    env = pendulum(2)
    env._env.reset(seed=seed)
    agent = make_trpo(rollouts=16, observation_space=env.observation_space, action_space=env.action_space)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 48}).train()
    return [float(v) for v in agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]]


def test_a_fixed_seed_reproduces_a_short_run():
    first, second = _short_run(3), _short_run(3)
    assert len(first) == 6 and first == second
    assert _short_run(4) != first


def test_a_non_gaussian_policy_is_rejected_with_the_fix():
    discrete = gymnasium.spaces.Discrete(3)
    with pytest.raises(ValueError, match="not a GaussianMixin model.*define the policy with GaussianMixin"):
        make_trpo(policy=LinearCategoricalPolicy(OBSERVATIONS, discrete), action_space=discrete)


def test_the_same_model_in_both_roles_is_rejected():
    policy = LinearPolicy()
    policy.init_state_dict("policy")
    with pytest.raises(ValueError, match="shared models are not supported"):
        TRPO(
            models={"policy": policy, "value": policy},
            memory=RandomMemory(memory_size=8, num_envs=2),
            cfg={"rollouts": 8, "experiment": NO_FILES},
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
        )


def test_a_memory_size_other_than_rollouts_is_rejected_at_construction():
    policy, value = LinearPolicy(), Value(OBSERVATIONS, ACTIONS)
    policy.init_state_dict("policy")
    value.init_state_dict("value")
    with pytest.raises(ValueError, match=r"memory holds 8 steps but cfg\['rollouts'\] is 16"):
        TRPO(
            models={"policy": policy, "value": value},
            memory=RandomMemory(memory_size=8, num_envs=2),
            cfg={"rollouts": 16, "experiment": NO_FILES},
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
        )


@pytest.mark.slow
def test_trpo_learns_pendulum():
    from examples import load_example

    make_agent = load_example("jax", "trpo_pendulum").make_agent
    set_seed(42)
    env = pendulum(4)
    env._env.reset(seed=42)
    trainer = SequentialTrainer(
        env=env, agents=make_agent(env, rollouts=256, experiment=NO_FILES), cfg={**QUIET, "timesteps": 5000}
    )
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=8)
    # untrained policies score about -1200 (-1000..-1600)
    assert np.mean(returns) >= -800, returns


def test_nan_rewards_stop_the_update_naming_them():
    env = pendulum(2)
    agent = make_trpo(
        rollouts=4,
        observation_space=env.observation_space,
        action_space=env.action_space,
        rewards_shaper=lambda rewards, timestep, timesteps: rewards * np.nan,
    )
    with pytest.raises(FloatingPointError, match="rollout's rewards contain NaN/inf"):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4}).train()


def test_a_value_step_that_overflows_is_named_and_nothing_is_committed():
    env = pendulum(2)
    agent = make_trpo(
        rollouts=4, observation_space=env.observation_space, action_space=env.action_space, value_learning_rate=1e30
    )
    policy_before = jax.tree_util.tree_leaves(agent.policy.state_dict.params)
    with pytest.raises(
        FloatingPointError,
        match=r"TRPO update .*the (value loss|parameters after the optimizer step) of mini-batch [01] \(epoch 0\)",
    ):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4}).train()
    for before, after in zip(policy_before, jax.tree_util.tree_leaves(agent.policy.state_dict.params)):
        np.testing.assert_array_equal(before, after)
