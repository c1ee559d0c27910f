"""JAX memories: circular writes, sampling layouts, export formats and load."""

import csv
import glob
import os

import jax
import numpy as np
import pytest
from gymnasium import spaces

from skrl_like import config
from skrl_like.jax.memories import Memory, RandomMemory


@pytest.fixture
def jax_backend():
    previous = config.jax.backend
    config.jax.backend = "jax"
    yield
    config.jax.backend = previous


def _memory(memory_size=3, num_envs=2, **kwargs):
    memory = RandomMemory(memory_size=memory_size, num_envs=num_envs, **kwargs)
    memory.create_tensor("states", 2)
    memory.create_tensor("actions", spaces.Discrete(4), dtype=np.int32)
    return memory


def _step(t, num_envs=2):
    # value encodes (timestep, env) so every row is recognisable
    states = np.array([[10 * t + e, -(10 * t + e)] for e in range(num_envs)], np.float32)
    actions = np.array([[t] for _ in range(num_envs)], np.int32)
    return states, actions


def test_create_tensor_sizes_nan_fill_and_conflicts():
    memory = Memory(memory_size=4, num_envs=2)
    assert memory.create_tensor("states", spaces.Box(-1, 1, (2, 3)))
    assert memory.tensors["states"].shape == (4, 2, 6) and memory.tensors["states"].dtype == np.float32
    assert memory.create_tensor("actions", spaces.MultiDiscrete([2, 3]), dtype=np.int32)
    assert memory.tensors["actions"].shape == (4, 2, 2)
    assert memory.create_tensor("images", (3, 5), keep_dimensions=True)
    assert memory.tensors["images"].shape == (4, 2, 3, 5) and memory.tensors_view["images"].shape == (8, 3, 5)
    assert np.isnan(memory.tensors["states"]).all() and (memory.tensors["actions"] == 0).all()
    assert memory.create_tensor("states", 6) is False
    with pytest.raises(ValueError):
        memory.create_tensor("states", 5)
    with pytest.raises(ValueError):
        memory.create_tensor("actions", 2, dtype=np.float32)
    assert memory.get_tensor_names() == ["actions", "images", "states"]
    assert memory.all_sequence_indexes.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]


def test_full_batches_wrap_around_in_place():
    memory = _memory()
    buffer = memory.tensors["states"]
    for t in range(4):
        memory.add_samples(states=_step(t)[0], actions=_step(t)[1], unknown=np.zeros((2, 9)))
    assert memory.tensors["states"] is buffer  # written in place
    assert memory.filled and memory.memory_index == 1 and len(memory) == 6
    np.testing.assert_array_equal(buffer[0], _step(3)[0])  # timestep 3 overwrote row 0
    np.testing.assert_array_equal(buffer[2], _step(2)[0])
    # the flat view is row t * num_envs + e
    np.testing.assert_array_equal(memory.tensors_view["states"][5], [21, -21])


def test_single_samples_and_partial_batches_fill_env_slots():
    memory = _memory(num_envs=3, memory_size=2)
    memory.add_samples(states=np.array([1.0, 2.0], np.float32))  # one env slot
    assert (memory.memory_index, memory.env_index, len(memory)) == (0, 1, 1)
    memory.add_samples(states=np.array([[3.0, 4.0], [5.0, 6.0]], np.float32))  # the two remaining slots
    assert (memory.memory_index, memory.env_index, len(memory)) == (1, 0, 3)
    np.testing.assert_array_equal(memory.tensors["states"][0], [[1, 2], [3, 4], [5, 6]])


def test_many_timesteps_of_one_env_wrap_and_set_filled():
    memory = _memory(memory_size=4, num_envs=1)
    memory.add_samples(states=np.zeros((3, 2), np.float32), actions=np.zeros((3, 1), np.int32))
    assert memory.memory_index == 3 and not memory.filled
    states = np.arange(6, dtype=np.float32).reshape(3, 2)
    memory.add_samples(states=states, actions=np.array([[7], [8], [9]], np.int32))
    assert memory.filled and memory.memory_index == 2 and len(memory) == 4
    # rows 3, 0, 1 for both tensors (the same rows, computed once)
    np.testing.assert_array_equal(memory.tensors["states"][[3, 0, 1], 0], states)
    np.testing.assert_array_equal(memory.tensors["actions"][[3, 0, 1], 0, 0], [7, 8, 9])


def test_add_samples_without_arguments_is_an_error():
    with pytest.raises(ValueError, match="keyword arguments"):
        _memory().add_samples()


