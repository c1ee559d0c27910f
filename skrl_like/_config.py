"""Global configuration: ``config.torch`` and ``config.jax``.

Neither sub-object imports its framework until a member that needs it is used, so importing
``skrl_like`` costs nothing and the JAX path never pulls in torch (or the reverse).
"""

import atexit
import os
import sys
import traceback
from typing import Any

import numpy as np

from skrl_like._logging import logger


def _end_process_on_uncaught_error(rank: int) -> None:
    """In a distributed run, print an uncaught exception with the process's rank, then end the process at once.

    A normal exit runs the interpreter's shutdown, which in a distributed run can wait for the other processes (JAX's
    shutdown barrier; an NCCL group's destruction), while they wait in a collective for this one: a hang of minutes.
    Ending at once closes this process's connections, so the collectives the others are in (or enter next) fail
    within a second and they end the same way, each showing its own error.
    """

    def hook(kind: type, error: BaseException, trace: Any) -> None:
        sys.stderr.write(f"[skrl_like] rank {rank}: uncaught {kind.__name__}; ending this process\n")
        traceback.print_exception(kind, error, trace)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)

    sys.excepthook = hook


class _TorchConfig:
    def __init__(self) -> None:
        self._local_rank = int(os.getenv("LOCAL_RANK", "0"))
        self._rank = int(os.getenv("RANK", "0"))
        self._world_size = int(os.getenv("WORLD_SIZE", "1"))
        self._device: Any = f"cuda:{self._local_rank}"
        self._pending_seed: Any = None  # (seed, deterministic) given to set_seed before torch was imported

    @staticmethod
    def parse_device(device: Any = None, validate: bool = True) -> "torch.device":  # noqa: F821
        """Turn ``device`` (``torch.device``, string or ``None``) into a usable ``torch.device``.

        ``None`` or an unusable device falls back to ``cuda:0`` when CUDA is available, else ``cpu``.
        """
        import torch

        fallback = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        if isinstance(device, torch.device):
            parsed = device
        elif isinstance(device, str):
            try:
                parsed = torch.device(device)
            except RuntimeError as error:
                logger.warning(f"Invalid device '{device}' ({error}); using '{fallback}'")
                parsed = fallback
        else:
            parsed = fallback
        if parsed.type == "cuda" and not torch.cuda.is_available():
            parsed = torch.device("cpu")
        if validate and parsed.type != "cpu":
            try:
                torch.zeros((1,), device=parsed)
            except Exception as error:  # any backend failure means the device is unusable
                logger.warning(f"Device '{parsed}' is not usable ({error}); using '{fallback}'")
                parsed = fallback
        return parsed

    @property
    def device(self) -> "torch.device":  # noqa: F821
        self._device = self.parse_device(self._device, validate=False)
        return self._device

    @device.setter
    def device(self, device: Any) -> None:
        self._device = device

    @property
    def local_rank(self) -> int:
        return self._local_rank

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def world_size(self) -> int:
        return self._world_size

    @property
    def is_distributed(self) -> bool:
        return self._world_size > 1

    def init_process_group(self) -> None:
        """Join the process group that ``torchrun`` describes (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
        ``MASTER_ADDR``, ``MASTER_PORT``): called when ``skrl_like.torch`` is imported in a distributed run, so the
        group exists before the first collective and the user's script needs no code of its own.

        gloo carries CPU tensors and NCCL CUDA ones (both when CUDA exists: ``"cpu:gloo,cuda:nccl"``), so a run on
        GPUs can still reduce a CPU tensor; the default device becomes ``cuda:LOCAL_RANK``. A group the user created
        first is used as it is. The group is destroyed at exit; an uncaught exception ends the process at once (see
        :func:`_end_process_on_uncaught_error`).
        """
        if not self.is_distributed:
            return
        import torch
        import torch.distributed as dist

        if dist.is_initialized():
            return
        missing = [name for name in ("MASTER_ADDR", "MASTER_PORT") if name not in os.environ]
        if missing:
            raise RuntimeError(
                f"WORLD_SIZE={self._world_size} asks for a distributed run but {', '.join(missing)} is not set: "
                "launch the script with torchrun (e.g. `torchrun --nproc_per_node 2 script.py`), which sets them"
            )
        if torch.cuda.is_available():
            backend = "cpu:gloo,cuda:nccl"
            torch.cuda.set_device(self._local_rank)
            self._device = f"cuda:{self._local_rank}"
        else:
            backend = "gloo"
        logger.info(
            f"Distributed (torch): rank {self._rank} of {self._world_size}, local rank {self._local_rank}, "
            f"backend {backend}"
        )
        dist.init_process_group(backend, rank=self._rank, world_size=self._world_size)
        _end_process_on_uncaught_error(self._rank)
        atexit.register(_destroy_torch_process_group)


