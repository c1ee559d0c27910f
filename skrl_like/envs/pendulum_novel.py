"""Pendulum-v1 without its angular velocity ("PendulumNoVel"), the partially observed task of skrl's recurrent
examples: the observation keeps its three entries ``(cos theta, sin theta, theta_dot)`` but the velocity always reads
0, so a policy must infer it from the observations it has seen (a recurrent model, docs/recurrent.md).

Registered as ``skrl_like.envs:PendulumNoVel-v1`` (200 steps, as Pendulum-v1) when ``skrl_like.envs`` is imported:
``gymnasium.make("skrl_like.envs:PendulumNoVel-v1")`` or ``gymnasium.make_vec(..., num_envs=4)``. NumPy and
gymnasium only.
"""

from typing import Any

import gymnasium
import numpy as np
from gymnasium.envs.classic_control.pendulum import PendulumEnv

EPISODE_STEPS = 200  # Pendulum-v1's time limit


class NoVelocity(gymnasium.ObservationWrapper):
    """Pendulum's observation ``(cos, sin, angular velocity)`` with the velocity set to 0."""

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return observation * np.array([1.0, 1.0, 0.0], dtype=observation.dtype)


def pendulum_no_velocity(**kwargs: Any) -> gymnasium.Env:
    """The entry point of ``PendulumNoVel-v1``: Pendulum-v1's dynamics (``kwargs`` as ``PendulumEnv``'s: ``g``,
    ``render_mode``) behind :class:`NoVelocity`."""
    return NoVelocity(PendulumEnv(**kwargs))
