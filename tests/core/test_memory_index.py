"""The neutral memory index: cursor, wrap-around, write layouts, mini-batch split, sequences (no tensors)."""

import numpy as np
import pytest

from skrl_like.core.memory_index import MemoryIndex, conformed_shape, split_range, split_rows


def _write(index: MemoryIndex, shape: tuple):
    plan = index.plan_write(shape)
    wrapped = index.commit(plan)
    return plan, wrapped


def test_construction_and_env_major_sequence_order():
    index = MemoryIndex(memory_size=3, num_envs=2)
    assert (index.memory_index, index.env_index, index.filled, len(index), index.rows) == (0, 0, False, 0, 6)
    # rows r = t * num_envs + e: env 0's timesteps (0, 2, 4), then env 1's (1, 3, 5)
    assert index.all_sequence_indexes.tolist() == [0, 2, 4, 1, 3, 5]
    with pytest.raises(ValueError, match="at least 1"):
        MemoryIndex(memory_size=0, num_envs=2)
    with pytest.raises(ValueError, match="at least 1"):
        MemoryIndex(memory_size=2, num_envs=0)


def test_full_batches_move_one_timestep_and_wrap():
    index = MemoryIndex(memory_size=3, num_envs=2)
    plan, wrapped = _write(index, (2, 4))
    assert plan.leading_shape == (2,) and plan.pieces == ((0, None),) and not wrapped
    assert (index.memory_index, index.env_index, len(index)) == (1, 0, 2)
    _write(index, (2, 4))
    plan, wrapped = _write(index, (2, 4))
    assert plan.pieces == ((2, None),) and wrapped
    assert (index.memory_index, index.filled, len(index)) == (0, True, 6)
    plan, wrapped = _write(index, (2, 4))
    assert plan.pieces == ((0, None),) and not wrapped and len(index) == 6
    index.reset()
    assert (index.memory_index, index.env_index, index.filled, len(index)) == (0, 0, False, 0)


def test_partial_batches_and_single_samples_fill_env_slots():
    index = MemoryIndex(memory_size=2, num_envs=3)
    plan, _ = _write(index, (2, 4))
    assert plan.leading_shape == (2,) and plan.pieces == (((0, slice(0, 2)), None),)
    assert (index.memory_index, index.env_index, len(index)) == (0, 2, 2)
    plan, _ = _write(index, (4,))  # one slot: the last of timestep 0
    assert plan.leading_shape == () and plan.pieces == (((0, 2), None),)
    assert (index.memory_index, index.env_index, len(index)) == (1, 0, 3)
    _write(index, (2, 4))
    with pytest.raises(ValueError, match=r"2 samples from environment slot 2 exceed num_envs=3"):
        index.plan_write((2, 4))
    plan, wrapped = _write(index, (1, 4))  # completes the last timestep: wraps
    assert plan.pieces == (((1, slice(2, 3)), None),) and wrapped
    assert (index.memory_index, index.env_index, index.filled, len(index)) == (0, 0, True, 6)


def test_other_shapes_are_rejected_with_the_expected_layout():
    index = MemoryIndex(memory_size=2, num_envs=2)
    with pytest.raises(ValueError, match=r"shape \(5, 3\).*num_envs=2"):
        index.plan_write((5, 3))
    with pytest.raises(ValueError, match=r"shape \(\)"):
        index.plan_write(())


@pytest.mark.parametrize(
    "start, count, pieces, memory_index, wrapped",
    [
        # rows 0..2 from 0: no wrap
        (0, 3, [((slice(0, 3), 0), None)], 3, False),
        # 4 from row 3 of 5: rows 3, 4 then 0, 1
        (3, 4, [((slice(3, 5), 0), slice(0, 2)), ((slice(0, 2), 0), slice(2, 4))], 2, True),
        # exactly to the end: wraps to 0
        (2, 3, [((slice(2, 5), 0), None)], 0, True),
        # 7 from 0: samples 0, 1 are overwritten by 5, 6; sample i ends in row i % 5
        (0, 7, [((slice(2, 5), 0), slice(2, 5)), ((slice(0, 2), 0), slice(5, 7))], 2, True),
        # 12 from 3: only samples 7..11 survive, sample i in row (3 + i) % 5
        (3, 12, [((slice(0, 5), 0), slice(7, 12))], 0, True),
    ],
)
def test_many_timesteps_of_one_env_wrap_around(start, count, pieces, memory_index, wrapped):
    index = MemoryIndex(memory_size=5, num_envs=1)
    index.memory_index = start
    plan, did_wrap = _write(index, (count, 2))
    assert plan.leading_shape == (count,)
    assert list(plan.pieces) == pieces
    assert (index.memory_index, index.env_index, did_wrap, index.filled) == (memory_index, 0, wrapped, wrapped)
    assert len(index) == (5 if wrapped else start + count)


