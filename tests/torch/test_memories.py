"""Memories (torch): storage layout, write indexes, sampling, export/load."""

import csv
import glob
import os

import numpy as np
import pytest
import torch
from gymnasium import spaces

from skrl_like.torch.memories import Memory, RandomMemory


def _memory(memory_size: int = 4, num_envs: int = 2, **kwargs) -> RandomMemory:
    memory = RandomMemory(memory_size=memory_size, num_envs=num_envs, device="cpu", **kwargs)
    memory.create_tensor("states", 3)
    memory.create_tensor("rewards", 1)
    memory.create_tensor("terminated", 1, dtype=torch.bool)
    return memory


def test_create_tensor_sizes_and_nan_fill():
    memory = Memory(memory_size=5, num_envs=3, device="cpu")
    assert memory.create_tensor("discrete", spaces.Discrete(7)) is True
    memory.create_tensor("multi", spaces.MultiDiscrete([3, 4]))
    memory.create_tensor("box", spaces.Box(low=-1, high=1, shape=(2, 3)))
    memory.create_tensor("image", spaces.Box(low=0, high=1, shape=(2, 3)), keep_dimensions=True)
    memory.create_tensor("flags", 1, dtype=torch.bool)
    assert memory.tensors["discrete"].shape == (5, 3, 1)
    assert memory.tensors["multi"].shape == (5, 3, 2)
    assert memory.tensors["box"].shape == (5, 3, 6)
    assert memory.tensors["image"].shape == (5, 3, 2, 3)
    assert memory.tensors_view["image"].shape == (15, 2, 3)
    assert memory.tensors["box"].dtype == torch.get_default_dtype()
    assert torch.isnan(memory.tensors["box"]).all() and not memory.tensors["flags"].any()
    assert memory.get_tensor_names() == ["box", "discrete", "flags", "image", "multi"]
    assert memory._tensor_box is memory.tensors["box"]

    assert memory.create_tensor("box", 6) is False
    with pytest.raises(ValueError, match="size"):
        memory.create_tensor("box", 4)
    with pytest.raises(ValueError, match="dtype"):
        memory.create_tensor("box", 6, dtype=torch.int64)
    with pytest.raises(KeyError, match="create_tensor"):
        memory.get_tensor_by_name("missing")


def test_view_rows_are_time_major():
    memory = _memory(memory_size=3, num_envs=2)
    for step in range(3):
        memory.add_samples(states=torch.full((2, 3), float(step)) + torch.tensor([[0.0], [0.5]]))
    view = memory.get_tensor_by_name("states", keepdim=False)
    # row r = t * num_envs + e
    assert view[:, 0].tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    assert memory.all_sequence_indexes.tolist() == [0, 2, 4, 1, 3, 5]


def test_full_batch_writes_and_wraps_around():
    memory = _memory(memory_size=3, num_envs=2)
    for step in range(4):
        memory.add_samples(
            states=torch.full((2, 3), float(step)),
            rewards=torch.full((2,), float(step)),  # (N,) into a (N, 1) buffer is a pure reshape
            terminated=torch.zeros(2, 1, dtype=torch.bool),
            ignored=torch.zeros(2, 9),  # no buffer with this name: skipped
        )
        assert len(memory) == min(step + 1, 3) * 2
    assert memory.filled and memory.memory_index == 1 and memory.env_index == 0
    # the 4th step overwrote row 0
    assert memory.tensors["states"][:, 0, 0].tolist() == [3.0, 1.0, 2.0]
    assert memory.tensors["rewards"][:, 1, 0].tolist() == [3.0, 1.0, 2.0]
    memory.reset()
    assert len(memory) == 0 and not memory.filled


def test_partial_batches_and_single_samples():
    memory = _memory(memory_size=2, num_envs=3)
    memory.add_samples(states=torch.ones(2, 3))
    assert (memory.memory_index, memory.env_index, len(memory)) == (0, 2, 2)
    memory.add_samples(states=torch.full((3,), 7.0))
    assert (memory.memory_index, memory.env_index, len(memory)) == (1, 0, 3)
    assert memory.tensors["states"][0, 2].tolist() == [7.0, 7.0, 7.0]
    memory.add_samples(states=torch.ones(2, 3))
    with pytest.raises(ValueError, match="exceed"):
        memory.add_samples(states=torch.ones(2, 3))


