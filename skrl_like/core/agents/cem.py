"""CEM's configuration, written once for both backends (torch adds ``mixed_precision``), and the half of its update
that holds no tensors: cutting each environment's column of the last two rollouts into episodes, their discounted
returns, the elite threshold and the mask of elite rows.

The selection runs on the host in NumPy (the rewards and episode ends of one rollout, fetched once per rollout); the
backends then take one cross-entropy step on the rows the mask marks, with every row of the window present so that
the shapes never change (a compiled JAX update never recompiles for another number of elite rows).

The window: the agent keeps a copy of the previous rollout's rows, so an update sees ``2 * rollouts`` rows per
environment, the previous rollout's (rows ``0 .. T-1``) then the current one's (rows ``T .. 2T-1``). Row ``t`` of
column ``e`` ends an episode when ``terminated | truncated``; every episode that ends in the current rollout counts,
whole, from the row after its environment's previous end in the window, so an episode that began in the previous
rollout counts with all its rows and its full return. An episode longer than the window (it began before the
previous rollout) counts from the window's first row: its first steps are left out. The unfinished episode at the
end of the rollout counts in the next one. Before the first rollout of training there is no previous rollout: its
rows weigh nothing and the current rollout's episodes start at its first row.
"""

from typing import Any, NamedTuple, Optional

import numpy as np

from skrl_like import logger
from skrl_like.core.agents.config import experiment_defaults

# fmt: off
CEM_DEFAULT_CONFIG = {
    "rollouts": 16,                 # number of rollouts before updating
    "percentile": 0.70,             # percentile to compute the reward bound [0, 1]

    "discount_factor": 0.99,        # discount factor (gamma)

    "learning_rate": 1e-2,                  # learning rate
    "learning_rate_scheduler": None,        # learning rate scheduler class (torch: a torch.optim.lr_scheduler class; JAX: an optax schedule function)
    "learning_rate_scheduler_kwargs": {},   # learning rate scheduler's kwargs (e.g. {"step_size": 1e-3})

    "state_preprocessor": None,             # state preprocessor class (e.g. RunningStandardScaler of the backend's resources.preprocessors)
    "state_preprocessor_kwargs": {},        # state preprocessor's kwargs (e.g. {"size": env.observation_space})

    "random_timesteps": 0,          # random exploration steps
    "learning_starts": 0,           # learning starts after this many steps

    "rewards_shaper": None,         # rewards shaping function: Callable(reward, timestep, timesteps) -> reward

    "experiment": experiment_defaults(),  # directory, names, writing and checkpoint intervals, wandb
}
# fmt: on


def check_memory(algorithm: str, memory: Any, rollouts: int) -> None:
    """The memory holds exactly one rollout: its rows are the rollout's steps in order (a smaller memory loses the
    start of the episodes, a larger one mixes rows of older rollouts into the episodes)."""
    if memory is not None and memory.memory_size != rollouts:
        raise ValueError(
            f"{algorithm}: the memory holds {memory.memory_size} steps per environment but cfg['rollouts'] is "
            f"{rollouts}; the update cuts the whole memory into the rollout's episodes: create the memory with "
            f"memory_size=cfg['rollouts'], and make rollouts several times the environment's episode length"
        )


def discounted_return(rewards: np.ndarray, discount_factor: float) -> float:
    """``sum_k rewards[k] * gamma ** (L - 1 - k)`` over one episode of ``L`` steps: skrl's weighting, which gives the
    last reward weight 1 and the first ``gamma ** (L - 1)`` [compat]."""
    length = len(rewards)
    return float(np.sum(rewards * discount_factor ** np.arange(length - 1, -1, -1, dtype=np.float64)))


def episode_segments(dones: np.ndarray, first_row: int) -> list:
    """The episodes of a window that end at or after row ``first_row`` as ``(env, start_row, end_row)``
    (``end_row`` exclusive), env by env: each starts after its environment's previous end in the window, or at the
    window's first row.

    :param dones: ``(rows, num_envs)`` bools, ``terminated | truncated``.
    :param first_row: the current rollout's first row in the window (earlier ends only delimit episodes).
    """
    segments = []
    for env in range(dones.shape[1]):
        ends = np.flatnonzero(dones[:, env]) + 1
        starts = np.concatenate(([0], ends[:-1]))
        for start, end in zip(starts, ends):
            if end > first_row:
                segments.append((env, int(start), int(end)))
    return segments


class EliteSelection(NamedTuple):
    """What the update learns from and tracks."""

    returns: np.ndarray  # (episodes,) discounted returns of the episodes ending in the current rollout
    threshold: float  # the ``percentile`` quantile of ``returns`` (linear interpolation)
    weights: np.ndarray  # (rows, num_envs) float32 over the window: 1 on the rows of the elite episodes, 0 elsewhere


