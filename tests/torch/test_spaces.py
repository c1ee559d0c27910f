"""Spaces helpers (torch): conversions between gymnasium samples and flat tensors."""

import sys
import types

import numpy as np
import pytest
import torch
from gymnasium import spaces

from skrl_like.core.spaces import compute_space_size as core_compute_space_size
from skrl_like.torch.utils.spaces import (
    compute_space_size,
    convert_gym_space,
    flatten_tensorized_space,
    sample_space,
    tensorize_space,
    unflatten_tensorized_space,
    untensorize_space,
)

DICT_SPACE = spaces.Dict(
    {
        "velocity": spaces.Box(low=-1.0, high=1.0, shape=(3,)),
        "mode": spaces.Discrete(4),
        "position": spaces.Box(low=-1.0, high=1.0, shape=(2,)),
    }
)


def test_compute_space_size_is_the_core_function():
    assert compute_space_size is core_compute_space_size
    assert compute_space_size(DICT_SPACE, occupied_size=True) == 6
    assert compute_space_size(DICT_SPACE) == 9  # one-hot Discrete
    assert compute_space_size(None) == 0


def test_tensorize_box_discrete_multidiscrete():
    box = spaces.Box(low=-1.0, high=1.0, shape=(2, 3), dtype=np.float64)
    tensor = tensorize_space(box, np.arange(12, dtype=np.float64).reshape(2, 2, 3))
    assert tensor.dtype == torch.float32 and tensor.shape == (2, 2, 3)
    assert tensor[1, 1, 2].item() == 11.0

    discrete = tensorize_space(spaces.Discrete(5), 3)
    assert discrete.dtype == torch.int32 and discrete.tolist() == [[3]]
    assert tensorize_space(spaces.Discrete(5), np.array([1, 4])).tolist() == [[1], [4]]

    multi = tensorize_space(spaces.MultiDiscrete([3, 4]), [2, 3])
    assert multi.dtype == torch.int32 and multi.tolist() == [[2, 3]]

    assert tensorize_space(None, np.zeros(2)) is None


def test_tensorize_composites_and_unsupported():
    sample = {"velocity": np.array([1.0, 2.0, 3.0]), "mode": 2, "position": np.array([4.0, 5.0])}
    tensors = tensorize_space(DICT_SPACE, sample)
    assert list(tensors) == ["mode", "position", "velocity"]
    assert tensors["mode"].tolist() == [[2]]

    pair = tensorize_space(spaces.Tuple([spaces.Discrete(2), spaces.Box(0, 1, (1,))]), (1, np.array([0.5])))
    assert isinstance(pair, tuple) and pair[1].tolist() == [[0.5]]

    with pytest.raises(ValueError, match="Unsupported space"):
        tensorize_space(spaces.Text(5), "abc")
    with pytest.raises(ValueError, match="Box sample"):
        tensorize_space(spaces.Box(0, 1, (2,)), [0.1, 0.2])


def test_untensorize_squeezes_single_samples():
    box = spaces.Box(low=-1.0, high=1.0, shape=(2,), dtype=np.float32)
    single = untensorize_space(box, torch.tensor([[0.5, -0.5]], dtype=torch.float64))
    assert single.shape == (2,) and single.dtype == np.float32
    batch = untensorize_space(box, torch.zeros(3, 2), squeeze_batch_dimension=False)
    assert batch.shape == (3, 2)

    value = untensorize_space(spaces.Discrete(4), torch.tensor([[3]]))
    assert value == 3 and isinstance(value, int)
    column = untensorize_space(spaces.Discrete(4), torch.tensor([[1.0], [2.0]]))
    assert column.shape == (2, 1) and column.dtype == np.int64 and column.tolist() == [[1], [2]]

    multi = untensorize_space(spaces.MultiDiscrete([3, 4]), torch.tensor([[2, 1]]))
    assert multi.shape == (2,) and multi.tolist() == [2, 1]

    bfloat = untensorize_space(box, torch.ones(1, 2, dtype=torch.bfloat16))
    assert bfloat.tolist() == [1.0, 1.0]


