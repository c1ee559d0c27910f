import os
import sys

# one intra-op thread for every library (2-core CI; see docs/benchmarks.md)
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
sys.path.insert(0, os.path.dirname(__file__))  # tests/examples.py

# imported after the thread settings above, which NumPy reads when it loads
import types  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from gymnasium import spaces  # noqa: E402


class _OldGymApiEnv:
    """A gym < 0.25 env: ``reset`` returns the observation alone, ``step`` 4 values with truncation in ``info``."""

    observation_space = spaces.Box(-1, 1, (2,), np.float32)
    action_space = spaces.Discrete(3)

    def reset(self):
        return np.zeros(2, np.float32)

    def step(self, action):
        assert isinstance(action, int)
        return np.full(2, action, np.float32), 1.0, True, {"TimeLimit.truncated": True}


@pytest.fixture
def old_gym_env(monkeypatch):
    """An env with the pre-0.25 gym API, and a stand-in ``gym`` module of that version (gym is not installed)."""
    fake_gym = types.ModuleType("gym")
    fake_gym.__version__ = "0.21.0"
    fake_gym.spaces = spaces
    fake_gym.vector = types.SimpleNamespace(VectorEnv=type("VectorEnv", (), {}))
    monkeypatch.setitem(sys.modules, "gym", fake_gym)
    return _OldGymApiEnv()


class _TupleActionEnv:
    """A gymnasium env whose action space is a ``Tuple(Discrete, Box)``; ``step`` checks what it receives."""

    observation_space = spaces.Box(-1, 1, (2,), np.float32)
    action_space = spaces.Tuple((spaces.Discrete(3), spaces.Box(-1, 1, (2,), np.float32)))
    metadata: dict = {}
    render_mode = None
    spec = None

    def reset(self, *, seed=None, options=None):
        return np.zeros(2, np.float32), {}

    def step(self, action):
        assert self.action_space.contains(action), f"{action!r} is not in {self.action_space}"
        return np.full(2, float(action[0]) / 10, np.float32), 0.0, False, False, {}

    def close(self):
        pass


@pytest.fixture
def tuple_action_vector_env():
    """A sync vector env of two envs with ``Tuple(Discrete(3), Box(2))`` actions (same-step autoreset)."""
    import gymnasium

    env = gymnasium.vector.SyncVectorEnv(
        [_TupleActionEnv, _TupleActionEnv], autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP
    )
    yield env
    env.close()


class _OldApiGymnasiumEnv:
    """A ``gymnasium.Env`` subclass written against the OpenAI Gym API (so ``wrap_env`` detects it as gymnasium):
    ``reset`` returns a 2-element observation alone, ``step`` returns 4 values. Made a subclass in the fixture."""

    observation_space = spaces.Box(-1, 1, (2,), np.float32)
    action_space = spaces.Discrete(3)

    def reset(self):
        return np.array([0.25, 0.5], np.float32)

    def step(self, action):
        return np.full(2, action, np.float32), 1.0, False, {}


@pytest.fixture
def old_api_gymnasium_env():
    """An instance of a ``gymnasium.Env`` subclass that follows the OpenAI Gym API (see ``_OldApiGymnasiumEnv``)."""
    import gymnasium

    return type("OldApiGymnasiumEnv", (_OldApiGymnasiumEnv, gymnasium.Env), {})()
