"""SAC (JAX): one update against a NumPy reference (each critic stepped with its own gradient), the entropy
coefficient's direction, one compilation across updates, fresh policy noise at every gradient step, save/load,
determinism, single and vector envs, bad input, drawn configs."""

import tempfile

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sac_reference import ACTIONS, BATCH_SIZE, OBSERVATIONS, batch, initial_weights, noise_pattern, reference_update

from skrl_like.jax.agents import base as jax_agent_base
from skrl_like.jax.agents.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.jax.agents.sac import sac as sac_module
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.jax.models import LinearDeterministicPolicy

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
ROLES = ("policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")


def tracking():
    """An experiment that keeps every tracked value of a short run (written only after 10k steps, in a temp dir)."""
    return {"write_interval": 10_000, "checkpoint_interval": 0, "directory": tempfile.mkdtemp()}


class LinearPolicy(GaussianMixin, Model):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)

    @nn.compact
    def __call__(self, inputs, role):
        log_std = self.param("log_std", lambda _: jnp.zeros(self.num_actions))
        return nn.Dense(self.num_actions, name="mean")(inputs["states"]), log_std, {}


class LinearCritic(DeterministicMixin, Model):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(1, name="q")(jnp.concatenate([inputs["states"], inputs["taken_actions"]], -1)), {}


class MlpPolicy(LinearPolicy):
    @nn.compact
    def __call__(self, inputs, role):
        log_std = self.param("log_std", lambda _: jnp.zeros(self.num_actions))
        return nn.Dense(self.num_actions)(nn.relu(nn.Dense(16)(inputs["states"]))), log_std, {}


class MlpCritic(LinearCritic):
    @nn.compact
    def __call__(self, inputs, role):
        x = jnp.concatenate([inputs["states"], inputs["taken_actions"]], -1)
        return nn.Dense(1)(nn.relu(nn.Dense(16)(x))), {}


def linear_params(weights):
    params = {
        "policy": {"params": {"mean": {"kernel": weights["W"], "bias": weights["b"]}, "log_std": weights["log_std"]}}
    }
    for index in ("1", "2"):
        critic = {"params": {"q": {"kernel": weights["w" + index][:, None], "bias": weights["c" + index]}}}
        params["critic_" + index] = params["target_critic_" + index] = critic
    return jax.tree_util.tree_map(jnp.asarray, params)


def build_models(observation_space, action_space, policy=MlpPolicy, critic=MlpCritic, params=None):
    models = {role: (policy if role == "policy" else critic)(observation_space, action_space) for role in ROLES}
    for role, model in models.items():
        model.init_state_dict(role)
        if params is not None:
            model.state_dict = model.state_dict.replace(params=params[role])
    return models


def make_sac(observation_space, action_space, memory_size=64, num_envs=1, models=None, **cfg):
    cfg = {"batch_size": 8, "experiment": NO_FILES, **cfg}
    return SAC(
        models=models or build_models(observation_space, action_space),
        memory=RandomMemory(memory_size=memory_size, num_envs=num_envs),
        cfg=cfg,
        observation_space=observation_space,
        action_space=action_space,
    )


def pendulum(num_envs=None, max_episode_steps=None):
    if num_envs is None:
        return wrap_env(gymnasium.make("Pendulum-v1", max_episode_steps=max_episode_steps), verbose=False)
    env = gymnasium.make_vec(
        "Pendulum-v1", num_envs=num_envs, vectorization_mode="sync", max_episode_steps=max_episode_steps
    )
    return wrap_env(env, verbose=False)


@pytest.fixture
def fixed_batch_and_noise(monkeypatch):
    """Every gradient step samples the hand-made batch, and the policy's normal draws are ``noise_pattern``.

    The compiled functions traced with the patched draw are dropped afterwards, so no other test reuses them."""
    data = batch()

    def sample_batches(memory, names, batch_size, gradient_steps):
        return tuple(jnp.stack([jnp.asarray(data[name])] * gradient_steps) for name in names)

    monkeypatch.setattr(jax_agent_base, "sample_batches", sample_batches)
    monkeypatch.setattr(
        jax.random, "normal", lambda key, shape=(), dtype=jnp.float32: jnp.asarray(noise_pattern(shape), dtype)
    )
    jax.clear_caches()
    yield
    jax.clear_caches()