def select_elites(
    rewards: np.ndarray, dones: np.ndarray, first_row: int, discount_factor: float, percentile: float
) -> Optional[EliteSelection]:
    """The elite episodes of a window: of the episodes ending at or after ``first_row``, those whose discounted
    return is at least the ``percentile`` quantile of their returns (``None`` when none ends there).

    :param rewards: ``(rows, num_envs)`` rewards (as stored: shaped).
    :param dones: ``(rows, num_envs)`` bools.
    :param first_row: see :func:`episode_segments`.
    """
    segments = episode_segments(dones, first_row)
    if not segments:
        return None
    returns = np.array([discounted_return(rewards[a:b, env], discount_factor) for env, a, b in segments])
    threshold = float(np.quantile(returns, percentile))
    weights = np.zeros(rewards.shape, dtype=np.float32)
    for (env, start, end), episode_return in zip(segments, returns):
        if episode_return >= threshold:
            weights[start:end, env] = 1.0
    return EliteSelection(returns, threshold, weights)


class EpisodeWindows:
    """The previous rollout's rewards and episode ends (the host half of the window), the selection of the elites of
    the episodes ending in the current rollout, and the message when none ends there.

    :param algorithm: the agent's name (for messages).
    :param rollouts: steps per rollout (``cfg["rollouts"]``).
    :param discount_factor: ``cfg["discount_factor"]``.
    :param percentile: ``cfg["percentile"]``.
    """

    def __init__(self, algorithm: str, rollouts: int, discount_factor: float, percentile: float) -> None:
        self.algorithm = algorithm
        self.rollouts = rollouts
        self.discount_factor = discount_factor
        self.percentile = percentile
        self.previous_rewards: Optional[np.ndarray] = None  # (rollouts, num_envs); None: training just began
        self.previous_dones: Optional[np.ndarray] = None
        self.selected_once = False

    def end_rollout(self, rewards: np.ndarray, dones: np.ndarray) -> None:
        """Keep a rollout's ``(rollouts, num_envs)`` rewards and episode ends as the next window's first half."""
        self.previous_rewards = np.array(rewards, dtype=np.float32)
        self.previous_dones = np.array(dones, dtype=bool)

    def window(self, rewards: np.ndarray, dones: np.ndarray) -> tuple:
        """``(rewards, dones)`` of the window, ``(2 * rollouts, num_envs)``: the previous rollout then ``rewards`` and
        ``dones`` (before the first rollout: zero rewards, and an end at every previous row so that nothing of it
        belongs to an episode of the current rollout)."""
        if self.previous_rewards is None:
            previous_rewards, previous_dones = np.zeros_like(rewards, np.float32), np.ones(dones.shape, bool)
        else:
            previous_rewards, previous_dones = self.previous_rewards, self.previous_dones
        return np.concatenate([previous_rewards, rewards]), np.concatenate([previous_dones, dones])

    def select(self, rewards: np.ndarray, dones: np.ndarray, timestep: int) -> Optional[EliteSelection]:
        """The elites among the episodes that end in the rollout ``(rollouts, num_envs)`` that just ended, with
        weights over the window (``(2 * rollouts, num_envs)``); then :meth:`end_rollout` of it.

        :raises ValueError: no episode has ended yet in a whole window (the previous and the current rollout): every
            episode is longer than ``2 * rollouts`` steps, and none could be counted whole.
        """
        had_previous = self.previous_rewards is not None
        window_rewards, window_dones = self.window(rewards, dones)
        self.end_rollout(rewards, dones)
        selection = select_elites(window_rewards, window_dones, self.rollouts, self.discount_factor, self.percentile)
        if selection is not None:
            self.selected_once = True
            return selection
        num_envs = dones.shape[1]
        message = (
            f"{self.algorithm} update at timestep {timestep}: no episode of the {num_envs} environment(s) ended "
            f"within the rollout of cfg['rollouts'] = {self.rollouts} steps, so there are no returns to select "
            f"elites from"
        )
        fix = (
            "set cfg['rollouts'] and the memory's memory_size to at least the environment's episode length "
            "(e.g. 1000 for CartPole-v1, whose episodes last up to 500 steps)"
        )
        if not self.selected_once and had_previous and not window_dones.any():
            raise ValueError(
                f"{message}, nor within the previous one: every episode lasted longer than the 2 x "
                f"{self.rollouts} steps an update sees; {fix}"
            )
        logger.warning(f"{message}; nothing was learned from it. If this recurs, {fix}")
        return None
