"""The ``skrl_like`` command line: ``train``, ``eval``, ``plot`` and ``tune``.

Every run is described by one skrl-format YAML configuration (:mod:`skrl_like.core.runner`) plus two sections the
command line reads: ``env`` (``{id: CartPole-v1, num_envs: 8, kwargs: {...}}``, or ``{pettingzoo: mpe2.simple_spread_v3,
kwargs: {...}}`` for a PettingZoo parallel env) and ``backend``. ``train`` copies the configuration it ran, resolved,
into the run directory as ``config.yaml``, so that ``eval`` rebuilds the same agent from the run directory alone.

Mistakes in what is asked (flags, agent or env names, the YAML file, a run directory without a checkpoint) end with
one line on stderr and exit code 2, before anything is trained.
"""

import argparse
import copy
import glob
import json
import os
import re
import sys
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Sequence

import yaml

from skrl_like import logger
from skrl_like.core.checkpoints import BEST_NAME, find_checkpoint, load_agent_modules
from skrl_like.core.results import RESULTS_FILE
from skrl_like.core.runner import AGENTS, RunnerConfigError, apply_overrides, component_key, read_yaml
from skrl_like.run_description import (  # noqa: F401  (tuned_files: re-exported, read as cli.tuned_files)
    BACKENDS,
    TUNED_DIR,
    build_runner,
    check_registered,
    make_env,
    resolve_config_path,
    set_torch_threads,
    tuned_files,
)

CONFIG_FILE = "config.yaml"  # the resolved configuration, in every run directory

# --agent NAME --env ID: the tuned file whose models fit the env's action space ("discrete" or "continuous")
TUNED_FOR_AGENT: Dict[str, Dict[str, str]] = {
    "ppo": {"discrete": "ppo_cartpole.yaml", "continuous": "ppo_pendulum.yaml"},
    "a2c": {"discrete": "a2c_cartpole.yaml"},
    "rpo": {"continuous": "rpo_pendulum.yaml"},
    "trpo": {"continuous": "trpo_pendulum.yaml"},
    "cem": {"discrete": "cem_cartpole.yaml"},
    "ddpg": {"continuous": "ddpg_pendulum.yaml"},
    "td3": {"continuous": "td3_pendulum.yaml"},
    "sac": {"continuous": "sac_pendulum.yaml"},
    "dqn": {"discrete": "dqn_cartpole.yaml"},
    "ddqn": {"discrete": "ddqn_cartpole.yaml"},
    "qlearning": {"discrete": "q_learning_frozen_lake.yaml"},
    "sarsa": {"discrete": "sarsa_taxi.yaml"},
    "ippo": {"multi": "ippo_simple_spread.yaml"},
    "mappo": {"multi": "mappo_simple_spread.yaml"},
    "amp": {"continuous": "amp_pendulum.yaml"},  # on envs that provide reference motions (REQUIRED_ENV_ATTRIBUTES)
}
# what an env must provide for an agent, beyond spaces: AMP imitates the reference motions the env hands out
REQUIRED_ENV_ATTRIBUTES = {"amp": ("amp_observation_space", "collect_reference_motions")}
# train flags that --resume refuses (the run's configuration holds them): flag -> argparse destination
RESUME_EXCLUSIVE = {
    "-f": "file",
    "--agent": "agent",
    "--env": "env",
    "--backend": "backend",
    "--config": "config",
    "--seed": "seed",
    "--num-envs": "num_envs",
    "--experiment-dir": "experiment_dir",
}


class CommandLineError(Exception):
    """What the user asked for cannot be done; ``main`` prints the message as one line and exits with 2."""


# -- configuration -----------------------------------------------------------------------------------------------


