"""The collectives of a data-parallel torch run (``torchrun``), each a no-op in a single process.

Every process holds the same parameters (broadcast from rank 0 when an agent is built) and learns from its own
environments: gradients, the KL and the moments behind advantage normalisation and running statistics are
combined across processes, so every process takes the same step and the parameters stay bit-identical. The process
group itself is created by :meth:`skrl_like.config.torch.init_process_group` when ``skrl_like.torch`` is imported.
"""

from typing import Sequence, Tuple, Union

import torch

from skrl_like import config


def average_gradients(parameters: Sequence[torch.nn.Parameter]) -> None:
    """Replace every gradient of ``parameters`` by its mean over the processes: one all-reduce of all of them.

    Call it after ``backward`` and before clipping and the optimizer step (the one shared step,
    :func:`skrl_like.torch.agents.mechanics.optimizer_step`, does). Parameters without a gradient are skipped, on
    every process alike (whether a parameter gets a gradient depends on the model, not on the data).
    """
    if not config.torch.is_distributed:
        return
    average_(parameter.grad for parameter in parameters if parameter.grad is not None)


def average_(tensors: Sequence[torch.Tensor]) -> None:
    """Average ``tensors`` over the processes in place, flattened into one vector (one all-reduce)."""
    tensors = list(tensors)
    if not tensors:
        return
    flat = torch.cat([tensor.reshape(-1) for tensor in tensors])
    torch.distributed.all_reduce(flat, op=torch.distributed.ReduceOp.SUM)
    flat /= config.torch.world_size
    chunks = flat.split([tensor.numel() for tensor in tensors])
    torch._foreach_copy_(tensors, [chunk.view_as(tensor) for chunk, tensor in zip(chunks, tensors)])


def mean_over_processes(value: torch.Tensor) -> torch.Tensor:
    """The mean of a tensor (e.g. a mini-batch's approximate KL) over the processes; ``value`` itself in a single
    process."""
    if not config.torch.is_distributed:
        return value
    total = value.detach().clone()
    torch.distributed.all_reduce(total, op=torch.distributed.ReduceOp.SUM)
    return total / config.torch.world_size


def moments(x: torch.Tensor, dims: Tuple[int, ...]) -> Tuple[Union[int, torch.Tensor], torch.Tensor, torch.Tensor]:
    """``(count, mean, unbiased variance)`` of ``x`` over ``dims``: of this process's rows, or in a distributed run of
    the rows of every process together (what one process holding all of them would compute).

    The processes' moments are gathered and merged by counts (Chan et al.): the mean is the count-weighted mean of
    the means, the squared deviations add each process's own and its mean's distance from the total mean. Every
    process merges the same gathered numbers, so all get the same result. A single row has no spread: variance 0.

    :param x: the rows.
    :param dims: the dimensions reduced (the others are features).
    :return: the count (an int; in a distributed run a float64 0-d tensor, so reading it does not wait for the device),
        the mean and the variance, in ``x``'s dtype.
    """
    count = 1
    for dim in dims:
        count *= x.shape[dim]
    mean = torch.mean(x, dim=dims)
    variance = torch.var(x, dim=dims, unbiased=True) if count > 1 else torch.zeros_like(mean)
    if not config.torch.is_distributed:
        return count, mean, variance
    size = mean.numel()
    local = torch.cat([mean.new_full((1,), count), mean.reshape(-1), variance.reshape(-1)]).double()
    gathered = [torch.empty_like(local) for _ in range(config.torch.world_size)]
    torch.distributed.all_gather(gathered, local)
    stacked = torch.stack(gathered)
    counts, means, variances = stacked[:, :1], stacked[:, 1 : 1 + size], stacked[:, 1 + size :]
    total = counts.sum()
    total_mean = (counts * means).sum(0) / total
    squared = ((counts - 1) * variances + counts * (means - total_mean) ** 2).sum(0)
    # one row in all: no spread (squared is 0 then), without a branch on a device value
    total_variance = squared / torch.clamp(total - 1, min=1)
    return total, total_mean.reshape(mean.shape).to(mean.dtype), total_variance.reshape(mean.shape).to(mean.dtype)
