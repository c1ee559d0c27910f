"""``GymWrapper``: OpenAI Gym environments and vector environments (``gym`` is an optional dependency).

Written once for both backends in :mod:`skrl_like.core.envs.array_env`: spaces are converted to gymnasium spaces, and
for ``gym < 0.25`` the old API is translated (``step`` returns 4 values and truncation is read from
``info["TimeLimit.truncated"]``; ``reset`` returns only the observation). Gym vector envs reset a sub-environment
inside its terminal step, so ``next_states`` of a done sub-environment is the first observation of its next
episode, as with ``GymnasiumWrapper``. The NaN/inf check is the same as ``GymnasiumWrapper``'s (``check_finite``).
"""

from skrl_like.core.envs.array_env import GymWrapperCore
from skrl_like.jax.envs.wrappers.base import Wrapper
from skrl_like.jax.envs.wrappers.gymnasium_envs import _ArrayConversions


class GymWrapper(_ArrayConversions, GymWrapperCore, Wrapper):
    """Wrap an OpenAI Gym env or vector env so that it exchanges NumPy or JAX arrays with agents and trainers.

    :param env: a ``gym.Env`` or ``gym.vector.VectorEnv`` (possibly wrapped).
    :param check_finite: check every step's observations and rewards for NaN/inf and raise a ``ValueError`` that
        names the env and the step (set ``False`` to skip it).
    """


__all__ = ["GymWrapper"]