def _action_kind(env_id: str, kwargs: Mapping[str, Any], agent_key: str = "") -> str:
    """``"continuous"`` or ``"discrete"``: the kind of ``env_id``'s action space.

    :param agent_key: the agent to train on it: the env must have the attributes it needs
        (``REQUIRED_ENV_ATTRIBUTES``, looked up as :func:`skrl_like.core.envs.wrappers.env_attribute` does).
    :raises RunnerConfigError: the env is not registered.
    :raises CommandLineError: the env cannot be made or lacks an attribute the agent needs.
    """
    import gymnasium

    from skrl_like.core.envs.wrappers import env_attribute

    check_registered(env_id)
    try:
        env = gymnasium.make(env_id, **kwargs)
    except gymnasium.error.Error as error:
        raise CommandLineError(f"Unknown environment '{env_id}': {error}") from error
    space = env.action_space
    missing = [name for name in REQUIRED_ENV_ATTRIBUTES.get(agent_key, ()) if env_attribute(env, name) is None]
    env.close()
    if missing:
        raise CommandLineError(
            f"{AGENTS[agent_key][1]} needs {' and '.join(missing)} from its env, which {env_id} does not have: use "
            "an env that provides them (e.g. skrl_like.envs:AmpPendulum-v0, see docs/agents/amp.md)"
        )
    return "continuous" if isinstance(space, gymnasium.spaces.Box) else "discrete"


def config_for_agent(agent: str, env_id: str) -> dict:
    """``--agent NAME --env ID``: the agent's tuned configuration for the env's kind of action space, on ``env_id``."""
    key = component_key(agent)
    if key not in TUNED_FOR_AGENT:
        known = ", ".join(AGENTS[name][1] for name in TUNED_FOR_AGENT)
        raise CommandLineError(f"Unknown agent '{agent}': use one of {known}")
    files = TUNED_FOR_AGENT[key]
    if "multi" in files:
        cfg = read_yaml(os.path.join(TUNED_DIR, files["multi"]))
        if env_id != cfg["env"]["pettingzoo"]:
            raise CommandLineError(
                f"{AGENTS[key][1]} trains on PettingZoo envs: write a YAML file with env: {{pettingzoo: <module>}} "
                f"(see tuned/{files['multi']}) and run train -f"
            )
        return cfg
    kind = _action_kind(env_id, {}, key)
    if kind not in files:
        ((other, path),) = files.items()
        raise CommandLineError(
            f"{AGENTS[key][1]} has a tuned configuration for {other} actions only (tuned/{path}), but {env_id} has "
            f"{kind} actions: write a YAML file for it (see docs/runner.md) and run train -f"
        )
    cfg = read_yaml(os.path.join(TUNED_DIR, files[kind]))
    if cfg["env"].get("id") != env_id:
        cfg["env"] = {"id": env_id, "num_envs": cfg["env"].get("num_envs", 1)}
    return cfg


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandLineError(
            f"--config is not valid JSON ({error.msg} at character {error.pos}): {text!r}"
        ) from error
    if not isinstance(value, dict):
        raise CommandLineError(f"--config must be a JSON object like '{{\"learning_rate\": 1e-3}}', got {text!r}")
    return value


def _checkpoint_extension(backend: str) -> str:
    return ".pt" if backend == "torch" else ".pickle"


def _build(cfg: dict, backend: str, render: bool = False, num_envs: Optional[int] = None) -> Any:
    """The env and the ``Runner`` for ``cfg``; any mistake in the configuration becomes a :class:`CommandLineError`."""
    try:
        env = make_env(cfg.get("env"), backend, render=render, num_envs=num_envs)
        # evaluation during training plays a second env built from the same section, never the training one
        evaluation_env = None
        if (cfg.get("trainer") or {}).get("evaluation_interval"):
            evaluation_env = make_env(cfg.get("env"), backend, num_envs=num_envs)
        # the command closes the envs itself when it is done (not at exit, after its logging is restored)
        trainer = {"close_environment_at_exit": False}
        return build_runner({**cfg, "backend": backend}, env, trainer=trainer, evaluation_env=evaluation_env)
    except (RunnerConfigError, ValueError, TypeError, KeyError) as error:
        raise CommandLineError(str(error)) from error


# -- train ---------------------------------------------------------------------------------------------------------


