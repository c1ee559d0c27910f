"""CEM: two updates from identical weights on the same two rollouts of several environments (the second with episodes
crossing the rollout boundary, counted whole from the kept previous rollout) give the same losses, thresholds, mean
returns, weights and state statistics in torch and JAX."""

import flax.linen as fnn
import gymnasium
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn as tnn

from skrl_like.jax.agents.cem import CEM as JaxCEM
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.models import CategoricalMixin as JaxCategorical
from skrl_like.jax.models import Model as JaxModel
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.agents.cem import CEM as TorchCEM
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.models import CategoricalMixin as TorchCategorical
from skrl_like.torch.models import Model as TorchModel
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (4,))
ACTIONS = gymnasium.spaces.Discrete(3)
ROLLOUTS, NUM_ENVS, HIDDEN = 30, 3, 16


class TorchPolicy(TorchCategorical, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchCategorical.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(4, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 3))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class JaxPolicy(JaxCategorical, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxCategorical.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        return fnn.Dense(3, name="output")(fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"]))), {}


def _flax_params(torch_net):
    def as_dense(layer):
        return {
            "kernel": jnp.asarray(layer.weight.detach().numpy().T),
            "bias": jnp.asarray(layer.bias.detach().numpy()),
        }

    return {"params": {"hidden": as_dense(torch_net[0]), "output": as_dense(torch_net[2])}}


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
    jax_policy = JaxPolicy()
    jax_policy.init_state_dict("policy")
    jax_policy.state_dict = jax_policy.state_dict.replace(params=_flax_params(torch_policy.net))
    initial = _flax_params(torch_policy.net)["params"]
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
    expected = _flax_params(torch_policy.net)["params"]
    actual = jax_policy.state_dict.params["params"]
    for layer in ("hidden", "output"):
        for name in ("kernel", "bias"):
            np.testing.assert_allclose(actual[layer][name], expected[layer][name], atol=1e-4)
    assert not np.allclose(expected["output"]["kernel"], initial["output"]["kernel"])  # the update moved them
    np.testing.assert_allclose(
        jax_agent._state_preprocessor.running_mean, torch_agent._state_preprocessor.running_mean.numpy(), atol=1e-5
    )
