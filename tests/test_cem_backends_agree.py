"""CEM: two updates from identical weights on the same two rollouts of several environments (the second with episodes
crossing the rollout boundary, counted whole from the kept previous rollout) give the same losses, thresholds, mean
returns, weights and state statistics in torch and JAX."""

import numpy as np
import pytest
import torch
from agree_models import ACTIONS, OBSERVATIONS, JaxPolicy, TorchPolicy, flax_params, load_torch_weights

from skrl_like.jax.agents.cem import CEM as JaxCEM
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.agents.cem import CEM as TorchCEM
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

ROLLOUTS, NUM_ENVS = 30, 3


@pytest.mark.parametrize("percentile", [0.3, 0.7])
def test_two_updates_give_the_same_numbers_in_torch_and_jax(percentile):
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    steps = 2 * ROLLOUTS
    data = {
        "states": rng.normal(size=(steps, NUM_ENVS, 4)).astype(np.float32),
        "actions": rng.integers(0, 3, size=(steps, NUM_ENVS, 1)),
        "rewards": rng.normal(size=(steps, NUM_ENVS, 1)).astype(np.float32),
        "next_states": rng.normal(size=(steps, NUM_ENVS, 4)).astype(np.float32),
        "terminated": rng.random((steps, NUM_ENVS, 1)) < 0.15,
        "truncated": rng.random((steps, NUM_ENVS, 1)) < 0.05,
    }
    data["terminated"][ROLLOUTS - 1] = data["truncated"][ROLLOUTS - 1] = False  # the episodes there cross it
    dones = (data["terminated"] | data["truncated"])[..., 0]
    for env in range(NUM_ENVS):
        assert not dones[ROLLOUTS - 1, env] and dones[ROLLOUTS:, env].any()
    cfg = {
        "rollouts": ROLLOUTS,
        "percentile": percentile,
        "discount_factor": 0.9,
        "learning_rate": 3e-3,
        "state_preprocessor_kwargs": {"size": 4},
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    torch_policy = TorchPolicy()
    jax_policy = load_torch_weights(JaxPolicy(), "policy", torch_policy)
    initial = flax_params(torch_policy)["params"]
    torch_agent = TorchCEM(
        models={"policy": torch_policy},
        memory=TorchMemory(ROLLOUTS, NUM_ENVS, "cpu"),
        cfg={**cfg, "state_preprocessor": TorchScaler},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        device="cpu",
    )
    jax_agent = JaxCEM(
        models={"policy": jax_policy},
        memory=JaxMemory(ROLLOUTS, NUM_ENVS),
        cfg={**cfg, "state_preprocessor": JaxScaler},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
    )
    for agent, to_array in ((torch_agent, torch.from_numpy), (jax_agent, np.asarray)):
        agent.init(trainer_cfg={"timesteps": ROLLOUTS})
        for t in range(steps):
            agent.memory.add_samples(**{name: to_array(value[t]) for name, value in data.items()})
            if (t + 1) % ROLLOUTS == 0:
                agent._update(timestep=t, timesteps=100)

    for tag in ("Loss / Policy loss", "Coefficient / Return threshold", "Coefficient / Mean discounted returns"):
        assert len(torch_agent.tracking_data[tag]) == 2
        for update in range(2):
            assert float(jax_agent.tracking_data[tag][update]) == pytest.approx(
                float(torch_agent.tracking_data[tag][update]), abs=1e-4
            )
    expected = flax_params(torch_policy)["params"]
    actual = jax_policy.state_dict.params["params"]
    for layer in ("hidden", "output"):
        for name in ("kernel", "bias"):
            np.testing.assert_allclose(actual[layer][name], expected[layer][name], atol=1e-4)
    assert not np.allclose(expected["output"]["kernel"], initial["output"]["kernel"])  # the update moved them
    np.testing.assert_allclose(
        jax_agent._state_preprocessor.running_mean, torch_agent._state_preprocessor.running_mean.numpy(), atol=1e-5
    )
