"""Data-parallel JAX runs: the launcher, and the process-parallel form of a compiled update.

Launcher (the torchrun of JAX runs; it imports nothing of JAX)::

    python -m skrl_like.jax.utils.distributed --nnodes 1 --nproc-per-node 2 script.py [script args...]

starts ``nproc_per_node`` processes of ``python script.py args`` with ``JAX_LOCAL_RANK``, ``JAX_RANK``,
``JAX_WORLD_SIZE``, ``JAX_COORDINATOR_ADDR`` and ``JAX_COORDINATOR_PORT``; ``skrl_like.jax`` joins them at import
(:meth:`skrl_like.config.jax.init_distributed`). When a process fails, the launcher ends the others and exits with
its code.

Inside a run every process holds the same learner state and learns from its own environments. An agent's update is
compiled once with :func:`compile_update`: the update runs as one SPMD program over one device per process
(``shard_map`` over the axis :data:`PROCESS_AXIS`), each process's data its own block, so collectives can run inside
the compiled function: :func:`mean_over_processes` (gradients in the optimizer's update, the KL) and
:func:`moments` (advantage normalisation, running statistics) are ``lax`` collectives there, nothing is
recompiled per step and nothing waits on the host. In a single process all of them are the identity (and
:func:`compile_update` is ``jax.jit``).
"""

import argparse
import os
import subprocess
import sys
import time
from typing import Any, Callable, List, Optional, Sequence, Tuple

from skrl_like import config

PROCESS_AXIS = "processes"


# -- inside a compiled update ---------------------------------------------------------------------------------------


def mean_over_processes(tree: Any) -> Any:
    """The mean of every leaf of ``tree`` over the processes (traced, inside a :func:`compile_update` function);
    ``tree`` itself in a single process. The leaves travel raveled into one vector: one collective."""
    if not config.jax.is_distributed:
        return tree
    import jax
    from jax.flatten_util import ravel_pytree

    vector, unravel = ravel_pytree(tree)
    try:
        return unravel(jax.lax.pmean(vector, PROCESS_AXIS))
    except NameError as error:  # the process axis is bound only inside compile_update's function
        raise RuntimeError(
            "A distributed JAX run averages gradients and statistics inside the agent's compiled update: compile "
            "the function that calls Optimizer.update (or a preprocessor's functional form) with "
            "skrl_like.jax.utils.distributed.compile_update instead of jax.jit"
        ) from error


def moments(xp: Any, x: Any, axes: Tuple[int, ...]) -> Tuple[Any, Any, Any]:
    """``(count, mean, unbiased variance)`` of ``x`` over ``axes``: of this process's rows, or in a distributed run
    of the rows of every process together, merged by counts (what one process holding all of them computes).

    ``xp`` is ``numpy`` (a host-side call: the processes' moments are gathered with ``process_allgather``) or
    ``jax.numpy`` (inside a :func:`compile_update` function: ``lax.all_gather``). Every process merges the same
    gathered numbers, so all get the same result. A single row has no spread: variance 0.
    """
    count = 1
    for axis in axes:
        count *= x.shape[axis]
    mean = xp.mean(x, axis=axes)
    variance = xp.var(x, axis=axes, ddof=1) if count > 1 else xp.zeros_like(mean)
    if not config.jax.is_distributed:
        return count, mean, variance
    import jax

    size = mean.size
    local = xp.concatenate([xp.full((1,), count, mean.dtype), mean.reshape(-1), variance.reshape(-1)])
    if xp is not jax.numpy:
        from jax.experimental import multihost_utils

        gathered = multihost_utils.process_allgather(local)  # (processes, 1 + 2 * size)
    else:
        gathered = jax.lax.all_gather(local, PROCESS_AXIS)
    counts, means, variances = gathered[:, :1], gathered[:, 1 : 1 + size], gathered[:, 1 + size :]
    total = counts.sum()
    total_mean = (counts * means).sum(0) / total
    squared = ((counts - 1) * variances + counts * (means - total_mean) ** 2).sum(0)
    total_variance = squared / xp.maximum(total - 1, 1)  # one row in all: squared is 0
    return total, total_mean.reshape(mean.shape), total_variance.reshape(mean.shape)


# -- compiling an update --------------------------------------------------------------------------------------------


def compile_update(function: Callable, data_argnums: Sequence[int] = (1,)) -> Callable:
    """``jax.jit(function)`` in a single process; in a distributed run the same function run by every process as one
    SPMD program, in which :func:`mean_over_processes` and :func:`moments` combine the processes' values.

    :param function: a pure update, e.g. ``agent._learn(learner, data, *scalars)``.
    :param data_argnums: the arguments that differ between processes (each process's rollout or sampled batches):
        each process's block is its own. The other arguments (the learner state, the timestep) are the same on every
        process; so are the results, which come back as this process's own arrays.
    """
    import jax

    if not config.jax.is_distributed:
        return jax.jit(function)
    return _ProcessParallel(function, tuple(data_argnums))