def test_flatten_orders_dict_keys_and_unflatten_inverts():
    tensors = {
        "velocity": torch.tensor([[5.0, 6.0, 7.0]]),
        "mode": torch.tensor([[2]], dtype=torch.int32),
        "position": torch.tensor([[3.0, 4.0]]),
    }
    flat = flatten_tensorized_space(tensors)
    assert flat.tolist() == [[2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]
    assert flatten_tensorized_space(torch.arange(4)).shape == (1, 4)
    assert flatten_tensorized_space(torch.zeros(2, 3, 4)).shape == (2, 12)

    back = unflatten_tensorized_space(DICT_SPACE, flat)
    assert back["mode"].tolist() == [[2.0]]
    assert back["position"].tolist() == [[3.0, 4.0]]
    assert back["velocity"].tolist() == [[5.0, 6.0, 7.0]]

    pair = unflatten_tensorized_space(
        spaces.Tuple([spaces.Discrete(2), spaces.Box(0, 1, (2, 2))]), torch.arange(10.0).reshape(2, 5)
    )
    assert isinstance(pair, list) and pair[0].shape == (2, 1) and pair[1].shape == (2, 2, 2)
    assert pair[1][1].tolist() == [[6.0, 7.0], [8.0, 9.0]]


def test_sample_space_defaults_to_numpy():
    box = spaces.Box(low=-1.0, high=1.0, shape=(3,))
    sample = sample_space(box, batch_size=4)
    assert isinstance(sample, np.ndarray) and sample.shape == (4, 3)
    assert sample_space(spaces.Discrete(3), batch_size=5).shape == (5, 1)
    assert sample_space(spaces.MultiDiscrete([2, 3]), batch_size=2).shape == (2, 2)

    native = sample_space(DICT_SPACE, batch_size=2, backend="native")
    assert native["mode"].shape == (2, 1) and isinstance(native["velocity"], torch.Tensor)
    assert native["velocity"].shape == (2, 3)

    with pytest.raises(ValueError, match="Unknown backend"):
        sample_space(box, backend="jax")


def test_convert_gym_space_with_a_gym_like_module(monkeypatch):
    # gym is not installed here: a stand-in module whose spaces are gymnasium's exercises the conversion
    fake_gym = types.ModuleType("gym")
    fake_gym.spaces = spaces
    monkeypatch.setitem(sys.modules, "gym", fake_gym)

    batched = spaces.Box(low=np.zeros((4, 3), np.float32), high=np.ones((4, 3), np.float32), dtype=np.float32)
    converted = convert_gym_space(batched, squeeze_batch_dimension=True)
    assert converted.shape == (3,) and converted.dtype == np.float32
    assert convert_gym_space(spaces.Discrete(7)).n == 7
    nested = convert_gym_space(spaces.Dict({"a": spaces.MultiDiscrete([2, 2])}))
    assert nested["a"].nvec.tolist() == [2, 2]
    with pytest.raises(ValueError, match="Unsupported gym space"):
        convert_gym_space(spaces.Text(3))


@pytest.mark.parametrize(
    "space", [spaces.Box(-1, 1, (2,)), spaces.Discrete(3), spaces.MultiDiscrete([2, 3]), DICT_SPACE], ids=str
)
def test_a_none_sample_gives_none_as_in_skrl(space):
    assert tensorize_space(space, None) is None
    assert untensorize_space(space, None) is None
    assert unflatten_tensorized_space(space, None) is None
    assert flatten_tensorized_space(None) is None
    assert tensorize_space(None, np.zeros(2)) is None and untensorize_space(None, torch.zeros(2)) is None
    assert sample_space(None) is None and compute_space_size(None) == 0
