"""``load_playground_env``: a MuJoCo Playground environment by task name, as skrl 2.x's loader of the same name.

It returns the environment as ``mujoco_playground.registry.load`` makes it (one, unbatched), with the loading
choices recorded on it (``num_envs``, ``episode_length``, ``action_repeat``, ``full_reset``), which
``wrap_env(env)`` (either backend) reads: the wrapper batches it and resets finished episodes itself, where skrl 2.x
returns it already wrapped by Playground's ``wrap_for_brax_training``. Importing this module imports neither
Playground nor JAX.
"""

import argparse
import sys
import textwrap
from typing import Any, Optional

from skrl_like.core.seeding import set_seed


def load_playground_env(
    task_name: str = "",
    num_envs: Optional[int] = None,
    episode_length: Optional[int] = None,
    action_repeat: Optional[int] = None,
    full_reset: bool = False,
    randomization: bool = False,
    cfg_overrides: Optional[dict] = None,
    show_cfg: bool = True,
    parser: Optional[argparse.ArgumentParser] = None,
) -> Any:
    """Load a MuJoCo Playground environment (https://playground.mujoco.org) by task name.

    The command line's ``--task``, ``--num_envs``, ``--seed``, ``--episode_length``, ``--action_repeat`` and
    ``--full_reset`` take priority over the parameters, as in skrl.

    :param task_name: the task (``mujoco_playground.registry.ALL_ENVS`` lists them), e.g. ``"CartpoleBalance"``.
    :param num_envs: number of sub-environments the wrapper steps.
    :param episode_length: env steps after which an episode is truncated (``None``: the task's default config).
    :param action_repeat: env steps per agent step (``None``: the task's default config, else 1).
    :param full_reset: restart finished episodes from a fresh reset instead of the first state.
    :param randomization: domain randomization; not supported by skrl_like's wrappers (``True`` raises).
    :param cfg_overrides: overrides of the task's default config, passed to ``registry.load``.
    :param show_cfg: print the task's config and the loading choices.
    :param parser: the argument parser to add the options to (``None``: a new one).
    :raises ValueError: no or an unknown task name, no ``num_envs``, no episode length.
    :raises NotImplementedError: ``randomization`` (its per-environment models are not batched by the wrappers).
    """
    try:
        from mujoco_playground import registry
    except ImportError as error:
        raise ImportError(
            "load_playground_env needs MuJoCo Playground: pip install 'skrl_like[playground]' (or playground)"
        ) from error

    parser = argparse.ArgumentParser("MuJoCo Playground") if parser is None else parser
    parser.add_argument("--task", type=str, default=None, help="name of the task")
    parser.add_argument("--num_envs", type=int, default=None, help="number of environments")
    parser.add_argument("--seed", type=int, default=None, help="random seed")
    parser.add_argument("--episode_length", type=int, default=None, help="length of an episode in env steps")
    parser.add_argument("--action_repeat", type=int, default=None, help="env steps per agent step")
    parser.add_argument("--full_reset", action="store_true", default=False, help="reset to a fresh state")
    parser.add_argument("--randomization", action="store_true", default=False, help="domain randomization")
    args, _ = parser.parse_known_args(sys.argv[1:])

    task_name = args.task or task_name
    if not task_name:
        raise ValueError(
            "load_playground_env: no task name: pass task_name='...' or '--task <name>' on the command line"
        )
    if task_name not in registry.ALL_ENVS:
        raise ValueError(
            f"load_playground_env: unknown task '{task_name}'; MuJoCo Playground has: {', '.join(registry.ALL_ENVS)}"
        )
    num_envs = args.num_envs or num_envs
    if num_envs is None:
        raise ValueError(
            "load_playground_env: no number of environments: pass num_envs=N or '--num_envs N' on the command line"
        )
    if args.randomization or randomization:
        raise NotImplementedError(
            "load_playground_env: domain randomization is not supported by skrl_like's Playground wrapper (it batches "
            "one model over the environments); load the task without randomization"
        )
    env_cfg = registry.get_default_config(task_name)
    episode_length = args.episode_length or episode_length or env_cfg.get("episode_length")
    if episode_length is None:
        raise ValueError(
            f"load_playground_env: the task '{task_name}' has no default episode length: pass episode_length=N or "
            "'--episode_length N' on the command line"
        )
    action_repeat = args.action_repeat or action_repeat or env_cfg.get("action_repeat", 1)
    full_reset = args.full_reset or full_reset

    env = registry.load(task_name, config=env_cfg, config_overrides=cfg_overrides)
    env.num_envs, env.episode_length, env.action_repeat, env.full_reset = (
        int(num_envs),
        int(episode_length),
        int(action_repeat),
        bool(full_reset),
    )
    if show_cfg:
        print(f"\nMuJoCo Playground environment\n  task: {task_name}\n  task config:")
        print(textwrap.indent(str(env_cfg).strip(), prefix=" " * 4))
        print(
            f"  loading config:\n    num_envs: {num_envs}\n    episode_length: {episode_length}\n"
            f"    action_repeat: {action_repeat}\n    full_reset: {full_reset}"
        )
    if args.seed is not None:
        set_seed(args.seed)
    return env
