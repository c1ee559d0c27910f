"""PPO (torch) properties over drawn envs, configs and models (strategies in tests/strategies.py).

Every drawn agent trains for one or two updates through ``SequentialTrainer`` on a small random env. What must
hold whatever was drawn: no exception, the number of updates skrl's schedule gives, finite losses, the memory's
tensor shapes, parameters unchanged with a learning rate of 0 (and no scheduler to raise it), and value parameters
that move when the value loss has a usable scale and step size.
"""

import dataclasses
import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import (
    PPO_ACTION_SPACES,
    build_torch_ppo_models,
    expected_updates,
    ppo_scheduler_and_preprocessors,
    ppo_setups,
    ppo_timesteps,
    random_env_specs,
    stored_action_size,
    stored_observation_size,
    wrap_random_env,
)

from skrl_like.torch.agents.ppo import PPO
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

PROPERTY_SETTINGS = settings(
    derandomize=True, max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


def value_parameters(models):
    value = models["value"]
    if value is models["policy"]:  # shared: the value head alone is moved by the value loss only
        return list(value.value_head.parameters())
    return list(value.parameters())


def value_must_move(cfg):
    """The value loss has a gradient that survives float32 and clipping, and a step size Adam makes visible."""
    return (
        cfg["value_loss_scale"] >= 1e-3
        and cfg["learning_rate"] >= 1e-5
        and not cfg["kl_threshold"]  # early stopping may skip every step
        and (not cfg["clip_predicted_values"] or cfg["value_clip"] >= 1e-3)
        and (cfg["grad_norm_clip"] == 0 or cfg["grad_norm_clip"] >= 1e-3)
    )


def train(setup):
    """Train the drawn agent; returns ``(agent, cfg, timesteps, parameters before, value parameters before)``."""
    set_seed(setup.env.seed)
    env = wrap_random_env(setup.env, "torch")
    try:
        cfg = ppo_scheduler_and_preprocessors(setup.cfg, "torch", env.observation_space)
        models = build_torch_ppo_models(setup.models, env.observation_space, env.action_space)
        agent = PPO(
            models=models,
            memory=RandomMemory(memory_size=cfg["rollouts"], num_envs=env.num_envs, device="cpu"),
            cfg={**cfg, "experiment": NO_FILES},
            observation_space=env.observation_space,
            action_space=env.action_space,
            device="cpu",
        )
        parameters = [p.detach().clone() for p in agent._trainable_parameters]
        values_before = [p.detach().clone() for p in value_parameters(models)]
        timesteps = ppo_timesteps(setup)
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": timesteps}).train()
    finally:
        env.close()
    return agent, cfg, timesteps, parameters, values_before


@pytest.mark.parametrize("actions", sorted(PPO_ACTION_SPACES))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_ppo_trains_on_any_drawn_env_config_and_models(actions, data):
    setup = data.draw(ppo_setups("torch", PPO_ACTION_SPACES[actions]), label="setup")
    agent, cfg, timesteps, parameters, values_before = train(setup)
    models = agent.models

    updates = expected_updates(timesteps, cfg["rollouts"], cfg["learning_starts"])
    assert updates == setup.updates
    for name in ("Loss / Policy loss", "Loss / Value loss"):
        losses = [float(loss) for loss in agent.tracking_data[name]]
        assert len(losses) == updates, name
        assert all(math.isfinite(loss) for loss in losses), (name, losses)

    rollouts, num_envs = cfg["rollouts"], setup.env.num_envs
    memory = agent.memory
    assert memory.get_tensor_by_name("states").shape == (
        rollouts,
        num_envs,
        stored_observation_size(setup.env.observation_space),
    )
    assert memory.get_tensor_by_name("actions").shape == (
        rollouts,
        num_envs,
        stored_action_size(setup.env.action_space),
    )
    assert memory.get_tensor_by_name("rewards").shape == (rollouts, num_envs, 1)
    for name in ("states", "actions", "rewards"):
        assert torch.isfinite(memory.get_tensor_by_name(name)).all(), name

    after = list(agent._trainable_parameters)
    if cfg["learning_rate"] == 0 and cfg["learning_rate_scheduler"] is None:
        for before, now in zip(parameters, after):
            torch.testing.assert_close(now.detach(), before, rtol=0, atol=0)
    if value_must_move(cfg):
        moved = any(
            not torch.equal(before, now.detach()) for before, now in zip(values_before, value_parameters(models))
        )
        assert moved, "the value parameters did not move"


LEARNING_CFG = {
    "learning_rate": 1e-3,
    "learning_rate_scheduler": None,
    "value_loss_scale": 1.0,
    "kl_threshold": 0.0,
    "clip_predicted_values": False,
    "grad_norm_clip": 0.5,
}


@pytest.mark.parametrize("actions", sorted(PPO_ACTION_SPACES))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_value_parameters_move_with_a_usable_learning_rate_and_value_loss(actions, data):
    setup = data.draw(ppo_setups("torch", PPO_ACTION_SPACES[actions]), label="setup")
    setup = dataclasses.replace(setup, cfg={**setup.cfg, **LEARNING_CFG})
    agent, _, _, _, values_before = train(setup)
    moved = [not torch.equal(b, p.detach()) for b, p in zip(values_before, value_parameters(agent.models))]
    assert any(moved), "the value parameters did not move"


@PROPERTY_SETTINGS
@given(spec=random_env_specs())
def test_wrapped_random_envs_give_flat_observations_of_the_hand_computed_size(spec):
    env = wrap_random_env(spec, "torch")
    try:
        states, _ = env.reset()
        assert states.shape == (spec.num_envs, stored_observation_size(spec.observation_space))
        assert torch.isfinite(states).all()
    finally:
        env.close()
