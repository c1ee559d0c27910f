"""Curriculum: the trainer's ``cfg["env_task_fn"]`` picks the training env's next task between training iterations.

A **training iteration** is one write interval of the agent (``cfg["experiment"]["write_interval"]`` timesteps):
after each results row is written (the row of ``results.jsonl``, also handed to ``on_train_result``), the trainer
calls ``env_task_fn(train_results, env, env_ctx)`` with that row, the wrapped training env and an
:class:`EnvContext`, and gives the task it returns to the env (:func:`~skrl_like.core.envs.task.set_task`: every
sub-env of a vector env gets it). As in RLlib, the returned task is always set, also when it did not change.
"""

from typing import Any, Callable, Dict, Mapping

from skrl_like.core.envs.task import check_task_settable, get_task, set_task


class EnvContext(dict):
    """What ``env_task_fn`` may want to know besides the results row (RLlib's ``EnvContext``: a dict with
    attributes).

    :ivar num_envs: the training env's number of sub-environments.
    :ivar timestep: the timestep of the row (the number of steps trained).
    :ivar task: the env's task before this call (:func:`~skrl_like.core.envs.task.get_task`: a tuple of the
        sub-envs' tasks for a gymnasium vector env of single envs).
    :ivar worker_index: always 0 (one process steps the env), for RLlib functions that read it.
    :ivar num_workers: always 0, likewise.
    """

    def __init__(self, num_envs: int, timestep: int, task: Any) -> None:
        super().__init__(num_envs=num_envs, timestep=timestep, task=task, worker_index=0, num_workers=0)

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Curriculum:
    """Calls ``env_task_fn`` after every results row and sets the task it returns on the training env.

    :param env_task_fn: ``(train_results, env, env_ctx) -> task``.
    :param env: the wrapped training env; it (or each of its sub-envs) must have ``set_task`` and ``get_task``.
    :raises TypeError: the env cannot take a task (checked at construction, not at the first iteration).
    """

    def __init__(self, env_task_fn: Callable[[Dict[str, Any], Any, EnvContext], Any], env: Any) -> None:
        check_task_settable(env)
        self.env_task_fn = env_task_fn
        self.env = env

    def on_result(self, result: Mapping[str, Any]) -> Any:
        """One iteration ended with results row ``result``: ask for the next task and set it; return it."""
        context = EnvContext(self.env.num_envs, int(result.get("timestep", 0)), get_task(self.env))
        task = self.env_task_fn(dict(result), self.env, context)
        set_task(self.env, task)
        return task
