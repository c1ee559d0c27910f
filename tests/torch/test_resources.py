"""Resources (torch): RunningStandardScaler, KLAdaptiveLR, noises."""

import numpy as np
import pytest
import torch
from gymnasium import spaces

from skrl_like.torch.resources.noises import GaussianNoise, Noise, OrnsteinUhlenbeckNoise
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.resources.schedulers import KLAdaptiveLR, KLAdaptiveRL

BATCH = np.array([[1.0, -2.0], [3.0, 0.0], [5.0, 10.0], [-1.0, 4.0]])


def _expected_update(mean, variance, count, batch):
    """The parallel mean/variance merge written out in NumPy (unbiased batch variance)."""
    batch_mean = batch.mean(axis=0)
    batch_variance = batch.var(axis=0, ddof=1)
    n = batch.shape[0]
    delta = batch_mean - mean
    total = count + n
    m2 = variance * count + batch_variance * n + delta**2 * count * n / total
    return mean + delta * n / total, m2 / total, total


def test_scaler_train_then_transform_matches_numpy():
    scaler = RunningStandardScaler(size=spaces.Box(low=-1, high=1, shape=(2,)), device="cpu")
    assert scaler.running_mean.dtype == torch.float64 and scaler.current_count.shape == ()
    assert set(scaler.state_dict()) == {"running_mean", "running_variance", "current_count"}

    output = scaler(torch.tensor(BATCH, dtype=torch.float32), train=True)
    mean, variance, count = _expected_update(np.zeros(2), np.ones(2), 1.0, BATCH)
    np.testing.assert_allclose(scaler.running_mean.numpy(), mean, rtol=1e-12)
    np.testing.assert_allclose(scaler.running_variance.numpy(), variance, rtol=1e-6)
    assert scaler.current_count.item() == count == 5.0
    # the batch is transformed with the statistics that already include it
    expected = np.clip((BATCH - mean) / (np.sqrt(variance) + 1e-8), -5.0, 5.0)
    np.testing.assert_allclose(output.numpy(), expected, rtol=1e-5)
    assert output.dtype == torch.float32

    second = BATCH[:3] * 0.5
    scaler(torch.tensor(second, dtype=torch.float32), train=True)
    mean, variance, count = _expected_update(mean, variance, count, second)
    np.testing.assert_allclose(scaler.running_mean.numpy(), mean, rtol=1e-6)
    np.testing.assert_allclose(scaler.running_variance.numpy(), variance, rtol=1e-6)
    assert scaler.current_count.item() == 8.0

    # without train the statistics do not move
    scaler(torch.tensor(BATCH, dtype=torch.float32))
    assert scaler.current_count.item() == 8.0


def test_scaler_inverse_and_clipping():
    scaler = RunningStandardScaler(size=2, clip_threshold=1.5, device="cpu")
    scaler.running_mean.copy_(torch.tensor([1.0, -2.0], dtype=torch.float64))
    scaler.running_variance.copy_(torch.tensor([4.0, 9.0], dtype=torch.float64))

    forward = scaler(torch.tensor([[2.0, -2.0], [100.0, -100.0]]))
    np.testing.assert_allclose(forward.numpy(), [[0.5, 0.0], [1.5, -1.5]], rtol=1e-6)
    # inverse: sqrt(var) * clip(x) + mean, no epsilon
    inverse = scaler(torch.tensor([[0.5, 1.0], [3.0, -3.0]]), inverse=True)
    np.testing.assert_allclose(inverse.numpy(), [[2.0, 1.0], [4.0, -6.5]], rtol=1e-6)


def test_scaler_three_dimensional_input_pools_two_axes():
    data = np.arange(24.0).reshape(3, 4, 2) ** 1.5
    scaler = RunningStandardScaler(size=2, device="cpu")
    scaler(torch.tensor(data, dtype=torch.float32), train=True)
    mean, variance, count = _expected_update(np.zeros(2), np.ones(2), 1.0, data.reshape(12, 2))
    np.testing.assert_allclose(scaler.running_mean.numpy(), mean, rtol=1e-5)
    np.testing.assert_allclose(scaler.running_variance.numpy(), variance, rtol=1e-5)
    assert scaler.current_count.item() == 13.0


def test_scaler_gradients_and_errors():
    scaler = RunningStandardScaler(size=2, device="cpu")
    inputs = torch.ones(3, 2, requires_grad=True)
    assert not scaler(inputs).requires_grad
    assert scaler(inputs, no_grad=False).requires_grad
    with pytest.raises(ValueError, match="3 features"):
        scaler(torch.ones(4, 3))


