"""The two backends implement the same algorithm: one PPO update on the same data from the same weights
gives the same losses (to 1e-4) and new weights. The transitions go through ``record_transition``, so the
log-probabilities, value estimates and truncation bootstrap the update computes are each backend's own."""

import flax.linen as fnn
import gymnasium
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn as tnn

from skrl_like.jax.agents.ppo import PPO as JaxPPO
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.models import CategoricalMixin as JaxCategorical
from skrl_like.jax.models import DeterministicMixin as JaxDeterministic
from skrl_like.jax.models import Model as JaxModel
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.agents.ppo import PPO as TorchPPO
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.models import CategoricalMixin as TorchCategorical
from skrl_like.torch.models import DeterministicMixin as TorchDeterministic
from skrl_like.torch.models import Model as TorchModel
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (4,))
ACTIONS = gymnasium.spaces.Discrete(3)
ROLLOUTS, NUM_ENVS, HIDDEN = 8, 4, 16


class TorchPolicy(TorchCategorical, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchCategorical.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(4, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 3))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class TorchValue(TorchDeterministic, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchDeterministic.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(4, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 1))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class JaxPolicy(JaxCategorical, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxCategorical.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        return fnn.Dense(3, name="output")(fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"]))), {}


class JaxValue(JaxDeterministic, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxDeterministic.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        return fnn.Dense(1, name="output")(fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"]))), {}


def _flax_params(torch_net):
    hidden, output = torch_net[0], torch_net[2]

    def as_dense(layer):
        return {
            "kernel": jnp.asarray(layer.weight.detach().numpy().T),
            "bias": jnp.asarray(layer.bias.detach().numpy()),
        }

    return {"params": {"hidden": as_dense(hidden), "output": as_dense(output)}}


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
    jax_policy, jax_value = JaxPolicy(), JaxValue()
    jax_policy.init_state_dict("policy")
    jax_value.init_state_dict("value")
    jax_policy.state_dict = jax_policy.state_dict.replace(params=_flax_params(torch_policy.net))
    jax_value.state_dict = jax_value.state_dict.replace(params=_flax_params(torch_value.net))

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
        agent.init(trainer_cfg={"timesteps": ROLLOUTS})
        for t in range(ROLLOUTS):
            agent.record_transition(
                states=to_array(states[t]),
                actions=to_array(actions[t].astype(np.float32)),
                rewards=to_array(rewards[t]),
                next_states=to_array(states[t + 1] if t + 1 < ROLLOUTS else last_states),
                terminated=to_array(terminated[t]),
                truncated=to_array(truncated[t]),
                infos={},
                timestep=t,
                timesteps=ROLLOUTS,
            )
        agent._update(timestep=ROLLOUTS - 1, timesteps=ROLLOUTS)

    for tag in ("Loss / Policy loss", "Loss / Value loss", "Loss / Entropy loss"):
        assert float(jax_agent.tracking_data[tag][0]) == pytest.approx(
            float(torch_agent.tracking_data[tag][0]), abs=1e-4
        )
    updated = _flax_params(torch_policy.net)["params"]
    for layer in ("hidden", "output"):
        for name in ("kernel", "bias"):
            np.testing.assert_allclose(
                jax_policy.state_dict.params["params"][layer][name], updated[layer][name], atol=1e-4
            )
