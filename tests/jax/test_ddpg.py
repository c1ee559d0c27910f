"""DDPG (JAX): one compiled update against a NumPy reference, compilation, terminal observations, exploration,
save/load, determinism, short runs, bad input and a learning check."""

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ddpg_reference import ACTION_SIZE, OBSERVATION_SIZE, Bandit, Counter, Linear, Reference, random_linear, stacked
from ddpg_reference import transitions as random_transitions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skrl_like.core.agents.ddpg import DDPG_DEFAULT_CONFIG as NEUTRAL_DEFAULT_CONFIG
from skrl_like.core.agents.transition import TRANSITION_NAMES, Transition
from skrl_like.jax.agents.ddpg import DDPG, DDPG_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, Model
from skrl_like.jax.resources.noises import GaussianNoise
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
ROLES = ("policy", "target_policy", "critic", "target_critic")
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (OBSERVATION_SIZE,), np.float32)
ACTIONS = gymnasium.spaces.Box(-1, 1, (ACTION_SIZE,), np.float32)


class Actor(DeterministicMixin, Model):
    hidden: int = 0

    def __init__(self, observation_space, action_space, device=None, hidden=0, **kwargs):
        self.hidden = hidden
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        x = inputs["states"]
        if self.hidden:
            x = nn.tanh(nn.Dense(self.hidden, name="hidden")(x))
            return nn.tanh(nn.Dense(self.num_actions, name="output")(x)), {}
        return nn.Dense(self.num_actions, name="output")(x), {}


class Critic(DeterministicMixin, Model):
    hidden: int = 0

    def __init__(self, observation_space, action_space, device=None, hidden=0, **kwargs):
        self.hidden = hidden
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        x = jnp.concatenate([inputs["states"], inputs["taken_actions"]], axis=-1)
        if self.hidden:
            x = nn.relu(nn.Dense(self.hidden, name="hidden")(x))
        return nn.Dense(1, name="output")(x), {}


def make_models(observation_space=OBSERVATIONS, action_space=ACTIONS, hidden=0):
    models = {
        role: (Actor if "policy" in role else Critic)(observation_space, action_space, hidden=hidden) for role in ROLES
    }
    for role, model in models.items():
        model.init_state_dict(role)
    return models


def make_ddpg(env=None, memory_size=64, num_envs=None, models=None, memory=None, hidden=0, **cfg):
    observation_space = env.observation_space if env is not None else OBSERVATIONS
    action_space = env.action_space if env is not None else ACTIONS
    num_envs = num_envs or (env.num_envs if env is not None else 1)
    memory = memory if memory is not None else RandomMemory(memory_size=memory_size, num_envs=num_envs)
    return DDPG(
        models=models or make_models(observation_space, action_space, hidden),
        memory=memory,
        cfg={"experiment": NO_FILES, **cfg},
        observation_space=observation_space,
        action_space=action_space,
    )


def set_linear(model, params: Linear):
    dense = {"kernel": jnp.asarray(params.weight.T, jnp.float32), "bias": jnp.asarray(params.bias, jnp.float32)}
    model.state_dict = model.state_dict.replace(params={"params": {"output": dense}})


def as_linear(model) -> Linear:
    dense = model.state_dict.params["params"]["output"]
    return Linear(np.asarray(dense["kernel"], np.float64).T, np.asarray(dense["bias"], np.float64))


def pendulum(num_envs=1):
    return wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def tracked(agent, tag):
    return [float(value) for value in agent.tracking_data[tag]]


REFERENCE_CFG = {
    "batch_size": 8,
    "discount_factor": 0.9,
    "polyak": 0.25,
    "actor_learning_rate": 0.01,
    "critic_learning_rate": 0.02,
}


def _linear_agent_and_reference(seed, **cfg):
    cfg = {**REFERENCE_CFG, **cfg}
    rng = np.random.default_rng(seed)
    policy, critic = (
        random_linear(rng, OBSERVATION_SIZE, ACTION_SIZE),
        random_linear(rng, OBSERVATION_SIZE + ACTION_SIZE, 1),
    )
    models = make_models()
    for role in ROLES:
        set_linear(models[role], policy if "policy" in role else critic)
    # a batch of the whole memory without replacement: each gradient step sees the 8 rows (in some order)
    agent = make_ddpg(models=models, memory=RandomMemory(memory_size=4, num_envs=2, replacement=False), **cfg)
    agent.init()
    steps = random_transitions(rng, 4, 2)
    for step in steps:
        agent.record_transition(**step, infos={}, timestep=0, timesteps=10)
    return agent, Reference(policy, critic, {**NEUTRAL_DEFAULT_CONFIG, **cfg}), steps


