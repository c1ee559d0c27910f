"""The torch and JAX memories behave the same: one table of cases, run through both backends' ``RandomMemory``.

skrl 1.4.3's backends disagree on some of these (torch drops the rows left over by the ``sample_all`` split,
JAX cannot take more timesteps than rows for one environment); the single behaviour is documented in
:mod:`skrl_like.core.memory_index`. Expected values are written by hand: a stored value encodes its row.
"""

import csv
import glob
import os

import numpy as np
import pytest
import torch

from skrl_like.jax.memories import RandomMemory as JaxRandomMemory
from skrl_like.torch.memories import RandomMemory as TorchRandomMemory


class _Torch:
    name = "torch"
    boolean = torch.bool

    @staticmethod
    def memory(memory_size, num_envs, **kwargs):
        return TorchRandomMemory(memory_size=memory_size, num_envs=num_envs, device="cpu", **kwargs)

    @staticmethod
    def array(values, boolean=False):
        return torch.tensor(np.asarray(values), dtype=torch.bool if boolean else torch.float32)

    @staticmethod
    def numpy(tensor):
        return tensor.cpu().numpy()

    @staticmethod
    def seed(value):
        torch.manual_seed(value)


class _Jax:
    name = "jax"
    boolean = np.bool_

    @staticmethod
    def memory(memory_size, num_envs, **kwargs):
        return JaxRandomMemory(memory_size=memory_size, num_envs=num_envs, **kwargs)

    @staticmethod
    def array(values, boolean=False):
        return np.asarray(values, dtype=np.bool_ if boolean else np.float32)

    @staticmethod
    def numpy(tensor):
        return np.asarray(tensor)

    @staticmethod
    def seed(value):
        np.random.seed(value)


@pytest.fixture(params=[_Torch, _Jax], ids=["torch", "jax"])
def backend(request):
    return request.param


def _steps(backend, memory, timesteps):
    # one full timestep at a time; the value of env e at time t is 10 * t + e (its row is t * num_envs + e)
    for t in range(timesteps):
        values = [[10.0 * t + e] for e in range(memory.num_envs)]
        memory.add_samples(states=backend.array(values), rewards=backend.array(values))


def _column(backend, tensor):
    return backend.numpy(tensor)[:, 0].tolist()


@pytest.mark.parametrize(
    "memory_size, num_envs, mini_batches, sizes",
    [
        (5, 1, 2, [3, 2]),  # skrl torch: [2, 2], the 5th row dropped
        (8, 1, 3, [3, 3, 2]),
        (6, 1, 3, [2, 2, 2]),
        (3, 2, 4, [2, 2, 1, 1]),
        (5, 2, 4, [3, 3, 2, 2]),
        (4, 1, 1, [4]),
    ],
)
def test_sample_all_mini_batch_split(backend, memory_size, num_envs, mini_batches, sizes):
    memory = backend.memory(memory_size, num_envs)
    memory.create_tensor("states", 1)
    memory.create_tensor("rewards", 1)
    _steps(backend, memory, memory_size)
    batches = memory.sample_all(["states", "rewards"], mini_batches=mini_batches)
    assert [len(batch) for batch in batches] == [2] * len(sizes)
    assert [batch[0].shape[0] for batch in batches] == sizes
    rows = [10.0 * t + e for t in range(memory_size) for e in range(num_envs)]  # time-major, in order
    assert sum((_column(backend, batch[0]) for batch in batches), []) == rows
    assert sum((_column(backend, batch[1]) for batch in batches), []) == rows


def test_too_many_mini_batches_is_an_error(backend):
    memory = backend.memory(2, 1)
    memory.create_tensor("states", 1)
    with pytest.raises(ValueError, match="cannot split 2 rows into 3 mini-batches"):
        memory.sample_all(["states"], mini_batches=3)
    with pytest.raises(ValueError, match="cannot split 1 rows into 2 mini-batches"):
        memory.sample_by_index(["states"], [0], mini_batches=2)


