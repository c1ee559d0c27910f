"""Trainers (torch): ``SequentialTrainer``, ``StepTrainer``, ``ParallelTrainer``."""

from skrl_like.core.callbacks import Callbacks, Episode
from skrl_like.torch.trainers.base import Trainer, generate_equally_spaced_scopes
from skrl_like.torch.trainers.parallel import PARALLEL_TRAINER_DEFAULT_CONFIG, ParallelTrainer
from skrl_like.torch.trainers.sequential import SequentialTrainer
from skrl_like.torch.trainers.step import StepTrainer

__all__ = [
    "Callbacks",
    "Episode",
    "Trainer",
    "generate_equally_spaced_scopes",
    "SequentialTrainer",
    "StepTrainer",
    "ParallelTrainer",
    "PARALLEL_TRAINER_DEFAULT_CONFIG",
]