def _assert_matches(agent, reference):
    for role in ROLES:
        expected = getattr(reference, role)
        found = as_linear(agent.models[role])
        np.testing.assert_allclose(found.weight, expected.weight, atol=1e-5, err_msg=role)
        np.testing.assert_allclose(found.bias, expected.bias, atol=1e-5, err_msg=role)
    records = reference.records
    np.testing.assert_allclose(tracked(agent, "Loss / Critic loss"), [r["critic_loss"] for r in records], rtol=1e-5)
    np.testing.assert_allclose(tracked(agent, "Loss / Policy loss"), [r["policy_loss"] for r in records], rtol=1e-5)
    for index, reduction in enumerate(("max", "min", "mean")):
        np.testing.assert_allclose(
            tracked(agent, f"Target / Target ({reduction})"), [r["targets"][index] for r in records], rtol=1e-5
        )
        np.testing.assert_allclose(
            tracked(agent, f"Q-network / Q1 ({reduction})"), [r["q"][index] for r in records], rtol=1e-5
        )


# -- config ------------------------------------------------------------------------------------------------------


def test_the_default_config_is_the_neutral_one_without_mixed_precision():
    assert DDPG_DEFAULT_CONFIG is NEUTRAL_DEFAULT_CONFIG
    assert "mixed_precision" not in DDPG_DEFAULT_CONFIG
    assert list(DDPG_DEFAULT_CONFIG)[:4] == ["gradient_steps", "batch_size", "discount_factor", "polyak"]


def test_the_default_config_is_never_mutated():
    before = {key: dict(value) if isinstance(value, dict) else value for key, value in DDPG_DEFAULT_CONFIG.items()}
    agent = make_ddpg(
        batch_size=4, exploration={"noise": None, "initial_scale": 2.0, "final_scale": 0.0, "timesteps": 5}
    )
    agent.cfg["exploration"]["timesteps"] = 7
    assert DDPG_DEFAULT_CONFIG == before


# -- the compiled update against the NumPy reference --------------------------------------------------------------


def test_two_updates_match_the_numpy_reference_and_compile_once():
    # clipped gradients here; the unclipped path is checked by the scan test below
    agent, reference, steps = _linear_agent_and_reference(0, grad_norm_clip=0.05)
    agent.post_interaction(timestep=0, timesteps=10)
    agent.post_interaction(timestep=1, timesteps=10)  # the second update continues from the committed state
    batch = stacked(steps)
    reference.step(**batch)
    reference.step(**batch)
    _assert_matches(agent, reference)
    assert agent._update_fn._cache_size() == 1


def test_gradient_steps_run_in_one_scan_over_their_batches():
    agent, reference, steps = _linear_agent_and_reference(1, gradient_steps=3)
    batch = stacked(steps)
    rows = np.random.default_rng(2).permutation(8)
    batches = Transition(*(np.stack([batch[name][rows].astype(np.float32)] * 3) for name in TRANSITION_NAMES))
    learner, packed = agent._update_fn(agent.gather_learner(), batches, np.int32(0))
    records = agent._packed_learn.unpack(packed)
    agent.commit_learner(learner)
    for _ in range(3):
        reference.step(**batch)
    for role in ROLES:
        np.testing.assert_allclose(as_linear(agent.models[role]).weight, getattr(reference, role).weight, atol=1e-5)
    np.testing.assert_allclose(records.critic_loss, [r["critic_loss"] for r in reference.records], rtol=1e-5)
    np.testing.assert_allclose(records.policy_loss, [r["policy_loss"] for r in reference.records], rtol=1e-5)


def test_no_recompilation_across_updates_with_a_schedule_and_a_preprocessor():
    set_seed(0)
    env = pendulum(2)
    agent = make_ddpg(
        env,
        batch_size=8,
        hidden=8,
        gradient_steps=2,
        learning_starts=3,
        learning_rate_scheduler=lambda: lambda timestep: 0.5,
        state_preprocessor=RunningStandardScaler,
        state_preprocessor_kwargs={"size": env.observation_space},
        exploration={"noise": GaussianNoise(0, 0.1), "initial_scale": 1.0, "final_scale": 0.1, "timesteps": None},
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 6}).train()
    assert len(tracked(agent, "Loss / Critic loss")) == 3 * 2
    assert agent._update_fn._cache_size() == 1 and agent._act_fn._cache_size() == 1
    # the multiplicative schedule (skrl's JAX rule): the rate halves at every gradient step
    np.testing.assert_allclose(tracked(agent, "Learning / Policy learning rate"), [1e-3 * 0.5**k for k in range(1, 7)])