def train_config(args: argparse.Namespace) -> dict:
    """The configuration ``train`` runs: the file (or the agent's tuned file), then the flags over it."""
    if args.file:
        if args.agent:
            raise CommandLineError("give either -f FILE or --agent, not both (the file names its agent.class)")
        cfg = read_yaml(resolve_config_path(args.file))
        if args.env:  # e.g. one of skrl's published files, which have no env section
            env_cfg = cfg.get("env") if isinstance(cfg.get("env"), Mapping) else {}
            same = env_cfg.get("id") == args.env
            cfg["env"] = {**(env_cfg if same else {}), "id": args.env, "num_envs": env_cfg.get("num_envs", 1)}
        if args.backend is None:
            args.backend = cfg.get("backend", "torch")
    else:
        if not (args.agent and args.env):
            raise CommandLineError(
                "train needs -f FILE, or --agent NAME and --env ID (e.g. --agent PPO --env CartPole-v1)"
            )
        cfg = config_for_agent(args.agent, args.env)
    backend = args.backend or "torch"
    if backend not in BACKENDS:
        raise CommandLineError(f"Unknown backend '{backend}': use torch or jax")
    cfg = apply_overrides(cfg, _json_object(args.config) if args.config else None)
    cfg["backend"] = backend
    if args.seed is not None:
        cfg["seed"] = args.seed
    if args.timesteps is not None:
        cfg.setdefault("trainer", {})["timesteps"] = args.timesteps
    if args.num_envs is not None:
        if "pettingzoo" in (cfg.get("env") or {}):
            raise CommandLineError("--num-envs applies to gymnasium envs only (a PettingZoo env is one env)")
        cfg.setdefault("env", {})["num_envs"] = args.num_envs
    experiment = cfg["agent"].setdefault("experiment", {}) if isinstance(cfg.get("agent"), dict) else {}
    if args.experiment_dir is not None or not experiment.get("directory"):
        experiment["directory"] = args.experiment_dir or "runs"
    return cfg


def resume_config(args: argparse.Namespace) -> tuple:
    """``train --resume RUN_DIR``: the run's own configuration (only ``--timesteps`` may change it) and the path of
    its last full-state checkpoint."""
    given = [flag for flag, value in RESUME_EXCLUSIVE.items() if getattr(args, value) is not None]
    if given:
        raise CommandLineError(
            f"--resume continues a run as it was configured; {', '.join(given)} cannot change it (only --timesteps)"
        )
    if not os.path.isdir(args.resume):
        raise CommandLineError(f"--resume needs a run directory written by skrl_like train, got '{args.resume}'")
    run_dir = os.path.abspath(args.resume)
    cfg = read_run_config(run_dir)
    try:
        checkpoint = find_checkpoint(run_dir, "last")
    except FileNotFoundError as error:
        raise CommandLineError(str(error)) from error
    # the run directory where it is now (it may have moved since)
    cfg["agent"]["experiment"].update(directory=os.path.dirname(run_dir), experiment_name=os.path.basename(run_dir))
    if args.timesteps is not None:
        cfg.setdefault("trainer", {})["timesteps"] = args.timesteps
    return cfg, checkpoint


def cmd_train(args: argparse.Namespace) -> int:
    cfg, checkpoint = resume_config(args) if args.resume else (train_config(args), None)
    set_torch_threads(cfg["backend"], args.threads)
    runner = _build(cfg, cfg["backend"])
    agent, trainer = runner.agent, runner.trainer
    if checkpoint is not None:
        try:
            trainer.restore(checkpoint)
        except (ValueError, FileNotFoundError) as error:
            raise CommandLineError(str(error)) from error
        if trainer.initial_timestep >= trainer.timesteps:
            _close_envs(trainer)
            raise CommandLineError(
                f"The run already reached timestep {trainer.initial_timestep} of {trainer.timesteps}: give a larger "
                "total with --timesteps"
            )
    run_dir = os.path.abspath(agent.experiment_dir)
    os.makedirs(os.path.join(run_dir, "checkpoints"), exist_ok=True)
    # the run directory by name, so that a configuration read back from it (eval, resume) writes there again; and the
    # intervals as numbers: "auto" follows the total, which a resume with --timesteps changes
    experiment = cfg["agent"]["experiment"]
    experiment.update(directory=os.path.dirname(run_dir), experiment_name=os.path.basename(run_dir))
    experiment.update(write_interval=agent.write_interval, checkpoint_interval=agent.checkpoint_interval)
    with open(os.path.join(run_dir, CONFIG_FILE), "w") as file:
        yaml.safe_dump(cfg, file, sort_keys=False)
    last_row: Dict[str, Any] = {}
    agent.add_result_listener(lambda row: _keep_return(last_row, row))
    try:
        runner.run("train")
    except KeyboardInterrupt:
        print(f"skrl_like train: {_stopped(run_dir, trainer.initial_timestep)}", file=sys.stderr)
        return INTERRUPTED
    finally:
        _close_envs(trainer)
    # the agent checkpoint of the last timestep (eval loads it), unless the interval wrote it already
    last = os.path.join(run_dir, "checkpoints", f"agent_{trainer.timesteps}{_checkpoint_extension(cfg['backend'])}")
    if not os.path.isfile(last):
        agent.write_checkpoint(trainer.timesteps, trainer.timesteps)
    print(_final_result(trainer.timesteps, last_row, trainer.last_evaluation))
    print(run_dir)
    return 0


