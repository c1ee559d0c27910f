"""The two backends implement the same RPO: one update on the same data from the same weights gives the same
losses and new weights (to 1e-4). The models use ``inputs["alpha"]`` deterministically (the mean shifted by alpha,
the value scaled by 1 + alpha), so that the test sees alpha reach every policy and value call of both backends
without depending on random draws, which the backends cannot share."""

import flax.linen as fnn
import gymnasium
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn as tnn
from agree_models import flax_params, load_torch_weights, record_rollout_and_update

from skrl_like.jax.agents.rpo import RPO as JaxRPO
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.models import DeterministicMixin as JaxDeterministic
from skrl_like.jax.models import GaussianMixin as JaxGaussian
from skrl_like.jax.models import Model as JaxModel
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.agents.rpo import RPO as TorchRPO
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.models import DeterministicMixin as TorchDeterministic
from skrl_like.torch.models import GaussianMixin as TorchGaussian
from skrl_like.torch.models import Model as TorchModel
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (3,))
ACTIONS = gymnasium.spaces.Box(-2.0, 2.0, (2,))
ROLLOUTS, NUM_ENVS, HIDDEN, ALPHA = 8, 4, 16, 0.3


class TorchPolicy(TorchGaussian, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchGaussian.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(3, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 2))
        self.log_std_parameter = tnn.Parameter(torch.tensor([-0.3, 0.2]))

    def compute(self, inputs, role):
        return self.net(inputs["states"]) + inputs["alpha"], self.log_std_parameter, {}


class TorchValue(TorchDeterministic, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchDeterministic.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(3, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 1))

    def compute(self, inputs, role):
        return self.net(inputs["states"]) * (1 + inputs["alpha"]), {}


class JaxPolicy(JaxGaussian, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxGaussian.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        mean = fnn.Dense(2, name="output")(fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"])))
        log_std = self.param("log_std_parameter", lambda _: jnp.zeros(2))
        return mean + inputs.get("alpha", 0.0), log_std, {}


class JaxValue(JaxDeterministic, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxDeterministic.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        value = fnn.Dense(1, name="output")(fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"])))
        return value * (1 + inputs.get("alpha", 0.0)), {}


CFG = {
    "rollouts": ROLLOUTS,
    "learning_epochs": 3,
    "mini_batches": 2,
    "alpha": ALPHA,
    "discount_factor": 0.9,
    "lambda": 0.8,
    "learning_rate": 3e-3,
    "grad_norm_clip": 0.0,  # torch clips the joint norm, JAX each model's: compare unclipped
    "entropy_loss_scale": 0.01,
    "value_loss_scale": 0.5,
    "clip_predicted_values": True,
    "state_preprocessor_kwargs": {"size": 3},
    "value_preprocessor_kwargs": {"size": 1},
    "experiment": {"write_interval": 0, "checkpoint_interval": 0},
}


def test_one_rpo_update_gives_the_same_losses_and_weights_in_torch_and_jax():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    states = rng.normal(size=(ROLLOUTS, NUM_ENVS, 3)).astype(np.float32)
    actions = rng.uniform(-2, 2, size=(ROLLOUTS, NUM_ENVS, 2)).astype(np.float32)
    rewards = rng.normal(size=(ROLLOUTS, NUM_ENVS, 1)).astype(np.float32)
    terminated = rng.random((ROLLOUTS, NUM_ENVS, 1)) < 0.1
    truncated = rng.random((ROLLOUTS, NUM_ENVS, 1)) < 0.1
    last_states = rng.normal(size=(NUM_ENVS, 3)).astype(np.float32)

    torch_policy, torch_value = TorchPolicy(), TorchValue()
    jax_policy = load_torch_weights(JaxPolicy(), "policy", torch_policy)
    jax_value = load_torch_weights(JaxValue(), "value", torch_value)

    torch_agent = TorchRPO(
        models={"policy": torch_policy, "value": torch_value},
        memory=TorchMemory(ROLLOUTS, NUM_ENVS, "cpu"),
        cfg={**CFG, "state_preprocessor": TorchScaler, "value_preprocessor": TorchScaler},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        device="cpu",
    )
    jax_agent = JaxRPO(
        models={"policy": jax_policy, "value": jax_value},
        memory=JaxMemory(ROLLOUTS, NUM_ENVS),
        cfg={**CFG, "state_preprocessor": JaxScaler, "value_preprocessor": JaxScaler},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
    )
    for agent, to_array in ((torch_agent, torch.from_numpy), (jax_agent, np.asarray)):
        record_rollout_and_update(agent, to_array, states, actions, rewards, terminated, truncated, last_states)

    for tag in ("Loss / Policy loss", "Loss / Value loss", "Loss / Entropy loss", "Policy / Standard deviation"):
        assert float(jax_agent.tracking_data[tag][0]) == pytest.approx(
            float(torch_agent.tracking_data[tag][0]), abs=1e-4
        ), tag
    for torch_model, jax_model in ((torch_policy, jax_policy), (torch_value, jax_value)):
        updated = flax_params(torch_model)["params"]
        for layer in ("hidden", "output"):
            for name in ("kernel", "bias"):
                np.testing.assert_allclose(
                    jax_model.state_dict.params["params"][layer][name], updated[layer][name], atol=1e-4
                )
    np.testing.assert_allclose(
        jax_policy.state_dict.params["params"]["log_std_parameter"],
        torch_policy.log_std_parameter.detach().numpy(),
        atol=1e-4,
    )