def test_an_update_with_a_nan_parameter_names_it_and_commits_nothing():
    agent, _, _ = _linear_agent_and_reference(0)
    params = agent.critic.state_dict.params
    bad = jax.tree_util.tree_map(lambda leaf: leaf.at[0].set(jnp.inf), params)
    agent.critic.state_dict = agent.critic.state_dict.replace(params=bad)
    target_before = agent.target_policy.state_dict.params
    with pytest.raises(FloatingPointError, match="the critic loss of gradient step 0 contain NaN/inf"):
        agent.post_interaction(timestep=0, timesteps=10)
    assert agent.target_policy.state_dict.params is target_before


def test_nan_rewards_are_named_at_the_next_update():
    agent = make_ddpg(memory_size=4, batch_size=4)
    agent.init()
    for step in random_transitions(np.random.default_rng(0), 4, 1):
        step["rewards"][:] = np.nan
        agent.record_transition(**step, infos={}, timestep=0, timesteps=10)
    with pytest.raises(
        FloatingPointError, match="the sampled rewards of gradient step 0 contain NaN/inf .*environment"
    ):
        agent.post_interaction(timestep=0, timesteps=10)


# -- transitions and exploration ------------------------------------------------------------------------------------


def test_a_truncated_sub_env_stores_its_terminal_observation_as_next_state():
    vector = gymnasium.vector.SyncVectorEnv(
        [lambda: Counter(2, 10.0), lambda: Counter(5, 20.0)], autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP
    )
    env = wrap_env(vector, verbose=False)
    agent = make_ddpg(env, memory_size=8, batch_size=2, learning_starts=100)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 3}).train()
    states = np.asarray(agent.memory.get_tensor_by_name("states"))[:3]
    next_states = np.asarray(agent.memory.get_tensor_by_name("next_states"))[:3]
    truncated = np.asarray(agent.memory.get_tensor_by_name("truncated"))[:3]
    np.testing.assert_array_equal(states[:, 0, 0], [0, 1, 0])
    np.testing.assert_array_equal(next_states[:, 0, 0], [1, 2, 1])  # 2: the state reached, not the reset one
    np.testing.assert_array_equal(truncated[:, 0, 0], [0, 1, 0])
    np.testing.assert_array_equal(next_states[:, 1, 0], [1, 2, 3])


def test_act_adds_the_scaled_noise_clipped_to_the_bounds_and_none_after_the_decay():
    class Constant:
        def sample(self, size):
            return np.full(size, 0.5, np.float32)

    agent = make_ddpg(exploration={"noise": Constant(), "initial_scale": 3.0, "final_scale": 1.0, "timesteps": 4})
    agent.init()
    states = np.zeros((2, OBSERVATION_SIZE), np.float32)
    clean = np.asarray(agent.policy.act({"states": states}, role="policy")[0])
    actions, log_prob, outputs = agent.act(states, timestep=2, timesteps=10)  # scale 2, noise 1.0
    assert log_prob is None
    np.testing.assert_allclose(np.asarray(actions), np.clip(clean + 1.0, -1, 1), atol=1e-6)
    np.testing.assert_allclose(np.asarray(outputs["mean_actions"]), clean)  # what deterministic evaluation plays
    actions, _, _ = agent.act(states, timestep=5, timesteps=10)  # after the decay: no noise at all
    np.testing.assert_allclose(np.asarray(actions), clean, atol=1e-6)
    assert tracked(agent, "Exploration / Exploration noise (max)") == [1.0, 0.0]


def test_a_multi_dimensional_box_is_acted_on_as_flat_rows_within_its_bounds():
    box = gymnasium.spaces.Box(np.full((2, 2), -1.0, np.float32), np.array([[1, 2], [3, 4]], np.float32))
    agent = DDPG(
        models=make_models(OBSERVATIONS, box),
        memory=RandomMemory(memory_size=64, num_envs=1),
        observation_space=OBSERVATIONS,
        action_space=box,
        cfg={
            "experiment": NO_FILES,
            "exploration": {
                "noise": GaussianNoise(0, 100.0),
                "initial_scale": 1.0,
                "final_scale": 1.0,
                "timesteps": None,
            },
        },
    )
    agent.init()
    actions = np.asarray(agent.act(np.zeros((3, OBSERVATION_SIZE), np.float32), timestep=0, timesteps=10)[0])
    assert actions.shape == (3, 4)
    assert (actions >= -1).all() and (actions <= np.array([1.0, 2.0, 3.0, 4.0])).all()