def _close_envs(trainer: Any) -> None:
    """Close the trainer's env and its evaluation env (evaluation during training), if any."""
    trainer.env.close()
    if getattr(trainer, "evaluation_env", None) is not None:
        trainer.evaluation_env.close()


RETURN_TAG = "Reward / Total reward (mean)"
INTERRUPTED = 130  # the exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it


def _keep_return(last: Dict[str, Any], row: Mapping[str, Any]) -> None:
    """Result listener: the latest row in which an episode ended (its timestep and mean return)."""
    if row.get(RETURN_TAG) is not None:
        last.update(timestep=row["timestep"], value=row[RETURN_TAG])


def _final_result(timesteps: int, last_row: Mapping[str, Any], evaluation: Optional[Mapping[str, Any]]) -> str:
    """The line ``train`` prints at the end: the last mean training return, and the last evaluation's."""
    if last_row:
        line = f"trained {timesteps} timesteps: mean return {last_row['value']:.4g} (row of timestep {last_row['timestep']})"
    else:
        line = f"trained {timesteps} timesteps: no episode ended in a written row"
    if evaluation is not None:
        returns = evaluation["returns"]
        mean = sum(returns) / len(returns)
        line += (
            f"; evaluation at timestep {evaluation['timestep']}: mean return {mean:.4g} over {len(returns)} episodes"
        )
    return line


def _stopped(run_dir: str, timestep: int) -> str:
    """The one line a Ctrl-C of ``train`` ends with: where it stopped and how to go on."""
    try:
        written = find_checkpoint(run_dir, "last")
    except FileNotFoundError:
        written = None
    if written is None:
        return f"stopped at timestep {timestep}; no checkpoint was written (checkpoint_interval 0), so it cannot resume"
    return f"stopped at timestep {timestep}; resume with `skrl_like train --resume {run_dir}`"


# -- eval ----------------------------------------------------------------------------------------------------------


def find_agent_checkpoint(run_dir: str, extension: str) -> str:
    """The run's agent checkpoint of the latest timestep (``checkpoints/agent_<timestep><extension>``)."""
    pattern = re.compile(rf"agent_(\d+){re.escape(extension)}$")
    found = []
    for path in glob.glob(os.path.join(run_dir, "checkpoints", f"agent_*{extension}")):
        match = pattern.search(os.path.basename(path))
        if match:
            found.append((int(match.group(1)), path))
    if not found:
        raise CommandLineError(f"No agent checkpoint (checkpoints/agent_<timestep>{extension}) in the run '{run_dir}'")
    return max(found)[1]


def _run_agent_checkpoint(run_dir: str, extension: str) -> str:
    """What ``eval RUN_DIR`` plays: the agent file of the run's latest timestep, or its last run checkpoint where that
    is later (a run stopped by Ctrl-C before its next checkpoint_interval) or the run has no agent file."""
    try:
        run_checkpoint = find_checkpoint(run_dir, "last")
    except FileNotFoundError:
        return find_agent_checkpoint(run_dir, extension)
    try:
        agent_file = find_agent_checkpoint(run_dir, extension)
    except CommandLineError:
        return run_checkpoint
    agent_timestep = int(re.search(r"agent_(\d+)", os.path.basename(agent_file)).group(1))
    run_timestep = int(re.search(r"run_(\d+)", os.path.basename(run_checkpoint)).group(1))
    return run_checkpoint if run_timestep > agent_timestep else agent_file


