"""``SequentialTrainer``: agents run one after another within each timestep."""

import copy

from skrl_like.core.trainer import TRAINER_DEFAULT_CONFIG, SequentialTrainerCore
from skrl_like.jax.trainers.base import Trainer

SEQUENTIAL_TRAINER_DEFAULT_CONFIG = copy.deepcopy(TRAINER_DEFAULT_CONFIG)


class SequentialTrainer(SequentialTrainerCore, Trainer):
    """Train or evaluate one or several agents on a wrapped environment, one timestep at a time.

    :param env: the wrapped environment (``wrap_env(...)``).
    :param agents: an agent, or a list of agents sharing the environment.
    :param agents_scope: environments per agent (must sum to ``env.num_envs``); ``None`` splits equally.
    :param cfg: keys of ``SEQUENTIAL_TRAINER_DEFAULT_CONFIG`` (unknown keys raise ``ValueError``).
    """

    default_config = SEQUENTIAL_TRAINER_DEFAULT_CONFIG
