"""The two backends implement the same TD3: from identical weights, on one identical batch (the whole memory, so the
row order does not matter) with identical smoothing noise, two updates (a critic-only step, then a step with the
delayed policy step and the polyak targets) give the same losses and new weights to 1e-4."""

import flax.linen as fnn
import gymnasium
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn as tnn
from agree_models import JaxCritic, TorchCritic, load_torch_weights

from skrl_like.jax.agents.td3 import TD3 as JaxTD3
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.models import DeterministicMixin as JaxDeterministic
from skrl_like.jax.models import Model as JaxModel
from skrl_like.jax.resources.noises import Noise as JaxNoise
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.agents.td3 import TD3 as TorchTD3
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.models import DeterministicMixin as TorchDeterministic
from skrl_like.torch.models import Model as TorchModel
from skrl_like.torch.resources.noises import Noise as TorchNoise
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (3,), np.float32)
ACTIONS = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
ROWS, HIDDEN = 8, 16
ROLES = ("policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")
# one smoothing-noise value per update and action dimension, the same for every row (row order is free)
SMOOTHING = [np.array([0.7, -0.2], np.float32), np.array([-0.9, 0.3], np.float32)]


class TorchPolicy(TorchDeterministic, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchDeterministic.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(3, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 2))

    def compute(self, inputs, role):
        return torch.tanh(self.net(inputs["states"])), {}


class JaxPolicy(JaxDeterministic, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxDeterministic.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        hidden = fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"]))
        return jnp.tanh(fnn.Dense(2, name="output")(hidden)), {}


class TorchSmoothing(TorchNoise):
    def __init__(self):
        super().__init__("cpu")
        self.draws = 0

    def sample(self, size):
        self.draws += 1
        return torch.tensor(SMOOTHING[self.draws - 1]).expand(*size)


class JaxSmoothing(JaxNoise):
    def __init__(self):
        super().__init__()
        self.draws = 0

    def sample(self, size):
        self.draws += 1
        return np.broadcast_to(SMOOTHING[self.draws - 1], tuple(size))


def torch_params(model):
    return [p.detach().numpy() for p in model.net.parameters()]


def jax_params(model):
    params = model.state_dict.params["params"]
    return [np.asarray(params[layer][name]).T for layer in ("hidden", "output") for name in ("kernel", "bias")]


@pytest.mark.parametrize("with_preprocessor", [False, True])
def test_two_td3_updates_give_the_same_losses_and_weights_in_torch_and_jax(with_preprocessor):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    batch = {
        "states": rng.normal(size=(ROWS, 3)).astype(np.float32),
        "actions": rng.uniform(-1, 1, size=(ROWS, 2)).astype(np.float32),
        "rewards": rng.normal(size=(ROWS, 1)).astype(np.float32),
        "next_states": rng.normal(size=(ROWS, 3)).astype(np.float32),
        "terminated": rng.random((ROWS, 1)) < 0.2,
        "truncated": rng.random((ROWS, 1)) < 0.2,
    }
    torch_models = {role: TorchPolicy() for role in ROLES[:2]}
    torch_models.update({role: TorchCritic(OBSERVATIONS, ACTIONS) for role in ROLES[2:]})
    jax_models = {role: JaxPolicy() for role in ROLES[:2]}
    jax_models.update({role: JaxCritic(OBSERVATIONS, ACTIONS) for role in ROLES[2:]})
    for role, model in jax_models.items():
        load_torch_weights(model, role, torch_models[role])

    cfg = {
        "batch_size": ROWS,
        "gradient_steps": 1,
        "policy_delay": 2,
        "discount_factor": 0.95,
        "polyak": 0.3,
        "actor_learning_rate": 1e-2,
        "critic_learning_rate": 2e-2,
        "smooth_regularization_clip": 0.5,
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    torch_cfg = {**cfg, "smooth_regularization_noise": TorchSmoothing()}
    jax_cfg = {**cfg, "smooth_regularization_noise": JaxSmoothing()}
    if with_preprocessor:
        torch_cfg.update(state_preprocessor=TorchScaler, state_preprocessor_kwargs={"size": 3, "device": "cpu"})
        jax_cfg.update(state_preprocessor=JaxScaler, state_preprocessor_kwargs={"size": 3})
    initial = {role: torch_params(model)[0].copy() for role, model in torch_models.items()}
    agents = {
        "torch": TorchTD3(
            torch_models, TorchMemory(ROWS, 1, "cpu", replacement=False), OBSERVATIONS, ACTIONS, "cpu", torch_cfg
        ),
        "jax": JaxTD3(jax_models, JaxMemory(ROWS, 1, replacement=False), OBSERVATIONS, ACTIONS, None, jax_cfg),
    }
    for backend, agent in agents.items():
        agent.init()
        convert = torch.tensor if backend == "torch" else np.asarray
        for row in range(ROWS):
            sample = {name: convert(values[row : row + 1]) for name, values in batch.items()}
            agent.record_transition(infos={}, timestep=row, timesteps=100, **sample)
        agent._update(0, 100)  # critics only
        agent._update(1, 100)  # critics, then the policy and the three targets

    for tag in ("Loss / Critic loss", "Loss / Policy loss", "Target / Target (mean)", "Q-network / Q2 (max)"):
        torch_values = [float(x) for x in agents["torch"].tracking_data[tag]]
        jax_values = [float(x) for x in agents["jax"].tracking_data[tag]]
        np.testing.assert_allclose(jax_values, torch_values, rtol=1e-4, atol=1e-5, err_msg=tag)
    assert len(agents["torch"].tracking_data["Loss / Policy loss"]) == 1
    for role in ROLES:
        for jax_value, torch_value in zip(jax_params(jax_models[role]), torch_params(torch_models[role])):
            np.testing.assert_allclose(jax_value, torch_value, rtol=1e-4, atol=1e-5, err_msg=role)
    # the weights did move (a comparison of unchanged weights would prove nothing)
    for role in ROLES:
        assert not np.allclose(torch_params(torch_models[role])[0], initial[role]), role
