"""``SequentialTrainer``: agents run one after another within each timestep."""

import copy
from typing import Any, Optional, Sequence

from skrl_like.core.trainer import TRAINER_DEFAULT_CONFIG
from skrl_like.jax.trainers.base import Trainer

SEQUENTIAL_TRAINER_DEFAULT_CONFIG = copy.deepcopy(TRAINER_DEFAULT_CONFIG)


class SequentialTrainer(Trainer):
    """Train or evaluate one or several agents on a wrapped environment, one timestep at a time.

    :param env: the wrapped environment (``wrap_env(...)``).
    :param agents: an agent, or a list of distinct agents (each with its own memory) sharing the environment.
    :param agents_scope: environments per agent, ints >= 1 summing to ``env.num_envs``; ``None`` splits equally.
    :param cfg: keys of ``SEQUENTIAL_TRAINER_DEFAULT_CONFIG`` (unknown keys or bad values raise ``ValueError``).
    :param evaluation_env: a second wrapped env built like ``env``, for ``cfg["evaluation_interval"]``
        (docs/evaluation.md).
    """

    default_config = SEQUENTIAL_TRAINER_DEFAULT_CONFIG

    def __init__(
        self,
        env: Any,
        agents: Any,
        agents_scope: Optional[Sequence[int]] = None,
        cfg: Optional[dict] = None,
        evaluation_env: Any = None,
    ):
        super().__init__(env, agents, agents_scope, cfg, evaluation_env)
        self._init_agents()

    def train(self) -> None:
        """Train the agent(s) up to ``trainer.timesteps`` (``cfg["timesteps"]``) from ``initial_timestep``: 0 at first,
        then where the last ``train()`` or :meth:`restore` left off, so a second call (after raising ``timesteps``)
        continues the same run. Writes a full-state checkpoint at the end and on Ctrl-C (see :meth:`save`)."""
        self._loop(evaluate=False)

    def eval(self) -> None:
        """Evaluate the agent(s) in "eval" running mode (no learning): mean actions unless ``stochastic_evaluation``."""
        self._loop(evaluate=True)
