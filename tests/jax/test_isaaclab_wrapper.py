"""The Isaac Lab wrappers (JAX): wrap_env's tags, skrl 1.4.3's behaviour with JAX arrays (float32 observations and
rewards, int8 flags, (num_envs, 1) columns), torch tensors crossing by DLPack both ways (no device_put, actions
sharing the JAX buffer), outputs that the env's in-place buffers cannot change afterwards, the NumPy backend, the
"critic" group as state(), the multi-agent wrapper, and JAX PPO trained end to end on the stand-in env."""

import sys

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from skrl_like import config
from skrl_like.envs import IsaacLabStandInEnv
from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import isaaclab_envs, wrap_env
from skrl_like.jax.envs.wrappers.isaaclab_envs import IsaacLabMultiAgentWrapper, IsaacLabWrapper
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.jax.utils.model_instantiators import deterministic_model, gaussian_model
from tests.host_syncs import HostSyncs
from tests.isaaclab_helpers import CompositeEnv, MultiAgentEnv, task_in_module


@pytest.fixture(params=["jax", "numpy"])
def backend(request):
    previous = config.jax.backend
    config.jax.backend = request.param
    yield request.param
    config.jax.backend = previous


@pytest.fixture
def jax_backend():
    previous = config.jax.backend
    config.jax.backend = "jax"
    yield
    config.jax.backend = previous


def test_wrap_env_picks_the_isaac_lab_wrappers():
    assert type(wrap_env(task_in_module("isaaclab.envs.direct_rl_env")(num_envs=2), verbose=False)) is IsaacLabWrapper
    assert type(wrap_env(IsaacLabStandInEnv(num_envs=2), wrapper="isaaclab", verbose=False)) is IsaacLabWrapper
    assert type(wrap_env(MultiAgentEnv(), wrapper="isaaclab", verbose=False)) is IsaacLabMultiAgentWrapper
    with pytest.raises(ValueError, match="NVIDIA deprecated"):
        wrap_env(IsaacLabStandInEnv(num_envs=2), wrapper="omniverse-isaacgym", verbose=False)
    with pytest.raises(TypeError, match="only gymnax, Brax and Playground environments take wrapper arguments"):
        wrap_env(IsaacLabStandInEnv(num_envs=2), wrapper="isaaclab", verbose=False, num_envs=4)


def test_outputs_are_the_backends_arrays_with_the_envs_values(backend):
    env = IsaacLabStandInEnv(num_envs=4, seed=0)
    wrapped = wrap_env(env, verbose=False)
    array = jax.Array if backend == "jax" else np.ndarray
    assert wrapped.num_envs == 4 and wrapped.device == jax.devices("cpu")[0]
    assert wrapped.observation_space == env.single_observation_space["policy"]
    observations, _ = wrapped.reset()
    assert wrapped.reset()[0] is observations
    assert isinstance(observations, array) and observations.shape == (4, 60) and observations.dtype == np.float32
    actions = jnp.ones((4, 8)) if backend == "jax" else np.ones((4, 8), np.float32)
    observations, rewards, terminated, truncated, extras = wrapped.step(actions)
    assert all(isinstance(value, array) for value in (observations, rewards, terminated, truncated))
    assert rewards.shape == terminated.shape == truncated.shape == (4, 1)
    assert rewards.dtype == np.float32 and terminated.dtype == truncated.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(rewards)[:, 0], env.reward_buf.numpy())
    np.testing.assert_array_equal(np.asarray(observations)[:, 8:16], np.full((4, 8), 0.2, np.float32))
    assert extras is env.extras and wrapped.render() is None


def test_outputs_do_not_change_when_the_env_writes_its_buffers_in_place(backend):
    """Isaac Lab writes its reset flags (and a manager-based env its rewards) in place at the next step; JAX arrays
    are immutable, so the wrapper hands over copies of its own (on the device)."""
    env = IsaacLabStandInEnv(num_envs=3, max_episode_length=1, seed=1)
    wrapped = wrap_env(env, verbose=False)
    wrapped.reset()
    _, rewards, _, truncated, _ = wrapped.step(np.zeros((3, 8), np.float32))
    assert np.asarray(truncated).tolist() == [[1], [1], [1]]
    expected_rewards = np.asarray(rewards).copy()
    env.reset_time_outs.fill_(False)
    env.reward_buf.fill_(-5.0)
    assert np.asarray(truncated).tolist() == [[1], [1], [1]]
    np.testing.assert_array_equal(np.asarray(rewards), expected_rewards)


def test_tensors_cross_by_dlpack_without_device_put_or_host_syncs(jax_backend, monkeypatch):
    device_puts = []
    monkeypatch.setattr(isaaclab_envs.jax, "device_put", lambda *args, **kwargs: device_puts.append(args))
    env = CompositeEnv(num_envs=2)
    wrapped = wrap_env(env, wrapper="isaaclab", verbose=False)
    actions = jnp.array([[2.0, 0.5, -0.5], [1.0, 0.25, 0.25]])
    with HostSyncs() as syncs, jax.transfer_guard("disallow"):
        observations, _ = wrapped.reset()
        observations, rewards, terminated, truncated, _ = wrapped.step(actions)
        states = wrapped.state()
    assert syncs.calls == [] and device_puts == []
    discrete, box = env.received[-1]
    assert discrete.data_ptr() == actions.unsafe_buffer_pointer()  # a view of the JAX buffer: no copy
    np.testing.assert_array_equal(box.numpy(), [[0.5, -0.5], [0.25, 0.25]])
    np.testing.assert_array_equal(np.asarray(observations), [[1.0, 1.0, -1.0]] * 2)  # position, velocity
    np.testing.assert_array_equal(np.asarray(rewards), [[0.0], [0.5]])
    np.testing.assert_array_equal(np.asarray(states), np.full((2, 3), 11.0))
    assert isinstance(terminated, jax.Array) and terminated.dtype == jnp.int8


