"""``SKRL_LIKE_TEST_MEMORY_ON_DEVICE=1`` runs the JAX tests with every memory built without ``on_device`` keeping
its buffers on the device (as on a GPU), to check that the agents work with both storages."""

import os

import pytest


@pytest.fixture(autouse=True)
def memory_storage(monkeypatch):
    if os.environ.get("SKRL_LIKE_TEST_MEMORY_ON_DEVICE") == "1":
        from skrl_like.jax.memories import base

        monkeypatch.setattr(base, "device_storage_by_default", lambda device: True)
