"""The run description: one skrl-format YAML configuration plus the ``env`` and ``backend`` sections, read the same
way by every command that runs one (``skrl_like train``/``eval`` in :mod:`skrl_like.cli`, ``skrl_like tune`` trials in
:mod:`skrl_like.tune`).

Both sit on this module and neither imports the other: where the shipped tuned files are, how an ``env`` section
becomes a wrapped environment, and how a description becomes a backend's ``Runner``.
"""

import glob
import importlib
import inspect
import os
import re
from collections.abc import Mapping
from typing import Any, List, Optional

from skrl_like.core.runner import RunnerConfigError

TUNED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tuned")
BACKENDS = ("torch", "jax")
ENV_KEYS = ("id", "num_envs", "kwargs", "pettingzoo")


def tuned_files() -> List[str]:
    """The tuned configurations shipped with the package (``skrl_like/tuned/*.yaml``)."""
    return sorted(glob.glob(os.path.join(TUNED_DIR, "*.yaml")))


def resolve_config_path(path: str) -> str:
    """``path`` itself when it exists, else the shipped tuned file it names (``tuned/ppo_cartpole.yaml``,
    ``ppo_cartpole.yaml`` or ``ppo_cartpole``)."""
    if os.path.isfile(path):
        return path
    name = os.path.basename(path)
    for candidate in (name, f"{name}.yaml"):
        shipped = os.path.join(TUNED_DIR, candidate)
        if os.path.isfile(shipped):
            return shipped
    shipped = ", ".join(os.path.basename(file) for file in tuned_files())
    raise RunnerConfigError(f"No configuration file '{path}' (nor a tuned one of that name: {shipped})")


def make_env(env_cfg: Any, backend: str, render: bool = False, num_envs: Optional[int] = None) -> Any:
    """The wrapped environment that an ``env`` section describes (gymnasium by ``id``, or a PettingZoo parallel env
    by the module that has its ``parallel_env``).

    :param render: ``render_mode="human"`` (a window, drawn at every step).
    :param num_envs: instead of ``env_cfg["num_envs"]`` (gymnasium only; more than one: a sync vector env, or the
        ``num_envs`` of an env that steps its own sub-environments, see :func:`steps_its_own_envs`).
    :raises RunnerConfigError: the section is missing or wrong, or the env does not exist.
    """
    if not isinstance(env_cfg, Mapping) or not ("id" in env_cfg or "pettingzoo" in env_cfg):
        raise RunnerConfigError(
            "The configuration has no env section: add e.g. env: {id: CartPole-v1, num_envs: 8} (or pass --env)"
        )
    unknown = sorted(set(env_cfg) - set(ENV_KEYS))
    if unknown:
        raise RunnerConfigError(f"Unknown key(s) {unknown} in the env section; valid: {', '.join(ENV_KEYS)}")
    kwargs = dict(env_cfg.get("kwargs") or {})
    if render:
        kwargs["render_mode"] = "human"
    wrap_env = importlib.import_module(f"skrl_like.{backend}.envs.wrappers").wrap_env
    if "pettingzoo" in env_cfg:
        name = str(env_cfg["pettingzoo"])
        if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name):
            raise RunnerConfigError(f"env.pettingzoo must be a module name like mpe2.simple_spread_v3, got {name!r}")
        try:
            factory = importlib.import_module(name).parallel_env
        except ImportError as error:
            raise RunnerConfigError(
                f"Cannot import the PettingZoo env module '{name}' ({error}): install it"
            ) from error
        except AttributeError as error:
            raise RunnerConfigError(
                f"The module '{name}' has no parallel_env(): name a PettingZoo env module"
            ) from error
        try:
            env = factory(**kwargs)
        except TypeError as error:
            raise RunnerConfigError(f"env.kwargs do not fit {name}.parallel_env: {error}") from error
        return wrap_env(env, wrapper="pettingzoo", verbose=False)

    import gymnasium

    env_id = str(env_cfg["id"])
    check_registered(env_id)
    count = int(num_envs if num_envs is not None else env_cfg.get("num_envs", 1))
    if count < 1:
        raise RunnerConfigError(f"env.num_envs must be >= 1, got {count}")
    batched = steps_its_own_envs(env_id)
    if batched and "num_envs" in kwargs:
        raise RunnerConfigError(
            f"env.kwargs.num_envs and env.num_envs both give {env_id}'s number of environments: keep env.num_envs"
        )
    if batched and render and not _takes(_entry_point(env_id), "render_mode"):
        raise RunnerConfigError(f"{env_id} draws nothing (it takes no render_mode): run without --render")
    try:
        if batched:  # one env stepping `count` sub-environments (Isaac Lab's contract), wrapped with its own wrapper
            env = gymnasium.make(env_id, num_envs=count, **kwargs)
        elif count == 1:
            env = gymnasium.make(env_id, **kwargs)
        else:
            env = gymnasium.make_vec(env_id, num_envs=count, vectorization_mode="sync", **kwargs)
    except TypeError as error:
        raise RunnerConfigError(f"env.kwargs do not fit {env_id}: {error}") from error
    except gymnasium.error.Error as error:
        raise RunnerConfigError(f"Cannot make {env_id}: {error}") from error
    return wrap_env(env, verbose=False)


