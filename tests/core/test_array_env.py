"""The NumPy-env wrappers' shared behaviour (skrl_like.core.envs.array_env) through each backend's ``wrap_env``:
the NaN/inf check's fix, batched gymnasium envs that declare ``num_envs``, observations checked against the space."""

import importlib

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

BACKENDS = ["torch", "jax"]


def wrap_env(backend, env, **kwargs):
    return importlib.import_module(f"skrl_like.{backend}.envs.wrappers").wrap_env(env, verbose=False, **kwargs)


def to_numpy(array):
    return array.numpy() if hasattr(array, "numpy") and not isinstance(array, np.ndarray) else np.asarray(array)


def actions(backend, array):
    if backend == "torch":
        import torch

        return torch.as_tensor(array)
    return np.asarray(array)


class InfiniteObservationEnv(gymnasium.Env):
    """Observes ``inf`` at every step (a legitimate value for some envs: a lidar that sees nothing)."""

    observation_space = spaces.Box(-np.inf, np.inf, (2,), np.float32)
    action_space = spaces.Box(-1, 1, (1,), np.float32)

    def reset(self, *, seed=None, options=None):
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.array([np.inf, 0.0], np.float32), 0.0, False, False, {}


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_non_finite_message_names_a_fix_that_wrap_env_takes(backend):
    checked = wrap_env(backend, InfiniteObservationEnv(), wrapper="gymnasium")
    checked.reset()
    with pytest.raises(ValueError, match=r"non-finite .* pass check_finite=False to wrap_env") as error:
        checked.step(actions(backend, np.zeros((1, 1), np.float32)))
    assert "InfiniteObservationEnv" in str(error.value)

    unchecked = wrap_env(backend, InfiniteObservationEnv(), wrapper="gymnasium", check_finite=False)
    assert unchecked.check_finite is False
    unchecked.reset()
    next_states, *_ = unchecked.step(actions(backend, np.zeros((1, 1), np.float32)))
    assert to_numpy(next_states).tolist() == [[np.inf, 0.0]]
