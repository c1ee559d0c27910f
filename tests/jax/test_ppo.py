"""PPO (JAX): update math, compilation, save/load, determinism, bad input, and one short learning run."""

import math

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like.jax.agents.mechanics import compute_gae
from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, Model
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions)(nn.tanh(nn.Dense(32)(inputs["states"]))), {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(1)(nn.tanh(nn.Dense(32)(inputs["states"]))), {}


def cartpole(num_envs=4):
    return wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def make_ppo(env, rollouts=16, **cfg):
    models = {
        "policy": Policy(env.observation_space, env.action_space),
        "value": Value(env.observation_space, env.action_space),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {**PPO_DEFAULT_CONFIG, "rollouts": rollouts, "experiment": NO_FILES, **cfg}
    return PPO(
        models=models,
        memory=RandomMemory(memory_size=rollouts, num_envs=env.num_envs),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
    )


def test_gae_on_a_hand_computed_case_with_termination_and_truncation():
    # the same case as the torch test: gamma = lambda = 0.5; env 0 terminates at t=1, env 1 is truncated at t=0
    rewards = jnp.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])[..., None]
    values = jnp.array([[0.5, 0.0], [1.0, 0.0], [1.5, 0.0]])[..., None]
    dones = jnp.array([[0, 1], [1, 0], [0, 0]], dtype=jnp.int8)[..., None]
    returns, advantages = compute_gae(rewards, dones, values, jnp.array([[2.0], [1.0]]), 0.5, 0.5)
    raw = np.array([[1.25, 1.0], [1.0, 1.375], [2.5, 1.5]])
    np.testing.assert_allclose(np.asarray(returns)[..., 0], raw + np.asarray(values)[..., 0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(advantages)[..., 0], (raw - raw.mean()) / (raw.std(ddof=1) + 1e-8), rtol=1e-5)


def test_act_and_update_compile_once_across_updates():
    set_seed(0)
    env = cartpole()
    agent = make_ppo(env, rollouts=8, learning_epochs=2, mini_batches=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 24}).train()  # three updates
    assert len(agent.tracking_data["Loss / Policy loss"]) == 3
    assert agent._update_fn._cache_size() == 1
    assert agent._act_fn._cache_size() == 1


def test_kl_adaptive_learning_rate_changes_without_recompiling():
    from skrl_like.jax.resources.schedulers import KLAdaptiveLR

    set_seed(0)
    env = cartpole()
    agent = make_ppo(
        env, rollouts=8, learning_rate_scheduler=KLAdaptiveLR, learning_rate_scheduler_kwargs={"kl_threshold": 1e-20}
    )  # KL always "too high": lr shrinks
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 16}).train()
    rates = [float(r) for r in agent.tracking_data["Learning / Learning rate"]]
    assert rates[0] == pytest.approx(1e-3 / 1.5**8, rel=1e-5)  # divided by 1.5 once per epoch (8 epochs)
    assert rates[1] == pytest.approx(1e-3 / 1.5**16, rel=1e-5)
    assert agent._update_fn._cache_size() == 1


def test_save_load_round_trip_restores_params_optimizer_and_statistics(tmp_path):
    from skrl_like.jax.resources.preprocessors import RunningStandardScaler

    set_seed(0)
    env = cartpole()
    scaler = {"state_preprocessor": RunningStandardScaler, "state_preprocessor_kwargs": {"size": 4}}
    first = make_ppo(env, rollouts=8, **scaler)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 16}).train()
    path = str(tmp_path / "agent.pickle")
    first.save(path)

    second = make_ppo(env, rollouts=8, **scaler)
    second.init(trainer_cfg={"timesteps": 1})
    second.load(path)
    states = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    first_logits = first.act(states, 0, 1)[2]["net_output"]
    second_logits = second.act(states, 0, 1)[2]["net_output"]
    np.testing.assert_array_equal(first_logits, second_logits)
    for a, b in zip(
        jax.tree_util.tree_leaves(first.policy_optimizer.state),
        jax.tree_util.tree_leaves(second.policy_optimizer.state),
    ):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first._state_preprocessor.running_mean, second._state_preprocessor.running_mean)