def test_evaluation_plays_the_actor_without_random_actions_or_noise():
    agent = make_ddpg(
        random_timesteps=100,
        exploration={"noise": GaussianNoise(0, 1.0), "initial_scale": 1.0, "final_scale": 1.0, "timesteps": None},
    )
    agent.init()
    agent.set_running_mode("eval")
    states = np.random.default_rng(0).normal(size=(4, OBSERVATION_SIZE)).astype(np.float32)
    clean = np.asarray(agent.policy.act({"states": states}, role="policy")[0])
    _, _, outputs = agent.act(states, timestep=0, timesteps=10)
    np.testing.assert_allclose(np.asarray(outputs["mean_actions"]), clean, atol=1e-6)


def test_evaluation_neither_stores_nor_updates():
    env = pendulum()
    agent = make_ddpg(env, batch_size=4)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 5}).eval()
    assert len(agent.memory) == 0 and not agent.tracking_data["Loss / Critic loss"]


# -- save / load, determinism, runs ---------------------------------------------------------------------------------


def test_save_load_round_trip_restores_models_targets_optimizers_and_statistics(tmp_path):
    set_seed(0)
    env = pendulum()
    scaler = {"state_preprocessor": RunningStandardScaler, "state_preprocessor_kwargs": {"size": env.observation_space}}
    first = make_ddpg(env, batch_size=8, hidden=8, **scaler)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 12}).train()
    path = str(tmp_path / "agent.pickle")
    first.save(path)
    assert set(first.checkpoint_modules) == {*ROLES, "policy_optimizer", "critic_optimizer", "state_preprocessor"}

    second = make_ddpg(env, batch_size=8, hidden=8, **scaler)
    second.init()
    second.load(path)
    for role in ROLES:
        for a, b in zip(
            jax.tree_util.tree_leaves(first.models[role].state_dict.params),
            jax.tree_util.tree_leaves(second.models[role].state_dict.params),
        ):
            np.testing.assert_array_equal(a, b, err_msg=role)
    for a, b in zip(
        jax.tree_util.tree_leaves(first.critic_optimizer.state),
        jax.tree_util.tree_leaves(second.critic_optimizer.state),
    ):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first._state_preprocessor.running_mean, second._state_preprocessor.running_mean)


def _short_run(seed):
    set_seed(seed)
    env = pendulum(2)
    agent = make_ddpg(
        env,
        batch_size=16,
        hidden=8,
        random_timesteps=5,
        learning_starts=5,
        exploration={"noise": GaussianNoise(0, 0.2), "initial_scale": 1.0, "final_scale": 0.1, "timesteps": None},
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 30}).train()
    return agent


def test_a_fixed_seed_reproduces_a_short_run():
    first, second = _short_run(3), _short_run(3)
    losses = tracked(first, "Loss / Critic loss")
    assert losses == tracked(second, "Loss / Critic loss") and len(set(losses)) > 1
    for a, b in zip(
        jax.tree_util.tree_leaves(first.policy.state_dict.params),
        jax.tree_util.tree_leaves(second.policy.state_dict.params),
    ):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("num_envs", [1, 3])
def test_short_runs_update_once_per_step_from_learning_starts(num_envs):
    set_seed(0)
    env = pendulum(num_envs)
    agent = make_ddpg(env, batch_size=8, hidden=8, gradient_steps=2, learning_starts=4)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 10}).train()
    assert len(agent.memory) == 10 * num_envs  # rows
    assert len(tracked(agent, "Loss / Critic loss")) == (10 - 4) * 2
    assert np.isfinite(tracked(agent, "Loss / Policy loss")).all()


# -- bad input -----------------------------------------------------------------------------------------------------


def test_a_discrete_action_space_is_rejected_with_the_alternative():
    with pytest.raises(ValueError, match=r"DDPG needs continuous \(Box\) actions.*use DQN or DDQN"):
        DDPG(
            models=make_models(),
            observation_space=OBSERVATIONS,
            action_space=gymnasium.spaces.Discrete(3),
            cfg={"experiment": NO_FILES},
        )


def test_a_missing_target_is_named():
    models = make_models()
    del models["target_policy"]
    with pytest.raises(ValueError, match=r"needs a model for role\(s\) \['target_policy'\]"):
        make_ddpg(models=models)