def test_the_default_config_is_the_neutral_one_with_the_spec_keys():
    assert set(SAC_DEFAULT_CONFIG) == {
        "gradient_steps", "batch_size", "discount_factor", "polyak", "actor_learning_rate", "critic_learning_rate",
        "learning_rate_scheduler", "learning_rate_scheduler_kwargs", "state_preprocessor",
        "state_preprocessor_kwargs", "privileged_state_preprocessor", "privileged_state_preprocessor_kwargs",
        "random_timesteps", "learning_starts", "grad_norm_clip", "learn_entropy",
        "entropy_learning_rate", "initial_entropy_value", "target_entropy", "rewards_shaper", "experiment",
    }  # fmt: skip
    assert (SAC_DEFAULT_CONFIG["batch_size"], SAC_DEFAULT_CONFIG["initial_entropy_value"]) == (64, 0.2)
    assert SAC_DEFAULT_CONFIG["target_entropy"] is None and SAC_DEFAULT_CONFIG["grad_norm_clip"] == 0


CFG = {
    "discount_factor": 0.9,
    "polyak": 0.1,
    "actor_learning_rate": 0.01,
    "critic_learning_rate": 0.02,
    "entropy_learning_rate": 0.05,
    "initial_entropy_value": 0.3,
}


def test_one_update_matches_the_numpy_reference(fixed_batch_and_noise):
    # critic 1 gets its own gradient: with skrl 1.4.3's critic-2 gradient applied to both, w1 and c1 would differ
    weights = initial_weights()
    models = build_models(OBSERVATIONS, ACTIONS, LinearPolicy, LinearCritic, linear_params(weights))
    agent = make_sac(OBSERVATIONS, ACTIONS, 16, models=models, batch_size=BATCH_SIZE, experiment=tracking(), **CFG)
    agent.init()
    agent._update(0, 1)
    expected = reference_update(weights, batch(), CFG)

    tracked = {tag: float(values[0]) for tag, values in agent.tracking_data.items()}
    assert tracked["Loss / Critic loss"] == pytest.approx(expected["losses"]["critic"], rel=1e-5)
    assert tracked["Loss / Policy loss"] == pytest.approx(expected["losses"]["policy"], rel=1e-5)
    assert tracked["Loss / Entropy loss"] == pytest.approx(expected["losses"]["entropy"], rel=1e-5)
    assert tracked["Target / Target (mean)"] == pytest.approx(expected["targets"].mean(), rel=1e-5)
    assert tracked["Q-network / Q1 (max)"] == pytest.approx(expected["q1"].max(), rel=1e-5)
    assert tracked["Q-network / Q2 (min)"] == pytest.approx(expected["q2"].min(), rel=1e-5)
    new = expected["params"]
    policy = agent.policy.state_dict.params["params"]
    np.testing.assert_allclose(policy["mean"]["kernel"], new["W"], atol=1e-6)
    np.testing.assert_allclose(policy["mean"]["bias"], new["b"], atol=1e-6)
    np.testing.assert_allclose(policy["log_std"], new["log_std"], atol=1e-6)
    for index in ("1", "2"):
        critic = agent.models["critic_" + index].state_dict.params["params"]["q"]
        target = agent.models["target_critic_" + index].state_dict.params["params"]["q"]
        np.testing.assert_allclose(critic["kernel"][:, 0], new["w" + index], atol=1e-6)
        np.testing.assert_allclose(critic["bias"], new["c" + index], atol=1e-6)
        np.testing.assert_allclose(target["kernel"][:, 0], new["target_w" + index], atol=1e-6)
        np.testing.assert_allclose(target["bias"], new["target_c" + index], atol=1e-6)
    np.testing.assert_allclose(agent.log_entropy_coefficient.value, new["log_alpha"], atol=1e-6)


@pytest.mark.parametrize("log_std, rises", [(-3.0, True), (0.0, False)])
def test_the_entropy_coefficient_moves_toward_the_target_entropy(fixed_batch_and_noise, log_std, rises):
    # a 1-D Normal's entropy is 1.42 + log_std: -1.58 is below the target -1 (alpha must rise), 1.42 above it
    models = build_models(OBSERVATIONS, ACTIONS, LinearPolicy, LinearCritic, linear_params(initial_weights(log_std)))
    agent = make_sac(OBSERVATIONS, ACTIONS, 16, models=models, batch_size=BATCH_SIZE)
    agent.init()
    before = float(agent.log_entropy_coefficient.value[0])
    agent._update(0, 1)
    assert (float(agent.log_entropy_coefficient.value[0]) > before) == rises


def test_the_update_and_act_compile_once_across_updates():
    env = pendulum()
    agent = make_sac(env.observation_space, env.action_space, gradient_steps=3, learning_starts=4)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 7}).train()
    assert agent._update_fn._cache_size() == 1
    assert agent._act_fn._cache_size() == 1


