"""``StepTrainer``: one interaction step per call, for loops the user writes."""

import copy

from skrl_like.core.trainer import TRAINER_DEFAULT_CONFIG, StepTrainerCore
from skrl_like.jax.trainers.base import Trainer

STEP_TRAINER_DEFAULT_CONFIG = copy.deepcopy(TRAINER_DEFAULT_CONFIG)


class StepTrainer(StepTrainerCore, Trainer):
    """Run exactly one training or evaluation step per ``train()``/``eval()`` call.

    :param env: the wrapped environment (``wrap_env(...)``).
    :param agents: an agent, or a list of agents sharing the environment.
    :param agents_scope: environments per agent (must sum to ``env.num_envs``); ``None`` splits equally.
    :param cfg: keys of ``STEP_TRAINER_DEFAULT_CONFIG`` (unknown keys raise ``ValueError``).
    """

    default_config = STEP_TRAINER_DEFAULT_CONFIG
