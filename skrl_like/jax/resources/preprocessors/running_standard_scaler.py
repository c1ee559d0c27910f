"""Running standardization of inputs (observations, values) with statistics updated from every training batch."""

from functools import partial
from typing import Any, Mapping, Union

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.spaces import compute_space_size
from skrl_like.jax.utils.distributed import compile_update, moments


def update_statistics(xp: Any, mean: Any, variance: Any, count: Any, x: Any) -> tuple:
    # the batch's moments (unbiased variance, as skrl; a single row carries no spread: 0, not skrl's NaN, which
    # poisoned the statistics); in a distributed run those of every process's batch together, merged by counts.
    # (timesteps, envs, size) batches count every row
    batch_count, batch_mean, batch_variance = moments(xp, x, (0, 1) if x.ndim == 3 else (0,))
    # Chan et al. parallel variance: merge the batch's moments into the running ones
    delta = batch_mean - mean
    total = count + batch_count
    m2 = variance * count + batch_variance * batch_count + delta**2 * count * batch_count / total
    return mean + delta * batch_count / total, m2 / total, total


def standardize(xp: Any, x: Any, mean: Any, variance: Any, epsilon: float, clip_threshold: float, inverse: bool) -> Any:
    if inverse:  # no epsilon on the way back, as skrl
        return xp.sqrt(variance) * xp.clip(x, -clip_threshold, clip_threshold) + mean
    return xp.clip((x - mean) / (xp.sqrt(variance) + epsilon), -clip_threshold, clip_threshold)


# in a distributed run one program over the processes, the batch (argument 3) each process's own
_jitted_update = compile_update(partial(update_statistics, jnp), data_argnums=(3,))
_jitted_transform = jax.jit(partial(standardize, jnp), static_argnames=("inverse",))


class _StateDict:
    """What the JAX agents' checkpoint code expects from a module: ``.params`` and ``replace(params=...)``."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = params

    def replace(self, params: Mapping[str, Any]) -> Mapping[str, Any]:
        return params


class RunningStandardScaler:
    """Standardize inputs with a running mean and variance: ``clip((x - mean) / (std + epsilon))``.

    :param size: size of the inputs: an int, a shape or a gymnasium space (its occupied size).
    :param epsilon: added to the standard deviation so that constant inputs do not divide by zero.
    :param clip_threshold: standardized values are clipped to ``[-clip_threshold, clip_threshold]`` to bound the
        effect of outliers on the networks.
    :param device: JAX device of the statistics with the ``"jax"`` backend (``None``: default device).

    The statistics are float32 (``current_count`` has shape ``(1,)``). Calling with ``train=True`` first merges the
    batch into them (unbiased batch variance), then transforms the batch with the updated statistics. Jitted JAX
    functions with the ``"jax"`` backend, NumPy otherwise.
    """

    def __init__(
        self,
        size: Union[int, tuple, gymnasium.Space],
        epsilon: float = 1e-8,
        clip_threshold: float = 5.0,
        device: Union[str, jax.Device, None] = None,
    ) -> None:
        self._jax = config.jax.backend == "jax"
        self.epsilon = epsilon
        self.clip_threshold = clip_threshold
        self.device = config.jax.parse_device(device)
        size = compute_space_size(size, occupied_size=True)
        mean = np.zeros((size,), dtype=np.float32)
        variance = np.ones((size,), dtype=np.float32)
        count = np.ones((1,), dtype=np.float32)
        if self._jax:
            mean, variance, count = jax.device_put((mean, variance, count), self.device)
        self.running_mean: Any = mean
        self.running_variance: Any = variance
        self.current_count: Any = count

    @property
    def state_dict(self) -> _StateDict:
        """The statistics, as ``.params = {"running_mean", "running_variance", "current_count"}``."""
        return _StateDict(
            {
                "running_mean": self.running_mean,
                "running_variance": self.running_variance,
                "current_count": self.current_count,
            }
        )

    @state_dict.setter
    def state_dict(self, value: Mapping[str, Any]) -> None:
        if self._jax:
            self.running_mean, self.running_variance, self.current_count = jax.device_put(
                (
                    jnp.asarray(value["running_mean"], dtype=jnp.float32),
                    jnp.asarray(value["running_variance"], dtype=jnp.float32),
                    jnp.asarray(value["current_count"], dtype=jnp.float32).reshape(1),
                ),
                self.device,
            )
        else:  # in place: references held elsewhere see the loaded statistics
            np.copyto(self.running_mean, np.asarray(value["running_mean"]))
            np.copyto(self.running_variance, np.asarray(value["running_variance"]))
            np.copyto(self.current_count, np.asarray(value["current_count"]).reshape(1))

    def __call__(self, x: Any, train: bool = False, inverse: bool = False) -> Any:
        """Standardize ``x`` (or undo it with ``inverse``), first updating the statistics with it if ``train``.

        :param x: ``(batch, size)`` or ``(timesteps, envs, size)`` array.
        :param train: merge ``x`` into the running statistics before transforming it.
        :param inverse: map standardized values back to the original scale.
        """
        if self._jax:
            if train:
                self.running_mean, self.running_variance, self.current_count = _jitted_update(
                    self.running_mean, self.running_variance, self.current_count, x
                )
            return _jitted_transform(
                x, self.running_mean, self.running_variance, self.epsilon, self.clip_threshold, inverse=inverse
            )
        if train:
            mean, variance, count = update_statistics(
                np, self.running_mean, self.running_variance, self.current_count, np.asarray(x)
            )
            np.copyto(self.running_mean, mean, casting="same_kind")
            np.copyto(self.running_variance, variance, casting="same_kind")
            np.copyto(self.current_count, count, casting="same_kind")
        return standardize(np, x, self.running_mean, self.running_variance, self.epsilon, self.clip_threshold, inverse)
