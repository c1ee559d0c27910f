"""CEM's configuration, written once for both backends (torch adds ``mixed_precision``), and the half of its update
that holds no tensors: cutting each environment's column of the rollout into whole episodes, their discounted
returns, the elite threshold and the mask of elite rows.

The selection runs on the host in NumPy (the rewards and episode ends of one rollout, fetched once per update); the
backends then take one cross-entropy step on the rows the mask marks, with every rollout row present so that the
shapes never change (a compiled JAX update never recompiles for another number of elite rows).

Episodes, per environment: row ``t`` of column ``e`` ends an episode when ``terminated | truncated``; an episode
counts when it both starts and ends inside the rollout. Its first row is the rollout's first row only when that
environment's previous episode ended at the last step of the previous rollout (or training just began); the rows
of an episode that began in an earlier rollout, and those after the last end, are left out (they are no whole
episode: their return says nothing about how good the episode was).
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

#: the memory's tensors
TENSOR_NAMES = ("states", "actions", "rewards", "next_states", "terminated", "truncated")


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


def episode_segments(dones: np.ndarray, starts_fresh: np.ndarray) -> list:
    """The whole episodes of a rollout as ``(env, first_row, end_row)`` (``end_row`` exclusive), env by env.

    :param dones: ``(rollouts, num_envs)`` bools, ``terminated | truncated``.
    :param starts_fresh: ``(num_envs,)`` bools: the environment's episode starts at the rollout's first row.
    """
    segments = []
    for env in range(dones.shape[1]):
        ends = np.flatnonzero(dones[:, env]) + 1
        starts = np.concatenate(([0], ends[:-1]))
        for index, (start, end) in enumerate(zip(starts, ends)):
            if index == 0 and not starts_fresh[env]:
                continue  # the tail of an episode that began in an earlier rollout
            segments.append((env, int(start), int(end)))
    return segments


class EliteSelection(NamedTuple):
    """What the update learns from and tracks."""

    returns: np.ndarray  # (episodes,) discounted returns of the rollout's whole episodes
    threshold: float  # the ``percentile`` quantile of ``returns`` (linear interpolation)
    weights: np.ndarray  # (rollouts, num_envs) float32: 1 on the rows of the elite episodes, 0 elsewhere


def select_elites(
    rewards: np.ndarray, dones: np.ndarray, starts_fresh: np.ndarray, discount_factor: float, percentile: float
) -> Optional[EliteSelection]:
    """The elite episodes of one rollout: those whose discounted return is at least the ``percentile`` quantile of
    the returns of all its whole episodes (``None`` when it holds none).

    :param rewards: ``(rollouts, num_envs)`` rewards (as stored: shaped).
    :param dones: ``(rollouts, num_envs)`` bools.
    :param starts_fresh: ``(num_envs,)`` bools (see :func:`episode_segments`).
    """
    segments = episode_segments(dones, starts_fresh)
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
    """Which environments start the next rollout with a fresh episode, and the selection of one rollout's elites,
    with the message when a rollout holds no whole episode.

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
        self.starts_fresh: Optional[np.ndarray] = None  # None: training just began, every episode starts fresh
        self.selected_once = False

    def end_rollout(self, last_dones: np.ndarray) -> None:
        """Record the episode ends of a rollout's last step (``(num_envs,)``): those environments start fresh."""
        self.starts_fresh = np.asarray(last_dones, dtype=bool).reshape(-1)

    def select(self, rewards: np.ndarray, dones: np.ndarray, timestep: int) -> Optional[EliteSelection]:
        """The elites of the rollout ``(rollouts, num_envs)`` that just ended (and :meth:`end_rollout` of it).

        :raises ValueError: no whole episode yet, and this rollout began with a fresh episode in every environment:
            every episode is longer than ``rollouts`` steps, so CEM can never select elites.
        """
        num_envs = dones.shape[1]
        starts_fresh = np.ones(num_envs, bool) if self.starts_fresh is None else self.starts_fresh
        self.end_rollout(dones[-1])
        selection = select_elites(rewards, dones, starts_fresh, self.discount_factor, self.percentile)
        if selection is not None:
            self.selected_once = True
            return selection
        message = (
            f"{self.algorithm} update at timestep {timestep}: no episode of the {num_envs} environment(s) both "
            f"started and ended within the rollout of cfg['rollouts'] = {self.rollouts} steps, so there are no "
            f"returns to select elites from"
        )
        fix = (
            "set cfg['rollouts'] and the memory's memory_size to several times the environment's episode length "
            "(e.g. 1000 for CartPole-v1, whose episodes last up to 500 steps)"
        )
        if not self.selected_once and starts_fresh.all():
            raise ValueError(f"{message}: every episode started with the rollout and lasted longer than it; {fix}")
        logger.warning(f"{message}; nothing was learned from it. If this recurs, {fix}")
        return None
