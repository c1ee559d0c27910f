"""JAX mechanics: GAE, advantage normalisation, TD targets, the polyak update, mini-batch splitting, finite flags."""

import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.core.agents.schedule import mini_batch_slices
from skrl_like.jax.agents.mechanics import (
    all_finite,
    compute_gae,
    contiguous_mini_batches,
    normalize_advantages,
    polyak_update,
    shuffled_mini_batches,
    td_targets,
)


def test_gae_on_a_hand_computed_case_with_termination_and_truncation():
    # the same case as the torch test: gamma = lambda = 0.5; env 0 terminates at t=1, env 1 is truncated at t=0
    rewards = jnp.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])[..., None]
    values = jnp.array([[0.5, 0.0], [1.0, 0.0], [1.5, 0.0]])[..., None]
    dones = jnp.array([[0, 1], [1, 0], [0, 0]], dtype=jnp.int8)[..., None]
    returns, advantages = compute_gae(rewards, dones, values, jnp.array([[2.0], [1.0]]), 0.5, 0.5)
    raw = np.array([[1.25, 1.0], [1.0, 1.375], [2.5, 1.5]])
    np.testing.assert_allclose(np.asarray(returns)[..., 0], raw + np.asarray(values)[..., 0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(advantages)[..., 0], (raw - raw.mean()) / (raw.std(ddof=1) + 1e-8), rtol=1e-5)


def test_gae_of_a_single_sample_is_finite_with_a_zero_advantage():
    # one step, one env: return = r + gamma * V(s') = 1 + 0.9 * 2; the advantage has no spread and becomes 0
    returns, advantages = compute_gae(
        jnp.ones((1, 1, 1)), jnp.zeros((1, 1, 1), jnp.int8), jnp.full((1, 1, 1), 0.5), jnp.full((1, 1), 2.0), 0.9, 0.95
    )
    np.testing.assert_allclose(np.asarray(returns), [[[2.8]]], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(advantages), [[[0.0]]])


def test_advantages_are_normalised_with_the_unbiased_std():
    # mean 2, unbiased std sqrt(2)
    normalised = normalize_advantages(jnp.array([[1.0], [3.0]]))
    np.testing.assert_allclose(np.asarray(normalised)[:, 0], [-1 / np.sqrt(2), 1 / np.sqrt(2)], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(normalize_advantages(jnp.array([[7.0]]))), [[0.0]])


def test_td_targets_bootstrap_only_where_the_episode_goes_on():
    rewards = jnp.array([[1.0], [2.0], [3.0]])
    dones = jnp.array([[False], [True], [False]])
    next_values = jnp.array([[10.0], [20.0], [-4.0]])
    targets = td_targets(rewards, dones, next_values, 0.5)
    np.testing.assert_allclose(np.asarray(targets)[:, 0], [1 + 0.5 * 10, 2.0, 3 - 0.5 * 4])
    # 0/1 flags (the memories' int8) mean the same
    np.testing.assert_allclose(np.asarray(td_targets(rewards, dones.astype(jnp.int8), next_values, 0.5)), targets)


def test_polyak_update_weighs_the_source_by_polyak():
    target = {"w": jnp.array([0.0, 2.0]), "b": jnp.array(4.0)}
    source = {"w": jnp.array([4.0, 2.0]), "b": jnp.array(0.0)}
    updated = polyak_update(target, source, 0.25)
    np.testing.assert_allclose(np.asarray(updated["w"]), [1.0, 2.0])  # 0.25 * 4 + 0.75 * 0, 0.25 * 2 + 0.75 * 2
    np.testing.assert_allclose(np.asarray(updated["b"]), 3.0)  # 0.75 * 4
    # polyak 1 copies the source; the inputs are not modified
    np.testing.assert_array_equal(np.asarray(polyak_update(target, source, 1.0)["w"]), [4.0, 2.0])
    np.testing.assert_array_equal(np.asarray(target["w"]), [0.0, 2.0])


def test_contiguous_mini_batches_match_the_neutral_slices_and_drop_the_remainder():
    rows = np.arange(10)
    batches = contiguous_mini_batches({"x": jnp.asarray(rows), "y": jnp.asarray(rows[:, None] * 10.0)}, 3)
    np.testing.assert_array_equal(np.asarray(batches["x"]), [[0, 1, 2], [3, 4, 5], [6, 7, 8]])
    assert batches["y"].shape == (3, 3, 1)
    for index, rows_slice in enumerate(mini_batch_slices(10, 3)):
        np.testing.assert_array_equal(np.asarray(batches["x"][index]), rows[rows_slice])
        np.testing.assert_array_equal(np.asarray(batches["y"][index])[:, 0], rows[rows_slice] * 10.0)


def test_shuffled_mini_batches_keep_rows_together_and_depend_on_the_key():
    rows = np.arange(10)
    tree = (jnp.asarray(rows), jnp.asarray(rows[:, None] * 10.0))
    first = shuffled_mini_batches(jax.random.PRNGKey(0), tree, 3)
    assert first[0].shape == (3, 3) and first[1].shape == (3, 3, 1)
    # the same permutation for every leaf: row i of one leaf stays with row i of the other
    np.testing.assert_array_equal(np.asarray(first[1])[..., 0], np.asarray(first[0]) * 10.0)
    taken = np.asarray(first[0]).reshape(-1)
    assert len(set(taken.tolist())) == 9 and set(taken.tolist()) <= set(rows.tolist())
    again = shuffled_mini_batches(jax.random.PRNGKey(0), tree, 3)
    np.testing.assert_array_equal(np.asarray(again[0]), np.asarray(first[0]))
    other = shuffled_mini_batches(jax.random.PRNGKey(1), tree, 3)
    assert not np.array_equal(np.asarray(other[0]), np.asarray(first[0]))


def test_all_finite_is_false_when_any_leaf_has_nan_or_inf():
    assert bool(all_finite({"a": jnp.ones(3), "b": (jnp.zeros(()), jnp.ones((2, 2)))}))
    assert not bool(all_finite({"a": jnp.ones(3), "b": jnp.array([0.0, jnp.inf])}))
    assert not bool(all_finite([jnp.array([jnp.nan])]))