def test_state_is_the_critic_group_or_none(jax_backend):
    env = IsaacLabStandInEnv(num_envs=2, state_size=33, seed=2)
    wrapped = wrap_env(env, verbose=False)
    assert wrapped.state_space == env.single_observation_space["critic"] and wrapped.state() is None
    observations, _ = wrapped.reset()
    states = wrapped.state()
    assert isinstance(states, jax.Array) and states.shape == (2, 33)
    np.testing.assert_array_equal(np.asarray(states)[:, :32], np.asarray(observations)[:, :32])
    plain = wrap_env(IsaacLabStandInEnv(num_envs=2), verbose=False)
    plain.reset()
    assert plain.state_space is None and plain.state() is None


def test_multi_agent_reset_step_and_state(backend):
    env = MultiAgentEnv(num_envs=3)
    wrapped = wrap_env(env, wrapper="isaaclab-multi-agent", verbose=False)
    assert wrapped.possible_agents == ["a", "b"] and wrapped.action_space("b") == gymnasium.spaces.Discrete(4)
    observations, _ = wrapped.reset()
    assert wrapped.reset()[0] is observations and env.resets == 1
    actions = {"a": np.full((3, 2), 0.5, np.float32), "b": np.array([[1], [2], [3]], np.int32)}
    if backend == "jax":
        actions = {uid: jnp.asarray(value) for uid, value in actions.items()}
    observations, rewards, terminated, truncated, _ = wrapped.step(actions)
    assert env.received[-1]["b"].shape == (3, 1) and env.received[-1]["b"].dtype == torch.int32
    np.testing.assert_array_equal(np.asarray(observations["b"]), np.full((3, 2), -1.0))
    np.testing.assert_array_equal(np.asarray(rewards["b"]), [[1.0], [2.0], [3.0]])
    assert terminated["b"].dtype == np.int8 and truncated["a"].shape == (3, 1)
    assert np.asarray(wrapped.step(actions)[2]["b"]).all()
    np.testing.assert_array_equal(np.asarray(wrapped.state()), np.full((3, 5), 102.0))


def test_without_torch_the_wrapper_says_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match="Isaac Lab environments exchange torch tensors\\): install torch"):
        isaaclab_envs._import_torch()


def test_jax_ppo_trains_on_the_wrapped_stand_in(jax_backend, tmp_path):
    env = wrap_env(IsaacLabStandInEnv(num_envs=16, observation_size=24, action_size=4, seed=0), verbose=False)
    network = [{"name": "net", "input": "STATES", "layers": [32, 32], "activations": "elu"}]
    models = {
        "policy": gaussian_model(
            env.observation_space, env.action_space, env.device, network=network, output="ACTIONS"
        ),
        "value": deterministic_model(
            env.observation_space, env.action_space, env.device, network=network, output="ONE"
        ),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": 16,
        "learning_epochs": 2,
        "mini_batches": 2,
        "experiment": {"directory": str(tmp_path), "write_interval": 32, "checkpoint_interval": 0},
    }
    memory = RandomMemory(memory_size=16, num_envs=env.num_envs, device=env.device)
    agent = PPO(models, memory, env.observation_space, env.action_space, env.device, cfg)
    rows = []
    agent.result_listeners.append(rows.append)
    before = jax.tree_util.tree_leaves(models["policy"].state_dict.params)
    trainer_cfg = {"timesteps": 64, "environment_info": "log", "headless": True, "disable_progressbar": True}
    SequentialTrainer(env, agent, cfg={**trainer_cfg, "close_environment_at_exit": False}).train()
    after = jax.tree_util.tree_leaves(models["policy"].state_dict.params)
    assert all(bool(jnp.isfinite(leaf).all()) for leaf in after)
    assert any(not np.array_equal(b, a) for b, a in zip(before, after))  # 4 updates ran
    assert len(rows) == 2 and "Reward / Instantaneous reward (mean)" in rows[-1]


@pytest.mark.filterwarnings("error::UserWarning")  # torch's warning about read-only NumPy arrays
def test_an_env_on_a_gpu_with_jax_on_its_cpu_goes_through_the_host_with_a_warning(jax_backend, caplog):
    cuda_env = CompositeEnv(num_envs=2)
    cuda_env.device = "cuda:0"  # as Isaac Lab announces it; JAX here has only its CPU
    with caplog.at_level("WARNING"):
        wrap_env(cuda_env, wrapper="isaaclab", verbose=False)
    assert "runs on cuda:0 but JAX on cpu:0: every step's tensors go through the host" in caplog.text
    # the host path itself, on this CPU: the same values as through DLPack
    env = CompositeEnv(num_envs=2)
    wrapped = wrap_env(env, wrapper="isaaclab", verbose=False)
    wrapped._same_device_kind = False
    wrapped.reset()
    observations, rewards, terminated, _, _ = wrapped.step(jnp.array([[2.0, 0.5, -0.5], [1.0, 0.25, 0.25]]))
    assert isinstance(observations, jax.Array) and terminated.dtype == jnp.int8
    np.testing.assert_array_equal(np.asarray(observations), [[1.0, 1.0, -1.0]] * 2)
    np.testing.assert_array_equal(np.asarray(rewards), [[0.0], [0.5]])
    np.testing.assert_array_equal(env.received[-1][1].numpy(), [[0.5, -0.5], [0.25, 0.25]])
