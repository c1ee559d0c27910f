"""``RandomMemory``: uniform random sampling (with or without replacement) over the stored rows."""

from typing import List, Sequence, Union

import torch

from skrl_like.torch.memories.base import Memory


class RandomMemory(Memory):
    """A memory sampled uniformly at random (replay buffer, or the storage of on-policy rollouts).

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
        """Draw ``batch_size`` rows (or sequences of ``sequence_length`` consecutive timesteps of one env).

        Sequences may cross episode ends or the circular write position [compat]. Uses torch's global RNG.
        """
        size = len(self)
        if sequence_length > 1:
            # rows of the same environment are num_envs apart in the flat view
            offsets = torch.arange(0, self.num_envs * sequence_length, self.num_envs)
            size -= int(offsets[-1])
        if size <= 0:
            raise ValueError(
                f"RandomMemory.sample: the memory holds {len(self)} samples, not enough for sequence_length="
                f"{sequence_length}: add samples before sampling"
            )
        if self._replacement:
            indexes = torch.randint(0, size, (batch_size,))
        else:
            indexes = torch.randperm(size, dtype=torch.long)[:batch_size]
        if sequence_length > 1:
            indexes = (offsets[None, :] + indexes[:, None]).reshape(-1)
        self.sampling_indexes = indexes
        return self.sample_by_index(names=names, indexes=indexes, mini_batches=mini_batches)
