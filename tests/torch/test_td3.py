"""TD3 (torch): the update against an independent NumPy TD3, the policy delay, the clipped smoothing noise, the shared
exploration, save/load, determinism, bad input, short runs and one learning check."""

import re

import gymnasium
import numpy as np
import pytest
import td3_reference as ref
import torch
import torch.nn as nn
from hypothesis import HealthCheck, given, settings
from strategies import scale_rewards, wrap_random_env
from td3_strategies import MEMORY_SIZE, TIMESTEPS, expected_critic_steps, td3_setups

from skrl_like.torch.agents.off_policy import exploration_act
from skrl_like.torch.agents.td3 import TD3, TD3_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, Model
from skrl_like.torch.resources.noises import GaussianNoise, Noise
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.torch.models import StateActionCritic

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
ACTIONS = gymnasium.spaces.Box(ref.LOW, ref.HIGH, (1,), np.float32)
ROLES = ("policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")


class LinearPolicy(DeterministicMixin, Model):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, hidden=0):
        Model.__init__(self, observation_space, action_space, "cpu")
        DeterministicMixin.__init__(self, clip_actions=False)
        if hidden:
            self.net = nn.Sequential(
                nn.Linear(self.num_observations, hidden), nn.ReLU(), nn.Linear(hidden, self.num_actions), nn.Tanh()
            )
        else:
            self.net = nn.Linear(self.num_observations, self.num_actions)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class ConstantNoise(Noise):
    """Every sample is ``value`` (a smoothing noise whose clipping is visible)."""

    def __init__(self, value):
        super().__init__("cpu")
        self.value = value

    def sample(self, size):
        return torch.full(tuple(size), self.value)


def make_models(observation_space=OBSERVATIONS, action_space=ACTIONS, hidden=0, seed=None):
    if seed is not None:
        torch.manual_seed(seed)
    models = {role: LinearPolicy(observation_space, action_space, hidden) for role in ROLES[:2]}
    models.update({role: StateActionCritic(observation_space, action_space, hidden) for role in ROLES[2:]})
    return models


def make_td3(models=None, memory=None, observation_space=OBSERVATIONS, action_space=ACTIONS, **cfg):
    cfg = {"experiment": NO_FILES, **cfg}
    agent = TD3(
        models=models or make_models(observation_space, action_space),
        memory=memory if memory is not None else RandomMemory(4, 1, "cpu", replacement=False),
        observation_space=observation_space,
        action_space=action_space,
        device="cpu",
        cfg=cfg,
    )
    agent.init()
    return agent


def fill_with_the_reference_batch(agent):
    for row in range(4):
        agent.record_transition(
            torch.tensor(ref.STATES[row : row + 1]),
            torch.tensor(ref.ACTIONS[row : row + 1]),
            torch.tensor(ref.REWARDS[row : row + 1]),
            torch.tensor(ref.NEXT_STATES[row : row + 1]),
            torch.tensor(ref.TERMINATED[row : row + 1]),
            torch.tensor(ref.TRUNCATED[row : row + 1]),
            {},
            row,
            100,
        )


def linear_params(model, policy):
    weight, bias = model.net.weight.detach().double().numpy(), model.net.bias.detach().double().numpy()
    return {"W": weight, "b": bias} if policy else {"w": weight, "c": bias}


def all_params(agent):
    return {role: linear_params(agent.models[role], role.endswith("policy")) for role in ROLES}


def flat(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).clone()


# -- config ---------------------------------------------------------------------------------------------------


