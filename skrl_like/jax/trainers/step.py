"""``StepTrainer``: one interaction step per call, for loops the user writes."""

import copy
from typing import Any, Optional, Sequence, Tuple

from skrl_like.core.trainer import TRAINER_DEFAULT_CONFIG
from skrl_like.jax.trainers.base import Trainer

STEP_TRAINER_DEFAULT_CONFIG = copy.deepcopy(TRAINER_DEFAULT_CONFIG)


class StepTrainer(Trainer):
    """Run exactly one training or evaluation step per ``train()``/``eval()`` call.

    :param env: the wrapped environment (``wrap_env(...)``, single-agent).
    :param agents: an agent, or a list of distinct agents (each with its own memory) sharing the environment.
    :param agents_scope: environments per agent, ints >= 1 summing to ``env.num_envs``; ``None`` splits equally.
    :param cfg: keys of ``STEP_TRAINER_DEFAULT_CONFIG`` (unknown keys or bad values raise ``ValueError``); the loop
        hooks ``callbacks``, ``evaluation_interval`` and ``env_task_fn`` are refused (your loop calls the steps).
    :param evaluation_env: accepted for a uniform signature; unused (``evaluation_interval`` is refused).
    """

    default_config = STEP_TRAINER_DEFAULT_CONFIG

    def __init__(
        self,
        env: Any,
        agents: Any,
        agents_scope: Optional[Sequence[int]] = None,
        cfg: Optional[dict] = None,
        evaluation_env: Any = None,
    ):
        super().__init__(env, agents, agents_scope, cfg, evaluation_env)
        self._refuse_run_features(
            "they run in the whole-run loop of SequentialTrainer; a StepTrainer loop is yours, so call your code "
            "(or trainer.evaluate_episodes) from it, or use SequentialTrainer"
        )
        self._prepare_stepping()
        self._init_agents()

    def train(self, timestep: Optional[int] = None, timesteps: Optional[int] = None) -> Tuple[Any, ...]:
        """Run one training step; return ``(next_states, rewards, terminated, truncated, infos)``.

        :param timestep: the step's index (``None``: an internal counter, starting at 1).
        :param timesteps: the run's length, for schedules (``None``: ``cfg["timesteps"]``).
        """
        return self._one_step(False, timestep, timesteps)

    def eval(self, timestep: Optional[int] = None, timesteps: Optional[int] = None) -> Tuple[Any, ...]:
        """Run one evaluation step (no learning); return the step's outputs as :meth:`train` does."""
        return self._one_step(True, timestep, timesteps)
