"""Host transfers of the JAX off-policy agents on the ordinary trainers' path: one per update (the packed report of
finite flags and tracked numbers) and one per exploring act of DDPG/TD3 with the NumPy backend (the actions), with
the numbers unchanged: the packed report is bit-exact for every dtype, the host exploration equals the device one."""

import contextlib

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like.jax.agents import off_policy
from skrl_like.jax.agents.ddpg import DDPG
from skrl_like.jax.agents.dqn import DQN
from skrl_like.jax.agents.off_policy import PackedReport, device_scalar, exploration_act, stack_samples
from skrl_like.jax.agents.sac import SAC
from skrl_like.jax.agents.td3 import TD3
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.resources.noises import GaussianNoise

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (3,), np.float32)
BOX = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
DISCRETE = gymnasium.spaces.Discrete(3)


@contextlib.contextmanager
def value_reads():
    """The JAX arrays read on the host one by one inside the block: ``.item()``, ``float()``, ``jax.device_get`` go
    through ``_value``, a Python call per array (~5 us each); ``np.asarray`` of one array reads its buffer directly."""
    read = []
    array_type = type(jnp.zeros(()))
    original = array_type._value

    def value(self):
        read.append(self.shape)
        return original.fget(self)

    array_type._value = property(value)
    try:
        yield read
    finally:
        array_type._value = original


class Linear(DeterministicMixin, Model):
    """A policy or a Q-network: ``Dense(num_actions)`` of the states."""

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions)(inputs["states"]), {}


class Critic(Linear):
    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(1)(jnp.concatenate([inputs["states"], inputs["taken_actions"]], -1)), {}


class Gaussian(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions)(inputs["states"]), self.param("log_std", nn.initializers.zeros, 2), {}


def make(algorithm, roles, action_space, policy=Linear, **cfg):
    classes = {"policy": policy, "target_policy": policy, "q_network": Linear, "target_q_network": Linear}
    models = {role: classes.get(role, Critic)(OBSERVATIONS, action_space) for role in roles}
    for role, model in models.items():
        model.init_state_dict(role)
    agent = algorithm(
        models=models,
        memory=RandomMemory(memory_size=32, num_envs=1),
        observation_space=OBSERVATIONS,
        action_space=action_space,
        cfg={"experiment": {"write_interval": 0, "checkpoint_interval": 0}, "batch_size": 4, **cfg},
    )
    agent.init()
    agent.set_running_mode("train")
    rng = np.random.default_rng(0)
    for _ in range(8):
        action = rng.integers(0, 3, (1, 1)) if action_space is DISCRETE else rng.uniform(-1, 1, (1, 2))
        agent.memory.add_samples(
            states=rng.normal(size=(1, 3)).astype(np.float32),
            actions=action.astype(np.int32 if action_space is DISCRETE else np.float32),
            rewards=rng.normal(size=(1, 1)).astype(np.float32),
            next_states=rng.normal(size=(1, 3)).astype(np.float32),
            terminated=np.zeros((1, 1), np.int8),
            truncated=np.zeros((1, 1), np.int8),
        )
    return agent


TWINS = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
AGENTS = {
    "DQN": lambda: make(DQN, ("q_network", "target_q_network"), DISCRETE),
    "DDPG": lambda: make(DDPG, ("policy", "target_policy", "critic", "target_critic"), BOX),
    "TD3": lambda: make(
        TD3, ("policy", "target_policy", *TWINS), BOX, smooth_regularization_noise=GaussianNoise(0.0, 0.2)
    ),
    "SAC": lambda: make(SAC, ("policy", *TWINS), BOX, policy=Gaussian),
}


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_an_update_reads_its_report_in_one_transfer(name):
    agent = AGENTS[name]()
    agent._update(0, 10)  # compiles
    unpacked = []
    unpack = agent._packed_learn.unpack
    agent._packed_learn.unpack = lambda packed: unpacked.append(packed.shape) or unpack(packed)
    with value_reads() as read:
        agent._update(1, 10)
        agent._update(2, 10)
    # a device_get of the report read every leaf, one by one (DQN: the flags, then four .item())
    assert read == [] and len(unpacked) == 2


class CountingJnp:
    """Stands for ``jax.numpy`` in a module: records every function taken from it (each an eager device dispatch)."""

    def __init__(self):
        self.used = []

    def __getattr__(self, name):
        self.used.append(name)
        return getattr(jnp, name)