def test_the_default_config_has_the_keys_and_defaults_of_the_spec():
    expected = {
        "gradient_steps": 1,
        "batch_size": 64,
        "discount_factor": 0.99,
        "polyak": 0.005,
        "actor_learning_rate": 1e-3,
        "critic_learning_rate": 1e-3,
        "learning_rate_scheduler": None,
        "learning_rate_scheduler_kwargs": {},
        "state_preprocessor": None,
        "state_preprocessor_kwargs": {},
        "privileged_state_preprocessor": None,  # not in skrl 1.4: the privileged states' own (skrl 2.x's)
        "privileged_state_preprocessor_kwargs": {},
        "random_timesteps": 0,
        "learning_starts": 0,
        "grad_norm_clip": 0,
        "exploration": {"noise": None, "initial_scale": 1.0, "final_scale": 1e-3, "timesteps": None},
        "policy_delay": 2,
        "smooth_regularization_noise": None,
        "smooth_regularization_clip": 0.5,
        "rewards_shaper": None,
        "mixed_precision": False,
    }
    config = dict(TD3_DEFAULT_CONFIG)
    assert set(config.pop("experiment")) == {
        "directory",
        "experiment_name",
        "write_interval",
        "checkpoint_interval",
        "store_separately",
        "checkpoint_memory",
        "wandb",
        "wandb_kwargs",
    }
    assert config == expected
    assert list(config) == list(expected)  # skrl's order


# -- the update -----------------------------------------------------------------------------------------------


def test_two_gradient_steps_match_an_independent_numpy_td3():
    # policy_delay 2: step 1 moves the critics only, step 2 the critics, the policy and the three targets
    torch.manual_seed(1)
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
    for role in ("policy", "critic_1", "critic_2"):  # the targets start as hard copies
        for name, value in before[role].items():
            np.testing.assert_array_equal(before[f"target_{role}"][name], value)
    fill_with_the_reference_batch(agent)
    agent._update(0, 100)

    expected, records = ref.td3_update(
        before, 2, 2, gamma=0.9, polyak=0.25, actor_lr=0.05, critic_lr=0.02, smoothing=None
    )
    after = all_params(agent)
    for role in ROLES:
        for name in after[role]:
            np.testing.assert_allclose(after[role][name], expected[role][name], rtol=1e-5, atol=1e-6, err_msg=role)
    # the critic loss is the SUM of both critics' mean squared errors [compat]; the policy loss only on step 2
    tracked = agent.tracking_data
    np.testing.assert_allclose([float(x) for x in tracked["Loss / Critic loss"]], [r[0] for r in records], rtol=1e-5)
    np.testing.assert_allclose([float(x) for x in tracked["Loss / Policy loss"]], [records[1][1]], rtol=1e-5)
    np.testing.assert_allclose(float(tracked["Target / Target (mean)"][0]), records[0][2].mean(), rtol=1e-5)
    # truncation ends the bootstrap as termination does [compat]: rows 1 and 2 are their rewards
    np.testing.assert_allclose([float(tracked["Target / Target (min)"][0])], [records[0][2].min()], rtol=1e-5)
    # direction: the critics' errors shrink on the same batch
    assert records[1][0] < records[0][0]


def test_the_critic_loss_is_the_sum_not_the_mean_of_the_two_errors():
    torch.manual_seed(2)
    agent = make_td3(batch_size=4, policy_delay=1, critic_learning_rate=0.0, actor_learning_rate=0.0)
    fill_with_the_reference_batch(agent)
    params = all_params(agent)
    agent._update(0, 100)
    _, records = ref.td3_update(params, 1, 1, 0.99, 0.005, 0.0, 0.0)
    mse_1 = np.mean((ref.critic(params["critic_1"], ref.STATES, ref.ACTIONS) - records[0][2]) ** 2)
    mse_2 = np.mean((ref.critic(params["critic_2"], ref.STATES, ref.ACTIONS) - records[0][2]) ** 2)
    assert float(agent.tracking_data["Loss / Critic loss"][0]) == pytest.approx(mse_1 + mse_2, rel=1e-5)
    assert abs(mse_1 - mse_2) > 1e-3  # the mean would differ from the sum


@pytest.mark.parametrize("policy_delay", [1, 3])
def test_the_policy_and_the_targets_move_only_every_policy_delay_critic_steps(policy_delay):
    torch.manual_seed(3)
    agent = make_td3(batch_size=4, policy_delay=policy_delay, polyak=0.5)
    fill_with_the_reference_batch(agent)
    moved = []
    for timestep in range(6):
        before = {role: flat(agent.models[role]) for role in ROLES}
        agent._update(timestep, 100)
        moved.append({role: not torch.equal(before[role], flat(agent.models[role])) for role in ROLES})
    delayed = [(step + 1) % policy_delay == 0 for step in range(6)]
    for step, roles in enumerate(moved):
        assert roles["critic_1"] and roles["critic_2"]  # every step
        for role in ("policy", "target_policy", "target_critic_1", "target_critic_2"):
            assert roles[role] == delayed[step], (step, role)
    assert len(agent.tracking_data["Loss / Policy loss"]) == sum(delayed)
    assert len(agent.tracking_data["Loss / Critic loss"]) == 6