def test_loading_a_corrupt_checkpoint_names_the_file(tmp_path):
    path = tmp_path / "agent.pickle"
    path.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="could not be read"):
        make_ppo(cartpole()).load(str(path))


def _short_run_losses(seed):
    set_seed(seed)
    env = cartpole()
    env._env.reset(seed=seed)
    agent = make_ppo(env, learning_epochs=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 48}).train()
    return [float(v) for v in agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]]


def test_a_fixed_seed_gives_identical_losses():
    first, second = _short_run_losses(5), _short_run_losses(5)
    assert len(first) == 6 and first == second
    assert _short_run_losses(6) != first


def test_unknown_cfg_key_suggests_the_close_match():
    with pytest.raises(ValueError, match="Did you mean 'learning_epochs'"):
        make_ppo(cartpole(), learning_epoch=4)


def test_models_without_parameters_are_rejected_with_the_fix():
    env = cartpole()
    with pytest.raises(ValueError, match=r"call policy.init_state_dict\('policy'\)"):
        PPO(
            models={
                "policy": Policy(env.observation_space, env.action_space),
                "value": Value(env.observation_space, env.action_space),
            },
            observation_space=env.observation_space,
            action_space=env.action_space,
        )


def test_nan_rewards_stop_the_update_with_a_clear_error():
    env = cartpole()
    agent = make_ppo(env, rollouts=4, rewards_shaper=lambda rewards, timestep, timesteps: rewards * math.nan)
    with pytest.raises(FloatingPointError, match="rollout's 'rewards' contain NaN"):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4}).train()


def test_nan_value_estimates_stop_the_update_before_any_weight_changes():
    env = cartpole()
    agent = make_ppo(env, rollouts=4)
    value = agent.value
    value.state_dict = value.state_dict.replace(
        params=jax.tree_util.tree_map(lambda x: x * jnp.nan, value.state_dict.params)
    )
    policy_before = jax.tree_util.tree_leaves(agent.policy.state_dict.params)
    with pytest.raises(FloatingPointError, match="rollout's 'values' contain NaN/inf .the networks"):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4}).train()
    for before, after in zip(policy_before, jax.tree_util.tree_leaves(agent.policy.state_dict.params)):
        np.testing.assert_array_equal(before, after)


def test_the_default_config_is_never_mutated():
    before = {k: v for k, v in PPO_DEFAULT_CONFIG.items() if k != "experiment"}
    make_ppo(cartpole(), rollouts=32, learning_rate=0.5)
    assert {k: v for k, v in PPO_DEFAULT_CONFIG.items() if k != "experiment"} == before


@pytest.mark.slow
def test_ppo_learns_cartpole_within_20k_steps():
    from examples import load_example

    make_agent = load_example("jax", "ppo_cartpole").make_agent
    set_seed(42)
    env = wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=8, vectorization_mode="sync"), verbose=False)
    env._env.reset(seed=42)
    trainer = SequentialTrainer(env=env, agents=make_agent(env, experiment=NO_FILES), cfg={**QUIET, "timesteps": 2500})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=10)
    assert np.mean(returns) >= 150, returns


def test_random_timesteps_store_the_log_probability_of_the_random_action():
    set_seed(0)
    env = cartpole()
    agent = make_ppo(env, rollouts=4, random_timesteps=4)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 3}).train()
    log_prob = np.asarray(agent.memory.get_tensor_by_name("log_prob"))[:3]
    assert np.isfinite(log_prob).all() and (log_prob <= 0).all()


def test_evaluation_plays_the_most_likely_action():
    set_seed(0)
    env = cartpole()
    agent = make_ppo(env)
    agent.init(trainer_cfg={"timesteps": 1})
    states = np.random.default_rng(1).normal(size=(4, 4)).astype(np.float32)
    outputs = agent.act(states, 0, 1)[2]
    np.testing.assert_array_equal(np.asarray(outputs["mean_actions"])[:, 0], np.argmax(outputs["net_output"], axis=-1))
