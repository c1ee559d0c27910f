"""Memory sampled uniformly at random (the memory of every skrl agent)."""

from typing import Any, List, Sequence, Union

import jax
import numpy as np

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
    ) -> None:
        super().__init__(memory_size, num_envs, device, export, export_format, export_directory)
        self._replacement = replacement

    def sample(
        self, names: Sequence[str], batch_size: int, mini_batches: int = 1, sequence_length: int = 1
    ) -> List[List[Any]]:
        """Draw ``batch_size`` rows (or sequences) at random among the stored ones.

        :param names: buffer names, in the order the arrays are returned.
        :param batch_size: number of rows (of sequences, when ``sequence_length > 1``).
        :param mini_batches: split the drawn rows into this many chunks.
        :param sequence_length: draw runs of consecutive timesteps of one environment (``batch_size * length``
            rows); a run may cross an episode end or the write position.
        """
        size = len(self)
        if sequence_length > 1:
            offsets = np.arange(0, self.num_envs * sequence_length, self.num_envs)
            size -= offsets[-1]
        if self._replacement:
            indexes = np.random.randint(0, size, (batch_size,))
        else:
            indexes = np.random.permutation(size)[:batch_size]
        if sequence_length > 1:
            indexes = (offsets[None, :] + indexes[:, None]).reshape(-1)
        self.sampling_indexes = indexes
        return self.sample_by_index(names, indexes, mini_batches)
