"""Pendulum-v1 for AMP: AMP observations and the reference motions of a scripted swing-up, no simulator needed.

AMP imitates motions, so its env must report an AMP observation every step (``infos["amp_obs"]``), say what one
is (``amp_observation_space``) and hand out reference motions (``collect_reference_motions(num_samples)``), as
skrl 1.4's Runner reads them from Isaac Gym / Isaac Lab AMP tasks. :class:`AmpPendulumEnv` does all three for
Pendulum-v1 (registered as ``skrl_like.envs:AmpPendulum-v0``):

- an AMP observation is the transition ``(s_t, s_{t+1})`` of Pendulum's observations ``(cos theta, sin theta,
  theta_dot)``, 6 numbers;
- the reference motions are the transitions of :func:`swing_up_torque`, an energy-pumping controller that swings the
  pendulum up and holds it (Pendulum return about -130 to -180), recorded once per process by
  :func:`reference_motions` (20 episodes of 200 steps from seeded random starts, a few hundred milliseconds) and
  shared by every sub-env of a vector env.

:meth:`AmpPendulumEnv.collect_reference_motions` draws rows with NumPy's global RNG, which ``set_seed`` seeds and a
full-state checkpoint saves, so runs repeat and resume exactly. The reward is Pendulum's own: a run with
``task_reward_weight = 0`` never sees it, and it measures how far the imitation got.
"""

import functools
from typing import Any, Optional, Tuple

import gymnasium
import numpy as np
from gymnasium.envs.classic_control.pendulum import PendulumEnv

EPISODE_STEPS = 200  # Pendulum-v1's time limit


def swing_up_torque(observations: np.ndarray) -> np.ndarray:
    """A scripted swing-up: pump energy towards the upright rest energy, then hold the top with a PD law.

    Pendulum-v1's dynamics are ``theta'' = 15 sin(theta) + 3 u`` (``theta = 0`` upright), so ``E = theta'^2 / 2 +
    15 cos(theta)`` is 15 at the upright rest and ``dE/dt = 3 u theta'``: a torque along ``theta'`` adds energy.

    :param observations: Pendulum observations ``(..., 3)``.
    :return: torques ``(..., 1)`` in Pendulum's range ``[-2, 2]``.
    """
    cos, sin, speed = observations[..., 0], observations[..., 1], observations[..., 2]
    energy = 0.5 * speed**2 + 15.0 * cos
    pump = 0.3 * (15.0 - energy) * speed
    hold = -(12.0 * np.arctan2(sin, cos) + 2.5 * speed)
    return np.clip(np.where(cos > 0.85, hold, pump), -2.0, 2.0)[..., None]


class AmpPendulumEnv(PendulumEnv):
    """Pendulum-v1 that reports ``info["amp_obs"]`` and provides AMP's reference motions.

    The AMP attributes live on the env itself, not on a wrapper, so they are found through gymnasium's wrappers
    (``env.unwrapped``, ``get_wrapper_attr``) and in every sub-env of a vector env.

    :param render_mode: as Pendulum-v1's.
    :param reference_episodes: episodes of :func:`swing_up_torque` recorded as reference motions.
    :param reference_seed: seed of the first recorded episode's start (episode ``i`` starts from ``seed + i``).
    """

    def __init__(self, render_mode: Optional[str] = None, reference_episodes: int = 20, reference_seed: int = 0):
        super().__init__(render_mode=render_mode)
        low, high = self.observation_space.low, self.observation_space.high
        #: one AMP observation: the transition ``(s_t, s_{t+1})``
        self.amp_observation_space = gymnasium.spaces.Box(
            np.concatenate([low, low]), np.concatenate([high, high]), dtype=np.float32
        )
        self.reference_episodes = reference_episodes
        self.reference_seed = reference_seed
        self._previous_observation: Optional[np.ndarray] = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        """Pendulum-v1's reset; its observation is the first half of the next step's AMP observation."""
        observation, info = super().reset(seed=seed, options=options)
        self._previous_observation = observation
        return observation, info

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, dict]:
        """Pendulum-v1's step, with the transition ``(s_t, s_{t+1})`` in ``info["amp_obs"]`` (float32, 6 numbers)."""
        observation, reward, terminated, truncated, info = super().step(action)
        info["amp_obs"] = np.concatenate([self._previous_observation, observation]).astype(np.float32)
        self._previous_observation = observation
        return observation, reward, terminated, truncated, info

    def collect_reference_motions(self, num_samples: int) -> np.ndarray:
        """``num_samples`` AMP observations ``(num_samples, 6)`` drawn uniformly from the recorded reference motions
        (NumPy's global RNG)."""
        motions = reference_motions(self.reference_episodes, self.reference_seed)
        return motions[np.random.randint(len(motions), size=num_samples)]


@functools.lru_cache(maxsize=4)
def reference_motions(episodes: int = 20, seed: int = 0) -> np.ndarray:
    """The AMP observations of :func:`swing_up_torque` over ``episodes`` episodes, ``(episodes * 200, 6)``, from the
    random starts of ``reset(seed=seed + episode)``; recorded once per process (read-only: it is shared)."""
    env, motions = AmpPendulumEnv(), []
    for episode in range(episodes):
        observation, _ = env.reset(seed=seed + episode)
        for _ in range(EPISODE_STEPS):
            observation, _, _, _, info = env.step(swing_up_torque(observation))
            motions.append(info["amp_obs"])
    env.close()
    motions = np.stack(motions)
    motions.flags.writeable = False
    return motions
