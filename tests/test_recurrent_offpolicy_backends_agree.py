"""One DDPG_RNN, TD3_RNN and SAC_RNN update agree across backends to 1e-4, from the same weights (torch copied into flax)
and the same replay: sequences with a reset inside, each started from its stored hidden state."""

import flax.linen as fnn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from test_recurrent_backends_agree import flax_cell_params
from torch import nn

from skrl_like.jax.agents.ddpg import DDPG_RNN as JaxDDPG_RNN
from skrl_like.jax.agents.sac import SAC_RNN as JaxSAC_RNN
from skrl_like.jax.agents.td3 import TD3_RNN as JaxTD3_RNN
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.models import DeterministicMixin as JaxDeterministic
from skrl_like.jax.models import GaussianMixin as JaxGaussian
from skrl_like.jax.models import Model as JaxModel
from skrl_like.jax.models.recurrent import RecurrentLayer
from skrl_like.torch.agents.ddpg import DDPG_RNN as TorchDDPG_RNN
from skrl_like.torch.agents.sac import SAC_RNN as TorchSAC_RNN
from skrl_like.torch.agents.td3 import TD3_RNN as TorchTD3_RNN
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.models.recurrent import make_recurrent_module, recurrent_forward

OBSERVATIONS = gymnasium.spaces.Box(-1.0, 1.0, (3,))
ACTIONS = gymnasium.spaces.Box(-1.0, 1.0, (1,))
HIDDEN, NUM_ENVS, LENGTH, MEMORY_SIZE = 4, 2, 3, 4
BATCH_SIZE = NUM_ENVS * (MEMORY_SIZE - LENGTH + 1)  # every sequence the memory holds: the same batch in any order
SPECIFICATION = {"rnn": {"sequence_length": LENGTH, "sizes": [(1, NUM_ENVS, HIDDEN)]}}


class TorchNet(Model):
    def __init__(self, critic):
        Model.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        self.critic = critic
        self.rnn = make_recurrent_module("GRU", 3, HIDDEN)
        self.head = nn.Linear(HIDDEN + (1 if critic else 0), 1)

    def get_specification(self):
        return SPECIFICATION

    def output(self, inputs):
        terminated = inputs.get("terminated")
        features, states = recurrent_forward(self.rnn, inputs["states"], inputs["rnn"], LENGTH, terminated, True)
        if self.critic:
            features = torch.cat([features, inputs["taken_actions"]], -1)
        return self.head(features), states


class TorchDeterministic(DeterministicMixin, TorchNet):
    def __init__(self, critic=False):
        TorchNet.__init__(self, critic)
        DeterministicMixin.__init__(self)

    def compute(self, inputs, role=""):
        output, states = self.output(inputs)
        return (output if self.critic else torch.tanh(output)), {"rnn": states}


class TorchGaussian(GaussianMixin, TorchNet):
    def __init__(self):
        TorchNet.__init__(self, False)
        GaussianMixin.__init__(self)
        self.log_std_parameter = nn.Parameter(torch.full((1,), -0.5))

    def compute(self, inputs, role=""):
        output, states = self.output(inputs)
        return output, self.log_std_parameter, {"rnn": states}


class JaxNet(JaxModel):
    critic = False  # a class attribute, not a flax field

    def get_specification(self):
        return SPECIFICATION

    def output(self, inputs):
        terminated = inputs.get("terminated")
        features, states = self.gru(inputs["states"], inputs["rnn"], terminated, terminated is not None)
        if self.critic:
            features = jnp.concatenate([features, inputs["taken_actions"]], -1)
        return self.head(features), states

    def setup(self):
        self.gru = RecurrentLayer("GRU", HIDDEN, 1, LENGTH)
        self.head = fnn.Dense(1)


class JaxDeterministicNet(JaxDeterministic, JaxNet):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, parent=None, name=None):
        JaxModel.__init__(self, observation_space, action_space, device, parent, name)
        JaxDeterministic.__init__(self)

    def __call__(self, inputs, role=""):
        output, states = self.output(inputs)
        return (output if self.critic else jnp.tanh(output)), {"rnn": states}


class JaxCriticNet(JaxDeterministicNet):
    critic = True


class JaxGaussianNet(JaxGaussian, JaxNet):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, parent=None, name=None):
        JaxModel.__init__(self, observation_space, action_space, device, parent, name)
        JaxGaussian.__init__(self)

    def setup(self):
        JaxNet.setup(self)
        self.log_std = self.param("log_std", lambda _: jnp.full((1,), -0.5))

    def __call__(self, inputs, role=""):
        output, states = self.output(inputs)
        return output, self.log_std, {"rnn": states}


def flax_params(model: TorchNet) -> dict:
    params = {
        "gru": {"layer_0": {"cell": flax_cell_params("GRU", model.rnn, 0)}},
        "head": {"kernel": model.head.weight.detach().numpy().T, "bias": model.head.bias.detach().numpy()},
    }
    if hasattr(model, "log_std_parameter"):
        params["log_std"] = model.log_std_parameter.detach().numpy()
    return {"params": jax.tree_util.tree_map(jnp.asarray, params)}


