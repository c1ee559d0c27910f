"""The two backends implement the same SAC: two gradient steps on the same batch from the same weights, with the same
policy noise, give the same losses and new parameters (policy, both critics, both targets, log(alpha)) to 1e-4, with
a state preprocessor (updated twice per step). Gradient clipping is off: torch clips both critics' joint norm, JAX
each critic's own [compat], so clipped critic steps differ by design."""

import flax.linen as fnn
import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn as tnn
from agree_models import JaxCritic, TorchCritic, flax_params, load_torch_weights
from sac_reference import ACTIONS, BATCH_SIZE, OBSERVATIONS, batch, noise_pattern

from skrl_like.jax.agents import base as jax_agent_base
from skrl_like.jax.agents.sac import SAC as JaxSAC
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.models import GaussianMixin as JaxGaussian
from skrl_like.jax.models import Model as JaxModel
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.agents import base as torch_agent_base
from skrl_like.torch.agents.sac import SAC as TorchSAC
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.models import GaussianMixin as TorchGaussian
from skrl_like.torch.models import Model as TorchModel
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

HIDDEN = 16
ROLES = ("policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")
CFG = {
    "gradient_steps": 2,
    "batch_size": BATCH_SIZE,
    "discount_factor": 0.95,
    "polyak": 0.2,
    "actor_learning_rate": 0.01,
    "critic_learning_rate": 0.02,
    "entropy_learning_rate": 0.05,
    "initial_entropy_value": 0.4,
    "grad_norm_clip": 0,
    "experiment": {"write_interval": 0, "checkpoint_interval": 0},
}


class TorchPolicy(TorchGaussian, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchGaussian.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(3, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 1))
        self.log_std_parameter = tnn.Parameter(torch.tensor([-0.4]))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), self.log_std_parameter, {}


class JaxPolicy(JaxGaussian, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxGaussian.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        hidden = fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"]))
        return fnn.Dense(1, name="output")(hidden), self.param("log_std", lambda _: jnp.zeros(1)), {}


@pytest.fixture
def same_batch_and_noise(monkeypatch):
    """Both backends sample the hand-made batch at every gradient step and draw ``noise_pattern`` as normal noise."""
    data = batch()
    monkeypatch.setattr(
        torch_agent_base, "sample_batch", lambda memory, names, size: [torch.tensor(data[name]) for name in names]
    )
    monkeypatch.setattr(
        jax_agent_base,
        "sample_batches",
        lambda memory, names, size, steps: tuple(jnp.stack([jnp.asarray(data[name])] * steps) for name in names),
    )
    monkeypatch.setattr(torch, "randn_like", lambda tensor: torch.tensor(noise_pattern(tuple(tensor.shape))))
    monkeypatch.setattr(
        jax.random, "normal", lambda key, shape=(), dtype=jnp.float32: jnp.asarray(noise_pattern(shape), dtype)
    )
    jax.clear_caches()  # drop traces made with the patched draw afterwards too
    yield
    jax.clear_caches()


def test_torch_and_jax_agree_on_two_gradient_steps(same_batch_and_noise):
    torch.manual_seed(0)
    torch_models = {role: TorchPolicy() if role == "policy" else TorchCritic(OBSERVATIONS, ACTIONS) for role in ROLES}
    torch_agent = TorchSAC(
        models=torch_models,
        memory=TorchMemory(memory_size=16),
        cfg={**CFG, "state_preprocessor": TorchScaler, "state_preprocessor_kwargs": {"size": OBSERVATIONS}},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
    )
    jax_models = {role: JaxPolicy() if role == "policy" else JaxCritic(OBSERVATIONS, ACTIONS) for role in ROLES}
    for role, model in jax_models.items():
        load_torch_weights(model, role, torch_models[role], "log_std")
    jax_agent = JaxSAC(
        models=jax_models,
        memory=JaxMemory(memory_size=16),
        cfg={**CFG, "state_preprocessor": JaxScaler, "state_preprocessor_kwargs": {"size": OBSERVATIONS}},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
    )
    initial = {role: flax_params(torch_models[role], "log_std") for role in ROLES}
    for agent in (torch_agent, jax_agent):
        agent.init()
        agent.write_interval = 1  # track the losses of this one update (read before anything writes them)
        agent._update(0, 1)

    for tag in ("Loss / Critic loss", "Loss / Policy loss", "Loss / Entropy loss", "Target / Target (mean)"):
        torch_values = [float(value) for value in torch_agent.tracking_data[tag]]
        jax_values = [float(value) for value in jax_agent.tracking_data[tag]]
        assert len(torch_values) == len(jax_values) == 2
        np.testing.assert_allclose(torch_values, jax_values, rtol=1e-4, atol=1e-5, err_msg=tag)
    for role in ROLES:
        expected = flax_params(torch_models[role], "log_std")
        np.testing.assert_allclose(
            *(jax.flatten_util.ravel_pytree(tree)[0] for tree in (expected, jax_models[role].state_dict.params)),
            rtol=1e-4,
            atol=1e-5,
            err_msg=role,
        )
    np.testing.assert_allclose(
        torch_agent.log_entropy_coefficient.detach().numpy(), jax_agent.log_entropy_coefficient.value, atol=1e-5
    )
    torch_scaler, jax_scaler = torch_agent._state_preprocessor, jax_agent._state_preprocessor
    np.testing.assert_allclose(torch_scaler.running_mean.numpy(), jax_scaler.running_mean, rtol=1e-5)
    for role in ROLES:  # every model moved: the comparison is not of untouched copies
        before, after = (
            jax.flatten_util.ravel_pytree(tree)[0]
            for tree in (initial[role], flax_params(torch_models[role], "log_std"))
        )
        assert np.abs(before - after).max() > 1e-3, role
