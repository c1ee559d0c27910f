"""Trainers (JAX): ``SequentialTrainer``, ``StepTrainer``."""

from skrl_like.jax.trainers.base import Trainer, generate_equally_spaced_scopes
from skrl_like.jax.trainers.sequential import SequentialTrainer
from skrl_like.jax.trainers.step import StepTrainer

__all__ = ["Trainer", "generate_equally_spaced_scopes", "SequentialTrainer", "StepTrainer"]