def _destroy_torch_process_group() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


class _JaxConfig:
    def __init__(self) -> None:
        self._backend = "numpy"
        self._key: Any = np.array([0, 0], dtype=np.uint32)
        self._initialized_models = 0  # models given a default key since the key was last set
        self._local_rank = int(os.getenv("JAX_LOCAL_RANK", "0"))
        self._rank = int(os.getenv("JAX_RANK", "0"))
        self._world_size = int(os.getenv("JAX_WORLD_SIZE", "1"))
        self._coordinator_address = (
            os.getenv("JAX_COORDINATOR_ADDR", "127.0.0.1") + ":" + os.getenv("JAX_COORDINATOR_PORT", "1234")
        )
        self._device: Any = f"cuda:{self._local_rank}"

    def parse_device(self, device: Any = None) -> "jax.Device":  # noqa: F821
        """Turn ``device`` (``jax.Device``, ``"type:index"`` string or ``None``) into a ``jax.Device``.

        In a distributed run always this process's own device: ``jax.devices()`` lists every process's devices, and
        the first of them belongs to process 0.
        """
        import jax

        if self.is_distributed:
            return jax.local_devices()[0]
        if isinstance(device, jax.Device):
            return device
        if isinstance(device, str):
            kind, _, index = device.partition(":")
            try:
                return jax.devices(kind)[int(index or 0)]
            except (RuntimeError, IndexError, ValueError):
                pass
        return jax.devices()[0]

    @property
    def backend(self) -> str:
        """Array type produced by wrappers, memories and preprocessors: ``"numpy"`` or ``"jax"``."""
        return self._backend

    @backend.setter
    def backend(self, value: str) -> None:
        if value not in ("numpy", "jax"):
            raise ValueError(f"config.jax.backend must be 'numpy' or 'jax', got {value!r}")
        self._backend = value

    @property
    def key(self) -> "jax.Array":  # noqa: F821
        """The run's root PRNG key (created from the seed on first use)."""
        if isinstance(self._key, np.ndarray):
            import jax

            with jax.default_device(self.device):
                self._key = jax.random.PRNGKey(int(self._key[1]))
        return self._key

    @key.setter
    def key(self, value: Any) -> None:
        if isinstance(value, (int, float)):
            value = np.array([0, int(value)], dtype=np.uint32)
        self._key = value
        self._initialized_models = 0

    def model_key(self) -> "jax.Array":  # noqa: F821
        """The key for the next model initialised without an explicit key: the root key folded with a count of such
        models since the key was set, so that two models (e.g. twin critics) start from different parameters, as
        torch's advancing generator gives them, and a run after ``set_seed`` gets the same keys in the same order.
        """
        import jax

        key = jax.random.fold_in(self.key, self._initialized_models)
        self._initialized_models += 1
        return key

    @property
    def device(self) -> "jax.Device":  # noqa: F821
        self._device = self.parse_device(self._device)
        return self._device

    @device.setter
    def device(self, device: Any) -> None:
        self._device = device
        if not isinstance(self._key, np.ndarray):  # re-create the key on the new device
            import jax

            self._key = np.asarray(jax.device_get(self._key), dtype=np.uint32)

    @property
    def local_rank(self) -> int:
        return self._local_rank

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def world_size(self) -> int:
        return self._world_size

    @property
    def coordinator_address(self) -> str:
        return self._coordinator_address

    @property
    def is_distributed(self) -> bool:
        return self._world_size > 1

    def init_distributed(self) -> None:
        """Join the processes that the launcher (``python -m skrl_like.jax.utils.distributed``) started, from its
        ``JAX_*`` variables: called when ``skrl_like.jax`` is imported in a distributed run, before any JAX
        computation (``jax.distributed.initialize`` must come first). CPU collectives go through gloo. An uncaught
        exception ends the process at once (see :func:`_end_process_on_uncaught_error`).
        """
        if not self.is_distributed:
            return
        import jax

        if jax.distributed.is_initialized():
            return
        logger.info(
            f"Distributed (JAX): rank {self._rank} of {self._world_size}, local rank {self._local_rank}, "
            f"coordinator {self._coordinator_address}"
        )
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        try:
            jax.distributed.initialize(
                self._coordinator_address,
                num_processes=self._world_size,
                process_id=self._rank,
                local_device_ids=[self._local_rank],  # one accelerator per process (CPU: ignored)
            )
        except RuntimeError as error:
            raise RuntimeError(
                f"jax.distributed.initialize failed ({error}): import skrl_like.jax before any JAX computation in "
                "a script started by `python -m skrl_like.jax.utils.distributed`"
            ) from error
        _end_process_on_uncaught_error(self._rank)


class _Config:
    def __init__(self) -> None:
        self.torch = _TorchConfig()
        self.jax = _JaxConfig()


config = _Config()
