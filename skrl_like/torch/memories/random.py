"""``RandomMemory``: uniform random sampling (with or without replacement) over the stored rows."""

from typing import List, Sequence, Union

import torch

from skrl_like.torch.memories.base import Memory


class RandomMemory(Memory):
    """A memory sampled uniformly at random with torch's global generator (replay buffer, or rollout storage).

    :param memory_size: number of timesteps kept.
    :param num_envs: number of parallel environments stored side by side.
    :param device: where the buffers live.
    :param export: save the memory every time it fills up.
    :param export_format: ``"pt"``, ``"npz"`` (``"np"``) or ``"csv"``.
    :param export_directory: where exported files go.
    :param replacement: draw indexes with replacement (the batch size is always honoured) or without (a batch has
        at most ``len(memory)`` distinct rows).
    """

    def __init__(
        self,
        memory_size: int,
        num_envs: int = 1,
        device: Union[str, torch.device, None] = None,
        export: bool = False,
        export_format: str = "pt",
        export_directory: str = "",
        replacement: bool = True,
    ) -> None:
        super().__init__(memory_size, num_envs, device, export, export_format, export_directory)
        self._replacement = replacement

    def sample(
        self, names: Sequence[str], batch_size: int, mini_batches: int = 1, sequence_length: int = 1
    ) -> List[List[torch.Tensor]]:
        """Draw ``batch_size`` rows (or sequences of ``sequence_length`` consecutive timesteps of one env, so
        ``batch_size * sequence_length`` rows), split into ``mini_batches``."""
        return self._sample_uniform(names, batch_size, mini_batches, sequence_length, self._replacement)
