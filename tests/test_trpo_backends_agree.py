"""The two TRPO backends implement the same algorithm: one update on the same data from the same weights gives the
same losses, standard deviation and new weights (to 1e-4). The transitions go through ``record_transition``, so
log pi_old, the values and the truncation bootstrap are each backend's own."""

import flax.linen as fnn
import gymnasium
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn as tnn
from agree_models import JaxValue, TorchValue, flax_params, load_torch_weights, record_rollout_and_update

from skrl_like.jax.agents.trpo import TRPO as JaxTRPO
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.models import GaussianMixin as JaxGaussian
from skrl_like.jax.models import Model as JaxModel
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.agents.trpo import TRPO as TorchTRPO
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.models import GaussianMixin as TorchGaussian
from skrl_like.torch.models import Model as TorchModel
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (3,))
ACTIONS = gymnasium.spaces.Box(-2.0, 2.0, (2,))
ROLLOUTS, NUM_ENVS, HIDDEN = 8, 4, 16


class TorchPolicy(TorchGaussian, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchGaussian.__init__(self, clip_actions=False)
        self.net = tnn.Sequential(tnn.Linear(3, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 2))
        self.log_std_parameter = tnn.Parameter(torch.tensor([-0.3, 0.2]))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), self.log_std_parameter, {}


class JaxPolicy(JaxGaussian, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxGaussian.__init__(self, clip_actions=False)

    @fnn.compact
    def __call__(self, inputs, role):
        log_std = self.param("log_std_parameter", lambda _: jnp.zeros(2, jnp.float32))
        return fnn.Dense(2, name="output")(fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"]))), log_std, {}


CFG = {
    "rollouts": ROLLOUTS,
    "learning_epochs": 3,
    "mini_batches": 2,
    "discount_factor": 0.9,
    "lambda": 0.8,
    "value_learning_rate": 3e-3,
    "grad_norm_clip": 0.5,  # only the value model is clipped: the same rule in both backends
    "value_loss_scale": 0.5,
    "max_kl_divergence": 0.02,
    "conjugate_gradient_steps": 5,  # float32 CG amplifies rounding with every iteration: fewer keep it within 1e-4
    "experiment": {"write_interval": 0, "checkpoint_interval": 0},
}


@pytest.mark.parametrize("time_limit_bootstrap", [False, True])
def test_one_trpo_update_gives_the_same_losses_and_weights_in_torch_and_jax(time_limit_bootstrap):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    states = rng.normal(size=(ROLLOUTS, NUM_ENVS, 3)).astype(np.float32)
    actions = rng.normal(size=(ROLLOUTS, NUM_ENVS, 2)).astype(np.float32)
    rewards = rng.normal(size=(ROLLOUTS, NUM_ENVS, 1)).astype(np.float32)
    terminated = rng.random((ROLLOUTS, NUM_ENVS, 1)) < 0.1
    truncated = rng.random((ROLLOUTS, NUM_ENVS, 1)) < 0.1
    last_states = rng.normal(size=(NUM_ENVS, 3)).astype(np.float32)

    torch_policy, torch_value = TorchPolicy(), TorchValue(OBSERVATIONS, ACTIONS)
    jax_policy = load_torch_weights(JaxPolicy(), "policy", torch_policy)
    jax_value = load_torch_weights(JaxValue(OBSERVATIONS, ACTIONS), "value", torch_value)

    scalers = {
        "state_preprocessor_kwargs": {"size": 3},
        "value_preprocessor_kwargs": {"size": 1},
        "time_limit_bootstrap": time_limit_bootstrap,
    }
    torch_agent = TorchTRPO(
        models={"policy": torch_policy, "value": torch_value},
        memory=TorchMemory(ROLLOUTS, NUM_ENVS, "cpu"),
        cfg={**CFG, **scalers, "state_preprocessor": TorchScaler, "value_preprocessor": TorchScaler},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        device="cpu",
    )
    jax_agent = JaxTRPO(
        models={"policy": jax_policy, "value": jax_value},
        memory=JaxMemory(ROLLOUTS, NUM_ENVS),
        cfg={**CFG, **scalers, "state_preprocessor": JaxScaler, "value_preprocessor": JaxScaler},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
    )
    start = flax_params(torch_policy)["params"]
    for agent, to_array in ((torch_agent, torch.from_numpy), (jax_agent, np.asarray)):
        record_rollout_and_update(agent, to_array, states, actions, rewards, terminated, truncated, last_states)

    for tag in ("Loss / Policy loss", "Loss / Value loss", "Policy / Standard deviation"):
        assert float(jax_agent.tracking_data[tag][0]) == pytest.approx(
            float(torch_agent.tracking_data[tag][0]), abs=1e-4
        )
    policy, value = flax_params(torch_policy)["params"], flax_params(torch_value)["params"]
    # the step was taken (a restored policy would agree trivially)
    assert not np.allclose(policy["output"]["kernel"], start["output"]["kernel"], atol=1e-4)
    for params, expected in ((jax_policy.state_dict.params, policy), (jax_value.state_dict.params, value)):
        for layer in ("hidden", "output"):
            for name in ("kernel", "bias"):
                np.testing.assert_allclose(params["params"][layer][name], expected[layer][name], atol=1e-4)
    np.testing.assert_allclose(
        jax_policy.state_dict.params["params"]["log_std_parameter"], policy["log_std_parameter"], atol=1e-4
    )