def test_the_policy_delay_counts_critic_steps_across_updates_and_gradient_steps():
    torch.manual_seed(4)
    agent = make_td3(batch_size=4, policy_delay=2, gradient_steps=3)
    fill_with_the_reference_batch(agent)
    agent._update(0, 100)  # critic steps 1, 2, 3: the policy steps after the 2nd
    agent._update(1, 100)  # critic steps 4, 5, 6: after the 4th and 6th
    assert len(agent.tracking_data["Loss / Policy loss"]) == 3


@pytest.mark.parametrize("value, clipped", [(5.0, 0.3), (-5.0, -0.3), (0.1, 0.1)])
def test_the_target_smoothing_noise_is_clipped(value, clipped):
    torch.manual_seed(5)
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
    # the reference clips with the configured clip; the expected targets use noise `clipped` directly
    _, records = ref.td3_update(params, 1, 2, 0.99, 0.005, 0.0, 0.0, smoothing=[np.full((4, 1), value)], clip=0.3)
    next_actions = np.clip(ref.policy(params["target_policy"], ref.NEXT_STATES) + clipped, -1, 1)
    target_q = np.minimum(
        ref.critic(params["target_critic_1"], ref.NEXT_STATES, next_actions),
        ref.critic(params["target_critic_2"], ref.NEXT_STATES, next_actions),
    )
    targets = ref.REWARDS + 0.99 * (1 - ref.TERMINATED) * target_q  # the truncated row bootstraps
    np.testing.assert_allclose(records[0][2], targets, rtol=1e-6)
    assert float(agent.tracking_data["Target / Target (mean)"][0]) == pytest.approx(targets.mean(), rel=1e-5)
    assert float(agent.tracking_data["Target / Target (max)"][0]) == pytest.approx(targets.max(), rel=1e-5)


def test_without_smoothing_noise_a_warning_is_logged(caplog):
    with caplog.at_level("WARNING"):
        make_td3(batch_size=4)
    assert "smooth_regularization_noise" in caplog.text


# -- exploration (shared with DDPG) ---------------------------------------------------------------------------


class SequenceNoise(Noise):
    def __init__(self, values):
        super().__init__("cpu")
        self.values = list(values)

    def sample(self, size):
        return torch.full(tuple(size), self.values.pop(0))


def test_an_evaluating_agent_plays_the_policy_during_the_random_timesteps():
    agent = make_td3(batch_size=4, random_timesteps=100)
    agent.set_running_mode("eval")
    _, _, outputs = agent.act(torch.tensor(ref.STATES), 0, 10)
    expected = ref.policy(linear_params(agent.policy, True), ref.STATES)
    np.testing.assert_allclose(outputs["mean_actions"].detach().numpy(), expected, rtol=1e-5)


def test_exploration_act_scales_the_noise_linearly_clips_to_the_bounds_and_tracks_it():
    tracked = []
    exploration = {"noise": None, "initial_scale": 1.0, "final_scale": 0.2, "timesteps": 10}
    actions = torch.tensor([[0.5], [-0.5]])
    low, high = torch.tensor([-1.0]), torch.tensor([1.0])
    # timestep 5 of a 10-step decay: scale 0.5 * (1 - 0.2) + 0.2 = 0.6
    out = exploration_act(
        actions, SequenceNoise([1.0]), exploration, 5, 100, low, high, lambda t, v: tracked.append((t, float(v)))
    )
    torch.testing.assert_close(out, torch.tensor([[1.0], [0.1]]))  # 0.5 + 0.6 clipped to 1
    assert tracked == [
        ("Exploration / Exploration noise (max)", pytest.approx(0.6)),
        ("Exploration / Exploration noise (min)", pytest.approx(0.6)),
        ("Exploration / Exploration noise (mean)", pytest.approx(0.6)),
    ]