def test_many_samples_single_env_wraps_with_all_tensors_aligned():
    memory = _memory(memory_size=5, num_envs=1)
    values = torch.arange(3.0)
    memory.add_samples(states=values[:, None].repeat(1, 3), rewards=values[:, None])
    assert memory.memory_index == 3 and len(memory) == 3 and not memory.filled

    values = torch.arange(10.0, 14.0)
    memory.add_samples(states=values[:, None].repeat(1, 3), rewards=values[:, None])
    # rows 3, 4 get 10, 11; the remainder wraps to rows 0, 1; both tensors land on the same rows
    expected = [12.0, 13.0, 2.0, 10.0, 11.0]
    assert memory.tensors["states"][:, 0, 0].tolist() == expected
    assert memory.tensors["rewards"][:, 0, 0].tolist() == expected
    assert memory.memory_index == 2 and memory.filled and len(memory) == 5

    # more samples than rows: only the last memory_size survive, each at its sequential position
    memory = _memory(memory_size=5, num_envs=1)
    memory.add_samples(rewards=torch.arange(7.0)[:, None], states=torch.zeros(7, 3))
    assert memory.tensors["rewards"][:, 0, 0].tolist() == [5.0, 6.0, 2.0, 3.0, 4.0]
    assert memory.memory_index == 2 and memory.filled


def test_add_samples_errors_name_the_tensor():
    memory = _memory(memory_size=2, num_envs=2)
    with pytest.raises(ValueError, match="no tensors"):
        memory.add_samples()
    with pytest.raises(ValueError, match=r"'states' has shape \(2, 4\).*\(2, 3\)"):
        memory.add_samples(states=torch.zeros(2, 4))
    with pytest.raises(ValueError, match="'rewards'"):
        memory.add_samples(states=torch.zeros(2, 3), rewards=torch.zeros(2, 2))
    with pytest.raises(ValueError, match="num_envs=2"):
        memory.add_samples(states=torch.zeros(5, 3))


def test_sample_all_contiguous_minibatches_and_sequences():
    memory = _memory(memory_size=4, num_envs=2)
    for step in range(4):
        memory.add_samples(states=torch.arange(2.0)[:, None].repeat(1, 3) + 10 * step)
    batches = memory.sample_all(["states"], mini_batches=3)
    # 8 rows in 3 contiguous mini-batches of 3, 3, 2 rows: none dropped
    assert [batch[0][:, 0].tolist() for batch in batches] == [[0.0, 1.0, 10.0], [11.0, 20.0, 21.0], [30.0, 31.0]]
    whole = memory.sample_all(["rewards", "states"])
    assert len(whole) == 1 and whole[0][1].shape == (8, 3) and whole[0][0].shape == (8, 1)
    sequences = memory.sample_all(["states"], sequence_length=2, mini_batches=2)
    assert [batch[0][:, 0].tolist() for batch in sequences] == [[0.0, 10.0, 20.0, 30.0], [1.0, 11.0, 21.0, 31.0]]

    by_index = memory.sample_by_index(["states"], torch.tensor([7, 0, 3]), mini_batches=2)
    assert [batch[0][:, 0].tolist() for batch in by_index] == [[31.0, 0.0], [11.0]]


def test_random_sampling_shapes_and_sequences():
    torch.manual_seed(0)
    memory = _memory(memory_size=6, num_envs=2)
    for step in range(3):
        memory.add_samples(states=torch.arange(2.0)[:, None].repeat(1, 3) + 10 * step, rewards=torch.ones(2, 1))
    states, rewards = memory.sample(["states", "rewards"], batch_size=16)[0]
    assert states.shape == (16, 3) and rewards.shape == (16, 1)
    assert int(memory.get_sampling_indexes().max()) < len(memory) == 6

    unique = RandomMemory(memory_size=6, num_envs=2, replacement=False)
    unique.create_tensor("states", 1)
    for step in range(3):
        unique.add_samples(states=torch.tensor([[2.0 * step], [2.0 * step + 1]]))
    (drawn,) = unique.sample(["states"], batch_size=100)[0]
    assert sorted(drawn[:, 0].tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]

    (sequences,) = memory.sample(["states"], batch_size=5, sequence_length=3)[0]
    pairs = sequences[:, 0].reshape(5, 3)
    # each sequence: one env, consecutive timesteps (values step by 10)
    assert torch.equal(pairs[:, 1] - pairs[:, 0], torch.full((5,), 10.0))
    assert torch.equal(pairs[:, 2] - pairs[:, 1], torch.full((5,), 10.0))

    minibatches = memory.sample(["states"], batch_size=6, mini_batches=3)
    assert [batch[0].shape[0] for batch in minibatches] == [2, 2, 2]


