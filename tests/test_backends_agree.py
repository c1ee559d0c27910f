"""The two backends implement the same algorithm: one PPO update on the same data from the same weights
gives the same losses (to 1e-4) and new weights. The transitions go through ``record_transition``, so the
log-probabilities, value estimates and truncation bootstrap the update computes are each backend's own."""

import gymnasium
import jax
import numpy as np
import pytest
import torch
from agree_models import (
    ACTIONS,
    OBSERVATIONS,
    JaxPolicy,
    JaxValue,
    TorchPolicy,
    TorchValue,
    flax_params,
    load_torch_weights,
    record_rollout_and_update,
)

from skrl_like.jax.agents.ppo import PPO as JaxPPO
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.agents.ppo import PPO as TorchPPO
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

ROLLOUTS, NUM_ENVS = 8, 4


CFG = {
    "rollouts": ROLLOUTS,
    "learning_epochs": 3,
    "mini_batches": 2,
    "discount_factor": 0.9,
    "lambda": 0.8,
    "learning_rate": 3e-3,
    "grad_norm_clip": 0.0,  # torch clips the joint norm, JAX each model's: compare unclipped
    "entropy_loss_scale": 0.01,
    "value_loss_scale": 0.5,
    "clip_predicted_values": True,
    "experiment": {"write_interval": 0, "checkpoint_interval": 0},
}


@pytest.mark.parametrize("time_limit_bootstrap", [False, True])
def test_one_ppo_update_gives_the_same_losses_and_weights_in_torch_and_jax(time_limit_bootstrap):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    states = rng.normal(size=(ROLLOUTS, NUM_ENVS, 4)).astype(np.float32)
    actions = rng.integers(0, 3, size=(ROLLOUTS, NUM_ENVS, 1))
    rewards = rng.normal(size=(ROLLOUTS, NUM_ENVS, 1)).astype(np.float32)
    terminated = rng.random((ROLLOUTS, NUM_ENVS, 1)) < 0.1
    truncated = rng.random((ROLLOUTS, NUM_ENVS, 1)) < 0.1
    last_states = rng.normal(size=(NUM_ENVS, 4)).astype(np.float32)

    torch_policy, torch_value = TorchPolicy(), TorchValue()
    jax_policy = load_torch_weights(JaxPolicy(), "policy", torch_policy)
    jax_value = load_torch_weights(JaxValue(), "value", torch_value)

    scalers = {
        "state_preprocessor_kwargs": {"size": 4},
        "value_preprocessor_kwargs": {"size": 1},
        "time_limit_bootstrap": time_limit_bootstrap,
    }
    torch_agent = TorchPPO(
        models={"policy": torch_policy, "value": torch_value},
        memory=TorchMemory(ROLLOUTS, NUM_ENVS, "cpu"),
        cfg={**CFG, **scalers, "state_preprocessor": TorchScaler, "value_preprocessor": TorchScaler},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        device="cpu",
    )
    jax_agent = JaxPPO(
        models={"policy": jax_policy, "value": jax_value},
        memory=JaxMemory(ROLLOUTS, NUM_ENVS),
        cfg={**CFG, **scalers, "state_preprocessor": JaxScaler, "value_preprocessor": JaxScaler},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
    )
    for agent, to_array in ((torch_agent, torch.from_numpy), (jax_agent, np.asarray)):
        record_rollout_and_update(
            agent, to_array, states, actions.astype(np.float32), rewards, terminated, truncated, last_states
        )

    for tag in ("Loss / Policy loss", "Loss / Value loss", "Loss / Entropy loss"):
        assert float(jax_agent.tracking_data[tag][0]) == pytest.approx(
            float(torch_agent.tracking_data[tag][0]), abs=1e-4
        )
    updated = flax_params(torch_policy)["params"]
    for layer in ("hidden", "output"):
        for name in ("kernel", "bias"):
            np.testing.assert_allclose(
                jax_policy.state_dict.params["params"][layer][name], updated[layer][name], atol=1e-4
            )


# -- an asymmetric actor-critic: the value model reads the env's privileged states --------------------------------

