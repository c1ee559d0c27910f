"""``StepTrainer``: one interaction step per call, for loops the user writes."""

import copy
from typing import Any, Optional, Tuple

from skrl_like.core.trainer import TRAINER_DEFAULT_CONFIG
from skrl_like.torch.trainers.base import Trainer

STEP_TRAINER_DEFAULT_CONFIG = copy.deepcopy(TRAINER_DEFAULT_CONFIG)


class StepTrainer(Trainer):
    """Run exactly one training or evaluation step per ``train()``/``eval()`` call.

    :param cfg: keys of ``STEP_TRAINER_DEFAULT_CONFIG``; ``callbacks``, ``evaluation_interval`` and ``env_task_fn``
        run at the steps as in ``SequentialTrainer`` (the update, result and evaluation hooks at training steps only);
        the other parameters: :class:`~skrl_like.torch.trainers.Trainer` (a single-agent ``env``).
    """

    default_config = STEP_TRAINER_DEFAULT_CONFIG

    def _setup(self) -> None:
        self._init_agents()
        self._prepare_stepping()

    def train(self, timestep: Optional[int] = None, timesteps: Optional[int] = None) -> Tuple[Any, ...]:
        """Run one training step; return ``(next_states, rewards, terminated, truncated, infos)``.

        :param timestep: the step's index (``None``: an internal counter, starting at 1).
        :param timesteps: the run's length, for schedules (``None``: ``cfg["timesteps"]``).
        """
        return self._one_step(False, timestep, timesteps)

    def eval(self, timestep: Optional[int] = None, timesteps: Optional[int] = None) -> Tuple[Any, ...]:
        """Run one evaluation step (no learning); return the step's outputs as :meth:`train` does."""
        return self._one_step(True, timestep, timesteps)