def test_every_gradient_step_draws_fresh_policy_noise(monkeypatch):
    # skrl 1.4.3's jitted actor loss reuses one trace-time key: the same noise at every step
    keys = []
    original = sac_module.SAC._policy_loss

    def spy(self, *arguments):  # the key is the last argument
        jax.debug.callback(lambda k: keys.append(np.asarray(k)), arguments[-1])
        return original(self, *arguments)

    monkeypatch.setattr(sac_module.SAC, "_policy_loss", spy)
    env = pendulum()
    agent = make_sac(env.observation_space, env.action_space, gradient_steps=2, learning_starts=4)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 6}).train()
    assert len(keys) == 4
    assert len({key.tobytes() for key in keys}) == 4


def test_twin_critics_initialised_alike_are_warned_about_and_kept(caplog):
    # default keys differ per model (config.jax.model_key); an explicit shared key makes the twins one Q-function
    env = pendulum()
    models = build_models(env.observation_space, env.action_space)
    for role in ("critic_1", "critic_2"):
        models[role].init_state_dict(role, key=jax.random.PRNGKey(7))
    given = jax.tree_util.tree_leaves(models["critic_2"].state_dict.params)
    with caplog.at_level("WARNING"):
        agent = make_sac(env.observation_space, env.action_space, models=models)
    assert "SAC: 'critic_1' and 'critic_2' start with identical parameters" in caplog.text
    for a, b in zip(given, jax.tree_util.tree_leaves(agent.critic_2.state_dict.params)):
        np.testing.assert_array_equal(a, b)  # the user's weights are not replaced


def test_distinct_twin_critics_are_kept_as_given(caplog):
    env = pendulum()
    models = build_models(env.observation_space, env.action_space)
    models["critic_2"].init_state_dict("critic_2", key=jax.random.PRNGKey(123))
    given_params = models["critic_2"].state_dict.params
    with caplog.at_level("WARNING"):
        agent = make_sac(env.observation_space, env.action_space, models=models)
    assert agent.critic_2.state_dict.params is given_params
    assert "identical parameters" not in caplog.text


def test_save_load_round_trip(tmp_path):
    env = pendulum()
    agent = make_sac(env.observation_space, env.action_space)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 20}).train()
    path = str(tmp_path / "agent.pickle")
    agent.save(path)
    other = make_sac(env.observation_space, env.action_space)
    assert set(other.checkpoint_modules) == {
        *ROLES, "policy_optimizer", "critic_1_optimizer", "critic_2_optimizer", "entropy_optimizer",
    }  # fmt: skip
    other.load(path)
    for role in ROLES:
        for saved, loaded in zip(
            jax.tree_util.tree_leaves(agent.models[role].state_dict.params),
            jax.tree_util.tree_leaves(other.models[role].state_dict.params),
        ):
            np.testing.assert_array_equal(saved, loaded)
    for name in ("policy_optimizer", "critic_1_optimizer", "entropy_optimizer"):
        for saved, loaded in zip(
            jax.tree_util.tree_leaves(getattr(agent, name).state), jax.tree_util.tree_leaves(getattr(other, name).state)
        ):
            np.testing.assert_array_equal(saved, loaded)


def run_short(seed, num_envs=None):
    set_seed(seed)
    env = pendulum(num_envs)
    agent = make_sac(
        env.observation_space, env.action_space, num_envs=env.num_envs, learning_starts=8, experiment=tracking()
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 16}).train()
    return [float(v) for v in agent.tracking_data["Loss / Critic loss"]], agent


def test_short_runs_update_every_step_after_learning_starts_and_a_fixed_seed_reproduces_them():
    losses, agent = run_short(3)
    assert len(losses) == 16 - 8 and all(np.isfinite(losses))
    assert losses == run_short(3)[0]
    assert losses != run_short(4)[0]
    losses, agent = run_short(0, num_envs=3)
    assert len(losses) == 16 - 8 and all(np.isfinite(losses))
    assert agent.memory.get_tensor_by_name("states").shape[1] == 3


def test_a_truncated_sub_env_stores_its_terminal_observation():
    # Pendulum's dynamics tie consecutive observations: angle(s') = angle(s) + dt * thetadot(s')
    set_seed(1)
    env = pendulum(num_envs=2, max_episode_steps=5)
    agent = make_sac(env.observation_space, env.action_space, num_envs=2, learning_starts=100)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 5}).train()
    states = np.asarray(agent.memory.get_tensor_by_name("states"))[:5]
    next_states = np.asarray(agent.memory.get_tensor_by_name("next_states"))[:5]
    assert np.asarray(agent.memory.get_tensor_by_name("truncated"))[4].all()
    angle = np.arctan2(states[..., 1], states[..., 0])
    next_angle = np.arctan2(next_states[..., 1], next_states[..., 0])
    drift = np.angle(np.exp(1j * (next_angle - angle - 0.05 * next_states[..., 2])))
    np.testing.assert_allclose(drift, 0, atol=1e-4)