def test_random_sample_shapes_and_seeded_indexes():
    memory = _memory(memory_size=5, num_envs=2)
    for t in range(3):
        memory.add_samples(states=_step(t)[0], actions=_step(t)[1])
    np.random.seed(0)
    ((states, actions),) = memory.sample(["states", "actions"], batch_size=7)
    expected_indexes = np.random.RandomState(0).randint(0, 6, (7,))
    np.testing.assert_array_equal(memory.get_sampling_indexes(), expected_indexes)
    assert states.shape == (7, 2) and actions.shape == (7, 1) and actions.dtype == np.int32
    np.testing.assert_array_equal(states, memory.tensors_view["states"][expected_indexes])
    batches = memory.sample(["states"], batch_size=7, mini_batches=2)
    assert [batch[0].shape[0] for batch in batches] == [4, 3]
    no_replacement = RandomMemory(memory_size=5, num_envs=2, replacement=False)
    no_replacement.create_tensor("states", 2)
    no_replacement.add_samples(states=_step(0)[0])
    assert no_replacement.sample(["states"], batch_size=10)[0][0].shape == (2, 2)


def test_sequence_sampling_takes_consecutive_timesteps_of_one_env():
    memory = _memory(memory_size=5, num_envs=2)
    for t in range(5):
        memory.add_samples(states=_step(t)[0], actions=_step(t)[1])
    ((states,),) = memory.sample(["states"], batch_size=4, sequence_length=3)
    sequences = states[:, 0].reshape(4, 3)
    assert (np.diff(sequences, axis=1) == 10).all()  # same env, t, t + 1, t + 2


def test_sample_all_splits_contiguously_with_array_split():
    memory = _memory(memory_size=5, num_envs=2)
    for t in range(5):
        memory.add_samples(states=_step(t)[0], actions=_step(t)[1])
    batches = memory.sample_all(["states", "actions"], mini_batches=3)
    assert [batch[0].shape[0] for batch in batches] == [4, 3, 3]  # no row dropped
    np.testing.assert_array_equal(np.concatenate([batch[0] for batch in batches]), memory.tensors_view["states"])
    ((whole,),) = memory.sample_all(["states"])
    assert whole.shape == (10, 2)
    sequence_batches = memory.sample_all(["states"], sequence_length=2, mini_batches=2)
    env_major = np.concatenate([batch[0][:, 0] for batch in sequence_batches])
    np.testing.assert_array_equal(env_major, [0, 10, 20, 30, 40, 1, 11, 21, 31, 41])
    by_index = memory.sample_by_index(["actions"], np.array([0, 3, 9]), mini_batches=2)
    assert [batch[0][:, 0].tolist() for batch in by_index] == [[0, 1], [4]]


def test_jax_backend_returns_device_arrays_and_accepts_them(jax_backend):
    memory = _memory()
    memory.add_samples(states=jax.numpy.ones((2, 2)), actions=jax.numpy.zeros((2, 1), dtype=jax.numpy.int32))
    assert isinstance(memory.tensors["states"], np.ndarray)  # host storage
    ((states,),) = memory.sample(["states"], batch_size=3)
    assert isinstance(states, jax.Array) and states.shape == (3, 2)
    ((everything,),) = memory.sample_all(["states"])
    assert isinstance(everything, jax.Array)
    assert isinstance(memory.get_tensor_by_name("states"), jax.Array)
    memory.set_tensor_by_name("states", jax.numpy.full((3, 2, 2), 7.0))
    assert (memory.tensors["states"] == 7).all()


def test_npz_round_trip_copies_into_existing_buffers(tmp_path):
    memory = _memory()
    for t in range(3):
        memory.add_samples(states=_step(t)[0], actions=_step(t)[1])
    memory.save(directory=str(tmp_path), format="np")  # "np" is taken as "npz"
    (path,) = glob.glob(os.path.join(tmp_path, "memories", "*.npz"))
    restored = _memory()
    views = dict(restored.tensors_view)
    restored.load(path)
    ((states, actions),) = restored.sample_all(["states", "actions"])
    assert states is views["states"] or np.shares_memory(states, views["states"])
    np.testing.assert_array_equal(states, memory.tensors_view["states"])
    np.testing.assert_array_equal(actions, memory.tensors_view["actions"])
    wrong = RandomMemory(memory_size=4, num_envs=2)
    wrong.create_tensor("states", 2)
    with pytest.raises(ValueError, match="shape"):
        wrong.load(path)


def test_csv_export_has_named_columns_and_stored_rows(tmp_path):
    memory = _memory(export=True, export_format="csv", export_directory=str(tmp_path))
    for t in range(3):  # filling the memory triggers the export
        memory.add_samples(states=_step(t)[0], actions=_step(t)[1])
    (path,) = glob.glob(os.path.join(tmp_path, "memories", "*.csv"))
    with open(path) as file:
        rows = list(csv.reader(file))
    assert rows[0] == ["actions.0", "states.0", "states.1"]
    assert len(rows) == 1 + 6
    assert [float(value) for value in rows[4]] == [1.0, 11.0, -11.0]  # t = 1, env 1


def test_torch_format_is_rejected_with_a_fix():
    with pytest.raises(ValueError, match="npz"):
        Memory(memory_size=2, export=True, export_format="pt")
    with pytest.raises(ValueError, match="npz"):
        _memory().save(format="pt")
    with pytest.raises(ValueError):
        Memory(memory_size=2, export_format="hdf5")
