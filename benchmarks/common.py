"""Helpers shared by every benchmark script: command line, evaluation protocol, result line.

No torch / jax imports here (used from the torch-only, jax-only and main virtual environments).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Callable

import numpy as np
from configs import CONFIGS, EVAL_EPISODES, EVAL_SEED_OFFSET, make_env

RESULT_KEYS = ("library", "backend", "config", "seed", "timesteps", "seconds", "env_steps_per_s", "final_eval_return")


def parse_args(description: str, argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--config", choices=sorted(CONFIGS), default="cleanrl")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--timesteps",
        type=int,
        default=100_000,
        help="environment steps summed over sub-envs (rounded up to whole PPO updates)",
    )
    parser.add_argument(
        "--no-eval", action="store_true", help="skip the final evaluation (final_eval_return is then null)"
    )
    return parser.parse_args(argv)


def evaluate(
    act_fn: Callable[[np.ndarray], np.ndarray], seed: int, episodes: int = EVAL_EPISODES, max_steps: int = 10_000
) -> float:
    """Mean undiscounted return of ``episodes`` deterministic episodes.

    ``act_fn`` maps a float32 observation batch ``(episodes, obs_dim)`` to integer actions ``(episodes,)``
    (argmax of the logits). One sync vector env with ``episodes`` sub-envs (seeded ``EVAL_SEED_OFFSET +
    seed``); each sub-env's FIRST episode is counted.
    """
    env = make_env(episodes, seed=None)
    obs, _ = env.reset(seed=EVAL_SEED_OFFSET + seed)
    returns = np.zeros(episodes, dtype=np.float64)
    running = np.ones(episodes, dtype=bool)
    for _ in range(max_steps):
        actions = np.asarray(act_fn(np.asarray(obs, dtype=np.float32))).reshape(episodes)
        obs, reward, terminated, truncated, _ = env.step(actions)
        returns += np.where(running, reward, 0.0)
        running &= ~(np.asarray(terminated) | np.asarray(truncated))
        if not running.any():
            break
    env.close()
    return float(returns.mean())


class Timer:
    """``with Timer() as t: ...`` then ``t.seconds`` (wall clock, perf_counter)."""

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._start
        return False


def emit(
    library: str, backend: str, config: str, seed: int, timesteps: int, seconds: float, final_eval_return: float | None
) -> dict:
    """Print exactly one JSON result line on stdout (flushes)."""
    result = {
        "library": library,
        "backend": backend,
        "config": config,
        "seed": seed,
        "timesteps": int(timesteps),
        "seconds": round(float(seconds), 4),
        "env_steps_per_s": round(timesteps / seconds, 2) if seconds > 0 else None,
        "final_eval_return": (
            None
            if final_eval_return is None or not math.isfinite(final_eval_return)
            else round(float(final_eval_return), 3)
        ),
    }
    assert tuple(result) == RESULT_KEYS
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return result