def test_more_timesteps_than_rows_single_env_wrap(backend):
    memory = backend.memory(5, 1)
    memory.create_tensor("states", 2)
    memory.create_tensor("rewards", 1)
    samples = np.arange(7.0)
    memory.add_samples(rewards=backend.array(samples[:, None]), states=backend.array(np.stack([samples] * 2, 1)))
    # sample i lands in row i % 5: 5 and 6 overwrote 0 and 1; both tensors on the same rows
    expected = [5.0, 6.0, 2.0, 3.0, 4.0]
    assert backend.numpy(memory.get_tensor_by_name("rewards"))[:, 0, 0].tolist() == expected
    assert backend.numpy(memory.get_tensor_by_name("states"))[:, 0, 1].tolist() == expected
    assert (memory.memory_index, memory.env_index, memory.filled, len(memory)) == (2, 0, True, 5)

    memory = backend.memory(5, 1)
    memory.create_tensor("states", 1)
    memory.add_samples(states=backend.array([[0.0], [1.0], [2.0]]))
    assert (memory.memory_index, memory.filled, len(memory)) == (3, False, 3)
    memory.add_samples(states=backend.array([[10.0], [11.0], [12.0], [13.0]]))
    assert backend.numpy(memory.get_tensor_by_name("states"))[:, 0, 0].tolist() == [12.0, 13.0, 2.0, 10.0, 11.0]
    assert (memory.memory_index, memory.filled, len(memory)) == (2, True, 5)


def test_more_timesteps_than_rows_multi_env_wrap(backend):
    memory = backend.memory(3, 2)
    memory.create_tensor("states", 1)
    memory.create_tensor("rewards", 1)
    _steps(backend, memory, 4)  # the 4th timestep overwrites the 1st
    assert (memory.memory_index, memory.env_index, memory.filled, len(memory)) == (1, 0, True, 6)
    assert _column(backend, memory.get_tensor_by_name("states", keepdim=False)) == [30.0, 31.0, 10.0, 11.0, 20.0, 21.0]

    # partial batches and single samples fill the environment slots, across the wrap
    memory = backend.memory(2, 3)
    memory.create_tensor("states", 1)
    memory.add_samples(states=backend.array([[1.0], [2.0]]))
    memory.add_samples(states=backend.array([3.0]))
    assert (memory.memory_index, memory.env_index, len(memory)) == (1, 0, 3)
    memory.add_samples(states=backend.array([[4.0], [5.0], [6.0]]))
    assert (memory.memory_index, memory.env_index, memory.filled, len(memory)) == (0, 0, True, 6)
    memory.add_samples(states=backend.array([[7.0], [8.0]]))
    assert (memory.memory_index, memory.env_index, len(memory)) == (0, 2, 6)
    assert _column(backend, memory.get_tensor_by_name("states", keepdim=False)) == [7.0, 8.0, 3.0, 4.0, 5.0, 6.0]
    with pytest.raises(ValueError, match="2 samples from environment slot 2 exceed num_envs=3"):
        memory.add_samples(states=backend.array([[9.0], [9.0]]))
    with pytest.raises(ValueError, match=r"expects \(num_envs=3, size\)"):
        memory.add_samples(states=backend.array([[9.0]] * 4))


def test_sample_all_whole_and_sequences_and_sample_by_index(backend):
    memory = backend.memory(3, 2)
    memory.create_tensor("states", 1)
    memory.create_tensor("rewards", 1)
    memory.create_tensor("terminated", 1, dtype=backend.boolean)
    _steps(backend, memory, 3)
    ((states, terminated),) = memory.sample_all(["states", "terminated"])
    assert states.shape == (6, 1) and terminated.shape == (6, 1)
    assert _column(backend, states) == [0.0, 1.0, 10.0, 11.0, 20.0, 21.0]
    assert not backend.numpy(terminated).any()  # never written: zero (False), while float buffers start as NaN

    sequences = memory.sample_all(["states"], mini_batches=3, sequence_length=2)
    # env-major: env 0's timesteps then env 1's, split 2, 2, 2
    assert [_column(backend, batch[0]) for batch in sequences] == [[0.0, 10.0], [20.0, 1.0], [11.0, 21.0]]

    by_index = memory.sample_by_index(["rewards", "states"], [5, 0, 3], mini_batches=2)
    assert [_column(backend, batch[1]) for batch in by_index] == [[21.0, 0.0], [11.0]]
    assert [_column(backend, batch[0]) for batch in by_index] == [[21.0, 0.0], [11.0]]


