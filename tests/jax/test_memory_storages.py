"""The JAX memories' device storage (``on_device=True``): a timestep written by one compiled call into donated buffers,
with the row on the device (no transfer, no recompilation), the same rows as the host storage for every layout,
checkpoints and files, and agents that train bit for bit the same with either storage."""

import glob
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like import config
from skrl_like.envs import IsaacLabStandInEnv
from skrl_like.jax.agents.ppo import PPO
from skrl_like.jax.agents.sac import SAC
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory, base
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.loop_on_device import TRAINER, make_agent


@pytest.fixture
def jax_backend(monkeypatch):
    monkeypatch.setattr(config.jax, "backend", "jax")


def _memory(on_device, memory_size=3, num_envs=2, **kwargs):
    memory = RandomMemory(memory_size=memory_size, num_envs=num_envs, on_device=on_device, **kwargs)
    memory.create_tensor("states", 2)
    memory.create_tensor("terminated", 1, dtype=jnp.int8)
    return memory


def _step(t, num_envs=2):
    """``(states, terminated)`` of timestep ``t``: states ``[10 t + e, -(10 t + e)]``, env 0 terminated."""
    values = 10 * t + jnp.arange(num_envs, dtype=jnp.float32)
    return jnp.stack([values, -values], axis=1), jnp.arange(num_envs) == 0


def test_the_automatic_choice_is_the_device_with_the_jax_backend_off_a_cpu(monkeypatch):
    cpu = jax.devices("cpu")[0]
    monkeypatch.setattr(config.jax, "backend", "jax")
    assert RandomMemory(memory_size=2, device=cpu).on_device is False  # a CPU keeps NumPy's semantics
    assert base.device_storage_by_default(type("Gpu", (), {"platform": "gpu"})()) is True
    monkeypatch.setattr(config.jax, "backend", "numpy")
    assert base.device_storage_by_default(type("Gpu", (), {"platform": "gpu"})()) is False
    assert RandomMemory(2, 1, None, False, "pt", "", True, on_device=True).on_device  # skrl 1.4's arguments first


def test_a_timestep_is_one_compiled_call_into_donated_buffers_without_any_transfer(jax_backend):
    memory = _memory(True)
    assert isinstance(memory.tensors["states"], jax.Array) and memory.tensors["states"].devices() == {memory.device}
    assert np.isnan(np.asarray(memory.tensors["states"])).all()  # creating a tensor fills the floats with NaN
    steps = [_step(t) for t in range(7)]
    memory.add_samples(states=steps[0][0], terminated=steps[0][1])  # warm-up: compiles, puts the row there once
    compilations = base._write_timestep._cache_size()
    before = memory.tensors["states"]
    with jax.transfer_guard("disallow"):  # a row given as a Python int every step would be a transfer
        for states, terminated in steps[1:]:
            memory.add_samples(states=states, terminated=terminated)  # (2,) into (2, 1): reshaped inside
    assert base._write_timestep._cache_size() == compilations
    assert before.is_deleted()  # donated: written in place, not copied
    assert (memory.memory_index, memory.filled, len(memory)) == (1, True, 6)
    np.testing.assert_array_equal(np.asarray(memory.tensors["states"])[:, :, 0], [[60, 61], [40, 41], [50, 51]])
    np.testing.assert_array_equal(np.asarray(memory.tensors["terminated"])[:, :, 0], [[1, 0]] * 3)
    np.testing.assert_array_equal(np.asarray(memory.tensors_view["states"])[3], [41, -41])
    np.random.seed(0)
    ((states, terminated),) = memory.sample(["states", "terminated"], batch_size=4)
    rows = np.random.RandomState(0).randint(0, 6, (4,))
    assert isinstance(states, jax.Array) and terminated.dtype == jnp.int8
    np.testing.assert_array_equal(np.asarray(states)[:, 0], np.asarray(memory.tensors_view["states"])[rows, 0])


@pytest.mark.parametrize("num_envs", [3, 1])
def test_both_storages_hold_the_same_rows_and_cursor_for_every_layout(num_envs):
    memories = [_memory(False, memory_size=4, num_envs=num_envs), _memory(True, memory_size=4, num_envs=num_envs)]
    for memory in memories:
        states, terminated = _step(1, num_envs)
        memory.add_samples(states=states, terminated=terminated)  # a timestep
        if num_envs == 3:
            memory.add_samples(states=jnp.array([5.0, 6.0]))  # one env slot, then the two left
            memory.add_samples(states=jnp.ones((2, 2)), terminated=jnp.ones((2, 1), jnp.int8))
        else:
            memory.add_samples(states=jnp.arange(10.0).reshape(5, 2))  # five timesteps, wrapping around
        memory.add_samples(states=_step(2, num_envs)[0])
        memory.reset()  # the device's row follows the host cursor back to row 0
        memory.add_samples(states=_step(3, num_envs)[0], terminated=_step(3, num_envs)[1])
    host, device = memories
    assert (device.memory_index, device.env_index, device.filled) == (host.memory_index, host.env_index, host.filled)
    for name in ("states", "terminated"):
        np.testing.assert_array_equal(np.asarray(device.tensors[name]), host.tensors[name])
    np.testing.assert_array_equal(np.asarray(device.tensors["states"])[0, :, 0], 30 + np.arange(num_envs))