PRIVILEGED = gymnasium.spaces.Box(-np.inf, np.inf, (7,))  # the critic group: another size than the observations
ASYMMETRIC_CFG = {**CFG, "learning_epochs": 2, "clip_predicted_values": False}


@pytest.mark.parametrize("privileged_preprocessor", [False, True])
def test_one_asymmetric_ppo_update_gives_the_same_losses_and_value_weights_in_torch_and_jax(privileged_preprocessor):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    states = rng.normal(size=(ROLLOUTS, NUM_ENVS, 4)).astype(np.float32)
    privileged = rng.normal(size=(ROLLOUTS + 1, NUM_ENVS, 7)).astype(np.float32)
    actions = rng.integers(0, 3, size=(ROLLOUTS, NUM_ENVS, 1)).astype(np.float32)
    rewards = rng.normal(size=(ROLLOUTS, NUM_ENVS, 1)).astype(np.float32)
    terminated = rng.random((ROLLOUTS, NUM_ENVS, 1)) < 0.1
    truncated = np.zeros((ROLLOUTS, NUM_ENVS, 1), bool)
    last_states = rng.normal(size=(NUM_ENVS, 4)).astype(np.float32)

    torch_policy, torch_value = TorchPolicy(), TorchValue(observation_space=PRIVILEGED)
    jax_policy = load_torch_weights(JaxPolicy(), "policy", torch_policy)
    jax_value = load_torch_weights(JaxValue(observation_space=PRIVILEGED), "value", torch_value)
    for value in (torch_value, jax_value):
        value.state_space = PRIVILEGED  # reads the privileged states
    # the privileged states' own preprocessor (skrl 2.x's state_preprocessor beside its observation_preprocessor)
    scaler = lambda scaler_class: (  # noqa: E731
        {"privileged_state_preprocessor": scaler_class, "privileged_state_preprocessor_kwargs": {"size": PRIVILEGED}}
        if privileged_preprocessor
        else {}
    )
    agents = (
        TorchPPO({"policy": torch_policy, "value": torch_value}, TorchMemory(ROLLOUTS, NUM_ENVS, "cpu"), OBSERVATIONS,
                 ACTIONS, "cpu", cfg={**ASYMMETRIC_CFG, **scaler(TorchScaler)}),
        JaxPPO({"policy": jax_policy, "value": jax_value}, JaxMemory(ROLLOUTS, NUM_ENVS), OBSERVATIONS, ACTIONS,
               cfg={**ASYMMETRIC_CFG, **scaler(JaxScaler)}),
    )  # fmt: skip
    for agent, to_array in zip(agents, (torch.from_numpy, np.asarray)):
        assert agent.privileged_roles == ("value",)
        record_rollout_and_update(
            agent, to_array, states, actions, rewards, terminated, truncated, last_states, privileged
        )

    torch_losses, jax_losses = (
        [float(agent.tracking_data[f"Loss / {name} loss"][0]) for name in ("Policy", "Value")] for agent in agents
    )
    assert jax_losses == pytest.approx(torch_losses, abs=1e-4)
    pairs = zip(*(jax.tree_util.tree_leaves(p) for p in (jax_value.state_dict.params, flax_params(torch_value))))
    assert all(np.allclose(jax_leaf, torch_leaf, atol=1e-4) for jax_leaf, torch_leaf in pairs)
    if privileged_preprocessor:  # the same statistics, of the rollout's privileged states (count 1 + its rows)
        torch_scaler, jax_scaler = (agent.checkpoint_modules["privileged_state_preprocessor"] for agent in agents)
        assert (
            float(torch_scaler.current_count) == np.asarray(jax_scaler.current_count).item() == 1 + ROLLOUTS * NUM_ENVS
        )
        rows = privileged[:ROLLOUTS].reshape(-1, 7).astype(np.float64)
        for name in ("running_mean", "running_variance"):
            np.testing.assert_allclose(
                np.asarray(getattr(jax_scaler, name)), getattr(torch_scaler, name).numpy(), atol=1e-5
            )
        np.testing.assert_allclose(torch_scaler.running_mean.numpy(), rows.sum(0) / (1 + len(rows)), atol=1e-6)