def test_exploration_after_the_decay_adds_nothing_and_tracks_zeros_but_still_draws():
    tracked, noise = [], SequenceNoise([1.0, 2.0])
    exploration = {"noise": None, "initial_scale": 1.0, "final_scale": 0.2, "timesteps": None}  # None: trainer's
    actions = torch.tensor([[0.5]])
    out = exploration_act(
        actions, noise, exploration, 11, 10, -torch.ones(1), torch.ones(1), lambda t, v: tracked.append(v)
    )
    assert out is actions and tracked == [0, 0, 0]
    assert noise.values == [2.0]  # the draw happened (skrl's random stream)
    assert exploration["timesteps"] is None  # the config is not changed
    # at the last decay step the final scale applies
    out = exploration_act(actions, noise, exploration, 10, 10, -torch.ones(1) * 9, torch.ones(1) * 9, lambda t, v: None)
    torch.testing.assert_close(out, torch.tensor([[0.5 + 2.0 * 0.2]]))


def test_act_adds_the_exploration_noise_and_random_timesteps_act_randomly():
    torch.manual_seed(6)
    noise = SequenceNoise([0.25] * 10)
    agent = make_td3(
        batch_size=4,
        random_timesteps=2,
        exploration={"noise": noise, "initial_scale": 1.0, "final_scale": 1.0, "timesteps": None},
    )
    states = torch.tensor(ref.STATES)
    actions, log_prob, _ = agent.act(states, 0, 10)
    assert log_prob is None and actions.shape == (4, 1) and len(noise.values) == 10  # random: no noise drawn
    actions, log_prob, outputs = agent.act(states, 2, 10)
    noiseless = ref.policy(linear_params(agent.policy, True), ref.STATES)
    np.testing.assert_allclose(actions.detach().numpy(), np.clip(noiseless + 0.25, -1, 1), rtol=1e-5)
    # a trainer's deterministic evaluation plays the actions without exploration noise
    np.testing.assert_allclose(outputs["mean_actions"].detach().numpy(), noiseless, rtol=1e-5)


# -- runs, checkpoints, determinism -----------------------------------------------------------------------------


def pendulum(num_envs):
    if num_envs == 1:
        return wrap_env(gymnasium.make("Pendulum-v1"), verbose=False)
    return wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def short_run(num_envs=1, timesteps=60, seed=0, **cfg):
    set_seed(seed)
    env = pendulum(num_envs)
    models = make_models(env.observation_space, env.action_space, hidden=16)
    cfg = {
        "batch_size": 16,
        "learning_starts": 20,
        "random_timesteps": 10,
        "exploration": {
            "noise": GaussianNoise(0, 0.1, "cpu"),
            "initial_scale": 1.0,
            "final_scale": 0.1,
            "timesteps": None,
        },
        "smooth_regularization_noise": GaussianNoise(0, 0.2, "cpu"),
        **cfg,
    }
    agent = make_td3(models, RandomMemory(200, env.num_envs, "cpu"), env.observation_space, env.action_space, **cfg)
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, **QUIET}).train()
    env.close()
    return agent


@pytest.mark.parametrize("num_envs", [1, 3])
def test_short_runs_on_single_and_vector_envs_update_from_learning_starts(num_envs):
    agent = short_run(num_envs, timesteps=60, gradient_steps=2)
    assert len(agent.tracking_data["Loss / Critic loss"]) == (60 - 20) * 2
    assert agent.memory.get_tensor_by_name("states").shape[1] == num_envs
    assert all(np.isfinite(float(x)) for x in agent.tracking_data["Loss / Critic loss"])


def test_a_fixed_seed_reproduces_a_short_run():
    first, second = short_run(seed=3), short_run(seed=3)
    for role in ROLES:
        torch.testing.assert_close(flat(first.models[role]), flat(second.models[role]), rtol=0, atol=0)
    assert [float(x) for x in first.tracking_data["Loss / Critic loss"]] == [
        float(x) for x in second.tracking_data["Loss / Critic loss"]
    ]