def test_checkpoints_files_and_exports_of_the_device_storage(tmp_path, jax_backend):
    memory = _memory(True, export=True, export_format="npz", export_directory=str(tmp_path))
    for t in range(3):  # filling it exports it
        memory.add_samples(states=_step(t)[0], terminated=_step(t)[1])
    (exported,) = glob.glob(os.path.join(tmp_path, "memories", "*.npz"))
    with np.load(exported) as archive:
        np.testing.assert_array_equal(archive["states"][:, 1], [[1, -1], [11, -11], [21, -21]])
    state = memory.run_state()
    restored = _memory(True)
    restored.load_run_state(state)
    restored.add_samples(states=_step(7)[0], terminated=_step(7)[1])  # row 0 again, from the loaded cursor
    np.testing.assert_array_equal(np.asarray(restored.tensors["states"])[:, 0, 0], [70, 10, 20])
    loaded = _memory(True)
    loaded.load(exported)
    ((states,),) = loaded.sample_all(["states"])
    assert isinstance(states, jax.Array)
    np.testing.assert_array_equal(np.asarray(states), np.asarray(memory.tensors_view["states"]))
    loaded.set_tensor_by_name("states", np.full((6, 2), 4.0))  # flat rows, reshaped
    assert (np.asarray(loaded.get_tensor_by_name("states")) == 4).all()


# -- agents: the same run, bit for bit, with either storage --------------------------------------------------------


def _isaaclab_run(algorithm, directory):
    env = wrap_env(IsaacLabStandInEnv(num_envs=4, observation_size=6, action_size=2, seed=0), "isaaclab", verbose=False)
    agent = make_agent("jax", algorithm, env, directory)
    trainer = SequentialTrainer(env, agent, cfg={**TRAINER, "disable_progressbar": True})
    return agent, [agent.policy], trainer.train


def _dqn_run(directory):
    from tests.jax.models import cartpole
    from tests.jax.test_dqn import QUIET
    from tests.jax.test_dqn import make_agent as make_dqn

    env = cartpole(2)
    env._env.reset(seed=0)
    agent = make_dqn(env, memory_size=50, learning_starts=5, random_timesteps=2)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 20})
    return agent, [agent.q_network], trainer.train


RUNS = {
    "PPO": lambda directory: _isaaclab_run(PPO, directory),
    "SAC": lambda directory: _isaaclab_run(SAC, directory),
    "DQN": _dqn_run,
    # PPO_RNN and MAPPO passed too when the storage was written (session 14); left out of the suite for its time
    # budget (SKRL_LIKE_TEST_MEMORY_ON_DEVICE=1 runs their own tests on the device storage)
}


SLOW = pytest.mark.slow  # each compiles its agent twice (seconds on 2 busy cores); PPO and SAC stay unmarked


@pytest.mark.parametrize(
    "algorithm", [name if name in ("PPO", "SAC") else pytest.param(name, marks=SLOW) for name in RUNS]
)
def test_an_agent_trains_bit_for_bit_the_same_with_either_storage(algorithm, tmp_path, monkeypatch, jax_backend):
    def parameters(models):
        return [np.asarray(leaf) for model in models for leaf in jax.tree_util.tree_leaves(model.state_dict.params)]

    trained = []
    for on_device in (False, True):
        monkeypatch.setattr(base, "device_storage_by_default", lambda device, on_device=on_device: on_device)
        set_seed(0)
        agent, models, train = RUNS[algorithm](str(tmp_path / str(on_device)))
        initial = parameters(models)
        train()
        assert agent.memory.on_device is on_device
        assert isinstance(agent.memory.tensors["states"], jax.Array) is on_device
        trained.append(parameters(models))
        assert any((before != after).any() for before, after in zip(initial, trained[-1]))  # it did update
    host, device = trained
    for host_leaf, device_leaf in zip(host, device):
        np.testing.assert_array_equal(device_leaf, host_leaf)
