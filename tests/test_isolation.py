"""Users often install one backend: the JAX path never imports torch, the torch path never imports jax,
and the backend-neutral core imports neither."""

import subprocess
import sys

import pytest

WALK = """
import importlib, pkgutil, sys
for blocked in {blocked!r}:
    sys.modules[blocked] = None  # any import of it now fails
import {package} as package
for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    if module.name not in {skipped!r}:
        importlib.import_module(module.name)
"""


@pytest.mark.parametrize(
    "package, blocked, skipped",
    [
        ("skrl_like.torch", ["jax", "flax", "optax"], []),
        ("skrl_like.jax", ["torch"], []),
        ("skrl_like.core", ["torch", "jax"], []),
        # the shipped environments: NumPy and gymnasium only, but for the Isaac Lab stand-in (torch tensors) and the
        # observation mask of gymnax environments (JAX)
        ("skrl_like.envs", ["torch", "jax"], ["skrl_like.envs.isaaclab_standin", "skrl_like.envs.masked_gymnax"]),
        ("skrl_like.envs", ["jax", "flax", "optax"], ["skrl_like.envs.masked_gymnax"]),
    ],
)
def test_every_module_imports_without_the_other_backend(package, blocked, skipped):
    result = subprocess.run(
        [sys.executable, "-c", WALK.format(package=package, blocked=blocked, skipped=skipped)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
