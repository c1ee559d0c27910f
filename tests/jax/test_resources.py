"""JAX resources: running standard scaler, KL-adaptive schedule, noises."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium import spaces

from skrl_like import config
from skrl_like.jax.resources.noises import GaussianNoise, Noise, OrnsteinUhlenbeckNoise
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.resources.schedulers import KLAdaptiveLR, KLAdaptiveRL, kl_adaptive


@pytest.fixture(params=["numpy", "jax"])
def backend(request):
    previous = config.jax.backend
    config.jax.backend = request.param
    yield request.param
    config.jax.backend = previous


def _reference_statistics(batches):
    # the running statistics start as mean 0, variance 1, count 1 and merge each batch (unbiased batch variance)
    mean, variance, count = np.zeros(3), np.ones(3), 1.0
    for batch in batches:
        rows = batch.reshape(-1, 3).astype(np.float64)
        n = rows.shape[0]
        batch_mean, batch_variance = rows.mean(axis=0), rows.var(axis=0, ddof=1)
        delta = batch_mean - mean
        total = count + n
        m2 = variance * count + batch_variance * n + delta**2 * count * n / total
        mean, variance, count = mean + delta * n / total, m2 / total, total
    return mean, variance, count


def test_scaler_matches_hand_computation(backend):
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, (8, 3)).astype(np.float32), rng.normal(-1.0, 0.5, (4, 5, 3)).astype(np.float32)]
    scaler = RunningStandardScaler(spaces.Box(-1, 1, (3,)), clip_threshold=1.5)
    assert scaler.running_mean.dtype == np.float32 and scaler.current_count.shape == (1,)
    scaler(batches[0], train=True)
    output = scaler(batches[1], train=True)
    mean, variance, count = _reference_statistics(batches)
    np.testing.assert_allclose(np.asarray(scaler.running_mean), mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(scaler.running_variance), variance, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(scaler.current_count), [count])
    # the batch is transformed with the statistics it just updated
    expected = np.clip((batches[1] - mean) / (np.sqrt(variance) + 1e-8), -1.5, 1.5)
    np.testing.assert_allclose(np.asarray(output), expected, rtol=1e-4, atol=1e-5)
    standardized = np.array([[0.5, -2.0, 1.0]], np.float32)
    restored = scaler(standardized, inverse=True)
    np.testing.assert_allclose(
        np.asarray(restored), np.sqrt(variance) * np.clip(standardized, -1.5, 1.5) + mean, rtol=1e-5
    )
    assert isinstance(output, jax.Array if backend == "jax" else np.ndarray)


def test_scaler_without_train_leaves_statistics_alone(backend):
    scaler = RunningStandardScaler(2)
    output = scaler(np.array([[2.0, -4.0]], np.float32))
    np.testing.assert_allclose(np.asarray(output), [[2.0, -4.0]], rtol=1e-6)  # mean 0, std 1
    assert float(np.asarray(scaler.current_count)[0]) == 1.0


def test_scaler_state_dict(backend):
    scaler = RunningStandardScaler(2)
    state = scaler.state_dict
    assert sorted(state.params) == ["current_count", "running_mean", "running_variance"]
    params = {"running_mean": np.array([1.0, 2.0]), "running_variance": np.array([4.0, 9.0]), "current_count": 5.0}
    assert state.replace(params=params) is params
    mean_before = scaler.running_mean
    scaler.state_dict = params
    np.testing.assert_allclose(np.asarray(scaler.running_mean), [1.0, 2.0])
    np.testing.assert_allclose(np.asarray(scaler.current_count), [5.0])
    assert scaler.running_mean.dtype == np.float32
    if backend == "numpy":
        assert scaler.running_mean is mean_before  # copied in place
    np.testing.assert_allclose(np.asarray(scaler(np.array([[3.0, 8.0]], np.float32))), [[1.0, 2.0]], rtol=1e-6)


def test_kl_adaptive_rule():
    schedule = KLAdaptiveLR(kl_threshold=0.01, min_lr=1e-4, max_lr=1e-2, kl_factor=2, lr_factor=1.5)
    assert schedule(0) == 1.0
    assert schedule(0, lr=1e-3) == 1e-3
    assert schedule(0, lr=1e-3, kl=0.03) == pytest.approx(1e-3 / 1.5)  # kl > 0.02: decrease
    assert schedule(0, lr=1e-3, kl=jnp.array([0.001])) == pytest.approx(1.5e-3)  # kl < 0.005: increase
    assert schedule(0, lr=1e-3, kl=np.float32(0.01)) == 1e-3  # inside the band
    assert schedule(0, lr=1.2e-4, kl=1.0) == 1e-4  # clamped at min_lr
    assert schedule(0, lr=9e-3, kl=0.0) == 1e-2  # clamped at max_lr
    assert kl_adaptive is KLAdaptiveLR and KLAdaptiveRL is KLAdaptiveLR


def test_ornstein_uhlenbeck_recurrence_uses_one_minus_theta(backend):
    # std 0 makes every innovation equal to its mean: state_k = (1 - theta) * state_{k-1} + sigma * mean
    noise = OrnsteinUhlenbeckNoise(theta=0.15, sigma=0.2, base_scale=0.5, mean=1.0, std=0.0)
    state, expected = 0.0, []
    for _ in range(4):
        state = (1 - 0.15) * state + 0.2 * 1.0
        expected.append(0.5 * state)
    samples = [float(np.asarray(noise.sample((2, 3)))[1, 2]) for _ in range(4)]
    np.testing.assert_allclose(samples, expected, rtol=1e-6)
    assert noise.sample_like(np.zeros((4, 1))).shape == (4, 1)  # new shape: state restarts from 0
    np.testing.assert_allclose(np.asarray(noise.state), 0.2)


def test_ornstein_uhlenbeck_draws_from_seeded_numpy():
    np.random.seed(3)
    noise = OrnsteinUhlenbeckNoise(theta=0.3, sigma=0.1, base_scale=2.0)
    samples = [noise.sample((5,)) for _ in range(3)]
    generator = np.random.RandomState(3)
    state = 0.0
    for sample in samples:
        state = 0.7 * state + 0.1 * generator.standard_normal(5)
        np.testing.assert_allclose(sample, 2.0 * state, rtol=1e-5, atol=1e-7)


def test_gaussian_noise_statistics_and_fresh_jax_draws(backend):
    noise = GaussianNoise(mean=1.0, std=0.5)
    sample = noise.sample((20000,))
    assert sample.shape == (20000,) and sample.dtype == np.float32
    assert abs(float(sample.mean()) - 1.0) < 0.02 and abs(float(sample.std()) - 0.5) < 0.02
    assert not np.allclose(np.asarray(noise.sample((4,))), np.asarray(noise.sample((4,))))
    assert noise.sample_like(jnp.zeros((3, 2))).shape == (3, 2)
    with pytest.raises(NotImplementedError):
        Noise().sample((1,))


def test_scaler_one_row_batch_keeps_finite_statistics(backend):
    # a single row has no spread: its batch variance counts as 0 (skrl's unbiased variance of one row is NaN)
    scaler = RunningStandardScaler(2)
    scaler(np.array([[3.0, -1.0]], np.float32), train=True)
    # count 1 (initial) + 1: mean = 0 + 3 * 1/2, variance = (1 * 1 + 0 * 1 + 3**2 * 1 * 1 / 2) / 2
    np.testing.assert_allclose(np.asarray(scaler.running_mean), [1.5, -0.5])
    np.testing.assert_allclose(np.asarray(scaler.running_variance), [(1 + 4.5) / 2, (1 + 0.5) / 2])
