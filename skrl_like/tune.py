"""Ray Tune: a run of skrl_like as a ``ray.tune.Trainable``, for sweeps and population-based training.

The Trainable is built from a *run description*: the same YAML dict that the Runner and ``skrl_like train -f`` read
(``models``, ``memory``, ``agent``, ``trainer``, ``env``, ``seed``, ``backend``). Tune's ``config`` of a trial
overrides it by dotted config keys (``{"agent.learning_rate": 3e-4, "seed": 1}``). Each ``step()`` continues the
same trainer for ``timesteps_per_iteration`` more timesteps and returns the results-file row written at its end;
``save_checkpoint`` / ``load_checkpoint`` are the trainer's full-state checkpoints, so a paused, resumed or
PBT-exploited trial continues exactly where its checkpoint was taken, except for what a PBT exploit mutated: a learning
rate of the trial's config that differs from the one the checkpointed trial was configured with is set on the restored
optimizers (``Agent.set_learning_rate``).

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

from skrl_like.core.config import did_you_mean
from skrl_like.core.runner import SECTIONS, RunnerConfigError, apply_overrides, check_config, read_yaml
from skrl_like.run_description import build_runner, make_env, resolve_config_path, set_torch_threads

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
        cfg = override(self.description, config)
        backend = cfg.get("backend", "torch")
        if backend not in ("torch", "jax"):
            raise RunnerConfigError(f"Unknown backend '{backend}' in the run description: use torch or jax")
        check_config({key: value for key, value in cfg.items() if key != "backend"})
        agent_cfg = cfg["agent"]
        experiment = dict(agent_cfg.get("experiment") or {})
        # the run directory is the trial's; step() reports the rows (at least one per iteration, at its end);
        # Tune decides when to checkpoint
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
        set_torch_threads(backend)  # as skrl_like train: one thread unless OMP_NUM_THREADS says otherwise
        runner = build_runner(cfg, make_env(cfg.get("env"), backend))
        self.agent, self.trainer = runner.agent, runner.trainer
        # the learning rates this trial's config asks for: what load_checkpoint compares with the checkpoint's
        self._config_rates = {
            key: float(agent_cfg[key])
            for key in self.agent.learning_rate_keys()
            if isinstance(agent_cfg.get(key), (int, float)) and not isinstance(agent_cfg[key], bool)
        }
        self._rows = []
        self.agent.add_result_listener(self._rows.append)
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
            json.dump(
                {
                    "episode_return_mean": self._last_return,
                    "env_steps_total": self._env_steps_total,
                    "config_learning_rates": self._config_rates,
                },
                file,
            )
        return checkpoint_dir

    def load_checkpoint(self, checkpoint: Any) -> None:
        """Restore a checkpoint of :meth:`save_checkpoint` (of this trial, or of a PBT donor) into this trainer.

        The optimizers' state (and learning-rate schedulers') comes from the checkpoint, so the learning rate would
        be the donor's. A PBT exploit restores the donor's checkpoint into a trial whose config is the donor's with
        some keys mutated (``setup`` or :meth:`reset_config` saw it first): each learning rate of this config that
        differs from the one the donor was configured with is set on the restored agent. A rate that was not
        mutated, as in a plain pause and resume, keeps the checkpoint's (e.g. a ``KLAdaptiveLR``-adapted one).
        """
        self.trainer.restore(os.path.join(checkpoint, CHECKPOINT_FILE))
        with open(os.path.join(checkpoint, METRICS_FILE)) as file:
            metrics = json.load(file)
        self._last_return, self._env_steps_total = metrics["episode_return_mean"], metrics["env_steps_total"]
        saved_rates = metrics.get("config_learning_rates")
        if saved_rates is None:  # a checkpoint written before the rates were recorded: nothing to compare with
            return
        for key, rate in self._config_rates.items():
            if saved_rates.get(key) != rate:
                self.agent.set_learning_rate(rate, key)

    def reset_config(self, new_config: Dict[str, Any]) -> bool:
        """Rebuild the run for ``new_config`` in this actor (Tune's ``reuse_actors=True``; a PBT exploit then loads
        the donor's checkpoint with :meth:`load_checkpoint`)."""
        self.cleanup()
        self.setup(new_config)
        return True

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


# -- sweep files (``skrl_like tune -f sweep.yaml``) ---------------------------------------------------------------

SWEEP_KEYS = (
    "run",
    "backend",
    "timesteps_per_iteration",
    "iterations",
    "param_space",
    "scheduler",
    "metric",
    "mode",
    "samples",
    "resources",
    "storage",
    "name",
)
DISTRIBUTIONS = ("grid", "choice", "uniform", "loguniform")
SCHEDULERS = ("fifo", "asha", "pbt")


class SweepConfigError(RunnerConfigError):
    """A sweep file that cannot be run; the message is one line that names the entry and the fix."""


def _unknown_key(key: Any, known: Any, where: str) -> SweepConfigError:
    return SweepConfigError(f"Unknown {where} '{key}'.{did_you_mean(key, known)} Valid: {', '.join(known)}")


def read_sweep(path: str) -> Dict[str, Any]:
    """The sweep in the YAML file ``path``, checked, with its ``run`` read (a file path relative to the sweep file,
    a tuned configuration by name, or the run description inline).

    :raises SweepConfigError: naming the entry that is wrong (unknown keys with a close match).
    """
    sweep = read_yaml(path)
    for key in sweep:
        if key not in SWEEP_KEYS:
            raise _unknown_key(key, SWEEP_KEYS, f"key in the sweep file '{path}':")
    run = sweep.get("run")
    if isinstance(run, str):
        beside = os.path.join(os.path.dirname(os.path.abspath(path)), run)
        try:
            run = read_yaml(beside if os.path.isfile(beside) else resolve_config_path(run))
        except RunnerConfigError as error:
            raise SweepConfigError(f"run: {error}") from error
    if not isinstance(run, Mapping):
        raise SweepConfigError(
            "The sweep needs 'run': a run description (a YAML file as for skrl_like train -f, or the mapping inline)"
        )
    sweep["run"] = dict(run)
    search_space(sweep.get("param_space"))
    scheduler_spec(sweep.get("scheduler"))
    if sweep.get("mode", "max") not in ("max", "min"):
        raise SweepConfigError(f"mode must be max or min, got {sweep['mode']!r}")
    for key in ("samples", "iterations", "timesteps_per_iteration"):
        value = sweep.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise SweepConfigError(f"{key} must be an int >= 1, got {value!r}")
    resources = sweep.get("resources") or {}
    if not isinstance(resources, Mapping) or set(resources) - {"cpu", "gpu"}:
        raise SweepConfigError(f"resources must be a mapping with cpu and/or gpu (per trial), got {resources!r}")
    return sweep


def search_space(param_space: Any) -> Dict[str, Any]:
    """Tune's search space for ``param_space``: ``{config key: {grid: [...]} | {choice: [...]} | {uniform: [low,
    high]} | {loguniform: [low, high]} | a constant}``."""
    if param_space is None:
        return {}
    if not isinstance(param_space, Mapping):
        raise SweepConfigError(f"param_space must map config keys to distributions, got {type(param_space).__name__}")
    space = {}
    for key, spec in param_space.items():
        if not (isinstance(spec, Mapping) and len(spec) == 1):
            space[key] = spec  # a constant
            continue
        ((kind, values),) = spec.items()
        if kind not in DISTRIBUTIONS:
            raise _unknown_key(kind, DISTRIBUTIONS, f"distribution for param_space.{key}:")
        if not isinstance(values, list) or not values:
            raise SweepConfigError(f"param_space.{key}.{kind} needs a non-empty list, got {values!r}")
        if kind in ("uniform", "loguniform"):
            if len(values) != 2 or not all(isinstance(v, (int, float)) for v in values) or values[0] >= values[1]:
                raise SweepConfigError(f"param_space.{key}.{kind} needs [low, high] with low < high, got {values!r}")
            if kind == "loguniform" and values[0] <= 0:
                raise SweepConfigError(f"param_space.{key}.loguniform needs low > 0, got {values!r}")
        space[key] = {
            "grid": tune.grid_search,
            "choice": tune.choice,
            "uniform": lambda v: tune.uniform(*v),
            "loguniform": lambda v: tune.loguniform(*v),
        }[kind](values)
    return space


def scheduler_spec(spec: Any) -> Dict[str, Any]:
    """``scheduler: asha`` or ``{name: pbt, perturbation_interval: 2}``: ``{"name": ..., **options}``."""
    spec = {"name": spec} if isinstance(spec, str) or spec is None else dict(spec)
    name = str(spec.get("name") or "fifo").lower()
    if name not in SCHEDULERS:
        raise _unknown_key(name, SCHEDULERS, "scheduler")
    return {**spec, "name": name}


def make_scheduler(spec: Any, param_space: Any) -> Any:
    options = scheduler_spec(spec)
    name = options.pop("name")
    try:
        if name == "asha":
            return tune.schedulers.ASHAScheduler(**options)
        if name == "pbt":
            # every distribution but a grid is a mutation: PBT resamples it when a trial explores
            mutations = {key: value for key, value in search_space(param_space).items() if hasattr(value, "sample")}
            options.setdefault("perturbation_interval", 1)
            return tune.schedulers.PopulationBasedTraining(hyperparam_mutations=mutations, **options)
    except TypeError as error:
        raise SweepConfigError(f"scheduler {name}: {error}") from error
    return tune.schedulers.FIFOScheduler()


def run_sweep(sweep: Mapping[str, Any], address: Optional[str] = None) -> Any:
    """Run a sweep (as :func:`read_sweep` returns it) and return Tune's ``ResultGrid``.

    :param address: an existing Ray cluster (``ray://host:10001`` or ``auto``); default: a local Ray.
    """
    import ray

    if address is not None:
        ray.init(address=address)
    trainable = make_trainable(sweep["run"], sweep.get("backend"), sweep.get("timesteps_per_iteration"))
    resources = dict(sweep.get("resources") or {"cpu": 1})
    metric, mode = sweep.get("metric", METRIC), sweep.get("mode", "max")
    tuner = tune.Tuner(
        tune.with_resources(trainable, resources),
        param_space=search_space(sweep.get("param_space")),
        tune_config=tune.TuneConfig(
            metric=metric,
            mode=mode,
            num_samples=sweep.get("samples", 1),
            scheduler=make_scheduler(sweep.get("scheduler"), sweep.get("param_space")),
        ),
        run_config=tune.RunConfig(
            name=sweep.get("name"),
            storage_path=os.path.abspath(sweep.get("storage", "runs/tune")),
            stop={"training_iteration": sweep.get("iterations", 10)},
            checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=True, num_to_keep=2),
            sync_config=tune.SyncConfig(sync_artifacts=True),
            verbose=1,
        ),
    )
    return tuner.fit()


__all__ = [
    "METRIC",
    "SkrlTrainable",
    "SweepConfigError",
    "make_trainable",
    "override",
    "read_sweep",
    "run_sweep",
    "search_space",
]
