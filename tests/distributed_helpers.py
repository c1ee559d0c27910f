"""Start a worker script as two processes of a distributed run (the variables torchrun or the JAX launcher set), each
with its own working directory, and collect what they printed and how they ended."""

import os
import socket
import subprocess
import sys
import time
from typing import List, NamedTuple

import pytest

# these tests start processes: pytest -m "not distributed" leaves them out, and they are not repeated with parameters
distributed = pytest.mark.distributed


class Ended(NamedTuple):
    returncode: int
    output: str  # stdout and stderr together
    seconds: float  # from the start of both processes to this one's end


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def torch_variables(rank: int, world_size: int, port: int) -> dict:
    return {
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "LOCAL_WORLD_SIZE": str(world_size),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
    }


def jax_variables(rank: int, world_size: int, port: int) -> dict:
    return {
        "JAX_RANK": str(rank),
        "JAX_LOCAL_RANK": str(rank),
        "JAX_WORLD_SIZE": str(world_size),
        "JAX_COORDINATOR_ADDR": "127.0.0.1",
        "JAX_COORDINATOR_PORT": str(port),
    }


def clean_environment() -> dict:
    """This process's variables without any distributed ones, the checkout first on the path, one thread each."""
    names = set(torch_variables(0, 1, 0)) | set(jax_variables(0, 1, 0))
    env = {name: value for name, value in os.environ.items() if name not in names}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        [root, os.path.join(root, "tests")] + env.get("PYTHONPATH", "").split(os.pathsep)
    )
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_ranks(script: str, args: List[str], directory: str, variables, world_size: int = 2, timeout: float = 90):
    """Run ``python script args`` as ``world_size`` processes, process ``r`` in ``directory/rank<r>`` with
    ``variables(r, world_size, port)``; returns one :class:`Ended` per rank (killing what is left at ``timeout``)."""
    port = free_port()
    start = time.monotonic()
    processes, logs = [], []
    for rank in range(world_size):
        cwd = os.path.join(directory, f"rank{rank}")
        os.makedirs(cwd, exist_ok=True)
        log = open(os.path.join(directory, f"rank{rank}.log"), "w+")
        env = {**clean_environment(), **variables(rank, world_size, port)}
        processes.append(
            subprocess.Popen([sys.executable, script, *args], cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        )
        logs.append(log)
    ended = [None] * world_size
    while any(end is None for end in ended):
        for rank, process in enumerate(processes):
            if ended[rank] is None and process.poll() is not None:
                ended[rank] = time.monotonic() - start
        if time.monotonic() - start > timeout:
            for process in processes:
                process.kill()
        time.sleep(0.05)
    results = []
    for process, log, seconds in zip(processes, logs, ended):
        log.seek(0)
        results.append(Ended(process.returncode, log.read(), seconds))
        log.close()
    return results


def check_all_succeeded(results: List[Ended]) -> None:
    for rank, result in enumerate(results):
        assert result.returncode == 0, f"rank {rank} ended with {result.returncode}:\n{result.output[-4000:]}"
