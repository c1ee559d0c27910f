"""A2C (JAX): config, compilation, the entropy bonus in the gradient, the KL scheduler, save/load, determinism and
bad input (the update's numbers are checked against torch in tests/test_a2c_backends_agree.py)."""

import jax
import numpy as np
import pytest

from skrl_like.jax.agents.a2c import A2C, A2C_DEFAULT_CONFIG
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.resources.schedulers import KLAdaptiveLR
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.torch.agents.a2c import A2C_DEFAULT_CONFIG as TORCH_A2C_DEFAULT_CONFIG
from skrl_like.utils import set_seed
from tests.jax.models import CategoricalMlp, ValueMlp, vector_cartpole

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


def make_a2c(env, rollouts=8, memory_size=None, **cfg):
    models = {
        "policy": CategoricalMlp(env.observation_space, env.action_space),
        "value": ValueMlp(env.observation_space, env.action_space),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {**A2C_DEFAULT_CONFIG, "rollouts": rollouts, "experiment": NO_FILES, **cfg}
    return A2C(
        models=models,
        memory=RandomMemory(memory_size=memory_size or rollouts, num_envs=env.num_envs),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
    )


def test_the_default_config_is_torchs_without_mixed_precision():
    assert A2C_DEFAULT_CONFIG == {k: v for k, v in TORCH_A2C_DEFAULT_CONFIG.items() if k != "mixed_precision"}


def test_act_and_update_compile_once_across_updates():
    set_seed(0)
    env = vector_cartpole()
    agent = make_a2c(env, rollouts=8, mini_batches=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 24}).train()  # three updates
    assert len(agent.tracking_data["Loss / Policy loss"]) == 3
    assert agent._update_fn._cache_size() == 1
    assert agent._act_fn._cache_size() == 1


def _policy_after_one_update(entropy_loss_scale):
    set_seed(0)
    env = vector_cartpole()
    env._env.reset(seed=0)
    agent = make_a2c(env, rollouts=8, entropy_loss_scale=entropy_loss_scale)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 8}).train()
    return agent, jax.tree_util.tree_leaves(agent.policy.state_dict.params)


def test_the_entropy_bonus_is_part_of_the_policy_gradient():
    # skrl 1.4.3's JAX A2C only logged the entropy term: the same data then gave the same policy step
    without, plain = _policy_after_one_update(0.0)
    with_entropy, bonus = _policy_after_one_update(0.5)
    assert float(with_entropy.tracking_data["Loss / Entropy loss"][0]) < 0
    assert float(with_entropy.tracking_data["Loss / Policy loss"][0]) == pytest.approx(
        float(without.tracking_data["Loss / Policy loss"][0]), abs=1e-6
    )  # same rollout, same weights before the step
    assert any(not np.allclose(a, b, atol=1e-7) for a, b in zip(plain, bonus))


def test_kl_adaptive_lr_steps_once_per_update_without_recompiling():
    set_seed(0)
    env = vector_cartpole(num_envs=2)
    agent = make_a2c(
        env,
        rollouts=8,
        mini_batches=4,
        learning_rate_scheduler=KLAdaptiveLR,
        learning_rate_scheduler_kwargs={"kl_threshold": 1e-20},  # every KL is "too high": lr / 1.5 per step
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 16}).train()
    rates = [float(rate) for rate in agent.tracking_data["Learning / Learning rate"]]
    assert rates == pytest.approx([1e-3 / 1.5, 1e-3 / 1.5**2], rel=1e-5)
    assert agent._update_fn._cache_size() == 1


def test_save_load_round_trip_restores_params_and_optimizer(tmp_path):
    set_seed(0)
    env = vector_cartpole()
    first = make_a2c(env)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 16}).train()
    path = str(tmp_path / "agent.pickle")
    first.save(path)

    second = make_a2c(env)
    second.init(trainer_cfg={"timesteps": 1})
    second.load(path)
    states = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    np.testing.assert_array_equal(first.act(states, 0, 1)[2]["net_output"], second.act(states, 0, 1)[2]["net_output"])
    assert set(first.checkpoint_modules) == {"policy", "value", "policy_optimizer", "value_optimizer"}
    for a, b in zip(
        jax.tree_util.tree_leaves(first.policy_optimizer.state),
        jax.tree_util.tree_leaves(second.policy_optimizer.state),
    ):
        np.testing.assert_array_equal(a, b)


def _short_run_losses(seed):
    set_seed(seed)
    env = vector_cartpole()
    env._env.reset(seed=seed)
    agent = make_a2c(env, mini_batches=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 32}).train()
    return [float(v) for v in agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]]


def test_a_fixed_seed_gives_identical_losses():
    first, second = _short_run_losses(5), _short_run_losses(5)
    assert len(first) == 8 and first == second
    assert _short_run_losses(6) != first


def test_memory_size_must_equal_rollouts_and_the_error_names_a2c():
    agent = make_a2c(vector_cartpole(), rollouts=16, memory_size=32)
    with pytest.raises(ValueError, match=r"A2C: the memory holds 32 steps but cfg\['rollouts'\] is 16"):
        agent.init(trainer_cfg={"timesteps": 10})


def test_unknown_cfg_key_names_a2c_and_the_default_is_never_mutated():
    before = {k: v for k, v in A2C_DEFAULT_CONFIG.items() if k != "experiment"}
    with pytest.raises(ValueError, match="Unknown key 'mini_batch' in A2C cfg. Did you mean 'mini_batches'"):
        make_a2c(vector_cartpole(), mini_batch=4)
    make_a2c(vector_cartpole(), rollouts=32, learning_rate=0.5)
    assert {k: v for k, v in A2C_DEFAULT_CONFIG.items() if k != "experiment"} == before
