"""DQN and DDQN (torch): config, acting (epsilon decay, warm-up, greedy evaluation), the update on a hand-made batch
against NumPy, the target-update cadence, DDQN's double target, save/load, determinism, bad input, short runs on
single and vector envs, and the CI learning check of the value-based family (CartPole-v1)."""

import math
import re

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn
from dqn_strategies import TIMESTEPS, dqn_setups, expected_update_timesteps
from hypothesis import HealthCheck, given, settings
from strategies import wrap_random_env

from skrl_like.torch.agents.dqn import DDQN, DDQN_DEFAULT_CONFIG, DQN, DQN_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, Model
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.torch.models import cartpole

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(2)


class QNetwork(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device="cpu", hidden=32):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_observations, hidden), nn.ReLU(), nn.Linear(hidden, action_space.n))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class LinearQ(DeterministicMixin, Model):
    """Q(s) = W s + b: small enough to differentiate by hand."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Linear(2, 2)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def make_agent(env, algorithm=DQN, memory_size=1000, q_class=QNetwork, **cfg):
    cfg = {"experiment": NO_FILES, "batch_size": 16, **cfg}
    models = {role: q_class(env.observation_space, env.action_space) for role in ("q_network", "target_q_network")}
    return algorithm(
        models=models,
        memory=RandomMemory(memory_size=memory_size, num_envs=env.num_envs, device="cpu"),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
    )


# -- config -----------------------------------------------------------------------------------------------------


def test_default_configs_have_the_spec_keys_and_defaults():
    expected = {
        "gradient_steps": 1,
        "batch_size": 64,
        "discount_factor": 0.99,
        "polyak": 0.005,
        "learning_rate": 1e-3,
        "learning_rate_scheduler": None,
        "learning_rate_scheduler_kwargs": {},
        "state_preprocessor": None,
        "state_preprocessor_kwargs": {},
        "random_timesteps": 0,
        "learning_starts": 0,
        "update_interval": 1,
        "target_update_interval": 10,
        "exploration": {"initial_epsilon": 1.0, "final_epsilon": 0.05, "timesteps": 1000},
        "rewards_shaper": None,
        "mixed_precision": False,
    }
    for default in (DQN_DEFAULT_CONFIG, DDQN_DEFAULT_CONFIG):
        assert list(default) == [*expected, "experiment"]
        assert {key: default[key] for key in expected} == expected
    # separate dicts: editing DQN's nested defaults leaves DDQN's alone
    assert DQN_DEFAULT_CONFIG["exploration"] is not DDQN_DEFAULT_CONFIG["exploration"]


def test_user_cfg_does_not_leak_into_the_defaults():
    make_agent(cartpole(), exploration={"initial_epsilon": 0.5, "final_epsilon": 0.1, "timesteps": 10}, polyak=0.5)
    assert DQN_DEFAULT_CONFIG["exploration"]["initial_epsilon"] == 1.0 and DQN_DEFAULT_CONFIG["polyak"] == 0.005


# -- acting -----------------------------------------------------------------------------------------------------


def _constant_q_agent(algorithm=DQN, num_actions=4, **cfg):
    """An agent whose greedy action is always 0 (Q = [1, 0, 0, ...] whatever the state)."""
    space = gymnasium.spaces.Discrete(num_actions)
    models = {role: QNetwork(OBSERVATIONS, space) for role in ("q_network", "target_q_network")}
    with torch.no_grad():
        for layer in models["q_network"].net:
            if isinstance(layer, nn.Linear):
                layer.weight.zero_()
                layer.bias.zero_()
        models["q_network"].net[-1].bias[0] = 1.0
    agent = algorithm(
        models=models,
        memory=None,
        cfg={"experiment": NO_FILES, **cfg},
        observation_space=OBSERVATIONS,
        action_space=space,
        device="cpu",
    )
    agent.init()
    return agent


@pytest.mark.parametrize("timestep", [0, 300, 1000, 4000])
def test_epsilon_decays_exponentially_and_sets_the_share_of_random_actions(timestep):
    torch.manual_seed(0)
    exploration = {"initial_epsilon": 0.9, "final_epsilon": 0.1, "timesteps": 1000}
    agent = _constant_q_agent(exploration=exploration)
    actions, log_prob, outputs = agent.act(torch.zeros(20_000, 2), timestep, 10_000)
    epsilon = 0.1 + 0.8 * math.exp(-timestep / 1000)
    assert float(agent.tracking_data["Exploration / Exploration epsilon"][0]) == pytest.approx(epsilon)
    assert log_prob is None and actions.shape == (20_000, 1) and actions.dtype == torch.int64
    # a random action is uniform over 4, so it differs from the greedy 0 with probability 3/4
    assert (actions != 0).float().mean().item() == pytest.approx(0.75 * epsilon, abs=0.015)
    assert torch.equal(outputs["mean_actions"], torch.zeros(20_000, 1, dtype=torch.int64))


def test_warm_up_acts_uniformly_and_evaluation_reads_the_greedy_actions():
    torch.manual_seed(0)
    agent = _constant_q_agent(random_timesteps=10)
    actions, _, outputs = agent.act(torch.zeros(4000, 2), 9, 100)
    assert outputs == {}  # no Q-values needed while warming up
    assert np.bincount(actions.numpy().ravel(), minlength=4) / 4000 == pytest.approx([0.25] * 4, abs=0.03)
    assert "Exploration / Exploration epsilon" not in agent.tracking_data
    agent.set_running_mode("eval")
    _, _, outputs = agent.act(torch.zeros(3, 2), 9, 100)
    assert torch.equal(outputs["mean_actions"], torch.zeros(3, 1, dtype=torch.int64))


@pytest.mark.parametrize("timesteps", [0, None])
def test_no_exploration_is_greedy_even_during_warm_up(timesteps):
    exploration = {"initial_epsilon": 1.0, "final_epsilon": 1.0, "timesteps": timesteps}
    agent = _constant_q_agent(random_timesteps=100, exploration=exploration)
    actions, _, outputs = agent.act(torch.zeros(500, 2), 0, 100)
    assert torch.equal(actions, torch.zeros(500, 1, dtype=torch.int64))
    assert torch.equal(outputs["mean_actions"], actions)


# -- the update against NumPy -----------------------------------------------------------------------------------

W_ONLINE = np.array([[1.0, -0.5], [0.25, 0.75]], np.float32)
B_ONLINE = np.array([0.1, -0.2], np.float32)
W_TARGET = np.array([[-0.5, 1.0], [0.5, 0.5]], np.float32)
B_TARGET = np.array([0.3, 0.0], np.float32)
BATCH = {
    "states": np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]], np.float32),
    "actions": np.array([[0], [1], [1], [0]]),
    "rewards": np.array([[1.0], [0.0], [-1.0], [0.5]], np.float32),
    # online and target networks prefer different next actions on rows 0 and 1 (DQN and DDQN targets differ)
    "next_states": np.array([[2.0, 0.0], [0.0, 2.0], [1.0, -1.0], [0.5, 0.5]], np.float32),
    "terminated": np.array([[False], [False], [True], [False]]),
    "truncated": np.array([[False], [False], [False], [True]]),
}
GAMMA, LR, POLYAK = 0.9, 0.01, 0.25


def expected_update(double):
    """The loss, TD targets and new parameters of one Adam step, computed with NumPy."""
    s, a, r = BATCH["states"], BATCH["actions"][:, 0], BATCH["rewards"][:, 0]
    s2, done = BATCH["next_states"], BATCH["terminated"][:, 0]  # the truncated row bootstraps
    target_q = s2 @ W_TARGET.T + B_TARGET
    if double:
        next_actions = np.argmax(s2 @ W_ONLINE.T + B_ONLINE, axis=1)
        next_values = target_q[np.arange(4), next_actions]
    else:
        next_values = target_q.max(axis=1)
    y = r + GAMMA * (1 - done) * next_values
    q = (s @ W_ONLINE.T + B_ONLINE)[np.arange(4), a]
    loss = np.mean((q - y) ** 2)
    dq = 2 * (q - y) / 4  # d loss / d q
    grad_w, grad_b = np.zeros((2, 2)), np.zeros(2)
    for row in range(4):
        grad_w[a[row]] += dq[row] * s[row]
        grad_b[a[row]] += dq[row]

    def adam_first_step(param, grad):  # m_hat = g, v_hat = g^2
        return param - LR * grad / (np.abs(grad) + 1e-8)

    return loss, y, adam_first_step(W_ONLINE, grad_w), adam_first_step(B_ONLINE, grad_b)


def _hand_made_agent(algorithm, **cfg):
    models = {"q_network": LinearQ(), "target_q_network": LinearQ()}
    with torch.no_grad():
        models["q_network"].net.weight.copy_(torch.from_numpy(W_ONLINE))
        models["q_network"].net.bias.copy_(torch.from_numpy(B_ONLINE))
    # the full memory, drawn without replacement: every gradient step sees the whole hand-made batch
    cfg = {
        "batch_size": 4,
        "discount_factor": GAMMA,
        "learning_rate": LR,
        "polyak": POLYAK,
        "experiment": NO_FILES,
        **cfg,
    }
    agent = algorithm(
        models=models,
        memory=RandomMemory(memory_size=4, num_envs=1, device="cpu", replacement=False),
        cfg=cfg,
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        device="cpu",
    )
    with torch.no_grad():  # a target that differs from the online network (set after the construction's copy)
        agent.target_q_network.net.weight.copy_(torch.from_numpy(W_TARGET))
        agent.target_q_network.net.bias.copy_(torch.from_numpy(B_TARGET))
    agent.init()
    for row in range(4):
        agent.memory.add_samples(**{name: torch.as_tensor(value[row : row + 1]) for name, value in BATCH.items()})
    return agent


@pytest.mark.parametrize("algorithm", [DQN, DDQN])
def test_one_update_matches_numpy(algorithm):
    agent = _hand_made_agent(algorithm, target_update_interval=3)
    agent._update(timestep=4, timesteps=10)  # 4 % 3 != 0: the target stays
    loss, y, new_w, new_b = expected_update(double=algorithm is DDQN)
    assert float(agent.tracking_data["Loss / Q-network loss"][0]) == pytest.approx(loss, rel=1e-5)
    assert float(agent.tracking_data["Target / Target (max)"][0]) == pytest.approx(y.max(), rel=1e-5)
    assert float(agent.tracking_data["Target / Target (min)"][0]) == pytest.approx(y.min(), rel=1e-5)
    assert float(agent.tracking_data["Target / Target (mean)"][0]) == pytest.approx(y.mean(), rel=1e-5)
    np.testing.assert_allclose(agent.q_network.net.weight.detach().numpy(), new_w, atol=1e-6)
    np.testing.assert_allclose(agent.q_network.net.bias.detach().numpy(), new_b, atol=1e-6)
    np.testing.assert_array_equal(agent.target_q_network.net.weight.detach().numpy(), W_TARGET)
    np.testing.assert_array_equal(agent.target_q_network.net.bias.detach().numpy(), B_TARGET)


def test_the_hand_made_case_separates_dqn_from_ddqn():
    # the check above would not notice a DDQN computing DQN's target unless the two targets differ here
    _, dqn_targets, _, _ = expected_update(double=False)
    _, ddqn_targets, _, _ = expected_update(double=True)
    assert not np.allclose(dqn_targets, ddqn_targets)
    dqn, ddqn = _hand_made_agent(DQN), _hand_made_agent(DDQN)
    dqn._update(timestep=1, timesteps=10)
    ddqn._update(timestep=1, timesteps=10)
    assert float(dqn.tracking_data["Target / Target (mean)"][0]) == pytest.approx(dqn_targets.mean(), rel=1e-5)
    assert float(ddqn.tracking_data["Target / Target (mean)"][0]) == pytest.approx(ddqn_targets.mean(), rel=1e-5)


@pytest.mark.parametrize("algorithm", [DQN, DDQN])
def test_the_target_is_blended_on_target_update_timesteps_only(algorithm):
    agent = _hand_made_agent(algorithm, target_update_interval=3)
    _, _, new_w, new_b = expected_update(double=algorithm is DDQN)
    agent._update(timestep=6, timesteps=10)  # 6 % 3 == 0: polyak blend toward the updated online network
    np.testing.assert_allclose(
        agent.target_q_network.net.weight.detach().numpy(), POLYAK * new_w + (1 - POLYAK) * W_TARGET, atol=1e-6
    )
    np.testing.assert_allclose(
        agent.target_q_network.net.bias.detach().numpy(), POLYAK * new_b + (1 - POLYAK) * B_TARGET, atol=1e-6
    )


def test_the_target_blend_happens_after_every_gradient_step_of_a_target_update():
    agent = _hand_made_agent(DQN, gradient_steps=2, target_update_interval=1)
    weights = []
    original = agent.optimizer.step

    def step(*args, **kwargs):  # the online weights after each optimizer step
        result = original(*args, **kwargs)
        weights.append(agent.q_network.net.weight.detach().clone().numpy())
        return result

    agent.optimizer.step = step
    agent._update(timestep=5, timesteps=10)
    assert len(weights) == 2
    blended_once = POLYAK * weights[0] + (1 - POLYAK) * W_TARGET
    np.testing.assert_allclose(
        agent.target_q_network.net.weight.detach().numpy(), POLYAK * weights[1] + (1 - POLYAK) * blended_once, atol=1e-6
    )


def test_updates_follow_learning_starts_and_update_interval_and_stop_while_evaluating():
    agent = _hand_made_agent(DQN, learning_starts=2, update_interval=3)
    for timestep in range(10):
        agent.post_interaction(timestep, 10)
    # timesteps 3, 6, 9
    assert len(agent.tracking_data["Loss / Q-network loss"]) == 3
    agent.set_running_mode("eval")
    agent.post_interaction(12, 20)
    agent.record_transition(
        **{k: torch.as_tensor(v[:1]) for k, v in BATCH.items()}, infos={}, timestep=12, timesteps=20
    )
    assert len(agent.tracking_data["Loss / Q-network loss"]) == 3
    assert len(agent.memory) == 4


def test_a_learning_rate_scheduler_steps_once_per_gradient_step():
    agent = _hand_made_agent(
        DQN,
        gradient_steps=3,
        learning_rate_scheduler=torch.optim.lr_scheduler.StepLR,
        learning_rate_scheduler_kwargs={"step_size": 1, "gamma": 0.5},
    )
    agent._update(timestep=1, timesteps=10)
    assert agent.tracking_data["Learning / Learning rate"] == [pytest.approx(LR / 8)]


# -- the transitions stored -------------------------------------------------------------------------------------


class Counter(gymnasium.Env):
    """Observation = [steps taken, offset]; truncated after ``limit`` steps."""

    def __init__(self, limit, offset):
        self.limit, self.offset = limit, offset
        self.observation_space = OBSERVATIONS
        self.action_space = ACTIONS

    def reset(self, seed=None, options=None):
        self.steps = 0
        return np.array([0.0, self.offset], np.float32), {}

    def step(self, action):
        self.steps += 1
        return np.array([self.steps, self.offset], np.float32), 1.0, False, self.steps >= self.limit, {}


def test_a_truncated_sub_env_stores_the_state_it_reached_as_next_state():
    env = wrap_env(gymnasium.vector.SyncVectorEnv([lambda: Counter(2, 10.0), lambda: Counter(3, 20.0)]), verbose=False)
    agent = make_agent(env, batch_size=2, learning_starts=100)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 2}).train()
    next_states = agent.memory.get_tensor_by_name("next_states")[:2].numpy()
    np.testing.assert_array_equal(
        next_states[1], [[2.0, 10.0], [2.0, 20.0]]
    )  # sub-env 0 truncated: [2, 10], not [0, 10]
    np.testing.assert_array_equal(agent.memory.get_tensor_by_name("actions")[:2].shape, (2, 2, 1))


# -- runs, determinism, save/load -------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", [DQN, DDQN])
@pytest.mark.parametrize("num_envs", [1, 3])
def test_short_runs_on_single_and_vector_envs(algorithm, num_envs):
    set_seed(0)
    env = cartpole(num_envs)
    agent = make_agent(env, algorithm, learning_starts=10, random_timesteps=5, gradient_steps=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 40}).train()
    assert len(agent.tracking_data["Loss / Q-network loss"]) == 30
    assert len(agent.memory) == 40 * num_envs and agent.memory.get_tensor_by_name("actions").dtype == torch.int64
    losses = [float(loss) for loss in agent.tracking_data["Loss / Q-network loss"]]
    assert all(math.isfinite(loss) for loss in losses)
    returns = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 1}).evaluate_episodes(2)
    assert len(returns) == 2


def _short_run_losses(seed, algorithm=DQN):
    set_seed(seed)
    env = cartpole()
    env._env.reset(seed=seed)
    agent = make_agent(
        env, algorithm, learning_starts=5, exploration={"initial_epsilon": 1.0, "final_epsilon": 0.1, "timesteps": 20}
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 30}).train()
    return [float(loss) for loss in agent.tracking_data["Loss / Q-network loss"]]


def test_a_fixed_seed_reproduces_a_short_run():
    first = _short_run_losses(3)
    assert len(first) == 25 and first == _short_run_losses(3)
    assert first != _short_run_losses(4)


@pytest.mark.parametrize("algorithm", [DQN, DDQN])
def test_save_load_round_trip(tmp_path, algorithm):
    from skrl_like.torch.resources.preprocessors import RunningStandardScaler

    set_seed(0)
    env = cartpole()
    scaler = {"state_preprocessor": RunningStandardScaler, "state_preprocessor_kwargs": {"size": 4}}
    first = make_agent(env, algorithm, learning_starts=5, **scaler)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 20}).train()
    path = str(tmp_path / "agent.pt")
    first.save(path)
    assert sorted(torch.load(path, weights_only=False)) == [
        "optimizer",
        "q_network",
        "state_preprocessor",
        "target_q_network",
    ]

    second = make_agent(env, algorithm, **scaler)
    second.init()
    second.load(path)
    for name in ("q_network", "target_q_network"):
        for a, b in zip(first.models[name].parameters(), second.models[name].parameters()):
            assert torch.equal(a, b)
    assert first.optimizer.state_dict()["state"][0]["exp_avg"].equal(
        second.optimizer.state_dict()["state"][0]["exp_avg"]
    )
    assert torch.equal(first._state_preprocessor.running_mean, second._state_preprocessor.running_mean)


# -- bad input --------------------------------------------------------------------------------------------------


def test_a_box_action_space_is_rejected_with_the_algorithms_to_use():
    box = gymnasium.spaces.Box(-1, 1, (1,))
    models = {role: LinearQ() for role in ("q_network", "target_q_network")}
    with pytest.raises(ValueError, match="DDQN needs Discrete actions; for continuous .Box. actions use SAC"):
        DDQN(models=models, observation_space=OBSERVATIONS, action_space=box, device="cpu")


def test_a_missing_role_is_named():
    with pytest.raises(ValueError, match=r"DQN needs a model for role\(s\) \['target_q_network'\]"):
        DQN(models={"q_network": LinearQ()}, observation_space=OBSERVATIONS, action_space=ACTIONS, device="cpu")


def test_a_target_of_another_architecture_is_rejected():
    models = {"q_network": LinearQ(), "target_q_network": QNetwork(OBSERVATIONS, ACTIONS)}
    with pytest.raises(ValueError, match="'target_q_network' model .* does not have the architecture of 'q_network'"):
        DQN(models=models, observation_space=OBSERVATIONS, action_space=ACTIONS, device="cpu")


def test_a_q_network_with_the_wrong_number_of_outputs_is_rejected():
    space = gymnasium.spaces.Discrete(3)
    models = {role: LinearQ(OBSERVATIONS, space) for role in ("q_network", "target_q_network")}
    with pytest.raises(ValueError, match="'q_network' model .* produces 2 outputs .* give its last layer 3 outputs"):
        DQN(models=models, observation_space=OBSERVATIONS, action_space=space, device="cpu")


def test_a_batch_larger_than_the_memory_is_rejected():
    with pytest.raises(ValueError, match=r"DQN: cfg\['batch_size'\] = 64 is larger than the memory's 50 rows"):
        make_agent(cartpole(), memory_size=50, batch_size=64)


def test_a_partial_exploration_dict_names_the_missing_keys():
    with pytest.raises(KeyError, match=r"lacks \['initial_epsilon', 'final_epsilon'\].*replaces the default one whole"):
        make_agent(cartpole(), exploration={"timesteps": 10})


@pytest.mark.parametrize(
    "key, value, fix",
    [
        ("target_update_interval", 0, "set it to an int >= 1"),
        ("polyak", 2.0, "set it to a number >= 0.0 and <= 1.0"),
        ("batch_size", "64", "pass the int 64, not the string '64'"),
    ],
)
def test_config_values_are_checked_with_the_fix_named(key, value, fix):
    with pytest.raises(ValueError, match=f"DQN cfg.*{key}.* must be .*{re.escape(fix)}"):
        make_agent(cartpole(), **{key: value})


def test_a_nan_reward_is_named_at_the_next_update():
    agent = _hand_made_agent(DQN)
    agent.memory.get_tensor_by_name("rewards")[2] = float("nan")
    with pytest.raises(FloatingPointError, match=r"DQN update at timestep 1: the sampled rewards of gradient step 0"):
        agent._update(timestep=1, timesteps=10)


def test_a_non_finite_q_value_is_named():
    agent = _hand_made_agent(DQN)
    with torch.no_grad():
        agent.q_network.net.weight[0, 0] = float("inf")
    with pytest.raises(FloatingPointError, match=r"timestep 1: the Q-network loss of gradient step 0 contain NaN"):
        agent._update(timestep=1, timesteps=10)


def test_parameters_made_non_finite_by_the_step_are_named():
    agent = _hand_made_agent(DQN, learning_rate=1e39)  # the first Adam step moves each parameter by ~1e39: inf
    with pytest.raises(
        FloatingPointError,
        match=r"the parameters after the optimizer steps of gradient step 0 \(non-finite now: parameter 'net.weight'",
    ):
        agent._update(timestep=1, timesteps=10)


# -- the CI learning check of the value-based family ------------------------------------------------------------


def test_dqn_learns_cartpole():
    """A fixed seed, 8k steps (about 10 s on one core): the greedy policy must balance far longer than a random one
    (about 22 steps); a broken update (wrong target, sign, gather, or a target that never moves) stays near 10-40."""
    torch.set_num_threads(1)
    set_seed(1)
    env = cartpole()
    env._env.reset(seed=1)
    agent = make_agent(
        env,
        memory_size=10_000,
        batch_size=64,
        learning_starts=500,
        learning_rate=1e-3,
        target_update_interval=1,
        polyak=0.01,
        exploration={"initial_epsilon": 1.0, "final_epsilon": 0.02, "timesteps": 1000},
        q_class=lambda o, a: QNetwork(o, a, hidden=64),
    )
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 8000})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=5)
    assert np.mean(returns) > 100, returns


# -- drawn configs ----------------------------------------------------------------------------------------------


@settings(derandomize=True, max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=dqn_setups())
def test_drawn_agents_act_store_and_update_as_configured(setup):
    env = wrap_random_env(setup.env, "torch")
    algorithm = {"DQN": DQN, "DDQN": DDQN}[setup.algorithm]
    models = {
        role: QNetwork(env.observation_space, env.action_space, hidden=8) for role in ("q_network", "target_q_network")
    }
    agent = algorithm(
        models=models,
        memory=RandomMemory(memory_size=setup.memory_size, num_envs=env.num_envs, device="cpu"),
        cfg=setup.cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
    )
    initial = {role: [p.detach().clone() for p in model.parameters()] for role, model in models.items()}
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": TIMESTEPS}).train()

    updates = expected_update_timesteps(setup.cfg)
    losses = [float(loss) for loss in agent.tracking_data["Loss / Q-network loss"]]
    assert len(losses) == len(updates) and all(math.isfinite(loss) for loss in losses)
    actions = agent.memory.get_tensor_by_name("actions")
    assert actions.dtype == torch.int64 and actions.shape == (setup.memory_size, env.num_envs, 1)
    assert 0 <= int(actions.min()) and int(actions.max()) < env.action_space.n

    def unchanged(role):
        return all(torch.equal(a, b) for a, b in zip(initial[role], models[role].parameters()))

    if setup.cfg["learning_rate"] == 0 or not updates:
        assert unchanged("q_network")
        # the target only ever blends toward the unchanged online network it started as a copy of
        for a, b in zip(initial["target_q_network"], models["target_q_network"].parameters()):
            torch.testing.assert_close(a, b.detach())
    if not any(t % setup.cfg["target_update_interval"] == 0 for t in updates):
        assert unchanged("target_q_network")
