"""``SequentialTrainer``: agents run one after another within each timestep."""

import copy

from skrl_like.core.trainer import TRAINER_DEFAULT_CONFIG
from skrl_like.torch.trainers.base import Trainer

SEQUENTIAL_TRAINER_DEFAULT_CONFIG = copy.deepcopy(TRAINER_DEFAULT_CONFIG)


class SequentialTrainer(Trainer):
    """Train or evaluate one or several agents on a wrapped environment, one timestep at a time.

    :param cfg: keys of ``SEQUENTIAL_TRAINER_DEFAULT_CONFIG`` (the other parameters:
        :class:`~skrl_like.torch.trainers.Trainer`).
    """

    default_config = SEQUENTIAL_TRAINER_DEFAULT_CONFIG

    def _setup(self) -> None:
        self._init_agents()

    def train(self) -> None:
        """Train the agent(s) up to ``trainer.timesteps`` (``cfg["timesteps"]``) from ``initial_timestep``: 0 at first,
        then where the last ``train()`` or :meth:`restore` left off, so a second call (after raising ``timesteps``)
        continues the same run. Writes a full-state checkpoint at the end and on Ctrl-C (see :meth:`save`)."""
        self._loop(evaluate=False)

    def eval(self) -> None:
        """Evaluate the agent(s) in "eval" running mode (no learning): mean actions unless ``stochastic_evaluation``."""
        self._loop(evaluate=True)
