"""JAX spaces helpers: samples <-> flat NumPy/JAX arrays, in sorted-key layout."""

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium import spaces

from skrl_like.jax.utils.spaces import (
    compute_space_size,
    flatten_tensorized_space,
    sample_space,
    tensorize_space,
    unflatten_tensorized_space,
    untensorize_space,
)

DICT_SPACE = spaces.Dict(
    {
        "velocity": spaces.Box(-1, 1, (2,)),
        "joints": spaces.Box(-1, 1, (3,)),
        "mode": spaces.Discrete(4),
    }
)


def test_compute_space_size_is_the_core_one():
    from skrl_like.core import spaces as core_spaces

    assert compute_space_size is core_spaces.compute_space_size
    assert compute_space_size(DICT_SPACE, occupied_size=True) == 6
    assert compute_space_size(DICT_SPACE) == 9  # one-hot size of the Discrete


def test_box_numpy_stays_numpy_with_its_dtype_unless_jax_is_asked():
    x = np.arange(12, dtype=np.float64).reshape(2, 2, 3)
    space = spaces.Box(-np.inf, np.inf, (2, 3), dtype=np.float64)
    kept = tensorize_space(space, x, _jax=False)
    assert isinstance(kept, np.ndarray) and kept.dtype == np.float64 and kept.shape == (2, 2, 3)
    on_device = tensorize_space(space, x)
    assert isinstance(on_device, jax.Array) and on_device.dtype == jnp.float32
    assert flatten_tensorized_space(kept, _jax=False).shape == (2, 6)
    assert flatten_tensorized_space(np.zeros(5)).shape == (1, 5)


def test_discrete_scalars_become_int32_columns():
    space = spaces.Discrete(3)
    assert tensorize_space(space, 2, _jax=False).tolist() == [[2]]
    batch = tensorize_space(space, np.array([0, 2, 1]), _jax=False)
    assert batch.dtype == np.int32 and batch.shape == (3, 1)
    assert untensorize_space(space, np.array([[2]])) == 2
    assert untensorize_space(space, jnp.array([[1], [2]]), squeeze_batch_dimension=False).shape == (2, 1)


def test_dict_flatten_uses_sorted_keys_and_unflatten_inverts_it():
    sample = {
        "velocity": np.array([[1.0, 2.0]], np.float32),
        "joints": np.array([[3.0, 4.0, 5.0]], np.float32),
        "mode": np.array([2]),
    }
    flat = flatten_tensorized_space(tensorize_space(DICT_SPACE, sample, _jax=False), _jax=False)
    # sorted: joints, mode, velocity
    np.testing.assert_array_equal(flat, [[3.0, 4.0, 5.0, 2.0, 1.0, 2.0]])
    restored = unflatten_tensorized_space(DICT_SPACE, jnp.asarray(flat))
    np.testing.assert_array_equal(restored["joints"], [[3.0, 4.0, 5.0]])
    np.testing.assert_array_equal(restored["mode"], [[2.0]])
    np.testing.assert_array_equal(restored["velocity"], [[1.0, 2.0]])


def test_tuple_unflattens_to_a_list_and_untensorizes_to_space_dtypes():
    space = spaces.Tuple([spaces.Box(-1, 1, (2,)), spaces.MultiDiscrete([3, 4])])
    flat = np.array([[0.5, -0.5, 2, 3]], np.float32)
    children = unflatten_tensorized_space(space, flat)
    assert isinstance(children, list) and children[1].shape == (1, 2)
    box, multi = untensorize_space(space, children)
    assert box.shape == (2,) and box.dtype == np.float32
    assert multi.tolist() == [2, 3] and multi.dtype == space[1].dtype


def test_untensorize_converts_bfloat16():
    space = spaces.Box(-1, 1, (2,))
    out = untensorize_space(space, jnp.ones((1, 2), dtype=jnp.bfloat16))
    assert out.dtype == np.float32 and out.shape == (2,)


def test_sample_space_defaults_to_numpy_and_native_gives_jax_arrays():
    numpy_sample = sample_space(DICT_SPACE, batch_size=5)
    assert isinstance(numpy_sample["joints"], np.ndarray) and numpy_sample["mode"].shape == (5, 1)
    native = sample_space(spaces.Discrete(4), batch_size=3, backend="native")
    assert isinstance(native, jax.Array) and native.shape == (3, 1)
    with pytest.raises(ValueError, match="Unknown backend"):
        sample_space(spaces.Discrete(4), backend="torch")


def test_unsupported_space_is_rejected():
    with pytest.raises(ValueError, match="Unsupported space"):
        tensorize_space(gymnasium.spaces.Text(5), "hello")


@pytest.mark.parametrize(
    "space", [spaces.Box(-1, 1, (2,)), spaces.Discrete(3), spaces.MultiDiscrete([2, 3]), DICT_SPACE], ids=str
)
def test_a_none_sample_gives_none_as_in_skrl(space):
    assert tensorize_space(space, None) is None
    assert tensorize_space(space, None, _jax=False) is None
    assert untensorize_space(space, None) is None
    assert unflatten_tensorized_space(space, None) is None
    assert flatten_tensorized_space(None) is None
    assert tensorize_space(None, np.zeros(2)) is None and untensorize_space(None, np.zeros(2)) is None
    assert sample_space(None) is None and compute_space_size(None) == 0


def test_jax_inputs_come_back_as_numpy_when_jax_is_not_asked():
    box = tensorize_space(spaces.Box(-1, 1, (2, 3)), jnp.arange(12.0).reshape(2, 2, 3), _jax=False)
    assert type(box) is np.ndarray and box.shape == (2, 2, 3)
    np.testing.assert_array_equal(box, np.arange(12.0).reshape(2, 2, 3))
    discrete = tensorize_space(spaces.Discrete(4), jnp.array([3, 1]), _jax=False)
    assert type(discrete) is np.ndarray and discrete.dtype == np.int32 and discrete.tolist() == [[3], [1]]
    nested = tensorize_space(DICT_SPACE, {"velocity": jnp.zeros(2), "joints": jnp.ones(3), "mode": 2}, _jax=False)
    assert all(type(value) is np.ndarray for value in nested.values())
    assert isinstance(tensorize_space(spaces.Box(-1, 1, (2,)), jnp.zeros((1, 2))), jax.Array)  # _jax=True: kept
