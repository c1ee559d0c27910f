"""Ray Tune: a run of skrl_like as a ``ray.tune.Trainable``, for sweeps and population-based training.

The Trainable is built from a *run description*: the same YAML dict that the Runner and ``skrl_like train -f`` read
(``models``, ``memory``, ``agent``, ``trainer``, ``env``, ``seed``, ``backend``). Tune's ``config`` of a trial
overrides it by dotted config keys (``{"agent.learning_rate": 3e-4, "seed": 1}``). Each ``step()`` continues the
same trainer for ``timesteps_per_iteration`` more timesteps and returns the results-file row written at its end;
``save_checkpoint`` / ``load_checkpoint`` are the trainer's full-state checkpoints, so a paused, resumed or
PBT-exploited trial continues exactly where its checkpoint was taken.

This is the only module of the package that imports ``ray`` (extra ``tune``: ``pip install skrl_like[tune]``).
"""

import copy
import json
import os
import time
from collections.abc import Mapping
from typing import Any, Dict, Optional

try:
    from ray import tune
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError("skrl_like.tune needs Ray Tune: pip install 'skrl_like[tune]' (ray[tune])") from error

from skrl_like.core.runner import SECTIONS, RunnerConfigError, apply_overrides, check_config

RETURN_TAG = "Reward / Total reward (mean)"
METRIC = "episode_return_mean"  # the default metric: the mean return of the episodes that ended in the iteration
CHECKPOINT_FILE = "run.ckpt"
METRICS_FILE = "tune_metrics.json"  # beside the run checkpoint: what step() carries from one iteration to the next