class _ProcessParallel:
    """A function compiled once over a mesh of one device per process (see :func:`compile_update`)."""

    def __init__(self, function: Callable, data_argnums: Tuple[int, ...]) -> None:
        import jax
        from jax.sharding import NamedSharding, PartitionSpec

        world_size = config.jax.world_size
        devices = [jax.local_devices(process_index=process)[0] for process in range(world_size)]
        self._mesh = jax.sharding.Mesh(devices, (PROCESS_AXIS,))
        self._replicated = NamedSharding(self._mesh, PartitionSpec())
        self._split = NamedSharding(self._mesh, PartitionSpec(PROCESS_AXIS))
        self._function = function
        self._data_argnums = data_argnums
        self._compiled: Optional[Callable] = None

    def _compile(self, count: int) -> Callable:
        import jax
        from jax.sharding import PartitionSpec

        data = self._data_argnums

        def body(*args: Any) -> Any:
            # each process's data arrives as a block of one along a leading axis
            args = [jax.tree_util.tree_map(lambda x: x[0], arg) if i in data else arg for i, arg in enumerate(args)]
            return self._function(*args)

        in_specs = tuple(PartitionSpec(PROCESS_AXIS) if i in data else PartitionSpec() for i in range(count))
        # check_vma=False: gradients are this process's own (averaged explicitly), as in torch's data parallelism
        mapped = jax.shard_map(body, mesh=self._mesh, in_specs=in_specs, out_specs=PartitionSpec(), check_vma=False)
        return jax.jit(mapped)

    def __call__(self, *args: Any) -> Any:
        import jax
        import numpy as np

        if self._compiled is None:
            self._compiled = self._compile(len(args))

        def replicated(x: Any) -> Any:
            return jax.make_array_from_process_local_data(self._replicated, x)

        def split(x: Any) -> Any:
            block = x[None] if isinstance(x, jax.Array) else np.asarray(x)[None]  # device arrays stay on the device
            return jax.make_array_from_process_local_data(self._split, block)

        global_args = [
            jax.tree_util.tree_map(split if i in self._data_argnums else replicated, arg) for i, arg in enumerate(args)
        ]
        results = self._compiled(*global_args)
        return jax.tree_util.tree_map(lambda x: x.addressable_data(0), results)

    def _cache_size(self) -> int:
        """Compilations so far (as ``jax.jit``'s ``_cache_size``): 1 after any number of same-shaped calls."""
        return 0 if self._compiled is None else self._compiled._cache_size()


# -- the launcher ---------------------------------------------------------------------------------------------------


def _parse(argv: List[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m skrl_like.jax.utils.distributed",
        description="Start a JAX script as the processes of one data-parallel run (on this node).",
    )
    parser.add_argument("--nnodes", type=int, default=1, help="number of nodes (default 1)")
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1, help="processes on this node")
    parser.add_argument("--node-rank", "--node_rank", type=int, default=0, help="this node's index (default 0)")
    parser.add_argument(
        "--coordinator-address",
        "--coordinator_address",
        default="127.0.0.1:5000",
        help="host:port of process 0, reachable from every node (default 127.0.0.1:5000)",
    )
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="the script's arguments")
    args = parser.parse_args(argv)
    if args.nnodes < 1 or args.nproc_per_node < 1:
        parser.error(f"--nnodes and --nproc-per-node must be >= 1, got {args.nnodes} and {args.nproc_per_node}")
    if not 0 <= args.node_rank < args.nnodes:
        parser.error(f"--node-rank must be in [0, {args.nnodes - 1}] for --nnodes {args.nnodes}, got {args.node_rank}")
    host, separator, port = args.coordinator_address.rpartition(":")
    if not separator or not host or not port.isdigit():
        parser.error(f"--coordinator-address must be host:port, got {args.coordinator_address!r}")
    return args


def main(argv: Optional[List[str]] = None) -> int:
    """Start the processes, wait for them; when one fails, end the others and return its exit code."""
    args = _parse(sys.argv[1:] if argv is None else argv)
    host, _, port = args.coordinator_address.rpartition(":")
    world_size = args.nnodes * args.nproc_per_node
    processes = []
    for local_rank in range(args.nproc_per_node):
        env = {
            **os.environ,
            "JAX_LOCAL_RANK": str(local_rank),
            "JAX_RANK": str(args.node_rank * args.nproc_per_node + local_rank),
            "JAX_WORLD_SIZE": str(world_size),
            "JAX_COORDINATOR_ADDR": host,
            "JAX_COORDINATOR_PORT": port,
        }
        processes.append(subprocess.Popen([sys.executable, args.script, *args.script_args], env=env))
    try:
        while True:
            codes = [process.poll() for process in processes]
            failed = [code for code in codes if code not in (None, 0)]
            if failed or all(code == 0 for code in codes):
                break
            time.sleep(0.1)
    except KeyboardInterrupt:
        failed = [130]
    if failed:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        return failed[0]
    return 0


if __name__ == "__main__":
    sys.exit(main())