def _optimizer(learning_rate: float = 1e-3, groups: int = 1) -> torch.optim.Optimizer:
    parameters = [{"params": [torch.nn.Parameter(torch.zeros(1))]} for _ in range(groups)]
    return torch.optim.SGD(parameters, lr=learning_rate)


def test_kl_adaptive_rule_on_hand_cases():
    assert KLAdaptiveRL is KLAdaptiveLR
    optimizer = _optimizer(1e-3, groups=2)
    scheduler = KLAdaptiveLR(optimizer, kl_threshold=0.01, kl_factor=2, lr_factor=2.0, min_lr=1e-4, max_lr=5e-3)
    assert scheduler.get_last_lr() == [1e-3, 1e-3]

    scheduler.step(kl=0.03)  # above 0.02: halve
    assert scheduler.get_last_lr() == pytest.approx([5e-4, 5e-4])
    scheduler.step(kl=torch.tensor(0.01))  # inside [0.005, 0.02]: unchanged
    assert scheduler.get_last_lr() == pytest.approx([5e-4, 5e-4])
    scheduler.step()  # no KL: unchanged
    assert scheduler.get_last_lr() == pytest.approx([5e-4, 5e-4])
    scheduler.step(kl=0.001)  # below 0.005: double
    assert optimizer.param_groups[1]["lr"] == pytest.approx(1e-3)

    for _ in range(10):
        scheduler.step(kl=1.0)
    assert scheduler.get_last_lr() == pytest.approx([1e-4, 1e-4])  # floor
    for _ in range(10):
        scheduler.step(kl=0.0)
    assert scheduler.get_last_lr() == pytest.approx([5e-3, 5e-3])  # ceiling


def test_kl_adaptive_defaults():
    scheduler = KLAdaptiveLR(_optimizer(1e-3))
    scheduler.step(kl=0.0161)  # default band is [0.004, 0.016]
    assert scheduler.get_last_lr()[0] == pytest.approx(1e-3 / 1.5)
    scheduler.step(kl=0.0039)
    assert scheduler.get_last_lr()[0] == pytest.approx(1e-3)


def test_gaussian_noise_statistics():
    torch.manual_seed(0)
    noise = GaussianNoise(mean=1.0, std=0.5, device="cpu")
    sample = noise.sample((200_000,))
    assert sample.dtype == torch.float32 and sample.shape == (200_000,)
    assert sample.mean().item() == pytest.approx(1.0, abs=0.01)
    assert sample.std().item() == pytest.approx(0.5, abs=0.01)
    assert noise.sample_like(torch.zeros(3, 2)).shape == (3, 2)
    with pytest.raises(NotImplementedError):
        Noise(device="cpu").sample((1,))


class _FixedIncrements:
    """Stands in for the normal distribution: returns hand-chosen increments in order."""

    def __init__(self, values):
        self.values = list(values)

    def sample(self, size):
        return torch.full(tuple(size), self.values.pop(0))


def test_ornstein_uhlenbeck_recurrence_by_hand():
    noise = OrnsteinUhlenbeckNoise(theta=0.25, sigma=2.0, base_scale=0.5, device="cpu")
    noise.distribution = _FixedIncrements([1.0, -1.0, 0.5, 3.0])
    # state_1 = 0.75 * 0 + 2 * 1 = 2          -> 0.5 * 2 = 1
    assert noise.sample((2, 1)).tolist() == [[1.0], [1.0]]
    # state_2 = 0.75 * 2 + 2 * (-1) = -0.5    -> -0.25
    assert noise.sample((2, 1)).tolist() == [[-0.25], [-0.25]]
    # state_3 = 0.75 * -0.5 + 2 * 0.5 = 0.625 -> 0.3125
    assert noise.sample_like(torch.zeros(2, 1)).tolist() == [[0.3125], [0.3125]]
    # a new shape restarts from 0: state = 2 * 3 = 6 -> 3
    assert noise.sample((3,)).tolist() == [3.0, 3.0, 3.0]


def test_scaler_one_row_batch_keeps_finite_statistics():
    # a single row has no spread: its batch variance counts as 0 (skrl's unbiased variance of one row is NaN)
    scaler = RunningStandardScaler(size=2, device="cpu")
    scaler(torch.tensor([[3.0, -1.0]]), train=True)
    # count 1 (initial) + 1: mean = 0 + 3 * 1/2, variance = (1 * 1 + 0 * 1 + 3**2 * 1 * 1 / 2) / 2
    torch.testing.assert_close(scaler.running_mean, torch.tensor([1.5, -0.5], dtype=torch.float64))
    torch.testing.assert_close(
        scaler.running_variance, torch.tensor([(1 + 4.5) / 2, (1 + 0.5) / 2], dtype=torch.float64)
    )