def override(description: Mapping[str, Any], config: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """``description`` with a trial's ``config`` applied: a dotted key sets one entry (``"agent.learning_rate"``,
    ``"agent.experiment.write_interval"``, ``"env.num_envs"``), a key without a dot is a section (``"seed"``) or,
    as in :func:`~skrl_like.core.runner.apply_overrides`, an agent key (``"learning_rate"``).

    :raises RunnerConfigError: a dotted key whose first part is not a section, or that goes through a value that is
        not a mapping.
    """
    overrides: Dict[str, Any] = {}
    for key, value in (config or {}).items():
        parts = str(key).split(".")
        if len(parts) > 1 and parts[0] not in SECTIONS:
            raise RunnerConfigError(
                f"Tune config key '{key}': '{parts[0]}' is not a section of the run description "
                f"({', '.join(SECTIONS)}); write e.g. 'agent.{parts[-1]}'"
            )
        node, given = overrides, description
        for depth, part in enumerate(parts[:-1]):
            given = given.get(part) if isinstance(given, Mapping) else None
            node = node.setdefault(part, {})
            if not isinstance(node, dict) or (given is not None and not isinstance(given, Mapping)):
                raise RunnerConfigError(
                    f"Tune config key '{key}': '{'.'.join(parts[: depth + 1])}' is a value, not a section"
                )
        node[parts[-1]] = value
    return apply_overrides(dict(description), overrides)


class SkrlTrainable(tune.Trainable):
    """A skrl_like run as a Tune Trainable; make one for a run description with :func:`make_trainable`.

    Each iteration reports the last ``results.jsonl`` row of the iteration (every tracked tag, e.g.
    ``"Loss / Policy loss"``) and, under plain names: ``episode_return_mean`` (the row's
    ``"Reward / Total reward (mean)"``; the previous iteration's value when no episode ended in this one),
    ``env_steps_per_second`` (of the whole iteration), ``env_steps_total`` and ``timesteps_total`` (trainer
    timesteps).
    """

    description: Dict[str, Any] = {}
    timesteps_per_iteration: int = 0

    def setup(self, config: Dict[str, Any]) -> None:
        import importlib

        from skrl_like.cli import make_env  # the env section, read as ``skrl_like train -f`` reads it

        cfg = override(self.description, config)
        backend = cfg.get("backend", "torch")
        if backend not in ("torch", "jax"):
            raise RunnerConfigError(f"Unknown backend '{backend}' in the run description: use torch or jax")
        check_config({key: value for key, value in cfg.items() if key != "backend"})
        agent_cfg = cfg["agent"]
        experiment = dict(agent_cfg.get("experiment") or {})
        # the run directory is the trial's; one results row per iteration (at its end); Tune owns checkpointing
        experiment.update(directory=self.logdir, experiment_name="run")
        if experiment.get("write_interval", "auto") in ("auto", 0):
            experiment["write_interval"] = self.timesteps_per_iteration
        if experiment.get("checkpoint_interval", "auto") == "auto":
            experiment["checkpoint_interval"] = 0
        agent_cfg["experiment"] = experiment
        trainer_cfg = dict(cfg.get("trainer") or {})
        trainer_cfg.update(
            timesteps=self.timesteps_per_iteration,
            headless=True,
            disable_progressbar=True,
            close_environment_at_exit=False,
        )
        cfg["trainer"] = trainer_cfg
        self.run_cfg = cfg
        env = make_env(cfg.get("env"), backend)
        runner_cfg = {key: value for key, value in cfg.items() if key not in ("env", "backend")}
        runner = importlib.import_module(f"skrl_like.{backend}.utils.runner").Runner(env, runner_cfg)
        self.agent, self.trainer = runner.agent, runner.trainer
        self._rows = []
        self.agent.result_listeners.append(self._rows.append)
        self._last_return: Optional[float] = None
        self._env_steps_total = 0

    def step(self) -> Dict[str, Any]:
        """Train ``timesteps_per_iteration`` more timesteps of the same run; the iteration's results."""
        start = self.trainer.initial_timestep
        self.trainer.timesteps = start + self.timesteps_per_iteration
        self._rows.clear()
        began = time.perf_counter()
        self.trainer.train()
        seconds = time.perf_counter() - began
        env_steps = (self.trainer.initial_timestep - start) * self.trainer.env.num_envs
        self._env_steps_total += env_steps
        row = dict(self._rows[-1]) if self._rows else {}
        for tagged in self._rows:
            if tagged.get(RETURN_TAG) is not None:
                self._last_return = tagged[RETURN_TAG]
        row.update(
            episode_return_mean=self._last_return,
            env_steps_per_second=env_steps / seconds if seconds > 0 else None,
            env_steps_total=self._env_steps_total,
            timesteps_total=self.trainer.initial_timestep,
        )
        return row

    def save_checkpoint(self, checkpoint_dir: str) -> str:
        """The trainer's full-state checkpoint (``run.ckpt``) and the carried metrics, in ``checkpoint_dir``."""
        self.trainer.save(os.path.join(checkpoint_dir, CHECKPOINT_FILE))
        with open(os.path.join(checkpoint_dir, METRICS_FILE), "w") as file:
            json.dump({"episode_return_mean": self._last_return, "env_steps_total": self._env_steps_total}, file)
        return checkpoint_dir

    def load_checkpoint(self, checkpoint: Any) -> None:
        """Restore a checkpoint of :meth:`save_checkpoint` (of this trial, or of a PBT donor) into this trainer."""
        self.trainer.restore(os.path.join(checkpoint, CHECKPOINT_FILE))
        with open(os.path.join(checkpoint, METRICS_FILE)) as file:
            metrics = json.load(file)
        self._last_return, self._env_steps_total = metrics["episode_return_mean"], metrics["env_steps_total"]

    def cleanup(self) -> None:
        self.trainer.env.close()


def make_trainable(
    description: Mapping[str, Any], backend: Optional[str] = None, timesteps_per_iteration: Optional[int] = None
) -> type:
    """A :class:`SkrlTrainable` subclass for one run description, to give to ``tune.Tuner``.

    :param description: the run: a dict as in a ``skrl_like train -f`` YAML file (``env``, ``models``, ``memory``,
        ``agent``, ``trainer``, ``seed``, ``backend``), e.g. ``read_yaml("tuned/ppo_cartpole.yaml")``.
    :param backend: ``"torch"`` or ``"jax"``, instead of the description's ``backend`` (default torch).
    :param timesteps_per_iteration: trainer timesteps per ``step()`` (default: a tenth of ``trainer.timesteps``),
        so that a trial stopped at ``training_iteration`` 10 trains the description's budget.
    :raises RunnerConfigError: the description's layout is wrong (checked here, before any trial starts).
    """
    description = copy.deepcopy(dict(description))
    if backend is not None:
        description["backend"] = backend
    check_config({key: value for key, value in description.items() if key != "backend"})
    if timesteps_per_iteration is None:
        timesteps_per_iteration = int((description.get("trainer") or {}).get("timesteps", 0)) // 10
    if int(timesteps_per_iteration) < 1:
        raise RunnerConfigError(
            f"timesteps_per_iteration must be >= 1, got {timesteps_per_iteration}: give it, or trainer.timesteps >= 10"
        )
    name = f"SkrlTrainable_{description['agent']['class']}"
    return type(
        name, (SkrlTrainable,), {"description": description, "timesteps_per_iteration": int(timesteps_per_iteration)}
    )


__all__ = ["METRIC", "SkrlTrainable", "make_trainable", "override"]
