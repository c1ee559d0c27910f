"""``info["final_states"]``: the terminal observations an off-policy agent stores as ``next_states``."""

import gymnasium
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from skrl_like.core.agents.off_policy import stored_next_states
from skrl_like.jax.envs.wrappers import wrap_env as jax_wrap_env
from skrl_like.torch.envs.wrappers import wrap_env as torch_wrap_env

WRAP = {"torch": torch_wrap_env, "jax": jax_wrap_env}


class Counter(gymnasium.Env):
    """Observation = [steps taken, offset]; truncated after ``limit`` steps; terminated never."""

    def __init__(self, limit, offset, dict_space=False):
        self.limit, self.offset, self.dict_space = limit, offset, dict_space
        box = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
        self.observation_space = gymnasium.spaces.Dict({"x": box}) if dict_space else box
        self.action_space = gymnasium.spaces.Box(-1, 1, (1,), np.float32)

    def _observation(self):
        value = np.array([self.steps, self.offset], np.float32)
        return {"x": value} if self.dict_space else value

    def reset(self, seed=None, options=None):
        self.steps = 0
        return self._observation(), {}

    def step(self, action):
        self.steps += 1
        return self._observation(), 0.0, False, self.steps >= self.limit, {}


@pytest.mark.parametrize("backend", WRAP)
@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("dict_space", [False, True])
def test_final_states_hold_the_terminal_observation_of_the_truncated_sub_env(backend, mode, dict_space):
    autoreset = (
        gymnasium.vector.AutoresetMode.NEXT_STEP if mode == "next_step" else gymnasium.vector.AutoresetMode.SAME_STEP
    )
    vector = gymnasium.vector.SyncVectorEnv(
        [lambda: Counter(2, 10.0, dict_space), lambda: Counter(3, 20.0, dict_space)], autoreset_mode=autoreset
    )
    env = WRAP[backend](vector, verbose=False)
    env.reset()
    actions = torch.zeros((2, 1)) if backend == "torch" else jnp.zeros((2, 1))
    next_states, _, _, truncated, info = env.step(actions)
    assert "final_states" not in info and stored_next_states(next_states, info) is next_states
    next_states, _, _, truncated, info = env.step(actions)  # sub-env 0 truncates at its 2nd step
    assert np.asarray(truncated).ravel().tolist() == [True, False]
    np.testing.assert_array_equal(np.asarray(next_states), [[0.0, 10.0], [2.0, 20.0]])  # sub-env 0 already reset
    stored = np.asarray(stored_next_states(next_states, info))
    np.testing.assert_array_equal(stored, [[2.0, 10.0], [2.0, 20.0]])  # the state it really reached
    assert stored.shape == np.asarray(next_states).shape and stored.dtype == np.asarray(next_states).dtype
    env.close()
