"""Checkpoints of both backends through the PPO agents: a mismatching checkpoint loads nothing, a model told to
read an agent checkpoint says what the file is, and a killed save leaves nothing behind after the next one."""

import os
import time

import gymnasium
import numpy as np
import pytest

from skrl_like.utils import set_seed

OBSERVATIONS = gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
ACTIONS = gymnasium.spaces.Discrete(2)
NUM_ENVS = 2


class TorchBackend:
    name = "torch"
    extension = ".pt"

    def make_agent(self, value_width=32, seed=0, experiment=None):
        import torch.nn as nn

        from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
        from skrl_like.torch.memories import RandomMemory
        from skrl_like.torch.models import CategoricalMixin, DeterministicMixin, Model

        class Policy(CategoricalMixin, Model):
            def __init__(self):
                Model.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
                CategoricalMixin.__init__(self)
                self.net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))

            def compute(self, inputs, role):
                return self.net(inputs["states"]), {}

        class Value(DeterministicMixin, Model):
            def __init__(self):
                Model.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
                DeterministicMixin.__init__(self)
                self.net = nn.Sequential(nn.Linear(4, value_width), nn.Tanh(), nn.Linear(value_width, 1))

            def compute(self, inputs, role):
                return self.net(inputs["states"]), {}

        set_seed(seed)
        experiment = experiment or {"write_interval": 0, "checkpoint_interval": 0}
        cfg = {**PPO_DEFAULT_CONFIG, "rollouts": 4, "experiment": experiment}
        return PPO(
            models={"policy": Policy(), "value": Value()},
            memory=RandomMemory(memory_size=4, num_envs=NUM_ENVS, device="cpu"),
            cfg=cfg,
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
            device="cpu",
        )

    @staticmethod
    def parameters(model):
        return [tensor.detach().numpy().copy() for tensor in model.state_dict().values()]


class JaxBackend:
    name = "jax"
    extension = ".pickle"

    def make_agent(self, value_width=32, seed=0, experiment=None):
        import flax.linen as nn
        import jax

        from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
        from skrl_like.jax.memories import RandomMemory
        from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, Model

        class Policy(CategoricalMixin, Model):
            def __init__(self, observation_space, action_space, device=None, **kwargs):
                Model.__init__(self, observation_space, action_space, device, **kwargs)
                CategoricalMixin.__init__(self)

            @nn.compact
            def __call__(self, inputs, role):
                return nn.Dense(2)(nn.tanh(nn.Dense(16)(inputs["states"]))), {}

        class Value(DeterministicMixin, Model):
            def __init__(self, observation_space, action_space, device=None, **kwargs):
                Model.__init__(self, observation_space, action_space, device, **kwargs)
                DeterministicMixin.__init__(self)

            @nn.compact
            def __call__(self, inputs, role):
                return nn.Dense(1)(nn.tanh(nn.Dense(value_width)(inputs["states"]))), {}

        set_seed(seed)
        models = {"policy": Policy(OBSERVATIONS, ACTIONS), "value": Value(OBSERVATIONS, ACTIONS)}
        for index, (role, model) in enumerate(models.items()):
            model.init_state_dict(role, key=jax.random.PRNGKey(seed * 10 + index))
        experiment = experiment or {"write_interval": 0, "checkpoint_interval": 0}
        cfg = {**PPO_DEFAULT_CONFIG, "rollouts": 4, "experiment": experiment}
        return PPO(
            models=models,
            memory=RandomMemory(memory_size=4, num_envs=NUM_ENVS),
            cfg=cfg,
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
        )

    @staticmethod
    def parameters(model):
        import jax

        return [np.array(leaf) for leaf in jax.tree_util.tree_leaves(model.state_dict.params)]


@pytest.fixture(params=[TorchBackend(), JaxBackend()], ids=["torch", "jax"])
def backend(request):
    return request.param


def assert_same(first, second):
    assert len(first) == len(second)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def assert_differ(first, second):
    assert any(a.shape != b.shape or not np.array_equal(a, b) for a, b in zip(first, second))


