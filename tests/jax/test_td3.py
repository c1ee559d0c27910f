"""TD3 (JAX): the update against an independent NumPy TD3 (each critic with its own gradient), the policy delay, the
clipped smoothing noise, one compilation across updates, the shared exploration, save/load, determinism, bad input,
short runs and one learning check."""

import re

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import td3_reference as ref
from hypothesis import HealthCheck, given, settings
from strategies import scale_rewards, wrap_random_env
from td3_strategies import MEMORY_SIZE, TIMESTEPS, expected_critic_steps, td3_setups

from skrl_like.jax.agents.off_policy import exploration_act
from skrl_like.jax.agents.td3 import TD3, TD3_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, Model
from skrl_like.jax.resources.noises import GaussianNoise, Noise
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
ACTIONS = gymnasium.spaces.Box(ref.LOW, ref.HIGH, (1,), np.float32)
ROLES = ("policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")


class Policy(DeterministicMixin, Model):
    hidden = 0  # a class attribute: flax clones modules with their dataclass fields only

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self, clip_actions=False)

    @nn.compact
    def __call__(self, inputs, role):
        if self.hidden:
            hidden = nn.relu(nn.Dense(self.hidden)(inputs["states"]))
            return nn.tanh(nn.Dense(self.num_actions)(hidden)), {}
        return nn.Dense(self.num_actions)(inputs["states"]), {}


class Critic(DeterministicMixin, Model):
    hidden = 0  # a class attribute: flax clones modules with their dataclass fields only

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        x = jnp.concatenate([inputs["states"], inputs["taken_actions"]], -1)
        if self.hidden:
            return nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(x))), {}
        return nn.Dense(1)(x), {}


class MLPPolicy(Policy):
    hidden = 16


class MLPCritic(Critic):
    hidden = 16


class SmallMLPCritic(Critic):
    hidden = 8