def _best_checkpoint(run_dir: str, extension: str, cfg: Mapping[str, Any]) -> str:
    """What ``eval RUN_DIR --checkpoint best`` plays: with evaluation during training (``trainer.evaluation_interval``),
    ``checkpoints/run_best.ckpt`` (the checkpoint of the evaluation with the highest mean return); otherwise
    ``checkpoints/best_agent<extension>`` (the modules of the checkpoint interval with the highest mean training
    return, exploration included)."""
    evaluated = os.path.join(run_dir, "checkpoints", BEST_NAME)
    if (cfg.get("trainer") or {}).get("evaluation_interval") and os.path.isfile(evaluated):
        return evaluated
    best = os.path.join(run_dir, "checkpoints", f"best_agent{extension}")
    if not os.path.isfile(best):
        raise CommandLineError(
            f"The run '{run_dir}' has no best checkpoint (checkpoints/best_agent{extension}): one is written at the "
            "checkpoint intervals from the tracked episode returns, so the run needs agent.experiment's "
            "checkpoint_interval and write_interval > 0 (or 'auto'); play its last checkpoint with --checkpoint last"
        )
    return best


def run_of(path: str) -> tuple:
    """``(run directory, checkpoint or None)`` of a run directory or of a checkpoint file inside one."""
    if os.path.isdir(path):
        return path, None
    if os.path.isfile(path):
        parent = os.path.dirname(os.path.abspath(path))
        run_dir = os.path.dirname(parent) if os.path.basename(parent) == "checkpoints" else parent
        return run_dir, path
    raise CommandLineError(f"No run directory or checkpoint '{path}'")


def read_run_config(run_dir: str) -> dict:
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.isfile(path):
        raise CommandLineError(
            f"'{run_dir}' has no {CONFIG_FILE}: give a run directory written by skrl_like train (or a checkpoint in one)"
        )
    return read_yaml(path)


def cmd_eval(args: argparse.Namespace) -> int:
    import numpy as np

    if args.episodes < 1:
        raise CommandLineError(f"--episodes must be >= 1, got {args.episodes}")
    run_dir, checkpoint = run_of(args.path)
    if checkpoint is not None and args.checkpoint == "best":
        raise CommandLineError(
            f"--checkpoint best picks a checkpoint of a run directory, but '{args.path}' is a checkpoint file: give "
            "the run directory, or leave --checkpoint out"
        )
    cfg = copy.deepcopy(read_run_config(run_dir))
    backend = cfg.get("backend", "torch")
    extension = _checkpoint_extension(backend)
    if checkpoint is not None and checkpoint.endswith(".ckpt"):  # a full-state run checkpoint: its agent file
        name = os.path.basename(checkpoint)[: -len(".ckpt")]
        # run_best is read itself: with evaluation during training it is not the best_agent file's checkpoint
        beside = os.path.join(os.path.dirname(checkpoint), name.replace("run_", "agent_", 1) + extension)
        if name != "run_best" and os.path.isfile(beside):
            checkpoint = beside  # the same modules, written at the same timestep
    elif checkpoint is None and args.checkpoint == "best":
        checkpoint = _best_checkpoint(run_dir, extension, cfg)
    elif checkpoint is None:
        checkpoint = _run_agent_checkpoint(run_dir, extension)
    if args.seed is not None:
        cfg["seed"] = args.seed
    # nothing written: no TensorBoard events, no checkpoints
    cfg["agent"]["experiment"] = {**cfg["agent"].get("experiment", {}), "write_interval": 0, "checkpoint_interval": 0}
    trainer_cfg = cfg.setdefault("trainer", {})
    trainer_cfg.update(headless=not args.render, disable_progressbar=True, evaluation_interval=0)
    set_torch_threads(backend, args.threads)
    runner = _build(cfg, backend, render=args.render, num_envs=1)
    if hasattr(runner.agent, "possible_agents"):
        raise CommandLineError("eval plays single-agent runs; evaluate a multi-agent run with trainer.eval()")
    try:
        if checkpoint.endswith(".ckpt"):  # a run stopped before its first checkpoint_interval: no agent file
            load_agent_modules(runner.agent, checkpoint)
        else:
            runner.agent.load(checkpoint)
    except (ValueError, FileNotFoundError) as error:
        raise CommandLineError(str(error)) from error
    try:
        returns = runner.trainer.evaluate_episodes(num_episodes=args.episodes)
    finally:
        runner.trainer.env.close()
    print(
        f"{len(returns)} episodes, exploration off ({os.path.basename(checkpoint)}): "
        f"mean return {np.mean(returns):.3f}, std {np.std(returns):.3f}"
    )
    return 0