def test_a_row_per_timestep_is_a_full_batch_for_one_env():
    index = MemoryIndex(memory_size=4, num_envs=1)
    plan, _ = _write(index, (1, 3))
    assert plan.pieces == ((0, None),) and index.memory_index == 1


@pytest.mark.parametrize(
    "count, mini_batches, sizes",
    [(5, 2, [3, 2]), (8, 3, [3, 3, 2]), (6, 3, [2, 2, 2]), (7, 7, [1] * 7), (10, 4, [3, 3, 2, 2]), (4, 1, [4])],
)
def test_split_keeps_every_row_longer_batches_first(count, mini_batches, sizes):
    slices = split_range(count, mini_batches)
    assert [s.stop - s.start for s in slices] == sizes
    assert slices[0].start == 0 and slices[-1].stop == count
    assert all(a.stop == b.start for a, b in zip(slices, slices[1:]))  # contiguous, in order
    rows = np.arange(100, 100 + count)
    chunks = split_rows(rows, mini_batches)
    assert [len(chunk) for chunk in chunks] == sizes
    assert np.concatenate(chunks).tolist() == rows.tolist()


def test_split_rejects_more_mini_batches_than_rows():
    with pytest.raises(ValueError, match="cannot split 3 rows into 4 mini-batches: use between 1 and 3"):
        split_range(3, 4)
    with pytest.raises(ValueError, match="mini-batches"):
        split_rows(np.arange(3), 4)
    with pytest.raises(ValueError, match="mini-batches"):
        split_range(3, 0)
    rows = np.arange(3)
    assert split_rows(rows, 1)[0] is rows  # one mini-batch: the indexes as given


def test_all_rows_time_major_slices_or_env_major_sequences():
    index = MemoryIndex(memory_size=3, num_envs=2)
    assert index.all_rows() == [slice(0, 6)]
    assert index.all_rows(mini_batches=4) == [slice(0, 2), slice(2, 4), slice(4, 5), slice(5, 6)]
    sequences = index.all_rows(mini_batches=2, sequence_length=2)
    assert [chunk.tolist() for chunk in sequences] == [[0, 2, 4], [1, 3, 5]]


def test_the_env_major_order_is_built_only_when_sequences_are_read():
    # a replay memory never reads it: an int64 per row built at construction was 8 MB of a million-row memory
    index = MemoryIndex(memory_size=1_000_000, num_envs=1)
    index.all_rows(mini_batches=2)
    assert "all_sequence_indexes" not in vars(index)
    index = MemoryIndex(memory_size=3, num_envs=2)
    index.all_rows(mini_batches=1, sequence_length=2)
    assert vars(index)["all_sequence_indexes"].tolist() == [0, 2, 4, 1, 3, 5]


def test_uniform_sampling_arithmetic():
    index = MemoryIndex(memory_size=5, num_envs=2)
    for _ in range(3):
        index.commit(index.plan_write((2, 1)))
    assert index.sampleable_rows() == 6
    # a sequence of 3 needs 2 more timesteps (4 rows) after its first row
    assert index.sampleable_rows(sequence_length=3) == 2
    with pytest.raises(ValueError, match="holds 6 samples, not enough for sequence_length=4"):
        index.sampleable_rows(sequence_length=4)
    assert index.sequence_rows(np.array([0, 1]), sequence_length=3).tolist() == [0, 2, 4, 1, 3, 5]
    assert index.sequence_rows(np.array([3, 1])).tolist() == [3, 1]


def test_conformed_shape():
    assert conformed_shape("rewards", (2, 1), (2, 1)) is None
    assert conformed_shape("rewards", (2,), (2, 1)) == (2, 1)  # a pure reshape
    with pytest.raises(ValueError, match=r"'rewards' has shape \(2, 2\) but the memory expects \(2, 1\)"):
        conformed_shape("rewards", (2, 2), (2, 1))
    with pytest.raises(ValueError, match="'states'"):
        conformed_shape("states", (1, 4), (4, 1))  # same count, other leading size