def test_save_and_load_round_trip_every_model_and_optimizer(tmp_path):
    agent = short_run()
    path = str(tmp_path / "td3.pt")
    agent.save(path)
    assert set(torch.load(path, weights_only=False)) == {
        *ROLES,
        "policy_optimizer",
        "critic_optimizer",
    }
    saved = {role: flat(agent.models[role]) for role in ROLES}
    fresh = make_td3(
        make_models(agent.observation_space, agent.action_space, hidden=16, seed=9),
        RandomMemory(200, 1, "cpu"),
        agent.observation_space,
        agent.action_space,
        batch_size=16,
    )
    fresh.load(path)
    for role in ROLES:
        torch.testing.assert_close(flat(fresh.models[role]), saved[role], rtol=0, atol=0)
    assert (
        fresh.critic_optimizer.state_dict()["state"][0]["exp_avg"].tolist()
        == agent.critic_optimizer.state_dict()["state"][0]["exp_avg"].tolist()
    )


def test_a_truncated_sub_env_stores_its_terminal_observation_as_next_state():
    class Counter(gymnasium.Env):
        observation_space = OBSERVATIONS
        action_space = ACTIONS

        def __init__(self, limit):
            self.limit = limit

        def reset(self, seed=None, options=None):
            self.steps = 0
            return np.array([0.0, self.limit], np.float32), {}

        def step(self, action):
            self.steps += 1
            return np.array([self.steps, self.limit], np.float32), 0.0, False, self.steps >= self.limit, {}

    env = wrap_env(gymnasium.vector.SyncVectorEnv([lambda: Counter(2), lambda: Counter(5)]), verbose=False)
    agent = make_td3(memory=RandomMemory(8, 2, "cpu"), batch_size=4, learning_starts=100)
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 3, **QUIET}).train()
    next_states = agent.memory.get_tensor_by_name("next_states")[:3].numpy()
    # sub-env 0 truncates at its 2nd step: the stored next state is [2, 2], not the reset observation [0, 2]
    np.testing.assert_array_equal(next_states[1, 0], [2.0, 2.0])
    np.testing.assert_array_equal(next_states[1, 1], [2.0, 5.0])


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
        RandomMemory(1000, 1, "cpu"),
        env.observation_space,
        env.action_space,
        batch_size=32,
        learning_starts=100,
        random_timesteps=100,
        actor_learning_rate=2e-2,
        critic_learning_rate=2e-2,
        polyak=0.05,
        exploration={
            "noise": GaussianNoise(0, 0.2, "cpu"),
            "initial_scale": 1.0,
            "final_scale": 0.1,
            "timesteps": None,
        },
        smooth_regularization_noise=GaussianNoise(0, 0.1, "cpu"),
    )
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 800, **QUIET}).train()
    with torch.no_grad():
        actions = agent.policy.act({"states": torch.linspace(-1, 1, 11)[:, None]}, role="policy")[0]
    assert torch.all(torch.abs(actions - 0.5) < 0.2), actions.ravel()  # untrained: about 0.5 off


# -- bad input ------------------------------------------------------------------------------------------------


def test_a_discrete_action_space_is_rejected_with_the_alternative():
    discrete = gymnasium.spaces.Discrete(3)
    with pytest.raises(ValueError, match=re.escape("TD3 needs continuous (Box) actions; for Discrete actions use DQN")):
        TD3(make_models(), RandomMemory(4, 1, "cpu"), OBSERVATIONS, discrete, "cpu", {"experiment": NO_FILES})


def test_a_missing_role_is_named():
    models = make_models()
    del models["target_critic_2"]
    with pytest.raises(ValueError, match=r"TD3 needs a model for role\(s\) \['target_critic_2'\]"):
        make_td3(models)


def test_a_target_of_another_architecture_is_rejected():
    models = make_models()
    models["target_critic_1"] = StateActionCritic(OBSERVATIONS, ACTIONS, hidden=8)
    with pytest.raises(ValueError, match="'target_critic_1' model .* does not have the architecture of 'critic_1'"):
        make_td3(models, batch_size=4)