def _entry_point(env_id: str) -> Any:
    """The class or function gymnasium makes the registered ``env_id`` with, or ``None`` when it does not import."""
    import gymnasium
    from gymnasium.envs.registration import load_env_creator

    check_registered(env_id)  # imports the module of a module:Id
    entry_point = gymnasium.spec(env_id.rpartition(":")[2]).entry_point
    try:
        return load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point
    except (ImportError, AttributeError):  # gymnasium.make says what is missing
        return None


def _takes(creator: Any, name: str) -> bool:
    try:
        parameters = inspect.signature(creator).parameters
    except (TypeError, ValueError):  # no signature (None, a builtin)
        return False
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def steps_its_own_envs(env_id: str) -> bool:
    """Whether the registered env ``env_id`` is batched itself (it steps its own sub-environments, as Isaac Lab's envs
    do): its entry point takes ``num_envs``, or is a class with a base class in ``isaaclab.*``. Such an env is made
    once with ``num_envs`` (``gymnasium.make_vec`` would make several, each batched), and ``wrap_env`` detects it.

    :raises RunnerConfigError: the env is not registered.
    """
    creator = _entry_point(env_id)
    if isinstance(creator, type) and any(
        cls.__module__.startswith(("isaaclab.", "omni.isaac.lab.")) for cls in creator.__mro__
    ):
        return True
    try:
        return "num_envs" in inspect.signature(creator).parameters
    except (TypeError, ValueError):  # no signature (None, a builtin)
        return False


def check_registered(env_id: str) -> None:
    """Fail now when gymnasium has no ``env_id``; ``module:Id`` (gymnasium's syntax for an id that a module registers
    on import, e.g. ``skrl_like.envs:AmpPendulum-v0``) imports the module first, as ``gymnasium.make`` does.

    :raises RunnerConfigError: the module does not import, or the id is not registered.
    """
    import gymnasium

    module, _, name = env_id.rpartition(":")
    if module:
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise RunnerConfigError(
                f"Cannot import '{module}', the module of the env id '{env_id}' ({error}): check its name"
            ) from error
    try:
        gymnasium.spec(name)
    except gymnasium.error.Error as error:
        raise RunnerConfigError(f"Unknown environment '{env_id}': {error}") from error


def build_runner(
    cfg: Mapping[str, Any], env: Any, trainer: Optional[Mapping[str, Any]] = None, evaluation_env: Any = None
) -> Any:
    """The backend's ``Runner`` (``cfg["backend"]``, default torch) for the run description ``cfg`` on the wrapped
    ``env``: every section but ``env`` and ``backend``, with ``trainer`` (keys a command sets) over its trainer section
    (``evaluation_env``: for a trainer section that sets ``evaluation_interval``).

    :raises RunnerConfigError: an unknown backend, or a configuration the Runner cannot build.
    """
    backend = cfg.get("backend", "torch")
    if backend not in BACKENDS:
        raise RunnerConfigError(f"Unknown backend '{backend}' in the run description: use torch or jax")
    runner_cfg = {key: value for key, value in cfg.items() if key not in ("env", "backend")}
    runner_cfg["trainer"] = {**(runner_cfg.get("trainer") or {}), **(trainer or {})}
    return importlib.import_module(f"skrl_like.{backend}.utils.runner").Runner(env, runner_cfg, evaluation_env)


#: torch's intra-op threads when neither ``--threads`` nor ``OMP_NUM_THREADS`` says: the tuned files' models are small,
#: and on a small machine with other work running torch's pool (one thread per core) made SAC Pendulum 30x slower
DEFAULT_TORCH_THREADS = 1


def set_torch_threads(backend: str, threads: Optional[int] = None) -> Optional[int]:
    """Bound torch's intra-op thread pool for a run of ``backend`` (nothing for JAX): ``threads`` when given, else
    ``OMP_NUM_THREADS`` where set (torch reads it itself), else :data:`DEFAULT_TORCH_THREADS`.

    :return: the number of threads set, or ``None`` where nothing was set.
    :raises RunnerConfigError: ``threads`` < 1.
    """
    if threads is not None and threads < 1:
        raise RunnerConfigError(f"--threads must be >= 1, got {threads}")
    if backend != "torch":
        return None
    if threads is None:
        if os.environ.get("OMP_NUM_THREADS"):
            return None
        threads = DEFAULT_TORCH_THREADS
    import torch

    torch.set_num_threads(threads)
    return threads
