"""Environments whose task can be set (RLlib's ``TaskSettableEnv``), reached through any wrapper.

A curriculum changes the task of the environment being trained between training iterations. The environment
declares ``set_task(task)`` and ``get_task()``; :func:`set_task` and :func:`get_task` reach them through a
skrl_like wrapper (``wrap_env``), gymnasium wrappers and gymnasium vector envs:

- a vector env that defines ``set_task``/``get_task`` itself is called directly (it decides what its sub-envs do);
- a gymnasium vector env of single envs (``SyncVectorEnv``, ``AsyncVectorEnv``) forwards the call to every
  sub-env (``VectorEnv.call``), so each sub-env gets the same task;
- a single env (under any gymnasium wrappers) is called through ``get_wrapper_attr``.

A sub-env usually applies a new task when its next episode begins (that is the env's choice, not the trainer's).
"""

from typing import Any, Callable, Tuple

import gymnasium


class TaskSettableEnv(gymnasium.Env):
    """A gymnasium env with a settable task (difficulty, goal, level...), as RLlib's ``TaskSettableEnv``.

    Subclass it (or just define the two methods on any env) to use a curriculum: the trainer's
    ``cfg["env_task_fn"]`` returns the next task, which the trainer hands to :meth:`set_task`.
    """

    def set_task(self, task: Any) -> None:
        """Use ``task`` from now on (typically from the next episode)."""
        raise NotImplementedError(f"{type(self).__name__} must implement set_task(task)")

    def get_task(self) -> Any:
        """The task in use."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_task()")


def _inner(env: Any) -> Any:
    """The environment a skrl_like wrapper holds (anything else is taken as it is)."""
    return vars(env).get("_env", env) if hasattr(env, "__dict__") else env


def _defines(obj: Any, name: str) -> bool:
    """Whether ``obj``'s class (or, for a wrapper, its innermost env's) defines method ``name``."""
    for candidate in (obj, getattr(obj, "unwrapped", obj)):
        if callable(getattr(type(candidate), name, None)):
            return True
    return False


def _task_method(env: Any, name: str) -> Tuple[Callable[..., Any], bool]:
    """``(method, per_sub_env)``: how to call ``name`` on ``env``; ``per_sub_env`` means one result per sub-env.

    :raises TypeError: the env has no such method, naming what was looked at and how to add it.
    """
    inner = _inner(env)
    vector = isinstance(inner, gymnasium.vector.VectorEnv)
    if vector and _defines(inner, name):
        return getattr(inner, name), False
    if vector:
        # a SyncVectorEnv's sub-envs are looked at without calling anything (its get_attr calls methods); an
        # AsyncVectorEnv's live in other processes: a missing method shows at the first call
        sub_envs = getattr(getattr(inner, "unwrapped", inner), "envs", None)
        if sub_envs is None or all(sub_env.has_wrapper_attr(name) for sub_env in sub_envs):
            return (lambda *args: inner.call(name, *args)), True
    elif isinstance(inner, gymnasium.Env):
        try:
            return inner.get_wrapper_attr(name), False
        except AttributeError:
            pass
    elif callable(getattr(inner, name, None)):
        return getattr(inner, name), False
    what = type(getattr(inner, "unwrapped", inner)).__name__
    sub_envs = getattr(getattr(inner, "unwrapped", inner), "envs", None) if vector else None
    if sub_envs:
        what += f" of {type(sub_envs[0].unwrapped).__name__}"
    raise TypeError(
        f"The environment ({what}) has no {name}() method, which the "
        f"trainer's cfg['env_task_fn'] (curriculum) needs: give the env (or each sub-env of a vector env) the "
        "methods set_task(task) and get_task(), e.g. by subclassing skrl_like.core.envs.task.TaskSettableEnv"
    )


def check_task_settable(env: Any) -> None:
    """Fail now, not at the first iteration, when ``env`` cannot take a task.

    :raises TypeError: ``env`` (or its sub-envs) lacks ``set_task`` or ``get_task``.
    """
    _task_method(env, "set_task")
    _task_method(env, "get_task")


def set_task(env: Any, task: Any) -> None:
    """Give ``task`` to ``env``: to every sub-env of a gymnasium vector env of single envs, else to the env.

    :param env: a skrl_like-wrapped env, or the env itself.
    :raises TypeError: the env has no ``set_task``.
    """
    method, _ = _task_method(env, "set_task")
    method(task)


def get_task(env: Any) -> Any:
    """``env``'s task; for a gymnasium vector env of single envs, a tuple of each sub-env's task.

    :raises TypeError: the env has no ``get_task``.
    """
    method, per_sub_env = _task_method(env, "get_task")
    tasks = method()
    return tuple(tasks) if per_sub_env else tasks
