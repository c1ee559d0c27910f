"""PPO (JAX) properties over drawn envs, configs and models (strategies in tests/strategies.py).

The JAX twin of tests/torch/test_ppo_properties.py (shared models and MultivariateGaussian are torch-only): every
drawn agent trains for one or two updates through ``SequentialTrainer`` on a small random env; no exception, skrl's
number of updates, finite losses, the memory's tensor shapes, parameters unchanged with a learning rate of 0 (and no
scheduler), value parameters that move with a usable learning rate and value loss.
"""

import dataclasses
import math

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import (
    PPO_ACTION_SPACES,
    build_jax_ppo_models,
    expected_updates,
    ppo_scheduler_and_preprocessors,
    ppo_setups,
    ppo_timesteps,
    random_env_specs,
    stored_action_size,
    stored_observation_size,
    wrap_random_env,
)

from skrl_like.jax.agents.ppo import PPO
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed

PROPERTY_SETTINGS = settings(
    derandomize=True, max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
LEARNING_CFG = {
    "learning_rate": 1e-3,
    "learning_rate_scheduler": None,
    "value_loss_scale": 1.0,
    "kl_threshold": 0.0,
    "clip_predicted_values": False,
    "grad_norm_clip": 0.5,
}


def leaves(model):
    return [np.array(leaf) for leaf in jax.tree_util.tree_leaves(model.state_dict.params)]


def train(setup):
    """Train the drawn agent; returns ``(agent, cfg, timesteps, policy leaves before, value leaves before)``."""
    set_seed(setup.env.seed)
    env = wrap_random_env(setup.env, "jax")
    try:
        cfg = ppo_scheduler_and_preprocessors(setup.cfg, "jax", env.observation_space)
        models = build_jax_ppo_models(setup.models, env.observation_space, env.action_space)
        agent = PPO(
            models=models,
            memory=RandomMemory(memory_size=cfg["rollouts"], num_envs=env.num_envs),
            cfg={**cfg, "experiment": NO_FILES},
            observation_space=env.observation_space,
            action_space=env.action_space,
        )
        policy_before, value_before = leaves(models["policy"]), leaves(models["value"])
        timesteps = ppo_timesteps(setup)
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": timesteps}).train()
    finally:
        env.close()
    return agent, cfg, timesteps, policy_before, value_before


@pytest.mark.parametrize("actions", sorted(PPO_ACTION_SPACES))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_ppo_trains_on_any_drawn_env_config_and_models(actions, data):
    setup = data.draw(ppo_setups("jax", PPO_ACTION_SPACES[actions]), label="setup")
    agent, cfg, timesteps, policy_before, value_before = train(setup)

    updates = expected_updates(timesteps, cfg["rollouts"], cfg["learning_starts"])
    assert updates == setup.updates
    for name in ("Loss / Policy loss", "Loss / Value loss"):
        losses = [float(loss) for loss in agent.tracking_data[name]]
        assert len(losses) == updates, name
        assert all(math.isfinite(loss) for loss in losses), (name, losses)

    rollouts, num_envs = cfg["rollouts"], setup.env.num_envs
    memory = agent.memory
    observation_size = stored_observation_size(setup.env.observation_space)
    assert tuple(memory.get_tensor_by_name("states").shape) == (rollouts, num_envs, observation_size)
    assert tuple(memory.get_tensor_by_name("actions").shape) == (
        rollouts,
        num_envs,
        stored_action_size(setup.env.action_space),
    )
    assert tuple(memory.get_tensor_by_name("rewards").shape) == (rollouts, num_envs, 1)
    for name in ("states", "actions", "rewards"):
        assert np.isfinite(np.asarray(memory.get_tensor_by_name(name))).all(), name

    if cfg["learning_rate"] == 0 and cfg["learning_rate_scheduler"] is None:
        for before, now in zip(policy_before + value_before, leaves(agent.policy) + leaves(agent.value)):
            np.testing.assert_array_equal(now, before)


@pytest.mark.parametrize("actions", sorted(PPO_ACTION_SPACES))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_value_parameters_move_with_a_usable_learning_rate_and_value_loss(actions, data):
    setup = data.draw(ppo_setups("jax", PPO_ACTION_SPACES[actions]), label="setup")
    setup = dataclasses.replace(setup, cfg={**setup.cfg, **LEARNING_CFG})
    agent, _, _, _, value_before = train(setup)
    moved = [not np.array_equal(before, now) for before, now in zip(value_before, leaves(agent.value))]
    assert any(moved), "the value parameters did not move"


@PROPERTY_SETTINGS
@given(spec=random_env_specs())
def test_wrapped_random_envs_give_flat_observations_of_the_hand_computed_size(spec):
    env = wrap_random_env(spec, "jax")
    try:
        states, _ = env.reset()
        assert tuple(states.shape) == (spec.num_envs, stored_observation_size(spec.observation_space))
        assert np.isfinite(np.asarray(states)).all()
    finally:
        env.close()