class ConstantNoise(Noise):
    """Every sample is ``value`` (a smoothing noise whose clipping is visible)."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def sample(self, size):
        return np.full(tuple(size), self.value, np.float32)


class SequenceNoise(Noise):
    def __init__(self, values):
        super().__init__()
        self.values = list(values)

    def sample(self, size):
        return np.full(tuple(size), self.values.pop(0), np.float32)


def make_models(observation_space=OBSERVATIONS, action_space=ACTIONS, hidden=0, seed=0):
    policy, critic = (MLPPolicy, MLPCritic) if hidden else (Policy, Critic)
    models = {role: policy(observation_space, action_space) for role in ROLES[:2]}
    models.update({role: critic(observation_space, action_space) for role in ROLES[2:]})
    for index, (role, model) in enumerate(models.items()):
        # distinct initial weights for every model (the two critics above all)
        model.init_state_dict(role, key=jax.random.PRNGKey(seed * 10 + index))
    return models


def make_td3(models=None, memory=None, observation_space=OBSERVATIONS, action_space=ACTIONS, **cfg):
    cfg = {"experiment": NO_FILES, **cfg}
    agent = TD3(
        models=models or make_models(observation_space, action_space),
        memory=memory if memory is not None else RandomMemory(4, 1, replacement=False),
        observation_space=observation_space,
        action_space=action_space,
        cfg=cfg,
    )
    agent.init()
    return agent


def fill_with_the_reference_batch(agent):
    for row in range(4):
        agent.record_transition(
            ref.STATES[row : row + 1],
            ref.ACTIONS[row : row + 1],
            ref.REWARDS[row : row + 1],
            ref.NEXT_STATES[row : row + 1],
            ref.TERMINATED[row : row + 1],
            ref.TRUNCATED[row : row + 1],
            {},
            row,
            100,
        )


def linear_params(model, policy):
    dense = model.state_dict.params["params"]["Dense_0"]
    weight, bias = np.asarray(dense["kernel"], np.float64).T, np.asarray(dense["bias"], np.float64)
    return {"W": weight, "b": bias} if policy else {"w": weight, "c": bias}


def all_params(agent):
    return {role: linear_params(agent.models[role], role.endswith("policy")) for role in ROLES}


def flat(model):
    return np.concatenate([np.ravel(leaf) for leaf in jax.tree_util.tree_leaves(model.state_dict.params)])


def test_the_default_config_is_the_neutral_one_without_mixed_precision():
    assert "mixed_precision" not in TD3_DEFAULT_CONFIG
    assert list(TD3_DEFAULT_CONFIG)[:3] == ["gradient_steps", "batch_size", "discount_factor"]
    assert TD3_DEFAULT_CONFIG["policy_delay"] == 2 and TD3_DEFAULT_CONFIG["smooth_regularization_clip"] == 0.5
    assert TD3_DEFAULT_CONFIG["exploration"] == {
        "noise": None,
        "initial_scale": 1.0,
        "final_scale": 1e-3,
        "timesteps": None,
    }


def test_the_default_config_is_never_mutated():
    make_td3(
        batch_size=4,
        policy_delay=3,
        exploration={"noise": None, "initial_scale": 2.0, "final_scale": 0.0, "timesteps": 5},
    )
    assert TD3_DEFAULT_CONFIG["batch_size"] == 64 and TD3_DEFAULT_CONFIG["policy_delay"] == 2
    assert TD3_DEFAULT_CONFIG["exploration"]["initial_scale"] == 1.0


# -- the update -----------------------------------------------------------------------------------------------


def test_two_gradient_steps_match_an_independent_numpy_td3_each_critic_with_its_own_gradient():
    cfg = dict(
        gradient_steps=2,
        batch_size=4,
        policy_delay=2,
        discount_factor=0.9,
        polyak=0.25,
        actor_learning_rate=0.05,
        critic_learning_rate=0.02,
    )
    agent = make_td3(**cfg)
    before = all_params(agent)
    assert not np.allclose(before["critic_1"]["w"], before["critic_2"]["w"])  # else a shared gradient is invisible
    for role in ("policy", "critic_1", "critic_2"):  # the targets start as hard copies
        for name, value in before[role].items():
            np.testing.assert_array_equal(before[f"target_{role}"][name], value)
    fill_with_the_reference_batch(agent)
    agent._update(0, 100)

    expected, records = ref.td3_update(before, 2, 2, gamma=0.9, polyak=0.25, actor_lr=0.05, critic_lr=0.02)
    after = all_params(agent)
    for role in ROLES:
        for name in after[role]:
            np.testing.assert_allclose(after[role][name], expected[role][name], rtol=1e-5, atol=1e-6, err_msg=role)
    tracked = agent.tracking_data
    np.testing.assert_allclose([float(x) for x in tracked["Loss / Critic loss"]], [r[0] for r in records], rtol=1e-5)
    np.testing.assert_allclose([float(x) for x in tracked["Loss / Policy loss"]], [records[1][1]], rtol=1e-5)
    np.testing.assert_allclose(float(tracked["Target / Target (mean)"][0]), records[0][2].mean(), rtol=1e-5)
    assert records[1][0] < records[0][0]


def test_the_critic_loss_is_the_sum_not_the_mean_of_the_two_errors():
    agent = make_td3(batch_size=4, policy_delay=1, critic_learning_rate=0.0, actor_learning_rate=0.0)
    fill_with_the_reference_batch(agent)
    params = all_params(agent)
    agent._update(0, 100)
    _, records = ref.td3_update(params, 1, 1, 0.99, 0.005, 0.0, 0.0)
    mse_1 = np.mean((ref.critic(params["critic_1"], ref.STATES, ref.ACTIONS) - records[0][2]) ** 2)
    mse_2 = np.mean((ref.critic(params["critic_2"], ref.STATES, ref.ACTIONS) - records[0][2]) ** 2)
    assert float(agent.tracking_data["Loss / Critic loss"][0]) == pytest.approx(mse_1 + mse_2, rel=1e-5)
    assert abs(mse_1 - mse_2) > 1e-3


@pytest.mark.parametrize("policy_delay", [1, 3])
def test_the_policy_and_the_targets_move_only_every_policy_delay_critic_steps(policy_delay):
    agent = make_td3(batch_size=4, policy_delay=policy_delay, polyak=0.5)
    fill_with_the_reference_batch(agent)
    moved = []
    for timestep in range(6):
        before = {role: flat(agent.models[role]) for role in ROLES}
        agent._update(timestep, 100)
        moved.append({role: not np.array_equal(before[role], flat(agent.models[role])) for role in ROLES})
    delayed = [(step + 1) % policy_delay == 0 for step in range(6)]
    for step, roles in enumerate(moved):
        assert roles["critic_1"] and roles["critic_2"]
        for role in ("policy", "target_policy", "target_critic_1", "target_critic_2"):
            assert roles[role] == delayed[step], (step, role)
    assert len(agent.tracking_data["Loss / Policy loss"]) == sum(delayed)
    assert agent._update_fn._cache_size() == 1  # the delay is traced: one compilation


def test_the_policy_delay_counts_critic_steps_across_updates_in_one_compilation():
    agent = make_td3(batch_size=4, policy_delay=2, gradient_steps=3)
    fill_with_the_reference_batch(agent)
    agent._update(0, 100)  # critic steps 1, 2, 3: the policy steps after the 2nd
    agent._update(1, 100)  # critic steps 4, 5, 6: after the 4th and 6th
    assert len(agent.tracking_data["Loss / Policy loss"]) == 3
    assert agent._update_fn._cache_size() == 1


@pytest.mark.parametrize("value, clipped", [(5.0, 0.3), (-5.0, -0.3), (0.1, 0.1)])
def test_the_target_smoothing_noise_is_clipped(value, clipped):
    agent = make_td3(
        batch_size=4,
        smooth_regularization_noise=ConstantNoise(value),
        smooth_regularization_clip=0.3,
        actor_learning_rate=0.0,
        critic_learning_rate=0.0,
    )
    fill_with_the_reference_batch(agent)
    params = all_params(agent)
    agent._update(0, 100)
    next_actions = np.clip(ref.policy(params["target_policy"], ref.NEXT_STATES) + clipped, -1, 1)
    target_q = np.minimum(
        ref.critic(params["target_critic_1"], ref.NEXT_STATES, next_actions),
        ref.critic(params["target_critic_2"], ref.NEXT_STATES, next_actions),
    )
    targets = ref.REWARDS + 0.99 * (1 - ref.TERMINATED) * target_q  # the truncated row bootstraps
    assert float(agent.tracking_data["Target / Target (mean)"][0]) == pytest.approx(targets.mean(), rel=1e-5)
    assert float(agent.tracking_data["Target / Target (max)"][0]) == pytest.approx(targets.max(), rel=1e-5)


def test_act_and_update_compile_once_across_updates_with_a_schedule_and_noise():
    agent = make_td3(
        batch_size=4,
        gradient_steps=2,
        smooth_regularization_noise=GaussianNoise(0, 0.2),
        exploration={"noise": GaussianNoise(0, 0.1), "initial_scale": 1.0, "final_scale": 0.1, "timesteps": None},
        learning_rate_scheduler=lambda **kwargs: lambda timestep: 0.99,
    )
    fill_with_the_reference_batch(agent)
    for timestep in range(3):
        agent.act(ref.STATES, timestep, 10)
        agent._update(timestep, 10)
    assert agent._update_fn._cache_size() == 1
    assert agent._act_fn._cache_size() == 1
    # the multiplicative schedule stepped at every gradient step (skrl's JAX rule)
    assert float(agent._policy_learning_rate) == pytest.approx(1e-3 * 0.99**6, rel=1e-5)
    assert len(agent.tracking_data["Learning / Critic learning rate"]) == 6


# -- exploration (shared with DDPG) ---------------------------------------------------------------------------


def test_an_evaluating_agent_plays_the_policy_during_the_random_timesteps():
    agent = make_td3(batch_size=4, random_timesteps=100)
    agent.set_running_mode("eval")
    _, _, outputs = agent.act(ref.STATES, 0, 10)
    expected = ref.policy(linear_params(agent.policy, True), ref.STATES)
    np.testing.assert_allclose(np.asarray(outputs["mean_actions"]), expected, rtol=1e-5)


def test_exploration_act_scales_the_noise_linearly_clips_to_the_bounds_and_tracks_it():
    tracked = []
    exploration = {"noise": None, "initial_scale": 1.0, "final_scale": 0.2, "timesteps": 10}
    out = exploration_act(
        jnp.array([[0.5], [-0.5]]),
        SequenceNoise([1.0]),
        exploration,
        5,
        100,
        jnp.array([-1.0]),
        jnp.array([1.0]),
        lambda tag, value: tracked.append((tag, float(value))),
    )
    np.testing.assert_allclose(np.asarray(out), [[1.0], [0.1]], rtol=1e-6)
    assert tracked == [
        ("Exploration / Exploration noise (max)", pytest.approx(0.6)),
        ("Exploration / Exploration noise (min)", pytest.approx(0.6)),
        ("Exploration / Exploration noise (mean)", pytest.approx(0.6)),
    ]


def test_exploration_after_the_decay_adds_nothing_and_tracks_zeros_but_still_draws():
    tracked, noise = [], SequenceNoise([1.0, 2.0])
    exploration = {"noise": None, "initial_scale": 1.0, "final_scale": 0.2, "timesteps": None}
    actions = jnp.array([[0.5]])
    out = exploration_act(
        actions, noise, exploration, 11, 10, -jnp.ones(1), jnp.ones(1), lambda t, v: tracked.append(v)
    )
    assert out is actions and tracked == [0, 0, 0] and noise.values == [2.0]
    assert exploration["timesteps"] is None


def test_act_adds_the_exploration_noise_and_random_timesteps_act_randomly():
    noise = SequenceNoise([0.25] * 10)
    agent = make_td3(
        batch_size=4,
        random_timesteps=2,
        exploration={"noise": noise, "initial_scale": 1.0, "final_scale": 1.0, "timesteps": None},
    )
    actions, log_prob, _ = agent.act(ref.STATES, 0, 10)
    assert log_prob is None and np.shape(actions) == (4, 1) and len(noise.values) == 10
    actions, _, outputs = agent.act(ref.STATES, 2, 10)
    noiseless = ref.policy(linear_params(agent.policy, True), ref.STATES)
    np.testing.assert_allclose(np.asarray(actions), np.clip(noiseless + 0.25, -1, 1), rtol=1e-5)
    # a trainer's deterministic evaluation plays the actions without exploration noise
    np.testing.assert_allclose(np.asarray(outputs["mean_actions"]), noiseless, rtol=1e-5)


# -- runs, checkpoints, determinism -----------------------------------------------------------------------------


def pendulum(num_envs):
    if num_envs == 1:
        return wrap_env(gymnasium.make("Pendulum-v1"), verbose=False)
    return wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def short_run(num_envs=1, timesteps=60, seed=0, **cfg):
    set_seed(seed)
    env = pendulum(num_envs)
    models = make_models(env.observation_space, env.action_space, hidden=16, seed=seed)
    cfg = {
        "batch_size": 16,
        "learning_starts": 20,
        "random_timesteps": 10,
        "exploration": {"noise": GaussianNoise(0, 0.1), "initial_scale": 1.0, "final_scale": 0.1, "timesteps": None},
        "smooth_regularization_noise": GaussianNoise(0, 0.2),
        **cfg,
    }
    agent = make_td3(models, RandomMemory(200, env.num_envs), env.observation_space, env.action_space, **cfg)
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, **QUIET}).train()
    env.close()
    return agent


@pytest.mark.parametrize("num_envs", [1, 3])
def test_short_runs_on_single_and_vector_envs_update_from_learning_starts(num_envs):
    agent = short_run(num_envs, timesteps=60, gradient_steps=2)
    assert len(agent.tracking_data["Loss / Critic loss"]) == (60 - 20) * 2
    assert agent.memory.get_tensor_by_name("states").shape[1] == num_envs
    assert all(np.isfinite(float(x)) for x in agent.tracking_data["Loss / Critic loss"])


def test_a_short_run_under_the_jax_array_backend(monkeypatch):
    from skrl_like import config

    monkeypatch.setattr(config.jax, "backend", "jax")
    agent = short_run(num_envs=2, timesteps=30)
    assert len(agent.tracking_data["Loss / Critic loss"]) == 10
    actions, _, outputs = agent.act(jnp.zeros((2, 3)), 25, 30)
    assert isinstance(actions, jax.Array) and isinstance(outputs["mean_actions"], jax.Array)


def test_a_fixed_seed_reproduces_a_short_run():
    first, second = short_run(seed=3), short_run(seed=3)
    for role in ROLES:
        np.testing.assert_array_equal(flat(first.models[role]), flat(second.models[role]))
    assert [float(x) for x in first.tracking_data["Loss / Critic loss"]] == [
        float(x) for x in second.tracking_data["Loss / Critic loss"]
    ]


def test_save_and_load_round_trip_every_model_and_optimizer(tmp_path):
    agent = short_run()
    path = str(tmp_path / "td3.pickle")
    agent.save(path)
    saved = {role: flat(agent.models[role]) for role in ROLES}
    fresh = make_td3(
        make_models(agent.observation_space, agent.action_space, hidden=16, seed=9),
        RandomMemory(200, 1),
        agent.observation_space,
        agent.action_space,
        batch_size=16,
    )
    assert set(fresh.checkpoint_modules) == {*ROLES, "policy_optimizer", "critic_1_optimizer", "critic_2_optimizer"}
    fresh.load(path)
    for role in ROLES:
        np.testing.assert_array_equal(flat(fresh.models[role]), saved[role])
    for name in ("policy_optimizer", "critic_1_optimizer", "critic_2_optimizer"):
        for loaded, original in zip(
            jax.tree_util.tree_leaves(getattr(fresh, name).state), jax.tree_util.tree_leaves(getattr(agent, name).state)
        ):
            np.testing.assert_array_equal(np.asarray(loaded), np.asarray(original))


def test_an_evaluating_agent_neither_stores_nor_updates():
    agent = make_td3(batch_size=4)
    agent.set_running_mode("eval")
    fill_with_the_reference_batch(agent)
    assert len(agent.memory) == 0
    agent.post_interaction(0, 10)
    assert "Loss / Critic loss" not in agent.tracking_data


def test_td3_learns_a_one_step_continuous_bandit():
    # reward -(a - 0.5)^2, episodes of one step: the policy must learn a = 0.5 everywhere
    class Bandit(gymnasium.Env):
        observation_space = gymnasium.spaces.Box(-1, 1, (1,), np.float32)
        action_space = ACTIONS

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            return self.np_random.uniform(-1, 1, 1).astype(np.float32), {}

        def step(self, action):
            reward = -float((np.asarray(action).item() - 0.5) ** 2)
            return self.np_random.uniform(-1, 1, 1).astype(np.float32), reward, True, False, {}

    set_seed(0)
    env = wrap_env(Bandit(), verbose=False)
    models = make_models(env.observation_space, env.action_space, hidden=16)
    agent = make_td3(
        models,
        RandomMemory(1000, 1),
        env.observation_space,
        env.action_space,
        batch_size=32,
        learning_starts=100,
        random_timesteps=100,
        actor_learning_rate=2e-2,
        critic_learning_rate=2e-2,
        polyak=0.05,
        exploration={"noise": GaussianNoise(0, 0.2), "initial_scale": 1.0, "final_scale": 0.1, "timesteps": None},
        smooth_regularization_noise=GaussianNoise(0, 0.1),
    )
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 800, **QUIET}).train()
    actions = np.asarray(agent.policy.act({"states": jnp.linspace(-1, 1, 11)[:, None]}, role="policy")[0])
    assert np.all(np.abs(actions - 0.5) < 0.2), actions.ravel()  # untrained: about 0.5 off


# -- bad input ------------------------------------------------------------------------------------------------


def test_a_discrete_action_space_is_rejected_with_the_alternative():
    with pytest.raises(ValueError, match=re.escape("TD3 needs continuous (Box) actions; for Discrete actions use DQN")):
        TD3(make_models(), RandomMemory(4, 1), OBSERVATIONS, gymnasium.spaces.Discrete(3), cfg={"experiment": NO_FILES})


def test_a_missing_role_is_named():
    models = make_models()
    del models["target_critic_2"]
    with pytest.raises(ValueError, match=r"TD3 needs a model for role\(s\) \['target_critic_2'\]"):
        make_td3(models)


def test_identical_critics_are_warned_about(caplog):
    models = make_models()
    for role in ("critic_1", "critic_2"):
        models[role].init_state_dict(role, key=jax.random.PRNGKey(3))  # one key for both: the same parameters
    with caplog.at_level("WARNING"):
        make_td3(models, batch_size=4)
    assert "TD3: 'critic_1' and 'critic_2' start with identical parameters" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        make_td3(make_models(), batch_size=4)
    assert "identical parameters" not in caplog.text


def test_a_model_without_parameters_is_named_with_the_fix():
    models = make_models()
    models["critic_2"] = Critic()
    with pytest.raises(ValueError, match=re.escape("call critic_2.init_state_dict('critic_2')")):
        make_td3(models, batch_size=4)


def test_a_target_of_another_architecture_is_rejected():
    models = make_models()
    models["target_critic_1"] = SmallMLPCritic()
    models["target_critic_1"].init_state_dict("target_critic_1")
    with pytest.raises(ValueError, match="'target_critic_1' model .* does not have the parameters of 'critic_1'"):
        make_td3(models, batch_size=4)


def test_a_batch_larger_than_the_memory_is_rejected():
    with pytest.raises(ValueError, match=re.escape("cfg['batch_size'] = 64 is larger than the memory's 4 rows")):
        make_td3()


def test_nan_rewards_are_named_and_nothing_is_committed():
    agent = make_td3(batch_size=4, policy_delay=1)
    fill_with_the_reference_batch(agent)
    rewards = agent.memory.get_tensor_by_name("rewards")
    rewards[2] = np.nan
    before = {role: flat(agent.models[role]) for role in ROLES}
    with pytest.raises(
        FloatingPointError, match="the sampled rewards of gradient step 0 contain NaN/inf .*environment"
    ):
        agent._update(0, 10)
    for role in ROLES:
        np.testing.assert_array_equal(flat(agent.models[role]), before[role])


# -- properties over drawn envs and configs -------------------------------------------------------------------


class ClippedActor(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self, clip_actions=True)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions)(nn.tanh(nn.Dense(8)(inputs["states"]))), {}


class SmallCritic(Critic):
    hidden = 8


@settings(derandomize=True, max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=td3_setups())
def test_drawn_td3_agents_train_with_the_documented_cadence(setup):
    set_seed(setup.env.seed)
    env = wrap_random_env(setup.env, "jax")
    try:
        cfg = {
            **setup.cfg,
            "exploration": {
                **setup.cfg["exploration"],
                "noise": None if setup.exploration_std is None else GaussianNoise(0, setup.exploration_std),
            },
            "smooth_regularization_noise": None
            if setup.smoothing_std is None
            else GaussianNoise(0, setup.smoothing_std),
            "rewards_shaper": scale_rewards if setup.shaped else None,
        }
        if setup.preprocessor:
            cfg.update(
                state_preprocessor=RunningStandardScaler, state_preprocessor_kwargs={"size": env.observation_space}
            )
        models = {role: ClippedActor(env.observation_space, env.action_space) for role in ROLES[:2]}
        models.update({role: SmallCritic(env.observation_space, env.action_space) for role in ROLES[2:]})
        for index, (role, model) in enumerate(models.items()):
            model.init_state_dict(role, key=jax.random.PRNGKey(index))
        agent = make_td3(
            models, RandomMemory(MEMORY_SIZE, env.num_envs), env.observation_space, env.action_space, **cfg
        )
        online = {role: flat(models[role]) for role in ("policy", "critic_1", "critic_2")}
        SequentialTrainer(env=env, agents=agent, cfg={"timesteps": TIMESTEPS, **QUIET}).train()
    finally:
        env.close()

    critic_steps = expected_critic_steps(setup)
    assert len(agent.tracking_data["Loss / Critic loss"]) == critic_steps
    assert len(agent.tracking_data["Loss / Policy loss"]) == critic_steps // cfg["policy_delay"]
    assert all(np.isfinite(float(x)) for x in agent.tracking_data["Loss / Critic loss"])
    actions = np.asarray(agent.memory.get_tensor_by_name("actions"))
    assert actions.shape == (MEMORY_SIZE, env.num_envs, int(np.prod(env.action_space.shape)))
    stored = actions[: min(TIMESTEPS, MEMORY_SIZE)].reshape(-1, actions.shape[-1])
    assert np.all(stored >= np.asarray(agent.clip_actions_min) - 1e-6)
    assert np.all(stored <= np.asarray(agent.clip_actions_max) + 1e-6)
    if cfg["actor_learning_rate"] == 0:
        np.testing.assert_array_equal(flat(models["policy"]), online["policy"])
    if cfg["critic_learning_rate"] == 0:
        np.testing.assert_array_equal(flat(models["critic_1"]), online["critic_1"])
    if critic_steps:
        assert agent._update_fn._cache_size() == 1


def test_the_pendulum_example_trains_and_evaluates_without_noise():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "jax" / "td3_pendulum.py"
    spec = importlib.util.spec_from_file_location("td3_pendulum_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    set_seed(0)
    env = pendulum(1)
    agent = example.make_agent(
        env, experiment=NO_FILES, hidden=(8,), memory_size=64, batch_size=8, random_timesteps=5, learning_starts=5
    )
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 20, **QUIET})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=1)
    env.close()
    assert len(agent.tracking_data["Loss / Critic loss"]) == 15 and len(returns) == 1 and np.isfinite(returns[0])