# -- plot ----------------------------------------------------------------------------------------------------------


def run_scalars(run_dir: str) -> Dict[str, List[List[float]]]:
    """``{tag: [[timestep, value], ...]}`` of every scalar of the run: its ``results.jsonl`` rows, or (a run without
    one, e.g. written by skrl) its TensorBoard events."""
    from skrl_like.utils.postprocessing import load_run, read_tensorboard_scalars

    if os.path.isfile(os.path.join(run_dir, RESULTS_FILE)):
        rows = load_run(run_dir).rows
        return {
            tag: [[row["timestep"], row[tag]] for row in rows if row.get(tag) is not None]
            for tag in {tag for row in rows for tag in row}
            if tag not in ("timestep", "env_steps", "wall_time", "env_steps_per_second")
        }
    scalars: Dict[str, List[List[float]]] = {}
    for path in sorted(glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))):
        for tag, rows in read_tensorboard_scalars(path).items():
            scalars.setdefault(tag, []).extend(rows)
    return scalars


def cmd_plot(args: argparse.Namespace) -> int:
    try:
        import matplotlib
    except ImportError as error:
        raise CommandLineError("plot needs matplotlib: pip install 'skrl_like[plot]'") from error
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skrl_like.utils.postprocessing import run_labels, smooth

    if args.smooth < 1:
        raise CommandLineError(f"--smooth must be a number of points >= 1 (1: no smoothing), got {args.smooth}")
    runs = []
    for run_dir, label in zip(args.run_dirs, run_labels(args.run_dirs)):
        if not os.path.isdir(run_dir):
            raise CommandLineError(f"No run directory '{run_dir}'")
        scalars = run_scalars(run_dir)
        if not scalars:
            raise CommandLineError(f"'{run_dir}' has no results.jsonl rows or TensorBoard scalars (write_interval 0?)")
        config_path = os.path.join(run_dir, CONFIG_FILE)
        num_envs = (read_yaml(config_path).get("env") or {}).get("num_envs", 1) if os.path.isfile(config_path) else 1
        runs.append((label, int(num_envs), scalars))
    tags = [RETURN_TAG] if any(RETURN_TAG in scalars for _, _, scalars in runs) else []
    tags += sorted({tag for _, _, scalars in runs for tag in scalars if tag.startswith("Loss / ")})
    if not tags:
        raise CommandLineError(f"The runs have neither '{RETURN_TAG}' nor 'Loss / ...' scalars to plot")
    figure, axes = plt.subplots(len(tags), 1, figsize=(8, 2.6 * len(tags)), sharex=True, squeeze=False)
    for axis, tag in zip(axes[:, 0], tags):
        for name, num_envs, scalars in runs:
            if tag in scalars:
                rows = sorted(scalars[tag])
                values = smooth([value for _, value in rows], args.smooth)
                axis.plot([step * num_envs for step, _ in rows], values, label=name)
        axis.set_title(tag, fontsize=9)
        axis.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    axes[-1, 0].set_xlabel("environment steps")
    figure.tight_layout()
    figure.savefig(args.output, dpi=100)
    plt.close(figure)
    print(os.path.abspath(args.output))
    return 0


# -- tune ----------------------------------------------------------------------------------------------------------


def cmd_tune(args: argparse.Namespace) -> int:
    try:
        from skrl_like import tune
    except ImportError as error:
        raise CommandLineError("tune needs Ray Tune: pip install 'skrl_like[tune]'") from error
    sweep = tune.read_sweep(args.file)
    if args.samples is not None:
        if args.samples < 1:
            raise CommandLineError(f"--samples must be >= 1, got {args.samples}")
        sweep["samples"] = args.samples
    if args.storage is not None:
        sweep["storage"] = args.storage
    results = tune.run_sweep(sweep, address=args.address)
    metric = sweep.get("metric", tune.METRIC)
    keys = list(sweep.get("param_space") or {})
    print("  ".join(["trial", *keys, metric, "iterations", "status"]))
    for result in results:
        values = [str(result.config.get(key)) for key in keys]
        status = "error" if result.error else "done"
        row = [
            str(result.metrics.get("trial_id")),
            *values,
            str(result.metrics.get(metric)),
            str(result.metrics.get("training_iteration")),
            status,
        ]
        print("  ".join(row))
    if results.num_errors == len(results):
        raise CommandLineError(f"every trial failed; the first error: {results.errors[0]}")
    best = results.get_best_result()
    print(f"best: {best.metrics.get('trial_id')} {metric}={best.metrics.get(metric)} ({best.path})")
    print(f"best checkpoint: {best.checkpoint.path if best.checkpoint else None}")
    return 0