def _filled_memory(**kwargs) -> RandomMemory:
    memory = _memory(memory_size=2, num_envs=2, **kwargs)
    memory.add_samples(
        states=torch.arange(6.0).reshape(2, 3),
        rewards=torch.tensor([[1.5], [2.5]]),
        terminated=torch.tensor([[True], [False]]),
    )
    memory.add_samples(
        states=torch.arange(6.0, 12.0).reshape(2, 3),
        rewards=torch.tensor([[3.5], [4.5]]),
        terminated=torch.zeros(2, 1, dtype=torch.bool),
    )
    return memory


@pytest.mark.parametrize("file_format", ["pt", "npz", "np"])
def test_save_and_load_round_trip(tmp_path, file_format):
    memory = _filled_memory()
    memory.save(directory=str(tmp_path), format=file_format)
    (path,) = glob.glob(os.path.join(str(tmp_path), "memories", "*"))
    assert path.endswith(".npz" if file_format in ("np", "npz") else ".pt")

    restored = _memory(memory_size=2, num_envs=2)
    views_before = restored.tensors_view["states"]
    restored.load(path)
    # loaded data is visible through the existing views and the samplers
    assert restored.tensors_view["states"] is views_before
    assert restored.sample_all(["states"])[0][0].tolist() == np.arange(12.0).reshape(4, 3).tolist()
    assert restored.tensors["rewards"][:, :, 0].tolist() == [[1.5, 2.5], [3.5, 4.5]]
    assert restored.tensors["terminated"].dtype == torch.bool
    assert restored.tensors["terminated"][0, 0, 0].item() is True

    fresh = Memory(memory_size=2, num_envs=2, device="cpu")
    fresh.load(path)
    assert fresh.get_tensor_names() == ["rewards", "states", "terminated"]

    wrong = Memory(memory_size=3, num_envs=2, device="cpu")
    wrong.create_tensor("states", 3)
    with pytest.raises(ValueError, match="shape"):
        wrong.load(path)


def test_save_csv_rows_and_header(tmp_path):
    memory = _filled_memory()
    memory.save(directory=str(tmp_path), format="csv")
    (path,) = glob.glob(os.path.join(str(tmp_path), "memories", "*.csv"))
    with open(path) as file:
        rows = list(csv.reader(file))
    assert rows[0] == ["rewards.0", "states.0", "states.1", "states.2", "terminated.0"]
    assert len(rows) == 1 + 4
    assert rows[1] == ["1.5", "0.0", "1.0", "2.0", "True"]
    assert rows[4] == ["4.5", "9.0", "10.0", "11.0", "False"]


def test_export_formats_and_export_on_fill(tmp_path):
    with pytest.raises(ValueError, match="export format"):
        Memory(memory_size=2, export_format="hdf5")
    memory = _filled_memory(export=True, export_format="np", export_directory=str(tmp_path))
    assert memory.export_format == "npz"
    assert len(glob.glob(os.path.join(str(tmp_path), "memories", "*.npz"))) == 1
    with pytest.raises(ValueError, match="unsupported file"):
        memory.load(str(tmp_path / "memory.json"))


def test_share_memory_keeps_views_aliased():
    memory = _memory(memory_size=2, num_envs=2)
    memory.share_memory()
    assert all(tensor.is_shared() for tensor in memory.tensors.values())
    memory.add_samples(states=torch.ones(2, 3))
    assert memory.tensors_view["states"][0].tolist() == [1.0, 1.0, 1.0]


def test_set_tensor_by_name_copies_in_place():
    memory = _memory(memory_size=2, num_envs=2)
    view = memory.get_tensor_by_name("rewards", keepdim=False)
    memory.set_tensor_by_name("rewards", torch.full((2, 2, 1), 4.0))
    assert view.tolist() == [[4.0]] * 4


def test_base_memory_sample_is_abstract():
    with pytest.raises(NotImplementedError):
        Memory(memory_size=2).sample(["states"], batch_size=1)
