"""DQN and DDQN (JAX): compilation (one act, one update across target and non-target updates), acting under both
JAX backends (skrl 1.4.3 raises NotImplementedError for "jax"), the update on a hand-made batch against NumPy, the
target-update cadence, save/load, determinism, bad input, short runs on single and vector envs."""

import math

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dqn_strategies import TIMESTEPS, dqn_setups, expected_update_timesteps
from hypothesis import HealthCheck, given, settings
from strategies import wrap_random_env

from skrl_like import config
from skrl_like.jax.agents.dqn import DDQN, DDQN_DEFAULT_CONFIG, DQN, DQN_DEFAULT_CONFIG
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, Model
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.jax.models import cartpole

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(2)


class QNetwork(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        hidden = nn.relu(nn.Dense(32, name="hidden")(inputs["states"]))
        return nn.Dense(self.num_actions, name="output")(hidden), {}


class LinearQ(DeterministicMixin, Model):
    """Q(s) = W s + b: small enough to differentiate by hand."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions, name="linear")(inputs["states"]), {}


class TwoOutputs(LinearQ):
    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(2, name="linear")(inputs["states"]), {}


def make_models(observation_space, action_space, q_class=QNetwork):
    models = {role: q_class(observation_space, action_space) for role in ("q_network", "target_q_network")}
    for role, model in models.items():
        model.init_state_dict(role)
    return models


def make_agent(env, algorithm=DQN, memory_size=1000, **cfg):
    return algorithm(
        models=make_models(env.observation_space, env.action_space),
        memory=RandomMemory(memory_size=memory_size, num_envs=env.num_envs),
        cfg={"experiment": NO_FILES, "batch_size": 16, **cfg},
        observation_space=env.observation_space,
        action_space=env.action_space,
    )


def test_default_configs_are_the_neutral_ones_without_mixed_precision():
    for default in (DQN_DEFAULT_CONFIG, DDQN_DEFAULT_CONFIG):
        assert "mixed_precision" not in default
        assert default["exploration"] == {"initial_epsilon": 1.0, "final_epsilon": 0.05, "timesteps": 1000}
        assert (default["target_update_interval"], default["polyak"], default["batch_size"]) == (10, 0.005, 64)


def test_user_cfg_does_not_leak_into_the_defaults():
    make_agent(cartpole(), polyak=0.5, exploration={"initial_epsilon": 0.3, "final_epsilon": 0.1, "timesteps": 5})
    assert DQN_DEFAULT_CONFIG["polyak"] == 0.005 and DQN_DEFAULT_CONFIG["exploration"]["initial_epsilon"] == 1.0


# -- acting -----------------------------------------------------------------------------------------------------


def _constant_q_agent(num_actions=4, **cfg):
    """An agent whose greedy action is always 0 (Q = [1, 0, 0, ...] whatever the state)."""
    space = gymnasium.spaces.Discrete(num_actions)
    models = make_models(OBSERVATIONS, space)
    params = jax.tree_util.tree_map(np.zeros_like, models["q_network"].state_dict.params)
    params["params"]["output"]["bias"] = np.array([1.0] + [0.0] * (num_actions - 1), np.float32)
    models["q_network"].state_dict = models["q_network"].state_dict.replace(params=params)
    agent = DQN(models=models, cfg={"experiment": NO_FILES, **cfg}, observation_space=OBSERVATIONS, action_space=space)
    agent.init()
    return agent


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_epsilon_greedy_works_in_both_backends_and_follows_the_decay(monkeypatch, backend):
    monkeypatch.setattr(config.jax, "backend", backend)
    set_seed(0)
    exploration = {"initial_epsilon": 0.9, "final_epsilon": 0.1, "timesteps": 1000}
    agent = _constant_q_agent(exploration=exploration)
    for index, timestep in enumerate((0, 1000, 3000)):
        actions, log_prob, outputs = agent.act(np.zeros((20_000, 2), np.float32), timestep, 10_000)
        epsilon = 0.1 + 0.8 * math.exp(-timestep / 1000)
        assert float(agent.tracking_data["Exploration / Exploration epsilon"][index]) == pytest.approx(epsilon)
        assert log_prob is None and actions.shape == (20_000, 1)
        assert isinstance(actions, jax.Array if backend == "jax" else np.ndarray)
        # a random action is uniform over 4, so it differs from the greedy 0 with probability 3/4
        assert float(np.mean(np.asarray(actions) != 0)) == pytest.approx(0.75 * epsilon, abs=0.015)
        np.testing.assert_array_equal(outputs["mean_actions"], np.zeros((20_000, 1)))
    assert agent._act_fn._cache_size() == 1  # epsilon is traced: its decay does not recompile


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_warm_up_acts_uniformly_in_both_backends_and_evaluation_reads_the_greedy_actions(monkeypatch, backend):
    monkeypatch.setattr(config.jax, "backend", backend)
    set_seed(0)
    agent = _constant_q_agent(random_timesteps=10)
    actions, _, outputs = agent.act(np.zeros((4000, 2), np.float32), 9, 100)
    assert outputs == {}
    assert np.bincount(np.asarray(actions).ravel(), minlength=4) / 4000 == pytest.approx([0.25] * 4, abs=0.03)
    agent.set_running_mode("eval")
    _, _, outputs = agent.act(np.zeros((3, 2), np.float32), 9, 100)
    np.testing.assert_array_equal(outputs["mean_actions"], np.zeros((3, 1)))


def test_no_exploration_is_greedy_even_during_warm_up():
    exploration = {"initial_epsilon": 1.0, "final_epsilon": 1.0, "timesteps": 0}
    agent = _constant_q_agent(random_timesteps=100, exploration=exploration)
    actions, _, _ = agent.act(np.zeros((500, 2), np.float32), 0, 100)
    np.testing.assert_array_equal(actions, np.zeros((500, 1)))


# -- the update against NumPy (the same hand-made case as the torch tests) -------------------------------------

W_ONLINE = np.array([[1.0, -0.5], [0.25, 0.75]], np.float32)
B_ONLINE = np.array([0.1, -0.2], np.float32)
W_TARGET = np.array([[-0.5, 1.0], [0.5, 0.5]], np.float32)
B_TARGET = np.array([0.3, 0.0], np.float32)
BATCH = {
    "states": np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]], np.float32),
    "actions": np.array([[0], [1], [1], [0]], np.int32),
    "rewards": np.array([[1.0], [0.0], [-1.0], [0.5]], np.float32),
    "next_states": np.array([[2.0, 0.0], [0.0, 2.0], [1.0, -1.0], [0.5, 0.5]], np.float32),
    "terminated": np.array([[0], [0], [1], [0]], np.int8),
    "truncated": np.array([[0], [0], [0], [1]], np.int8),
}
GAMMA, LR, POLYAK = 0.9, 0.01, 0.25


def expected_update(double):
    """The loss, TD targets and new parameters of one Adam step, computed with NumPy."""
    s, a, r = BATCH["states"], BATCH["actions"][:, 0], BATCH["rewards"][:, 0]
    s2, done = BATCH["next_states"], BATCH["terminated"][:, 0]  # the truncated row bootstraps
    target_q = s2 @ W_TARGET.T + B_TARGET
    if double:
        next_values = target_q[np.arange(4), np.argmax(s2 @ W_ONLINE.T + B_ONLINE, axis=1)]
    else:
        next_values = target_q.max(axis=1)
    y = r + GAMMA * (1 - done) * next_values
    q = (s @ W_ONLINE.T + B_ONLINE)[np.arange(4), a]
    dq = 2 * (q - y) / 4
    grad_w, grad_b = np.zeros((2, 2)), np.zeros(2)
    for row in range(4):
        grad_w[a[row]] += dq[row] * s[row]
        grad_b[a[row]] += dq[row]

    def adam_first_step(param, grad):
        return param - LR * grad / (np.abs(grad) + 1e-8)

    return np.mean((q - y) ** 2), y, adam_first_step(W_ONLINE, grad_w), adam_first_step(B_ONLINE, grad_b)


def _dense(weight, bias):  # flax kernels are (in, out)
    return {"params": {"linear": {"kernel": jnp.asarray(weight.T), "bias": jnp.asarray(bias)}}}


def _weights(model):
    layer = model.state_dict.params["params"]["linear"]
    return np.asarray(layer["kernel"]).T, np.asarray(layer["bias"])


def _hand_made_agent(algorithm, **cfg):
    models = make_models(OBSERVATIONS, ACTIONS, LinearQ)
    models["q_network"].state_dict = models["q_network"].state_dict.replace(params=_dense(W_ONLINE, B_ONLINE))
    agent = algorithm(
        models=models,
        # the full memory, drawn without replacement: every gradient step sees the whole hand-made batch
        memory=RandomMemory(memory_size=4, num_envs=1, replacement=False),
        cfg={
            "batch_size": 4,
            "discount_factor": GAMMA,
            "learning_rate": LR,
            "polyak": POLYAK,
            "experiment": NO_FILES,
            **cfg,
        },
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
    )
    # a target that differs from the online network (set after the construction's copy)
    agent.target_q_network.state_dict = agent.target_q_network.state_dict.replace(params=_dense(W_TARGET, B_TARGET))
    agent.init()
    for row in range(4):
        agent.memory.add_samples(**{name: value[row : row + 1] for name, value in BATCH.items()})
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
    weight, bias = _weights(agent.q_network)
    np.testing.assert_allclose(weight, new_w, atol=1e-6)
    np.testing.assert_allclose(bias, new_b, atol=1e-6)
    weight, bias = _weights(agent.target_q_network)
    np.testing.assert_array_equal(weight, W_TARGET)
    np.testing.assert_array_equal(bias, B_TARGET)


@pytest.mark.parametrize("algorithm", [DQN, DDQN])
def test_the_target_is_blended_on_target_update_timesteps_only(algorithm):
    agent = _hand_made_agent(algorithm, target_update_interval=3)
    _, _, new_w, new_b = expected_update(double=algorithm is DDQN)
    agent._update(timestep=6, timesteps=10)  # 6 % 3 == 0
    weight, bias = _weights(agent.target_q_network)
    np.testing.assert_allclose(weight, POLYAK * new_w + (1 - POLYAK) * W_TARGET, atol=1e-6)
    np.testing.assert_allclose(bias, POLYAK * new_b + (1 - POLYAK) * B_TARGET, atol=1e-6)


def test_one_compiled_update_for_target_and_non_target_updates_over_several_gradient_steps():
    agent = _hand_made_agent(DDQN, gradient_steps=3, target_update_interval=2)
    for timestep in (1, 2, 3, 4):  # target moves at 2 and 4 only
        before = _weights(agent.target_q_network)[0]
        agent._update(timestep=timestep, timesteps=10)
        moved = not np.array_equal(before, _weights(agent.target_q_network)[0])
        assert moved == (timestep % 2 == 0)
    assert len(agent.tracking_data["Loss / Q-network loss"]) == 4
    assert agent._update_fn._cache_size() == 1


def test_act_and_update_compile_once_across_a_run():
    set_seed(0)
    env = cartpole(2)
    agent = make_agent(env, learning_starts=4, target_update_interval=3, gradient_steps=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 12}).train()
    assert len(agent.tracking_data["Loss / Q-network loss"]) == 8
    assert agent._update_fn._cache_size() == 1
    assert agent._act_fn._cache_size() == 1


def test_a_schedule_multiplies_the_rate_once_per_gradient_step_without_recompiling():
    import optax

    agent = _hand_made_agent(
        DQN,
        gradient_steps=2,
        learning_rate_scheduler=optax.constant_schedule,
        learning_rate_scheduler_kwargs={"value": 0.5},
    )
    agent._update(timestep=1, timesteps=10)
    agent._update(timestep=2, timesteps=10)
    rates = [float(rate) for rate in agent.tracking_data["Learning / Learning rate"]]
    assert rates == pytest.approx([LR / 4, LR / 16])
    assert agent._update_fn._cache_size() == 1


def test_updates_follow_learning_starts_and_update_interval_and_stop_while_evaluating():
    agent = _hand_made_agent(DQN, learning_starts=2, update_interval=3)
    for timestep in range(10):
        agent.post_interaction(timestep, 10)
    assert len(agent.tracking_data["Loss / Q-network loss"]) == 3  # timesteps 3, 6, 9
    agent.set_running_mode("eval")
    agent.post_interaction(12, 20)
    agent.record_transition(**{k: v[:1] for k, v in BATCH.items()}, infos={}, timestep=12, timesteps=20)
    assert len(agent.tracking_data["Loss / Q-network loss"]) == 3 and len(agent.memory) == 4


# -- runs, determinism, save/load -------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm, num_envs", [(DQN, 1), (DDQN, 3)])
def test_short_runs_on_single_and_vector_envs(algorithm, num_envs):
    set_seed(0)
    env = cartpole(num_envs)
    agent = make_agent(env, algorithm, learning_starts=10, random_timesteps=5, gradient_steps=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 40}).train()
    losses = [float(loss) for loss in agent.tracking_data["Loss / Q-network loss"]]
    assert len(losses) == 30 and all(math.isfinite(loss) for loss in losses)
    assert len(agent.memory) == 40 * num_envs and agent.memory.get_tensor_by_name("actions").dtype == np.int32
    returns = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 1}).evaluate_episodes(2)
    assert len(returns) == 2


def _short_run_losses(seed):
    set_seed(seed)
    env = cartpole()
    env._env.reset(seed=seed)
    exploration = {"initial_epsilon": 1.0, "final_epsilon": 0.1, "timesteps": 20}
    agent = make_agent(env, learning_starts=5, exploration=exploration)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 30}).train()
    return [float(loss) for loss in agent.tracking_data["Loss / Q-network loss"]]


def test_a_fixed_seed_reproduces_a_short_run():
    first = _short_run_losses(3)
    assert len(first) == 25 and first == _short_run_losses(3)
    assert first != _short_run_losses(4)


@pytest.mark.parametrize("algorithm", [DQN, DDQN])
def test_save_load_round_trip(tmp_path, algorithm):
    from skrl_like.jax.resources.preprocessors import RunningStandardScaler

    set_seed(0)
    env = cartpole()
    scaler = {"state_preprocessor": RunningStandardScaler, "state_preprocessor_kwargs": {"size": 4}}
    first = make_agent(env, algorithm, learning_starts=5, **scaler)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 20}).train()
    path = str(tmp_path / "agent.pickle")
    first.save(path)

    second = make_agent(env, algorithm, **scaler)
    second.init()
    second.load(path)
    for role in ("q_network", "target_q_network"):
        for a, b in zip(
            jax.tree_util.tree_leaves(first.models[role].state_dict.params),
            jax.tree_util.tree_leaves(second.models[role].state_dict.params),
        ):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(
        jax.tree_util.tree_leaves(first.optimizer.state), jax.tree_util.tree_leaves(second.optimizer.state)
    ):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first._state_preprocessor.running_mean, second._state_preprocessor.running_mean)


# -- bad input --------------------------------------------------------------------------------------------------


def test_a_box_action_space_is_rejected_with_the_algorithms_to_use():
    box = gymnasium.spaces.Box(-1, 1, (1,))
    with pytest.raises(ValueError, match="DQN needs Discrete actions; for continuous .Box. actions use SAC"):
        DQN(models=make_models(OBSERVATIONS, ACTIONS), observation_space=OBSERVATIONS, action_space=box)


def test_a_missing_role_is_named():
    models = make_models(OBSERVATIONS, ACTIONS)
    del models["target_q_network"]
    with pytest.raises(ValueError, match=r"DDQN needs a model for role\(s\) \['target_q_network'\]"):
        DDQN(models=models, observation_space=OBSERVATIONS, action_space=ACTIONS)


def test_a_target_of_another_architecture_is_rejected():
    models = make_models(OBSERVATIONS, ACTIONS)
    models["target_q_network"] = make_models(OBSERVATIONS, ACTIONS, LinearQ)["target_q_network"]
    with pytest.raises(ValueError, match="'target_q_network' model .* does not have the parameters of 'q_network'"):
        DQN(models=models, observation_space=OBSERVATIONS, action_space=ACTIONS)


def test_a_q_network_with_the_wrong_number_of_outputs_is_rejected():
    space = gymnasium.spaces.Discrete(3)
    models = make_models(OBSERVATIONS, space, TwoOutputs)
    with pytest.raises(ValueError, match="produces 2 outputs .* give its last layer 3 outputs"):
        DQN(models=models, observation_space=OBSERVATIONS, action_space=space)


def test_a_batch_larger_than_the_memory_is_rejected():
    with pytest.raises(ValueError, match=r"DQN: cfg\['batch_size'\] = 64 is larger than the memory's 50 rows"):
        make_agent(cartpole(), memory_size=50, batch_size=64)


def test_a_nan_reward_is_named_and_nothing_is_committed():
    agent = _hand_made_agent(DQN)
    agent.memory.get_tensor_by_name("rewards")[2] = np.nan
    before = _weights(agent.q_network)[0]
    with pytest.raises(FloatingPointError, match=r"DQN update at timestep 1: the sampled rewards of gradient step 0"):
        agent._update(timestep=1, timesteps=10)
    np.testing.assert_array_equal(_weights(agent.q_network)[0], before)


def test_parameters_made_non_finite_by_the_step_are_named():
    agent = _hand_made_agent(DQN, learning_rate=1e39)
    with pytest.raises(
        FloatingPointError,
        match=r"the parameters after the optimizer steps of gradient step 0 \(non-finite now: parameter 'params/linear",
    ):
        agent._update(timestep=1, timesteps=10)


# -- drawn configs ----------------------------------------------------------------------------------------------


@settings(derandomize=True, max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=dqn_setups())
def test_drawn_agents_act_store_and_update_as_configured(setup):
    env = wrap_random_env(setup.env, "jax")
    algorithm = {"DQN": DQN, "DDQN": DDQN}[setup.algorithm]
    models = make_models(env.observation_space, env.action_space)
    agent = algorithm(
        models=models,
        memory=RandomMemory(memory_size=setup.memory_size, num_envs=env.num_envs),
        cfg=setup.cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
    )
    initial = {role: model.state_dict.params for role, model in models.items()}
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": TIMESTEPS}).train()

    updates = expected_update_timesteps(setup.cfg)
    losses = [float(loss) for loss in agent.tracking_data["Loss / Q-network loss"]]
    assert len(losses) == len(updates) and all(math.isfinite(loss) for loss in losses)
    actions = agent.memory.get_tensor_by_name("actions")
    assert actions.dtype == np.int32 and actions.shape == (setup.memory_size, env.num_envs, 1)
    assert 0 <= int(actions.min()) and int(actions.max()) < env.action_space.n
    if updates:
        assert agent._update_fn._cache_size() == 1

    def leaves(role):
        return zip(jax.tree_util.tree_leaves(initial[role]), jax.tree_util.tree_leaves(models[role].state_dict.params))

    if setup.cfg["learning_rate"] == 0 or not updates:
        assert all(np.array_equal(a, b) for a, b in leaves("q_network"))
        for a, b in leaves("target_q_network"):  # blended toward the unchanged network it started as a copy of
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    if not any(t % setup.cfg["target_update_interval"] == 0 for t in updates):
        assert all(np.array_equal(a, b) for a, b in leaves("target_q_network"))