def test_identical_critics_are_warned_about(caplog):
    models = make_models()
    models["critic_2"].load_state_dict(models["critic_1"].state_dict())
    with caplog.at_level("WARNING"):
        make_td3(models, batch_size=4)
    assert "TD3: 'critic_1' and 'critic_2' start with identical parameters" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        make_td3(make_models(), batch_size=4)
    assert "identical parameters" not in caplog.text


def test_a_batch_larger_than_the_memory_is_rejected():
    with pytest.raises(ValueError, match=re.escape("cfg['batch_size'] = 64 is larger than the memory's 4 rows")):
        make_td3()


def test_a_bad_config_value_names_the_fix():
    with pytest.raises(ValueError, match=r"TD3 cfg\['policy_delay'\] must be an int >= 1, got 0"):
        make_td3(batch_size=4, policy_delay=0)


def test_nan_rewards_are_named_at_the_next_update():
    agent = make_td3(batch_size=4)
    fill_with_the_reference_batch(agent)
    agent.memory.get_tensor_by_name("rewards")[2] = float("nan")
    with pytest.raises(
        FloatingPointError, match="the sampled rewards of gradient step 0 contain NaN/inf .*environment"
    ):
        agent._update(0, 10)


# -- properties over drawn envs and configs -------------------------------------------------------------------


class ClippedActor(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space):
        Model.__init__(self, observation_space, action_space, "cpu")
        DeterministicMixin.__init__(self, clip_actions=True)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 8), nn.Tanh(), nn.Linear(8, self.num_actions))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


@settings(derandomize=True, max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=td3_setups())
def test_drawn_td3_agents_train_with_the_documented_cadence(setup):
    set_seed(setup.env.seed)
    env = wrap_random_env(setup.env, "torch")
    try:
        cfg = {
            **setup.cfg,
            "exploration": {
                **setup.cfg["exploration"],
                "noise": None if setup.exploration_std is None else GaussianNoise(0, setup.exploration_std, "cpu"),
            },
            "smooth_regularization_noise": None
            if setup.smoothing_std is None
            else GaussianNoise(0, setup.smoothing_std, "cpu"),
            "rewards_shaper": scale_rewards if setup.shaped else None,
        }
        if setup.preprocessor:
            cfg.update(
                state_preprocessor=RunningStandardScaler,
                state_preprocessor_kwargs={"size": env.observation_space, "device": "cpu"},
            )
        models = {role: ClippedActor(env.observation_space, env.action_space) for role in ROLES[:2]}
        models.update({role: StateActionCritic(env.observation_space, env.action_space, 8) for role in ROLES[2:]})
        agent = make_td3(
            models, RandomMemory(MEMORY_SIZE, env.num_envs, "cpu"), env.observation_space, env.action_space, **cfg
        )
        online = {role: flat(models[role]) for role in ("policy", "critic_1", "critic_2")}
        SequentialTrainer(env=env, agents=agent, cfg={"timesteps": TIMESTEPS, **QUIET}).train()
    finally:
        env.close()

    critic_steps = expected_critic_steps(setup)
    assert len(agent.tracking_data["Loss / Critic loss"]) == critic_steps
    assert len(agent.tracking_data["Loss / Policy loss"]) == critic_steps // cfg["policy_delay"]
    assert all(np.isfinite(float(x)) for x in agent.tracking_data["Loss / Critic loss"])
    actions = agent.memory.get_tensor_by_name("actions")
    assert actions.shape == (MEMORY_SIZE, env.num_envs, int(np.prod(env.action_space.shape)))
    stored = actions[: min(TIMESTEPS, MEMORY_SIZE)].reshape(-1, actions.shape[-1])
    assert torch.all(stored >= agent.clip_actions_min - 1e-6) and torch.all(stored <= agent.clip_actions_max + 1e-6)
    if cfg["actor_learning_rate"] == 0:
        assert torch.equal(flat(models["policy"]), online["policy"])
    if cfg["critic_learning_rate"] == 0:
        assert torch.equal(flat(models["critic_1"]), online["critic_1"])


def test_the_pendulum_example_trains_and_evaluates_without_noise():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "torch" / "td3_pendulum.py"
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