def test_random_samples_are_the_recorded_rows(backend):
    memory = backend.memory(5, 2)
    memory.create_tensor("states", 1)
    memory.create_tensor("rewards", 1)
    _steps(backend, memory, 3)
    backend.seed(0)
    batches = memory.sample(["states", "rewards"], batch_size=7, mini_batches=2)
    indexes = memory.get_sampling_indexes()
    assert isinstance(indexes, np.ndarray) and indexes.shape == (7,)
    assert 0 <= indexes.min() and indexes.max() < 6  # only the 6 stored rows
    stored = [0.0, 1.0, 10.0, 11.0, 20.0, 21.0]
    assert [batch[0].shape[0] for batch in batches] == [4, 3]
    assert sum((_column(backend, batch[0]) for batch in batches), []) == [stored[i] for i in indexes]

    (sequences,) = memory.sample(["states"], batch_size=4, sequence_length=2)[0]
    pairs = backend.numpy(sequences)[:, 0].reshape(4, 2)
    assert (pairs[:, 1] - pairs[:, 0] == 10.0).all()  # one env, consecutive timesteps
    assert set(pairs[:, 0].tolist()) <= {0.0, 1.0, 10.0, 11.0}  # a sequence ends inside the stored rows

    unique = backend.memory(5, 2, replacement=False)
    unique.create_tensor("states", 1)
    _steps(backend, unique, 3)
    ((drawn,),) = unique.sample(["states"], batch_size=100)
    assert sorted(_column(backend, drawn)) == stored


def test_tensor_names_are_a_sorted_list(backend):
    memory = backend.memory(2, 1)
    for name in ("values", "actions", "states"):
        memory.create_tensor(name, 1)
    assert memory.get_tensor_names() == ["actions", "states", "values"]
    with pytest.raises(KeyError, match="'missing'.*call create_tensor"):
        memory.get_tensor_by_name("missing")


def test_export_layout(backend, tmp_path):
    memory = backend.memory(2, 2, export=True, export_format="csv", export_directory=str(tmp_path))
    memory.create_tensor("states", 2)
    memory.create_tensor("rewards", 1)
    for t in range(2):  # filling the memory exports it once
        values = [[10.0 * t + e] for e in range(2)]
        memory.add_samples(states=backend.array([[v[0], -v[0]] for v in values]), rewards=backend.array(values))
    (path,) = glob.glob(os.path.join(str(tmp_path), "memories", "*_memory_0x*.csv"))
    with open(path) as file:
        rows = [[float(value) if index else value for value in row] for index, row in enumerate(csv.reader(file))]
    assert rows == [
        ["rewards.0", "states.0", "states.1"],
        [0.0, 0.0, -0.0],
        [1.0, 1.0, -1.0],
        [10.0, 10.0, -10.0],
        [11.0, 11.0, -11.0],
    ]


def test_npz_written_by_one_backend_loads_in_the_other(tmp_path):
    for source, target in ((_Torch, _Jax), (_Jax, _Torch)):
        memory = source.memory(2, 2)
        memory.create_tensor("states", 1)
        _steps(source, memory, 2)
        directory = tmp_path / source.name
        memory.save(directory=str(directory), format="npz")
        (path,) = glob.glob(os.path.join(str(directory), "memories", "*.npz"))
        restored = target.memory(2, 2)
        restored.load(path)
        assert restored.get_tensor_names() == ["states"]
        assert _column(target, restored.sample_all(["states"])[0][0]) == [0.0, 1.0, 10.0, 11.0]
