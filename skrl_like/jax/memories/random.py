"""Memory sampled uniformly at random (the memory of every skrl agent)."""

from typing import Any, List, Optional, Sequence, Union

import jax

from skrl_like.jax.memories.base import Memory


class RandomMemory(Memory):
    """Memory that samples rows uniformly at random with NumPy's global generator (seeded by ``set_seed``).

    :param memory_size: number of timesteps each buffer holds.
    :param num_envs: number of environments written at every step.
    :param device: JAX device of the arrays read back with the ``"jax"`` backend.
    :param export: save the memory to a file every time it fills up.
    :param export_format: ``"npz"``/``"np"`` or ``"csv"`` (see :class:`Memory`).
    :param export_directory: folder of the exported files.
    :param replacement: draw with replacement (``batch_size`` rows always) or without (at most ``len(memory)``).
    :param on_device: buffers as JAX arrays on ``device`` (``True``) or host NumPy arrays (``False``); ``None``: on
        the device with the ``"jax"`` backend when ``device`` is not a CPU (see :class:`Memory`).
    """

    def __init__(
        self,
        memory_size: int,
        num_envs: int = 1,
        device: Union[str, jax.Device, None] = None,
        export: bool = False,
        export_format: str = "pt",
        export_directory: str = "",
        replacement: bool = True,
        on_device: Optional[bool] = None,
    ) -> None:
        super().__init__(memory_size, num_envs, device, export, export_format, export_directory, on_device=on_device)
        self._replacement = replacement

    def sample(
        self, names: Sequence[str], batch_size: int, mini_batches: int = 1, sequence_length: int = 1
    ) -> List[List[Any]]:
        """Draw ``batch_size`` rows (or sequences of ``sequence_length`` consecutive timesteps of one env, so
        ``batch_size * sequence_length`` rows), split into ``mini_batches``."""
        return self._sample_uniform(names, batch_size, mini_batches, sequence_length, self._replacement)
