"""The two backends implement the same DQN and DDQN: an update of two gradient steps (a target-update timestep, so
the target is blended after each) on the same replay data from the same weights gives the same losses, TD targets
and new online and target weights (to 1e-4). The memory is drawn whole without replacement, so both backends see
the same rows in every step (in different orders, which a mean does not see)."""

import flax.linen as fnn
import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as tnn
from agree_models import flax_params, load_torch_weights

from skrl_like.jax.agents.dqn import DDQN as JaxDDQN
from skrl_like.jax.agents.dqn import DQN as JaxDQN
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.models import DeterministicMixin as JaxDeterministic
from skrl_like.jax.models import Model as JaxModel
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.agents.dqn import DDQN as TorchDDQN
from skrl_like.torch.agents.dqn import DQN as TorchDQN
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.models import DeterministicMixin as TorchDeterministic
from skrl_like.torch.models import Model as TorchModel
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (4,))
ACTIONS = gymnasium.spaces.Discrete(3)
ROWS, HIDDEN = 32, 16


class TorchQ(TorchDeterministic, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchDeterministic.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(4, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 3))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class JaxQ(JaxDeterministic, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxDeterministic.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        return fnn.Dense(3, name="output")(fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"]))), {}


@pytest.mark.parametrize("algorithms", [(TorchDQN, JaxDQN), (TorchDDQN, JaxDDQN)], ids=["DQN", "DDQN"])
def test_one_update_gives_the_same_losses_and_weights_in_torch_and_jax(algorithms):
    torch_algorithm, jax_algorithm = algorithms
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    data = {
        "states": rng.normal(size=(ROWS, 4)).astype(np.float32),
        "actions": rng.integers(0, 3, size=(ROWS, 1)),
        "rewards": rng.normal(size=(ROWS, 1)).astype(np.float32),
        "next_states": rng.normal(size=(ROWS, 4)).astype(np.float32),
        "terminated": rng.random((ROWS, 1)) < 0.2,
        "truncated": rng.random((ROWS, 1)) < 0.2,
    }
    cfg = {
        "batch_size": ROWS,
        "gradient_steps": 2,
        "discount_factor": 0.9,
        "polyak": 0.3,
        "learning_rate": 3e-3,
        "target_update_interval": 2,
        "state_preprocessor_kwargs": {"size": 4},
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }

    torch_models = {"q_network": TorchQ(), "target_q_network": TorchQ()}
    jax_models = {"q_network": JaxQ(), "target_q_network": JaxQ()}
    for role, model in jax_models.items():
        load_torch_weights(model, role, torch_models["q_network"])
    torch_agent = torch_algorithm(
        models=torch_models,
        memory=TorchMemory(ROWS, 1, "cpu", replacement=False),
        cfg={**cfg, "state_preprocessor": TorchScaler},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        device="cpu",
    )
    jax_agent = jax_algorithm(
        models=jax_models,
        memory=JaxMemory(ROWS, 1, replacement=False),
        cfg={**cfg, "state_preprocessor": JaxScaler},
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
    )
    # the targets start apart from the online networks, so DDQN's choice of the next action matters
    with torch.no_grad():
        for parameter in torch_agent.target_q_network.parameters():
            parameter.add_(0.5 * torch.randn_like(parameter))
    jax_agent.target_q_network.state_dict = jax_agent.target_q_network.state_dict.replace(
        params=flax_params(torch_agent.target_q_network)
    )

    initial = {role: flax_params(model)["params"] for role, model in torch_models.items()}
    for agent, to_array in ((torch_agent, torch.from_numpy), (jax_agent, np.asarray)):
        agent.init(trainer_cfg={"timesteps": ROWS})
        for row in range(ROWS):
            agent.memory.add_samples(**{name: to_array(value[row : row + 1]) for name, value in data.items()})
        agent._update(timestep=4, timesteps=10)

    for tag in ("Loss / Q-network loss", "Target / Target (max)", "Target / Target (min)", "Target / Target (mean)"):
        assert float(jax_agent.tracking_data[tag][0]) == pytest.approx(
            float(torch_agent.tracking_data[tag][0]), abs=1e-4
        )
    for role in ("q_network", "target_q_network"):
        expected = flax_params(torch_agent.models[role])["params"]
        actual = jax_agent.models[role].state_dict.params["params"]
        for layer in ("hidden", "output"):
            for name in ("kernel", "bias"):
                np.testing.assert_allclose(actual[layer][name], expected[layer][name], atol=1e-4)
        # the update moved both networks (so the agreement above is about an update, not about two copies)
        assert not np.allclose(expected["output"]["kernel"], initial[role]["output"]["kernel"])
    np.testing.assert_allclose(
        jax_agent._state_preprocessor.running_mean, torch_agent._state_preprocessor.running_mean.numpy(), atol=1e-5
    )