def test_a_checkpoint_whose_value_model_mismatches_loads_nothing(backend, tmp_path):
    # before: the policy (saved first) was overwritten, then the value raised: a half-loaded agent
    path = str(tmp_path / f"agent{backend.extension}")
    backend.make_agent(value_width=64, seed=1).save(path)
    agent = backend.make_agent(value_width=32, seed=2)
    policy_before = backend.parameters(agent.policy)
    value_before = backend.parameters(agent.value)
    assert_differ(policy_before, backend.parameters(backend.make_agent(value_width=64, seed=1).policy))

    with pytest.raises(ValueError, match="'value' module") as error:
        agent.load(path)
    assert_same(backend.parameters(agent.policy), policy_before)
    assert_same(backend.parameters(agent.value), value_before)
    assert "'policy' module" not in str(error.value)  # the policy fits: only the mismatching modules are named
    assert "nothing was loaded" in str(error.value)


def test_every_mismatching_module_is_named(backend, tmp_path):
    path = str(tmp_path / f"agent{backend.extension}")
    saved = backend.make_agent(value_width=64)
    saved.save(path)
    agent = backend.make_agent(value_width=8)
    with pytest.raises(ValueError) as error:
        agent.load(path)
    message = str(error.value)
    assert "'value' module" in message and "'policy' module" not in message
    # the value's first layer: 64 hidden units in the checkpoint, 8 here, in each backend's layout
    expected = "(64, 4) in the checkpoint, (8, 4) here" if backend.name == "torch" else "(4, 64) in the checkpoint"
    assert expected in message


def test_a_matching_checkpoint_still_loads_everything(backend, tmp_path):
    path = str(tmp_path / f"agent{backend.extension}")
    saved = backend.make_agent(seed=1)
    saved.save(path)
    agent = backend.make_agent(seed=2)
    agent.load(path)
    assert_same(backend.parameters(agent.policy), backend.parameters(saved.policy))
    assert_same(backend.parameters(agent.value), backend.parameters(saved.value))


def test_model_load_of_an_agent_checkpoint_says_what_the_file_is(backend, tmp_path):
    # before: torch's "Unexpected key(s) in state_dict: policy, value, ..." / a msgpack ExtraData error
    path = str(tmp_path / f"agent{backend.extension}")
    saved = backend.make_agent(seed=1)
    saved.save(path)
    model = backend.make_agent(seed=2).policy
    before = backend.parameters(model)
    with pytest.raises(ValueError, match=r"is an agent checkpoint with modules \[.*'policy'.*'value'.*\]") as error:
        model.load(path)
    assert "agent.load(path)" in str(error.value) and "model.load(path, module='policy')" in str(error.value)
    assert_same(backend.parameters(model), before)
    with pytest.raises(ValueError, match=r"has no module 'critic': its modules are \[.*'policy'"):
        model.load(path, module="critic")

    model.load(path, module="policy")  # the way the message gives
    assert_same(backend.parameters(model), backend.parameters(saved.policy))


def test_model_load_of_a_corrupt_file_or_another_model(backend, tmp_path):
    path = tmp_path / f"model{backend.extension}"
    path.write_bytes(b"\x80\x04 truncated")
    model = backend.make_agent().policy
    with pytest.raises(ValueError, match="could not be read as a model checkpoint.*corrupt"):
        model.load(str(path))
    backend.make_agent(value_width=8).value.save(str(path))
    with pytest.raises(ValueError, match=r"does not match this Policy \(.*shape"):
        model.load(str(path))
    with pytest.raises(ValueError, match="is not an agent checkpoint"):
        model.load(str(path), module="policy")


def test_a_save_after_a_killed_one_leaves_no_temporary_file(backend, tmp_path):
    agent = backend.make_agent()
    leftover = tmp_path / f".tmp_skrl_0123abcd_agent_10{backend.extension}"  # a save killed mid-write
    leftover.write_bytes(b"partial")
    old = time.time() - 3600
    os.utime(leftover, (old, old))
    agent.save(str(tmp_path / f"agent_20{backend.extension}"))
    assert os.listdir(tmp_path) == [f"agent_20{backend.extension}"]


def test_model_load_reads_one_module_of_a_checkpoint_stored_separately(backend, tmp_path):
    experiment = {"directory": str(tmp_path), "experiment_name": "run", "store_separately": True}
    saved = backend.make_agent(seed=1, experiment={**experiment, "write_interval": 0, "checkpoint_interval": 0})
    saved.write_checkpoint(timestep=10, timesteps=100)
    model = backend.make_agent(seed=2).policy
    model.load(str(tmp_path / "run" / "checkpoints" / f"policy_10{backend.extension}"))
    assert_same(backend.parameters(model), backend.parameters(saved.policy))