def replay(seed=0):
    """MEMORY_SIZE steps of NUM_ENVS environments; environment 1's episode ends at step 1 (a reset inside)."""
    rng = np.random.default_rng(seed)
    terminated = np.zeros((MEMORY_SIZE, NUM_ENVS, 1), bool)
    terminated[1, 1] = True
    return {
        "states": rng.uniform(-1, 1, (MEMORY_SIZE, NUM_ENVS, 3)).astype(np.float32),
        "actions": rng.uniform(-1, 1, (MEMORY_SIZE, NUM_ENVS, 1)).astype(np.float32),
        "rewards": rng.normal(size=(MEMORY_SIZE, NUM_ENVS, 1)).astype(np.float32),
        "next_states": rng.uniform(-1, 1, (MEMORY_SIZE, NUM_ENVS, 3)).astype(np.float32),
        "terminated": terminated,
        "truncated": np.zeros_like(terminated),
        "rnn_policy_0": rng.normal(size=(MEMORY_SIZE, NUM_ENVS, 1, HIDDEN)).astype(np.float32),
    }


def build(agent_class, models, memory, cfg):
    agent = agent_class(models=models, memory=memory, cfg=cfg, observation_space=OBSERVATIONS, action_space=ACTIONS)
    agent.init()
    data = replay()
    for step in range(MEMORY_SIZE):
        memory.add_samples(**{name: values[step] for name, values in data.items()})
    agent.set_mode("train")
    return agent


def torch_memory_samples(memory):
    original = memory.add_samples
    memory.add_samples = lambda **tensors: original(**{k: torch.as_tensor(v) for k, v in tensors.items()})
    return memory


@pytest.mark.parametrize("algorithm", ["DDPG_RNN", "TD3_RNN", "SAC_RNN"])
def test_one_update_agrees_across_backends(algorithm, monkeypatch):
    torch.manual_seed(0)
    if algorithm == "DDPG_RNN":
        roles = {"policy": False, "target_policy": False, "critic": True, "target_critic": True}
        torch_models = {role: TorchDeterministic(critic) for role, critic in roles.items()}
        jax_models = {role: (JaxCriticNet if critic else JaxDeterministicNet)() for role, critic in roles.items()}
        classes, cfg = (TorchDDPG_RNN, JaxDDPG_RNN), {}
    elif algorithm == "TD3_RNN":
        roles = {"policy": False, "target_policy": False}
        roles.update({role: True for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2")})
        torch_models = {role: TorchDeterministic(critic) for role, critic in roles.items()}
        jax_models = {role: (JaxCriticNet if critic else JaxDeterministicNet)() for role, critic in roles.items()}
        classes, cfg = (TorchTD3_RNN, JaxTD3_RNN), {"policy_delay": 1}  # the policy steps in this update too
    else:
        roles = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
        torch_models = {"policy": TorchGaussian(), **{role: TorchDeterministic(True) for role in roles}}
        jax_models = {"policy": JaxGaussianNet(), **{role: JaxCriticNet() for role in roles}}
        classes, cfg = (TorchSAC_RNN, JaxSAC_RNN), {"learn_entropy": False}
        # the same normal draw for every row in both backends (the backends draw the sequences in other orders)
        draw = lambda shape: np.full(shape, 0.3, np.float32)  # noqa: E731
        monkeypatch.setattr(torch, "randn_like", lambda tensor: torch.tensor(draw(tuple(tensor.shape))))
        monkeypatch.setattr(jax.random, "normal", lambda key, shape=(), dtype=jnp.float32: jnp.asarray(draw(shape)))
        jax.clear_caches()
    for role, model in jax_models.items():
        model.init_state_dict(role)
        model.state_dict = model.state_dict.replace(params=flax_params(torch_models[role]))
    cfg = {"batch_size": BATCH_SIZE, "experiment": {"write_interval": 0, "checkpoint_interval": 0}, **cfg}
    torch_agent = build(
        classes[0], torch_models, torch_memory_samples(TorchMemory(MEMORY_SIZE, NUM_ENVS, replacement=False)), cfg
    )
    jax_agent = build(classes[1], jax_models, JaxMemory(MEMORY_SIZE, NUM_ENVS, replacement=False), cfg)
    critic = "critic" if algorithm == "DDPG_RNN" else "critic_1"
    initial_policy = flax_params(torch_models["policy"])["params"]["head"]["kernel"]
    initial = flax_params(torch_models[critic])["params"]["head"]["kernel"]
    torch_agent._update(0, 1)
    jax_agent._update(0, 1)
    jax.clear_caches()
    for role in ("policy", critic):
        expected = flax_params(torch_models[role])
        leaves = jax.tree_util.tree_leaves_with_path(jax_models[role].state_dict.params)
        for (path, actual), wanted in zip(leaves, jax.tree_util.tree_leaves(expected)):
            if jax.tree_util.keystr(path).endswith("['bias']") and ("'ir'" in str(path) or "'iz'" in str(path)):
                continue  # torch's two biases of r and z are one in flax: Adam steps their sum twice as far
            np.testing.assert_allclose(np.asarray(actual), np.asarray(wanted), atol=1e-4, err_msg=f"{role} {path}")
    # the update moved the parameters (not a vacuous agreement)
    assert not np.allclose(initial, flax_params(torch_models[critic])["params"]["head"]["kernel"])
    assert not np.allclose(initial_policy, flax_params(torch_models["policy"])["params"]["head"]["kernel"])