def test_models_without_parameters_are_rejected_with_the_fix():
    models = make_models()
    models["critic"] = Critic(OBSERVATIONS, ACTIONS)
    with pytest.raises(ValueError, match=r"call critic.init_state_dict\('critic'\)"):
        make_ddpg(models=models)


def test_a_target_of_another_architecture_is_rejected():
    models = make_models()
    models["target_critic"] = Critic(OBSERVATIONS, ACTIONS, hidden=4)
    models["target_critic"].init_state_dict("target_critic")
    with pytest.raises(ValueError, match="'target_critic' model .* does not have the parameters of 'critic'"):
        make_ddpg(models=models)


def test_a_batch_larger_than_the_memory_is_rejected():
    with pytest.raises(ValueError, match=r"batch_size'\] = 64 is larger than the memory's 20 rows"):
        make_ddpg(memory_size=10, num_envs=2)


# -- properties and learning -----------------------------------------------------------------------------------------


@settings(derandomize=True, max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    num_envs=st.integers(1, 3),
    gradient_steps=st.integers(1, 3),
    batch_size=st.integers(1, 16),
    discount_factor=st.floats(0, 1),
    polyak=st.sampled_from([0.0, 0.005, 0.5, 1.0]),
    learning_starts=st.integers(0, 6),
    random_timesteps=st.integers(0, 6),
    grad_norm_clip=st.sampled_from([0, 0.5]),
    noise=st.booleans(),
    preprocessor=st.booleans(),
)
def test_drawn_configs_train_with_the_expected_number_of_updates(
    num_envs,
    gradient_steps,
    batch_size,
    discount_factor,
    polyak,
    learning_starts,
    random_timesteps,
    grad_norm_clip,
    noise,
    preprocessor,
):
    set_seed(0)
    env = pendulum(num_envs)
    cfg = {
        "gradient_steps": gradient_steps,
        "batch_size": batch_size,
        "discount_factor": discount_factor,
        "polyak": polyak,
        "learning_starts": learning_starts,
        "random_timesteps": random_timesteps,
        "grad_norm_clip": grad_norm_clip,
        "exploration": {
            "noise": GaussianNoise(0, 0.3) if noise else None,
            "initial_scale": 1.0,
            "final_scale": 1e-3,
            "timesteps": None,
        },
    }
    if preprocessor:
        cfg.update(state_preprocessor=RunningStandardScaler, state_preprocessor_kwargs={"size": env.observation_space})
    agent = make_ddpg(env, memory_size=16, hidden=4, **cfg)
    target_before = jax.tree_util.tree_leaves(agent.target_critic.state_dict.params)
    timesteps = 8
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": timesteps}).train()
    updates = max(0, timesteps - learning_starts)
    losses = tracked(agent, "Loss / Critic loss")
    assert len(losses) == updates * gradient_steps and np.isfinite(losses).all()
    assert np.asarray(agent.memory.get_tensor_by_name("actions")).shape == (16, num_envs, 1)
    target_after = jax.tree_util.tree_leaves(agent.target_critic.state_dict.params)
    moved = any(not np.array_equal(a, b) for a, b in zip(target_before, target_after))
    assert moved == (updates > 0 and polyak > 0)
    assert updates == 0 or agent._update_fn._cache_size() == 1


def test_ddpg_learns_a_one_step_bandit():
    set_seed(0)
    env = wrap_env(gymnasium.vector.SyncVectorEnv([Bandit] * 4), verbose=False)
    models = {
        role: (Actor if "policy" in role else Critic)(
            env.observation_space, env.action_space, hidden=16 if "policy" in role else 32
        )
        for role in ROLES
    }
    for role, model in models.items():
        model.init_state_dict(role)
    agent = make_ddpg(
        env,
        models=models,
        memory_size=1000,
        batch_size=64,
        discount_factor=0.0,
        polyak=0.05,
        actor_learning_rate=3e-3,
        critic_learning_rate=3e-3,
        exploration={"noise": GaussianNoise(0, 0.3), "initial_scale": 1.0, "final_scale": 0.1, "timesteps": None},
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 600}).train()
    states = np.linspace(-0.9, 0.9, 19, dtype=np.float32)[:, None]
    actions = np.asarray(agent.policy.act({"states": states}, role="policy")[0])
    # the best action is a = s: a random actor is off by about 0.5 on average
    assert float(np.abs(actions - states).mean()) < 0.15
