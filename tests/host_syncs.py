"""Counting what makes torch wait for the device: every op that reads a value on the host (``item()``,
``float(tensor)``, ``bool(tensor)``, ``nonzero``, indexing with a boolean mask...), every copy from a device to the
host, and every hand-over of a tensor's memory to the host (``numpy()``, ``tolist()``, ``np.asarray(tensor)``,
``cpu()``).

A ``TorchDispatchMode`` sees the first two at the op level (``aten._local_scalar_dense``, ``aten._to_copy`` to the
CPU...). On a CPU-only machine ``numpy()``, ``tolist()`` and ``cpu()`` of a CPU tensor dispatch no op at all, yet on a
GPU each is a device-to-host copy (or fails without one): a ``TorchFunctionMode`` sees those at the Python level, for
CPU tensors only (a device tensor's copy is already seen by the dispatch mode). So the count a test takes on a CPU is
the count the same code has on a GPU; tests/envs/test_isaaclab_standin.py checks that the counter sees each kind.
"""

import contextlib
from typing import Any, Iterator, List

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

# ops whose result (or its size) is known only once the device has computed it
_SYNCING = {
    aten._local_scalar_dense,  # item(), bool(), int(), float(), a format spec, element by element
    aten.nonzero,
    aten.masked_select,
    aten.unique_dim,
    aten._unique2,
}

# tensor methods that hand a CPU tensor's memory to the host without an op (a device-to-host copy on a GPU)
_HOST_HANDOVERS = {torch.Tensor.numpy, torch.Tensor.tolist, torch.Tensor.__array__, torch.Tensor.cpu}


def _is_device(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type != "cpu"


def _masked_index(func: Any, args: tuple) -> bool:
    # tensor[mask]: the size of the result is the number of true values
    if func.overloadpacket not in (aten.index, aten.index_put, aten.index_put_):
        return False
    return any(isinstance(index, torch.Tensor) and index.dtype == torch.bool for index in args[1] or ())


def _to_host(func: Any, args: tuple, kwargs: dict) -> bool:
    if func.overloadpacket is aten._to_copy:
        device = kwargs.get("device")
        return _is_device(args[0]) and device is not None and torch.device(device).type == "cpu"
    if func.overloadpacket is aten.copy_:
        return args[0].device.type == "cpu" and _is_device(args[1])
    return False


class _OpSyncs(TorchDispatchMode):
    def __init__(self, counter: "HostSyncs") -> None:
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func.overloadpacket in _SYNCING or _masked_index(func, args) or _to_host(func, args, kwargs):
            self.counter.count(str(func))
        return func(*args, **kwargs)


class _HostHandovers(TorchFunctionMode):
    def __init__(self, counter: "HostSyncs") -> None:
        super().__init__()
        self.counter = counter

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
        if func in _HOST_HANDOVERS and args and isinstance(args[0], torch.Tensor) and not _is_device(args[0]):
            self.counter.count(f"Tensor.{func.__name__}")
        return func(*args, **(kwargs or {}))


class HostSyncs:
    """``with HostSyncs() as syncs: ...``, then ``syncs.calls``: the names of the ops and methods that synced (counted
    before they run, so an op that then fails is counted too). Inside ``with syncs.paused(): ...`` they go to
    ``syncs.paused_calls`` instead (a test that pauses where the host may be read can check that it was)."""

    def __init__(self) -> None:
        self.calls: List[str] = []
        self.paused_calls: List[str] = []
        self._paused = 0
        self._modes = contextlib.ExitStack()

    def count(self, name: str) -> None:
        (self.paused_calls if self._paused else self.calls).append(name)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    def __enter__(self) -> "HostSyncs":
        self._modes.enter_context(_HostHandovers(self))
        self._modes.enter_context(_OpSyncs(self))
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._modes.close()
