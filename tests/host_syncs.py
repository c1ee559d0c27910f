"""Counting what makes torch wait for the device: a ``TorchDispatchMode`` that records every op that reads a value on
the host (``item()``, ``bool(tensor)``, ``nonzero``, indexing with a boolean mask...) and every copy from a device to
the host.

On a CPU-only machine no device-to-host copy can happen, but the ops that would sync on a GPU are the same ops, so
the count holds there too; tests/envs/test_isaaclab_standin.py checks that the counter sees each kind.
"""

from typing import Any, List

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

# ops whose result (or its size) is known only once the device has computed it
_SYNCING = {
    aten._local_scalar_dense,  # item(), bool(), int(), float(), tolist() element by element
    aten.nonzero,
    aten.masked_select,
    aten.unique_dim,
    aten._unique2,
}


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


class HostSyncs(TorchDispatchMode):
    """``with HostSyncs() as syncs: ...``, then ``syncs.calls``: the names of the ops that synced (counted before they
    run, so an op that then fails is counted too)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: List[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func.overloadpacket in _SYNCING or _masked_index(func, args) or _to_host(func, args, kwargs):
            self.calls.append(str(func))
        return func(*args, **kwargs)
