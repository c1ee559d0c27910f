"""The JAX memory's store (``add_samples``) per step, host storage against device storage (``on_device``): PPO's eight
arrays as JAX inputs (a fresh transition per step from one jitted call, as ``act`` makes), 200 steps after 20 of
warm-up, median of 5 blocks, at 16 and 4096 envs, alternated twice. Prints one JSON line per measure.

    .venv/bin/python benchmarks/jax_memory_store.py
"""

import json
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from skrl_like import config  # noqa: E402
from skrl_like.jax.memories import RandomMemory  # noqa: E402

config.jax.backend = "jax"
SIZES = {
    "states": 60,
    "actions": 8,
    "rewards": 1,
    "next_states": 60,
    "terminated": 1,
    "truncated": 1,
    "log_prob": 1,
    "values": 1,
}


def seconds_per_step(num_envs: int, on_device: bool, steps: int = 200) -> float:
    memory = RandomMemory(16, num_envs, on_device=on_device)
    for name, size in SIZES.items():
        memory.create_tensor(name, size, dtype=jnp.int8 if name in ("terminated", "truncated") else None)
    samples = {name: jax.random.normal(jax.random.PRNGKey(0), (num_envs, size)) for name, size in SIZES.items()}
    fresh = jax.jit(lambda arrays: jax.tree_util.tree_map(lambda array: array + 1.0, arrays))
    for _ in range(20):
        samples = fresh(samples)
        memory.add_samples(**samples)
    jax.block_until_ready(memory.tensors["states"])
    blocks = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(steps // 5):
            samples = fresh(samples)
            memory.add_samples(**samples)
        jax.block_until_ready(memory.tensors["states"])  # the device storage's writes are asynchronous
        blocks.append((time.perf_counter() - start) / (steps // 5))
    return statistics.median(blocks)


for num_envs in (16, 4096):
    for on_device in (False, True, False, True):
        print(
            json.dumps(
                {
                    "bench": "jax_memory_add_samples",
                    "num_envs": num_envs,
                    "on_device": on_device,
                    "us_per_step": round(seconds_per_step(num_envs, on_device) * 1e6, 1),
                }
            ),
            flush=True,
        )
