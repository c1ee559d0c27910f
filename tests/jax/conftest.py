"""``SKRL_LIKE_TEST_MEMORY_ON_DEVICE=1`` runs the JAX tests with every memory built without ``on_device`` keeping
its buffers on the device (as on a GPU), to check that the agents work with both storages. A few tests assume the
host storage and fail so by design: tests/jax/test_memories.py (in-place NumPy buffers), the DQN and TD3 tests that
write a NaN into ``get_tensor_by_name``'s array, and tests/jax/test_off_policy_transfers.py's host-read counts (the
``"numpy"`` backend reads a device storage's samples back to NumPy)."""

import os

import pytest


@pytest.fixture(autouse=True)
def memory_storage(monkeypatch):
    if os.environ.get("SKRL_LIKE_TEST_MEMORY_ON_DEVICE") == "1":
        from skrl_like.jax.memories import base

        monkeypatch.setattr(base, "device_storage_by_default", lambda device: True)