def test_an_agent_in_eval_mode_stores_nothing_and_never_updates():
    env = pendulum()
    agent = make_sac(env.observation_space, env.action_space)
    before = agent.policy.state_dict.params
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 12}).eval()
    assert len(agent.memory) == 0
    assert agent.policy.state_dict.params is before


# -- bad input ----------------------------------------------------------------------------------------------------


def test_a_deterministic_policy_is_rejected_with_the_fix():
    env = pendulum()
    models = build_models(env.observation_space, env.action_space)
    models["policy"] = LinearDeterministicPolicy(env.observation_space, env.action_space)
    models["policy"].init_state_dict("policy")
    with pytest.raises(ValueError, match=r"stochastic Gaussian policy.*DeterministicPolicy.*TD3/DDPG"):
        make_sac(env.observation_space, env.action_space, models=models)


def test_a_discrete_action_space_is_rejected():
    with pytest.raises(ValueError, match=r"SAC needs continuous \(Box\) actions.*DQN"):
        make_sac(OBSERVATIONS, gymnasium.spaces.Discrete(3), models={})


def test_a_missing_role_and_a_target_of_another_architecture_are_named():
    env = pendulum()
    models = build_models(env.observation_space, env.action_space)
    del models["critic_2"]
    with pytest.raises(ValueError, match=r"\['critic_2'\]"):
        make_sac(env.observation_space, env.action_space, models=models)
    models = build_models(env.observation_space, env.action_space)
    models["target_critic_2"] = LinearCritic(env.observation_space, env.action_space)
    models["target_critic_2"].init_state_dict("target_critic_2")
    with pytest.raises(ValueError, match=r"'target_critic_2' model .* parameters of 'critic_2'"):
        make_sac(env.observation_space, env.action_space, models=models)


def test_a_batch_larger_than_the_memory_is_rejected():
    env = pendulum()
    with pytest.raises(ValueError, match=r"batch_size'\] = 100 is larger than the memory's 64 rows"):
        make_sac(env.observation_space, env.action_space, batch_size=100)


def test_nan_rewards_stop_the_update_naming_them_before_anything_changes():
    env = pendulum()
    agent = make_sac(env.observation_space, env.action_space, rewards_shaper=lambda r, t, ts: r * float("nan"))
    before = agent.critic_1.state_dict.params
    with pytest.raises(FloatingPointError, match=r"SAC update at timestep 0: the sampled rewards of gradient step 0"):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4}).train()
    assert agent.critic_1.state_dict.params is before


# -- properties ---------------------------------------------------------------------------------------------------


@settings(derandomize=True, max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cfg=st.fixed_dictionaries(
        {
            "gradient_steps": st.integers(1, 3),
            "batch_size": st.integers(1, 16),
            "discount_factor": st.floats(0, 1),
            "polyak": st.floats(0, 1),
            "grad_norm_clip": st.sampled_from([0, 0.5]),
            "learn_entropy": st.booleans(),
            "initial_entropy_value": st.floats(0.01, 2),
            "target_entropy": st.one_of(st.none(), st.floats(-3, 1)),
            "learning_starts": st.integers(0, 6),
            "random_timesteps": st.integers(0, 6),
        }
    ),
    num_envs=st.sampled_from([None, 2]),
)
def test_drawn_configs_train_with_finite_losses_and_frozen_weights_at_lr_zero(cfg, num_envs):
    env = pendulum(num_envs)
    zero = {"actor_learning_rate": 0.0, "critic_learning_rate": 0.0, "entropy_learning_rate": 0.0}
    agent = make_sac(
        env.observation_space, env.action_space, num_envs=env.num_envs, experiment=tracking(), **cfg, **zero
    )
    before = {role: agent.models[role].state_dict.params for role in ROLES}
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 8}).train()
    losses = agent.tracking_data["Loss / Critic loss"]
    assert len(losses) == (8 - cfg["learning_starts"]) * cfg["gradient_steps"]
    assert all(np.isfinite(float(loss)) for loss in losses)
    for role in ROLES:  # lr 0: no model moves, and the targets blend a critic with its own copy
        for old, new in zip(
            jax.tree_util.tree_leaves(before[role]), jax.tree_util.tree_leaves(agent.models[role].state_dict.params)
        ):
            np.testing.assert_allclose(old, new, rtol=1e-6, atol=1e-7)