def test_a_noisy_act_with_the_numpy_backend_adds_the_noise_on_the_host(monkeypatch):
    for algorithm in (TD3, DDPG):
        roles = ("policy", "target_policy", *(TWINS if algorithm is TD3 else ("critic", "target_critic")))
        exploration = {"noise": GaussianNoise(0.0, 0.1), "initial_scale": 1.0, "final_scale": 0.5, "timesteps": 100}
        agent = make(algorithm, roles, BOX, exploration=exploration)
        states = np.zeros((1, 3), np.float32)  # the policy's action is 0: no clipping
        agent.act(states, 0, 100)  # compiles
        counting = CountingJnp()
        monkeypatch.setattr(off_policy, "jnp", counting)
        with value_reads() as read:
            actions, _, outputs = agent.act(states, 1, 100)
        monkeypatch.undo()
        # the device path: scale, clip and three statistics, each an eager dispatch, the statistics read one by one
        assert counting.used == [] and read == [] and isinstance(actions, np.ndarray)
        noise = actions - np.asarray(outputs["mean_actions"])
        assert agent.tracking_data["Exploration / Exploration noise (max)"][-1] == pytest.approx(noise.max(), abs=1e-6)


@pytest.mark.parametrize("timestep", [3, 20])
def test_the_host_exploration_gives_the_device_ones_numbers(timestep):
    actions = jnp.array([[0.5, -0.25], [0.9, -0.99], [0.0, 0.1]], jnp.float32)
    low, high = -jnp.ones(2), jnp.ones(2)
    exploration = {"noise": None, "initial_scale": 1.0, "final_scale": 0.3, "timesteps": 10}
    results = []
    for host in (False, True):
        np.random.seed(1)
        tracked = []
        track = tracked.append
        out = exploration_act(
            actions, GaussianNoise(0.1, 0.7), exploration, timestep, 100, low, high,
            lambda tag, value, track=track: track((tag, float(value))), host=host,
        )  # fmt: skip
        results.append((np.asarray(out), tracked))
    (device, device_tracked), (host, host_tracked) = results
    assert host.dtype == device.dtype == np.float32
    np.testing.assert_array_equal(host, device)
    assert host_tracked == device_tracked and len(host_tracked) == 3


def test_the_packed_report_comes_back_bit_exact_in_every_dtype():
    report = {
        "loss": jnp.float32(np.float32(1.0) / 3),
        "special": jnp.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], jnp.float32),
        "flags": jnp.array([[True, False, True]]),
        "counter": jnp.int32(2**30 + 1),
        "small": jnp.array([-3, 7], jnp.int8),
        "half": jnp.array([1.5, -2.25], jnp.bfloat16),
        "nothing": jnp.zeros((0, 2), jnp.float32),
    }
    packed_learn = PackedReport(lambda learner: (learner, report))
    learner, packed = jax.jit(packed_learn)(jnp.ones(2))
    assert packed.dtype == jnp.uint32 and packed.ndim == 1
    unpacked, expected = packed_learn.unpack(packed), jax.device_get(report)
    assert unpacked.keys() == expected.keys()
    for key, value in expected.items():
        assert unpacked[key].dtype == value.dtype and unpacked[key].shape == value.shape, key
        assert unpacked[key].tobytes() == np.asarray(value).tobytes(), key


def test_device_scalars_pass_as_they_are_and_numbers_are_converted():
    rate = jnp.asarray(0.5, jnp.float32)
    assert device_scalar(rate, jnp.float32) is rate
    converted = device_scalar(3, jnp.int32)
    assert isinstance(converted, jax.Array) and converted.dtype == jnp.int32 and int(converted) == 3
    assert device_scalar(rate, jnp.int32).dtype == jnp.int32


def test_numpy_noise_samples_are_stacked_on_the_host_like_on_the_device():
    samples = [np.full((2, 1), value, np.float32) for value in (0.25, -1.5)]
    stacked = stack_samples(samples)
    assert isinstance(stacked, np.ndarray) and stacked.dtype == np.float32 and stacked.shape == (2, 2, 1)
    np.testing.assert_array_equal(stacked, np.asarray(stack_samples([jnp.asarray(s) for s in samples])))
