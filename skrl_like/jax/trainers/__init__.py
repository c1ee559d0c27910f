"""Trainers (JAX): ``SequentialTrainer``, ``StepTrainer``, ``CompiledTrainer`` (the whole run compiled)."""

from skrl_like.core.callbacks import Callbacks, Episode
from skrl_like.jax.trainers.base import Trainer, generate_equally_spaced_scopes
from skrl_like.jax.trainers.compiled import CompiledTrainer
from skrl_like.jax.trainers.sequential import SequentialTrainer
from skrl_like.jax.trainers.step import StepTrainer

__all__ = [
    "Callbacks",
    "Episode",
    "Trainer",
    "generate_equally_spaced_scopes",
    "SequentialTrainer",
    "StepTrainer",
    "CompiledTrainer",
]
