"""CEM (torch): config, acting, one update on a hand-made two-env rollout against NumPy, the update cadence and
episodes across rollouts, save/load, determinism, bad input, short runs on single and vector envs, and the CI
learning check of the family (CartPole-v1)."""

import math

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn
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

from skrl_like.torch.agents.cem import CEM, CEM_DEFAULT_CONFIG
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import CategoricalMixin, GaussianMixin, Model
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.torch.models import LinearDeterministicPolicy, cartpole

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(3)


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device="cpu", hidden=32):
        Model.__init__(self, observation_space, action_space, device)
        CategoricalMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_observations, hidden), nn.ReLU(), nn.Linear(hidden, action_space.n))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class LinearPolicy(CategoricalMixin, Model):
    """logits = W s + b: small enough to differentiate by hand."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        CategoricalMixin.__init__(self)
        self.net = nn.Linear(2, 3)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def make_agent(env, rollouts=200, **cfg):
    return CEM(
        models={"policy": Policy(env.observation_space, env.action_space)},
        memory=RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device="cpu"),
        cfg={"experiment": NO_FILES, "rollouts": rollouts, **cfg},
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
    )


# -- config -----------------------------------------------------------------------------------------------------


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
        "mixed_precision": False,
    }
    assert list(CEM_DEFAULT_CONFIG) == [*expected, "experiment"]
    assert {key: CEM_DEFAULT_CONFIG[key] for key in expected} == expected
    assert CEM_DEFAULT_CONFIG["experiment"]["write_interval"] == "auto"


def test_user_cfg_does_not_leak_into_the_defaults():
    make_agent(cartpole(), percentile=0.2)
    assert CEM_DEFAULT_CONFIG["percentile"] == 0.70 and CEM_DEFAULT_CONFIG["rollouts"] == 16


# -- acting -----------------------------------------------------------------------------------------------------


def test_act_samples_from_the_policy_and_random_timesteps_act_uniformly():
    agent = make_agent(cartpole(), random_timesteps=5)
    agent.init()
    states = torch.zeros(64, 4)
    with torch.no_grad():  # the policy always prefers action 1
        agent.policy.net[-1].weight.zero_()
        agent.policy.net[-1].bias.copy_(torch.tensor([-30.0, 30.0]))
    actions, log_prob, outputs = agent.act(states, timestep=5, timesteps=10)
    assert actions.shape == (64, 1) and actions.dtype == torch.int64 and bool((actions == 1).all())
    assert log_prob.shape == (64, 1) and outputs["net_output"].shape == (64, 2)
    random_actions = agent.act(states, timestep=0, timesteps=10)[0]
    assert random_actions.shape == (64, 1) and 0 < int((random_actions == 0).sum()) < 64


# -- the update -------------------------------------------------------------------------------------------------


def _hand_made_agent(**cfg):
    """A linear policy and the hand-made 6-step rollout of 2 environments (tests/cem_reference.py) in memory."""
    torch.manual_seed(0)
    agent = CEM(
        models={"policy": LinearPolicy()},
        memory=RandomMemory(memory_size=6, num_envs=2, device="cpu"),
        cfg={"experiment": NO_FILES, "rollouts": 6, "discount_factor": GAMMA, "percentile": 0.5, **cfg},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        device="cpu",
    )
    agent.init()
    rng = np.random.default_rng(0)
    states = rng.normal(size=(6, 2, 2)).astype(np.float32)
    actions = rng.integers(0, 3, size=(6, 2, 1))
    for t in range(6):
        agent.memory.add_samples(
            states=torch.from_numpy(states[t]),
            actions=torch.from_numpy(actions[t]),
            rewards=torch.from_numpy(REWARDS[t][:, None]),
            next_states=torch.from_numpy(states[t]),
            terminated=torch.from_numpy(DONES[t][:, None]),
            truncated=torch.zeros(2, 1, dtype=torch.bool),
        )
    return agent, states.reshape(12, 2), actions.reshape(12, 1)


def test_one_update_on_a_hand_made_rollout_of_two_envs_matches_numpy():
    agent, states, actions = _hand_made_agent(learning_rate=0.05)
    weight = agent.policy.net.weight.detach().numpy().copy()
    bias = agent.policy.net.bias.detach().numpy().copy()
    agent._update(timestep=5, timesteps=10)

    # the elite rows of both columns (env 0 rows 2-4, env 1 rows 0-3), row t * num_envs + env
    loss, new_weight, new_bias = linear_cross_entropy_step(weight, bias, states, actions, HAND_MASK, 0.05)
    assert float(agent.tracking_data["Loss / Policy loss"][0]) == pytest.approx(loss, rel=1e-5)
    assert agent.tracking_data["Coefficient / Return threshold"] == [pytest.approx(HAND_THRESHOLD)]
    assert agent.tracking_data["Coefficient / Mean discounted returns"] == [pytest.approx(np.mean(HAND_RETURNS))]
    np.testing.assert_allclose(agent.policy.net.weight.detach().numpy(), new_weight, atol=1e-6)
    np.testing.assert_allclose(agent.policy.net.bias.detach().numpy(), new_bias, atol=1e-6)
    assert "Learning / Learning rate" not in agent.tracking_data


def test_a_rewards_shaper_shapes_the_stored_rewards_the_returns_use():
    agent = make_agent(cartpole(), rollouts=4, rewards_shaper=lambda rewards, timestep, timesteps: rewards * 10)
    agent.init()
    done = torch.tensor([[True]])
    for t in range(4):
        agent.record_transition(
            torch.zeros(1, 4), torch.zeros(1, 1, dtype=torch.int64), torch.ones(1, 1), torch.zeros(1, 4),
            done if t in (1, 3) else ~done, ~done, {}, t, 10,
        )  # fmt: skip
    agent._update(timestep=3, timesteps=10)
    # two episodes of two steps: 10 * 0.99 + 10
    assert agent.tracking_data["Coefficient / Mean discounted returns"] == [pytest.approx(19.9)]


def test_a_scheduler_steps_once_per_update_and_is_tracked():
    agent, _, _ = _hand_made_agent(
        learning_rate=0.1,
        learning_rate_scheduler=torch.optim.lr_scheduler.StepLR,
        learning_rate_scheduler_kwargs={"step_size": 1, "gamma": 0.5},
    )
    agent._update(timestep=5, timesteps=10)
    assert agent.tracking_data["Learning / Learning rate"] == [pytest.approx(0.05)]


def test_a_state_preprocessor_sees_every_rollout_row():
    from skrl_like.torch.resources.preprocessors import RunningStandardScaler

    agent, states, _ = _hand_made_agent(state_preprocessor=RunningStandardScaler, state_preprocessor_kwargs={"size": 2})
    agent._update(timestep=5, timesteps=10)
    # the scaler starts from mean 0 with a count of 1 (skrl's), then takes in all 12 rows
    np.testing.assert_allclose(agent._state_preprocessor.running_mean.numpy(), states.sum(axis=0) / 13, atol=1e-5)


def test_non_finite_rewards_are_named():
    agent, _, _ = _hand_made_agent()
    agent.memory.get_tensor_by_name("rewards")[2, 0] = float("nan")
    with pytest.raises(FloatingPointError, match="rollout's rewards"):
        agent._update(timestep=5, timesteps=10)


def test_updates_come_every_rollout_and_an_episode_crossing_the_boundary_counts_whole():
    agent, states, actions = _hand_made_agent(learning_starts=6, learning_rate=0.05)
    weight = agent.policy.net.weight.detach().numpy().copy()
    bias = agent.policy.net.bias.detach().numpy().copy()
    # rollout 1 (timesteps 0-5) ends before learning_starts: no update, but its rows are kept
    for timestep in range(6):
        agent.post_interaction(timestep, 20)
    assert "Loss / Policy loss" not in agent.tracking_data
    # rollout 2 (same memory contents): env 0's episode from rollout 1's row 5 to rollout 2's row 1 counts whole
    for timestep in range(6, 12):
        agent.post_interaction(timestep, 20)
    assert len(agent.tracking_data["Loss / Policy loss"]) == 1
    returns, threshold, mask = elite_rows(
        np.concatenate([REWARDS, REWARDS]), np.concatenate([DONES, DONES]), 6, GAMMA, 0.5
    )
    np.testing.assert_allclose(returns, [3.75, 3.5, 3.5, 4, 1.5])  # 3.75 = 5 * 0.25 + 1 * 0.5 + 2
    assert agent.tracking_data["Coefficient / Mean discounted returns"] == [pytest.approx(np.mean(returns))]
    assert agent.tracking_data["Coefficient / Return threshold"] == [pytest.approx(threshold)]
    window_states, window_actions = np.concatenate([states, states]), np.concatenate([actions, actions])
    loss, new_weight, new_bias = linear_cross_entropy_step(weight, bias, window_states, window_actions, mask, 0.05)
    assert float(agent.tracking_data["Loss / Policy loss"][0]) == pytest.approx(loss, rel=1e-5)
    np.testing.assert_allclose(agent.policy.net.weight.detach().numpy(), new_weight, atol=1e-6)
    np.testing.assert_allclose(agent.policy.net.bias.detach().numpy(), new_bias, atol=1e-6)
    agent.set_running_mode("eval")
    for timestep in range(12, 18):
        agent.post_interaction(timestep, 20)
    assert len(agent.tracking_data["Loss / Policy loss"]) == 1


# -- save / load, determinism -----------------------------------------------------------------------------------


def test_save_load_round_trip(tmp_path):
    from skrl_like.torch.resources.preprocessors import RunningStandardScaler

    set_seed(0)
    env = cartpole()
    scaler = {"state_preprocessor": RunningStandardScaler, "state_preprocessor_kwargs": {"size": 4}}
    first = make_agent(env, rollouts=100, **scaler)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 200}).train()
    path = str(tmp_path / "agent.pt")
    first.save(path)
    assert sorted(torch.load(path, weights_only=False)) == ["optimizer", "policy", "state_preprocessor"]

    second = make_agent(env, rollouts=100, **scaler)
    second.init()
    second.load(path)
    for a, b in zip(first.policy.parameters(), second.policy.parameters()):
        assert torch.equal(a, b)
    assert first.optimizer.state_dict()["state"][0]["exp_avg"].equal(
        second.optimizer.state_dict()["state"][0]["exp_avg"]
    )
    assert torch.equal(first._state_preprocessor.running_mean, second._state_preprocessor.running_mean)


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


# -- bad input --------------------------------------------------------------------------------------------------


class GaussianPolicy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self)
        self.net = nn.Linear(self.num_observations, self.num_actions)
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), self.log_std_parameter, {}


def test_a_box_action_space_is_refused():
    box = gymnasium.spaces.Box(-1, 1, (2,))
    with pytest.raises(ValueError, match="CEM needs Discrete actions"):
        CEM(models={"policy": GaussianPolicy(OBSERVATIONS, box)}, observation_space=OBSERVATIONS, action_space=box)


def test_a_policy_that_is_not_categorical_is_refused():
    with pytest.raises(ValueError, match="categorical policy.*deterministic one.*CategoricalMixin"):
        CEM(
            models={"policy": LinearDeterministicPolicy(OBSERVATIONS, ACTIONS)},
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
        )


def test_missing_policy_and_wrong_output_size_are_refused():
    with pytest.raises(ValueError, match=r"needs a model for role\(s\) \['policy'\]"):
        CEM(models={}, observation_space=OBSERVATIONS, action_space=ACTIONS)
    with pytest.raises(ValueError, match="produces 3 outputs.*needs 4"):
        four = gymnasium.spaces.Discrete(4)
        CEM(models={"policy": LinearPolicy(action_space=four)}, observation_space=OBSERVATIONS, action_space=four)


def test_a_memory_of_another_size_than_rollouts_is_refused():
    with pytest.raises(ValueError, match=r"memory holds 100 steps.*cfg\['rollouts'\] is 16"):
        CEM(
            models={"policy": LinearPolicy()},
            memory=RandomMemory(memory_size=100, num_envs=1, device="cpu"),
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
        )


def test_episodes_longer_than_two_rollouts_raise_at_the_second_update():
    env = cartpole()
    agent = make_agent(env, rollouts=3)  # CartPole's episodes last at least 8 steps: none ends in 2 x 3 steps
    with pytest.raises(ValueError, match=r"cfg\['rollouts'\] = 3 steps.*2 x 3 steps.*memory_size"):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 10}).train()


def test_unknown_and_invalid_config_values_are_refused():
    with pytest.raises(ValueError, match="Did you mean 'percentile'"):
        make_agent(cartpole(), percentil=0.5)
    with pytest.raises(ValueError, match=r"\['percentile'\] must be a number >= 0.0 and <= 1.0"):
        make_agent(cartpole(), percentile=70)


# -- short runs -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("num_envs", [1, 3])
def test_short_runs_on_single_and_vector_envs(num_envs):
    set_seed(0)
    env = cartpole(num_envs)
    agent = make_agent(env, rollouts=60, random_timesteps=10)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 120}).train()
    losses = [float(loss) for loss in agent.tracking_data["Loss / Policy loss"]]
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)
    actions = agent.memory.get_tensor_by_name("actions")
    assert actions.dtype == torch.int64 and actions.shape == (60, num_envs, 1)
    returns = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 1}).evaluate_episodes(2)
    assert len(returns) == 2


# -- the CI learning check of the family ------------------------------------------------------------------------


def test_cem_learns_cartpole():
    """A fixed seed, 15k steps of one env in rollouts of 500 (about 10 s on one core): the greedy policy must balance
    far longer than a random one (about 22 steps); a broken selection (wrong rows, columns or sign) stays near it."""
    torch.set_num_threads(1)
    set_seed(1)
    env = cartpole()
    env._env.reset(seed=1)
    agent = make_agent(env, rollouts=500)
    for model in agent.models.values():
        model.init_parameters(method_name="normal_", mean=0.0, std=0.1)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 15_000})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=5)
    assert np.mean(returns) > 60, returns  # 108 with this seed; with the elite mask inverted: 10


def test_the_example_builds_and_trains_on_a_vector_env():
    from examples import load_example

    example = load_example("torch", "cem_cartpole")
    set_seed(0)
    env = example.make_env(num_envs=2)
    agent = example.make_agent(env, experiment=NO_FILES, rollouts=100, learning_starts=0)
    assert agent.cfg["percentile"] == example.HYPERPARAMETERS["percentile"]
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 200}).train()
    assert len(agent.tracking_data["Loss / Policy loss"]) == 2


def test_update_callbacks_run_around_every_update_at_the_agents_hook_point():
    from skrl_like.core.callbacks import Callbacks

    log = []

    class Updates(Callbacks):
        def on_update_start(self, *, trainer, agent, timestep):
            log.append(("start", timestep))

        def on_update_end(self, *, trainer, agent, timestep):
            log.append(("end", timestep))

    env = cartpole()
    agent = make_agent(env, rollouts=10)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 30, "callbacks": Updates()}).train()
    assert log == [(kind, t) for t in (9, 19, 29) for kind in ("start", "end")]