# -- entry point ---------------------------------------------------------------------------------------------------


THREADS_HELP = "torch intra-op threads (default: OMP_NUM_THREADS if set, else 1; raise it for large models)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skrl_like", description="Train, evaluate and plot skrl_like runs (see docs/command-line.md)."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log the library's info messages")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{train,eval,plot,tune}")

    train = commands.add_parser("train", help="train (or resume) an agent; prints the run directory at the end")
    train.add_argument("-f", "--file", help="a YAML configuration, or a tuned one by name (tuned/ppo_cartpole.yaml)")
    train.add_argument("--agent", help="algorithm name (PPO, SAC, DQN...), with --env: its tuned configuration")
    train.add_argument("--env", help="gymnasium env id (CartPole-v1, Pendulum-v1...)")
    train.add_argument("--backend", choices=BACKENDS, help="torch (default) or jax")
    train.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its last full-state checkpoint")
    train.add_argument("--timesteps", type=int, help="trainer timesteps (loop steps; env steps = timesteps x num_envs)")
    train.add_argument("--config", help='JSON object of overrides: agent keys, or sections {"trainer": {...}}')
    train.add_argument("--seed", type=int, help="the run's seed")
    train.add_argument("--num-envs", type=int, help="parallel environments (a sync vector env)")
    train.add_argument("--experiment-dir", help="where run directories go (default: runs/)")
    train.add_argument("--threads", type=int, help=THREADS_HELP)
    train.set_defaults(handler=cmd_train)

    evaluate = commands.add_parser("eval", help="play episodes with exploration off; prints mean and std return")
    evaluate.add_argument("path", metavar="CHECKPOINT_OR_RUN_DIR")
    evaluate.add_argument("--episodes", type=int, default=20)
    evaluate.add_argument(
        "--checkpoint",
        choices=("last", "best"),
        default="last",
        help="of a run directory: its last agent checkpoint (default) or its best: the best evaluation's (with "
        "trainer.evaluation_interval), else best_agent, the best mean training return",
    )
    evaluate.add_argument("--seed", type=int)
    evaluate.add_argument("--render", action="store_true", help="draw the env (render_mode='human')")
    evaluate.add_argument("--threads", type=int, help=THREADS_HELP)
    evaluate.set_defaults(handler=cmd_eval)

    plot = commands.add_parser("plot", help="a PNG of return and losses against env steps, runs overlaid")
    plot.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    plot.add_argument("-o", "--output", default="plot.png", help="the PNG file (default: plot.png)")
    plot.add_argument(
        "--smooth", type=int, default=1, metavar="N", help="average each curve over its last N points (default: 1, off)"
    )
    plot.set_defaults(handler=cmd_plot)

    sweep = commands.add_parser("tune", help="a Ray Tune sweep (grid, random, ASHA, PBT) over config keys")
    sweep.add_argument("-f", "--file", required=True, help="the sweep file (see docs/scaling-out.md)")
    sweep.add_argument("--address", help="an existing Ray cluster (ray://HOST:10001 or auto); default: a local Ray")
    sweep.add_argument("--samples", type=int, help="instead of the file's samples")
    sweep.add_argument("--storage", help="where Tune writes the trials (default: the file's storage, or runs/tune)")
    sweep.set_defaults(handler=cmd_tune)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit code (2: the request was wrong, with one line on stderr)."""
    args = build_parser().parse_args(argv)  # wrong flags: argparse's usage line and exit code 2
    previous = logger.level
    if not args.verbose:
        logger.setLevel("WARNING")
    try:
        return args.handler(args)
    except (CommandLineError, RunnerConfigError) as error:
        message = " ".join(str(error).split())
        print(f"skrl_like {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"skrl_like {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    finally:
        logger.setLevel(previous)


if __name__ == "__main__":
    sys.exit(main())
