"""The YAML ``Runner``, written once for both backends: skrl-format configuration in, models, memories, agent and
trainer out.

Every name in the file (``class: PPO``, ``state_preprocessor: RunningStandardScaler``, ``noise: GaussianNoise``...)
is looked up in the tables below and imported from the runner's backend (``skrl_like.<backend>.<module>``); no string
is evaluated (skrl 1.4 ``eval``\\ s the preprocessor, scheduler and noise values), and the networks are built by the
model instantiators, which parse their definitions. A backend's ``Runner`` only names its backend and what differs
there (torch builds ``models: {separate: False}`` as one shared model, JAX has none).

Besides skrl's sections the file may hold ``env`` and ``backend``: the command line (``skrl_like train -f``) reads
them, the ``Runner`` (which is given a wrapped env) ignores them.
"""

import copy
import importlib
import math
import re
from collections.abc import Mapping
from typing import Any, Dict, Optional, Tuple

import yaml

from skrl_like import logger
from skrl_like.core.agents.recurrent import recurrent_model_roles
from skrl_like.core.config import did_you_mean
from skrl_like.core.seeding import set_seed


class RunnerConfigError(ValueError):
    """A Runner configuration that cannot be built; the message is one line that names the entry and the fix."""


def component_key(name: str) -> str:
    """The lookup key of a component name: case, ``-`` and ``_`` do not matter (``Q-learning`` -> ``qlearning``)."""
    return str(name).lower().replace("-", "").replace("_", "")


# name -> (module under skrl_like.<backend>, attribute); the default config is "<attribute>_DEFAULT_CONFIG"
AGENTS: Dict[str, Tuple[str, str]] = {
    "a2c": ("agents.a2c", "A2C"),
    "amp": ("agents.amp", "AMP"),
    "cem": ("agents.cem", "CEM"),
    "ddpg": ("agents.ddpg", "DDPG"),
    "ddqn": ("agents.dqn", "DDQN"),
    "dqn": ("agents.dqn", "DQN"),
    "ppo": ("agents.ppo", "PPO"),
    "rpo": ("agents.rpo", "RPO"),
    "sac": ("agents.sac", "SAC"),
    "td3": ("agents.td3", "TD3"),
    "trpo": ("agents.trpo", "TRPO"),
    "qlearning": ("agents.q_learning", "Q_LEARNING"),
    "sarsa": ("agents.sarsa", "SARSA"),
    "ippo": ("multi_agents.ippo", "IPPO"),
    "mappo": ("multi_agents.mappo", "MAPPO"),
}
MULTI_AGENT = {"ippo", "mappo"}
# the agents with a recurrent form (skrl's ``_RNN`` agents, with the feedforward agent's config): a model with a
# GRU, LSTM or RNN layer makes the Runner build it
RECURRENT_AGENTS = {
    "ppo": "PPO_RNN",
    "a2c": "A2C_RNN",
    "rpo": "RPO_RNN",
    "trpo": "TRPO_RNN",
    "sac": "SAC_RNN",
    "td3": "TD3_RNN",
    "ddpg": "DDPG_RNN",
}
AGENTS.update({component_key(name): (AGENTS[key][0], name) for key, name in RECURRENT_AGENTS.items()})

# models.<role>.class -> the model instantiator that builds it
MODELS: Dict[str, Tuple[str, str]] = {
    "gaussianmixin": ("utils.model_instantiators", "gaussian_model"),
    "multivariategaussianmixin": ("utils.model_instantiators", "multivariate_gaussian_model"),
    "deterministicmixin": ("utils.model_instantiators", "deterministic_model"),
    "categoricalmixin": ("utils.model_instantiators", "categorical_model"),
    "multicategoricalmixin": ("utils.model_instantiators", "multicategorical_model"),
    "tabularmixin": ("utils.model_instantiators", "tabular_model"),
}

# the values of these agent keys name a class (skrl evaluates them as Python expressions)
RESOURCE_KEYS = (
    "learning_rate_scheduler",
    "state_preprocessor",
    "shared_state_preprocessor",
    "privileged_state_preprocessor",
    "value_preprocessor",
    "amp_state_preprocessor",
    "observation_preprocessor",  # skrl 2.x's spellings (read as skrl 1.4's by translate_skrl2_keys)
    "amp_observation_preprocessor",
    "exploration_noise",
    "noise",
    "smooth_regularization_noise",
)
RESOURCES: Dict[str, Tuple[str, str]] = {
    "runningstandardscaler": ("resources.preprocessors", "RunningStandardScaler"),
    "kladaptivelr": ("resources.schedulers", "KLAdaptiveLR"),
    "kladaptiverl": ("resources.schedulers", "KLAdaptiveLR"),  # skrl's old misspelling
    "exponentiallr": ("resources.schedulers", "ExponentialLR"),  # lr * gamma ** step in both backends
    "linearlr": ("resources.schedulers", "LinearLR"),  # a linear ramp of the rate's factor in both backends
    "gaussiannoise": ("resources.noises", "GaussianNoise"),
    "ornsteinuhlenbecknoise": ("resources.noises", "OrnsteinUhlenbeckNoise"),
}
MEMORIES: Dict[str, Tuple[str, str]] = {"randommemory": ("memories", "RandomMemory")}
TRAINERS: Dict[str, Tuple[str, str]] = {"sequentialtrainer": ("trainers", "SequentialTrainer")}

SECTIONS = ("seed", "models", "memory", "agent", "trainer", "motion_dataset", "reply_buffer", "env", "backend")


MODEL_CLASSES = {
    "gaussianmixin": "GaussianMixin",
    "multivariategaussianmixin": "MultivariateGaussianMixin",
    "deterministicmixin": "DeterministicMixin",
    "categoricalmixin": "CategoricalMixin",
    "multicategoricalmixin": "MultiCategoricalMixin",
    "tabularmixin": "TabularMixin",
}


def _display_names(table: Mapping[str, Tuple[str, str]]) -> Dict[str, str]:
    """How a name of ``table`` is written in a configuration (model entries name their mixin, not the function)."""
    return {key: MODEL_CLASSES[key] if table is MODELS else attribute for key, (_, attribute) in table.items()}


def _unknown(kind: str, name: Any, table: Mapping[str, Tuple[str, str]], where: str) -> RunnerConfigError:
    names = _display_names(table)
    hint = did_you_mean(component_key(name), table, shown=names)
    return RunnerConfigError(
        f"Unknown {kind} {name!r} in {where}.{hint} Known: {', '.join(sorted(set(names.values())))}"
    )


def read_yaml(path: str) -> dict:
    """The configuration dict in the YAML file ``path`` (``yaml.safe_load``: plain data only, no Python objects).

    :raises RunnerConfigError: the file is missing, is not valid YAML, or does not hold a mapping.
    """
    try:
        with open(path) as file:
            cfg = yaml.safe_load(file)
    except OSError as error:
        raise RunnerConfigError(f"Cannot read the configuration file '{path}': {error.strerror}") from error
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise RunnerConfigError(f"'{path}' is not valid YAML{where}: {problem}") from error
    if not isinstance(cfg, dict):
        raise RunnerConfigError(
            f"'{path}' holds a {type(cfg).__name__}, not a mapping with sections models, memory, agent, trainer"
        )
    return cfg


def check_config(cfg: Any) -> None:
    """Check a configuration's layout before anything is built: the sections, their types and every ``class`` name.

    (The agent's and trainer's own keys are checked by the agent and trainer, with close-match suggestions.)

    :raises RunnerConfigError: naming the entry (``models.policy.class``...) and what it must be.
    """
    if not isinstance(cfg, Mapping):
        raise RunnerConfigError(f"The Runner configuration must be a dict, got {type(cfg).__name__}")
    for key in cfg:
        if key not in SECTIONS:
            raise RunnerConfigError(
                f"Unknown section '{key}' in the Runner configuration.{did_you_mean(key, SECTIONS)} "
                f"Valid: {', '.join(SECTIONS)}"
            )
    for section in ("models", "agent"):
        if not isinstance(cfg.get(section), Mapping):
            raise RunnerConfigError(
                f"The Runner configuration needs a '{section}' section (a mapping); got "
                f"{type(cfg.get(section)).__name__ if section in cfg else 'none'}"
            )
    for section in ("memory", "trainer", "motion_dataset", "reply_buffer"):
        if cfg.get(section) is not None and not isinstance(cfg[section], Mapping):
            raise RunnerConfigError(f"The '{section}' section must be a mapping, got {type(cfg[section]).__name__}")
    agent_class = cfg["agent"].get("class")
    if agent_class is None:
        raise RunnerConfigError(f"agent.class is missing: name the algorithm, one of {', '.join(_names(AGENTS))}")
    if component_key(agent_class) not in AGENTS:
        raise _unknown("agent", agent_class, AGENTS, "agent.class")
    roles = {role: value for role, value in cfg["models"].items() if role != "separate"}
    if not roles:
        raise RunnerConfigError("The 'models' section defines no model: add one entry per role (policy, value...)")
    for role, model in roles.items():
        if not isinstance(model, Mapping) or "class" not in model:
            raise RunnerConfigError(
                f"models.{role} must be a mapping with a 'class' (one of {', '.join(_names(MODELS))}) and the "
                "instantiator's parameters (network, output...)"
            )
        if component_key(model["class"]) not in MODELS:
            raise _unknown("model class", model["class"], MODELS, f"models.{role}.class")
    for section, table in (("memory", MEMORIES), ("motion_dataset", MEMORIES), ("reply_buffer", MEMORIES)):
        value = cfg.get(section)
        if isinstance(value, Mapping) and "class" in value and component_key(value["class"]) not in table:
            raise _unknown("memory", value["class"], table, f"{section}.class")
    trainer = cfg.get("trainer") or {}
    if "class" in trainer and component_key(trainer["class"]) not in TRAINERS:
        raise _unknown("trainer", trainer["class"], TRAINERS, "trainer.class")
    _check_resources(cfg["agent"], "agent")
    for role, model in roles.items():
        _check_resources(model, f"models.{role}")


def _names(table: Mapping[str, Tuple[str, str]]) -> list:
    return sorted(set(_display_names(table).values()))


def _check_resources(section: Mapping, where: str) -> None:
    for key, value in section.items():
        if key in RESOURCE_KEYS and isinstance(value, str) and component_key(value) not in RESOURCES:
            raise _unknown("class", value, RESOURCES, f"{where}.{key}")
        if isinstance(value, Mapping):
            _check_resources(value, f"{where}.{key}")


# skrl 2.x's names of skrl 1.4 agent keys (Isaac Lab 3.0's configs use them): 2.x name -> 1.4 name
SKRL2_RENAMES = {
    "gae_lambda": "lambda",
    "observation_preprocessor": "state_preprocessor",
    "observation_preprocessor_kwargs": "state_preprocessor_kwargs",
    "amp_observation_preprocessor": "amp_state_preprocessor",
    "amp_observation_preprocessor_kwargs": "amp_state_preprocessor_kwargs",
    "task_reward_scale": "task_reward_weight",
}
# keys only skrl 2.x writes: a config with one of them is a 2.x config, where value_clip > 0 alone turns clipping on
SKRL2_KEYS = (*SKRL2_RENAMES, "style_reward_scale")


def is_skrl2_config(agent: Mapping[str, Any]) -> bool:
    """Whether an ``agent`` section is written with skrl 2.x's key names (one key only 2.x has): its models' ``STATES``
    input then means the environment's privileged states, as in skrl 2.x, not the observations."""
    return any(key in agent for key in SKRL2_KEYS)


_STATES_TOKEN = re.compile(r"\bSTATES\b")


def reads_privileged_states(role_cfg: Mapping[str, Any], where: str) -> bool:
    """Whether a model section of a skrl 2.x config reads the env's privileged states: a network input names
    ``STATES`` (skrl 2.x's states); ``OBSERVATIONS`` are the observations.

    :raises RunnerConfigError: the model reads both (it reads either here: a value model or critic on the states).
    """
    inputs = [
        str(container.get("input", "")) for container in role_cfg.get("network") or [] if isinstance(container, Mapping)
    ]
    states = any(_STATES_TOKEN.search(text) for text in inputs)
    if states and any("OBSERVATIONS" in text for text in inputs):
        raise RunnerConfigError(
            f"{where}.network reads both OBSERVATIONS and STATES (skrl 2.x's privileged states): a model reads either "
            "here (an asymmetric value model or critic reads the states alone): use STATES only (an Isaac Lab "
            "critic group usually holds the policy's observations too) or OBSERVATIONS only"
        )
    return states


def _same_value(first: Any, second: Any) -> bool:
    """Whether two spellings' values mean the same (``null`` and ``{}`` kwargs, a class name's case and ``_``)."""
    if first in (None, {}) and second in (None, {}):
        return True
    if isinstance(first, str) and isinstance(second, str):
        return component_key(first) == component_key(second)
    return first == second


def _conflict(key_2x: str, value_2x: Any, key_14: str, value_14: Any, meaning: str = "") -> RunnerConfigError:
    return RunnerConfigError(
        f"agent.{key_2x} ({value_2x!r}, skrl 2.x) and agent.{key_14} ({value_14!r}, skrl 1.4) "
        f"{meaning or 'are two spellings of one key'} with different values: keep one of them"
    )


def translate_skrl2_keys(agent: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict:
    """An ``agent`` section with skrl 2.x's key names (Isaac Lab 3.0's configs) read as skrl 1.4's, as skrl 2.1's
    Runner maps 1.4 names to its own, the other way round: ``gae_lambda`` -> ``lambda``,
    ``observation_preprocessor[_kwargs]`` -> ``state_preprocessor[_kwargs]`` (and AMP's), ``task_reward_scale`` ->
    ``task_reward_weight``, ``style_reward_scale`` -> ``style_reward_weight`` with ``discriminator_reward_scale: 1``,
    ``learning_rate`` (one or one per model) -> ``actor_``/``critic_``/``entropy_learning_rate`` or
    ``value_learning_rate`` where the agent has those, ``exploration_noise[_kwargs]`` -> ``exploration.noise[_kwargs]``.

    In a 2.x config (one with a 2.x-only key) without ``clip_predicted_values``, value clipping is on when
    ``value_clip > 0``, as in skrl 2.x. Beside ``observation_preprocessor``, 2.x's ``state_preprocessor`` is the
    preprocessor of the states: MAPPO's ``shared_state_preprocessor``, the ``privileged_state_preprocessor`` of the
    agents with an asymmetric value model or critics (PPO, A2C, RPO, TRPO, SAC, TD3, DDPG); the other agents have none
    for the privileged states, so it must be none or the observations' own.

    :param defaults: the algorithm's default config (which keys it has, and ``value_clip``'s default).
    :raises RunnerConfigError: both spellings of one key, with different values (naming both keys and the fix).
    """
    agent = dict(agent)
    is_skrl2 = any(key in agent for key in SKRL2_KEYS)
    if "observation_preprocessor" in agent or "observation_preprocessor_kwargs" in agent:
        for key in ("state_preprocessor", "state_preprocessor_kwargs"):
            if key not in agent:
                continue
            value = agent.pop(key)
            if "shared_state_preprocessor" in defaults:  # MAPPO: the shared value's states
                if f"shared_{key}" in agent and not _same_value(agent[f"shared_{key}"], value):
                    raise _conflict(
                        key, value, f"shared_{key}", agent[f"shared_{key}"], "name MAPPO's state preprocessor"
                    )
                agent[f"shared_{key}"] = value
            elif f"privileged_{key}" in defaults:  # the states an asymmetric value model or critic reads
                if f"privileged_{key}" in agent and not _same_value(agent[f"privileged_{key}"], value):
                    raise _conflict(
                        key, value, f"privileged_{key}", agent[f"privileged_{key}"], "name the privileged states' one"
                    )
                agent[f"privileged_{key}"] = value
            elif not (_same_value(value, None) or _same_value(value, agent.get(key.replace("state", "observation")))):
                raise RunnerConfigError(
                    f"agent.{key} ({value!r}) is skrl 2.x's preprocessor of privileged states, beside "
                    f"agent.{key.replace('state', 'observation')}; this agent has no model that reads the "
                    f"privileged states (only PPO, A2C, RPO, TRPO, SAC, TD3 and DDPG have one), so none to preprocess: "
                    f"remove agent.{key} or give it the observations' value"
                )
    for key_2x, key_14 in SKRL2_RENAMES.items():
        if key_2x in agent:
            value = agent.pop(key_2x)
            if key_14 in agent and not _same_value(agent[key_14], value):
                raise _conflict(key_2x, value, key_14, agent[key_14])
            agent[key_14] = value
    if "style_reward_scale" in agent:  # 1.4's style reward is weight * discriminator_reward_scale * the 2.x one's
        scale = agent.pop("style_reward_scale")
        given = [key for key in ("style_reward_weight", "discriminator_reward_scale") if key in agent]
        if given:
            product = agent.get("style_reward_weight", defaults.get("style_reward_weight", 1.0)) * agent.get(
                "discriminator_reward_scale", defaults.get("discriminator_reward_scale", 1.0)
            )
            if not math.isclose(product, scale):
                raise _conflict("style_reward_scale", scale, " and agent.".join(given), product)
        else:
            agent.update(style_reward_weight=scale, discriminator_reward_scale=1.0)
    if is_skrl2 and "clip_predicted_values" in defaults and "clip_predicted_values" not in agent:
        value_clip = agent.get("value_clip", defaults["value_clip"])
        if isinstance(value_clip, Mapping):  # IPPO and MAPPO: one per agent name
            agent["clip_predicted_values"] = {uid: clip > 0 for uid, clip in value_clip.items()}
        else:
            agent["clip_predicted_values"] = value_clip > 0
    _translate_learning_rates(agent, defaults)
    _translate_exploration(agent, defaults)
    return agent


# skrl 1.4's per-model learning rates, in the order of skrl 2.x's learning_rate tuple (policy, critic, entropy)
PER_MODEL_LEARNING_RATES = ("actor_learning_rate", "critic_learning_rate", "entropy_learning_rate")


def _translate_learning_rates(agent: dict, defaults: Mapping[str, Any]) -> None:
    """skrl 2.x's ``learning_rate`` (one number, or one per model) as 1.4's keys: ``actor_``/``critic_``/
    ``entropy_learning_rate`` (DDPG, TD3, SAC), ``value_learning_rate`` (TRPO); a tuple of equal numbers (or
    schedulers) for the agents with one optimizer (PPO...). 1.4's agents have one scheduler for all their models."""
    for key in ("learning_rate_scheduler", "learning_rate_scheduler_kwargs"):
        if key in agent:
            agent[key] = _one_for_all_models(agent[key], key, "have one for all their models: give one")
    if "learning_rate" not in agent:
        return
    value = agent["learning_rate"]
    if "learning_rate" in defaults:  # one optimizer for the agent's models
        fix = "train their models with one optimizer: give one number"
        agent["learning_rate"] = _one_for_all_models(value, "learning_rate", fix)
        return
    targets = [key for key in (*PER_MODEL_LEARNING_RATES, "value_learning_rate") if key in defaults]
    if not targets:  # the agent's own check names the key
        return
    values = list(value) if isinstance(value, (list, tuple)) else [value] * len(targets)
    if len(values) != len(targets):
        raise RunnerConfigError(
            f"agent.learning_rate has {len(values)} rates, but the agent has {len(targets)} models with one "
            f"({', '.join(targets)}): give one number or {len(targets)}"
        )
    del agent["learning_rate"]
    for key, rate in zip(targets, values):
        if key in agent and not _same_value(agent[key], rate):
            raise _conflict("learning_rate", value, key, agent[key])
        agent[key] = rate


def _one_for_all_models(value: Any, key: str, fix: str) -> Any:
    """``value``, or its one item where skrl 2.x gives one per model (a list of equal items), per agent name too."""
    if isinstance(value, Mapping) and not key.endswith("_kwargs"):  # IPPO and MAPPO: one per agent name
        return {uid: _one_for_all_models(item, f"{key}.{uid}", fix) for uid, item in value.items()}
    if not isinstance(value, (list, tuple)):
        return value
    if any(not _same_value(item, value[0]) for item in value):
        raise RunnerConfigError(
            f"agent.{key} gives each model its own ({list(value)}, skrl 2.x); skrl_like's agents {fix}"
        )
    return value[0]


def _translate_exploration(agent: dict, defaults: Mapping[str, Any]) -> None:
    """skrl 2.x's ``exploration_noise[_kwargs]`` (DDPG, TD3) as 1.4's ``exploration.noise[_kwargs]``, at a constant
    scale of 1 as in 2.x without an ``exploration_scheduler`` (a Python expression, which skrl_like does not run)."""
    if "exploration_scheduler" in agent:
        raise RunnerConfigError(
            "agent.exploration_scheduler (skrl 2.x) is Python code, which the Runner does not evaluate: use skrl "
            "1.4's agent.exploration keys (initial_scale, final_scale, timesteps; initial_epsilon, final_epsilon "
            "for DQN)"
        )
    if "exploration_noise" not in agent and "exploration_noise_kwargs" not in agent:
        return
    given = agent.get("exploration")
    exploration = dict(given) if isinstance(given, Mapping) else {**defaults.get("exploration", {}), "final_scale": 1.0}
    for key_2x, key_14 in (("exploration_noise", "noise"), ("exploration_noise_kwargs", "noise_kwargs")):
        if key_2x in agent:
            value = agent.pop(key_2x)
            if key_14 in exploration and given is not None and not _same_value(exploration[key_14], value):
                raise _conflict(key_2x, value, f"exploration.{key_14}", exploration[key_14])
            exploration[key_14] = value
    agent["exploration"] = exploration


class ScaledRewards:
    """``rewards_shaper_scale: s``: the rewards multiplied by ``s`` (a class, not a lambda, so that it pickles)."""

    def __init__(self, scale: float) -> None:
        self.scale = float(scale)

    def __call__(self, rewards: Any, *args: Any, **kwargs: Any) -> Any:
        return rewards * self.scale

    def __repr__(self) -> str:
        return f"ScaledRewards({self.scale})"


class RunnerCore:
    """Build the models, memories, agent and trainer that a skrl-format configuration describes (see a backend's
    ``Runner`` for the public signature).

    :param env: a wrapped environment (``wrap_env(...)``), single- or multi-agent.
    :param cfg: the configuration (e.g. from :meth:`load_cfg_from_yaml`); it is not modified.
    :param evaluation_env: a second wrapped environment, built like ``env``, for a trainer section that sets
        ``evaluation_interval`` (evaluation during training; skrl_like only, skrl's Runner has no such argument).
    :raises RunnerConfigError: the configuration's layout or one of its names is wrong (before anything is built).
    """

    backend = ""  # "torch" or "jax": where components are imported from
    shares_models = False  # the backend builds models: {separate: False} as one shared model (torch)

    def __init__(self, env: Any, cfg: Mapping[str, Any], evaluation_env: Any = None) -> None:
        check_config(cfg)
        self._env = env
        self._cfg = copy.deepcopy(dict(cfg))
        set_seed(self._cfg.get("seed"))
        # skrl's Runner: no rewards shaper unless rewards_shaper_scale (processed after this key) sets one
        self._cfg["agent"] = {"rewards_shaper": None, **self._cfg["agent"]}
        self._class_name = AGENTS[component_key(self._cfg["agent"]["class"])][1]
        self._component(AGENTS, self._cfg["agent"]["class"], "agent", "agent.class")  # available in this backend?
        # in a skrl 2.x config, a model's STATES input is the env's privileged states (1.4: the observations)
        self._states_are_privileged = is_skrl2_config(self._cfg["agent"])
        self._cfg["agent"] = translate_skrl2_keys(self._cfg["agent"], self._default_agent_config())
        self._models = self._generate_models(env, copy.deepcopy(self._cfg))
        self._agent = self._generate_agent(env, copy.deepcopy(self._cfg), self._models)
        self._trainer = self._generate_trainer(env, copy.deepcopy(self._cfg), self._agent, evaluation_env)

    # -- public API (skrl names) -------------------------------------------------------------------------------

    @property
    def agent(self) -> Any:
        return self._agent

    @property
    def trainer(self) -> Any:
        return self._trainer

    @staticmethod
    def load_cfg_from_yaml(path: str) -> dict:
        """The configuration in the YAML file ``path``, or ``{}`` (with the error logged) when it cannot be read, as
        skrl does (:func:`read_yaml` raises instead)."""
        try:
            return read_yaml(path)
        except RunnerConfigError as error:
            logger.error(str(error))
            return {}

    def run(self, mode: str = "train") -> None:
        """``"train"``: ``trainer.train()``; ``"eval"``: ``trainer.eval()``."""
        if mode == "train":
            self._trainer.train()
        elif mode == "eval":
            self._trainer.eval()
        else:
            raise ValueError(f"Unknown running mode {mode!r}: use 'train' or 'eval'")

    # -- lookups -------------------------------------------------------------------------------------------------

    def _component(self, table: Mapping[str, Tuple[str, str]], name: Any, kind: str, where: str) -> Any:
        """The backend's class (or function) that ``name`` stands for."""
        key = component_key(name)
        if key not in table:
            raise _unknown(kind, name, table, where)
        module, attribute = table[key]
        try:
            found = getattr(importlib.import_module(f"skrl_like.{self.backend}.{module}"), attribute, None)
        except ModuleNotFoundError as error:
            if not str(error.name).startswith("skrl_like"):  # a missing dependency, e.g. flax
                raise RunnerConfigError(f"The {self.backend} backend needs '{error.name}': install it") from error
            found = None
        if found is None:
            name = _display_names(table)[key]
            raise RunnerConfigError(f"{name} ({where}) is not available in the {self.backend} backend")
        return found

    def _process_cfg(self, cfg: Mapping[str, Any], where: str) -> dict:
        """Resolve class names (``state_preprocessor: RunningStandardScaler``...), turn ``*_kwargs: null`` into
        ``{}`` and ``rewards_shaper_scale`` into ``rewards_shaper``, through nested dicts."""
        processed = {}
        for key, value in cfg.items():
            if key in RESOURCE_KEYS and isinstance(value, str):
                processed[key] = self._component(RESOURCES, value, "class", f"{where}.{key}")
            elif key.endswith("_kwargs") and value is None:
                processed[key] = {}
            elif key == "rewards_shaper_scale":
                processed["rewards_shaper"] = ScaledRewards(value)
            elif isinstance(value, Mapping):
                processed[key] = self._process_cfg(value, f"{where}.{key}")
            else:
                processed[key] = value
        return processed

    # -- spaces ------------------------------------------------------------------------------------------------

    def _is_multi_agent(self) -> bool:
        return component_key(self._cfg["agent"]["class"]) in MULTI_AGENT

    def _agent_ids(self, env: Any) -> list:
        if self._is_multi_agent():
            if not hasattr(env, "possible_agents"):
                raise RunnerConfigError(
                    f"agent.class {self._class_name} is a multi-agent algorithm, but the env is single-agent: wrap a "
                    "PettingZoo parallel env, or use a single-agent algorithm"
                )
            return list(env.possible_agents)
        if hasattr(env, "possible_agents"):
            raise RunnerConfigError(
                f"agent.class {self._class_name} is a single-agent algorithm, but the env is multi-agent "
                f"({list(env.possible_agents)}): use IPPO or MAPPO"
            )
        return ["agent"]

    def _spaces(self, env: Any, uid: str) -> Tuple[Any, Any, Any]:
        """``(observation, action, state)`` spaces of agent ``uid``."""
        if self._is_multi_agent():
            return env.observation_space(uid), env.action_space(uid), env.state_space(uid)
        return env.observation_space, env.action_space, getattr(env, "state_space", None)

    # -- generation ----------------------------------------------------------------------------------------------

    def _shared_model(self, env: Any, uid: str, roles: Dict[str, dict]) -> Any:
        """Backend hook: one model for the two ``roles`` (``models: {separate: False}``)."""
        raise NotImplementedError

    def _generate_models(self, env: Any, cfg: dict) -> Dict[str, Dict[str, Any]]:
        models_cfg = dict(cfg["models"])
        separate = models_cfg.pop("separate", None)
        if separate is None:
            logger.warning("models.separate is not set: building one model per role (separate: True)")
            separate = True
        if not separate and not self.shares_models:
            logger.warning(f"models.separate: False is not available in the {self.backend} backend: one model per role")
            separate = True
        models: Dict[str, Dict[str, Any]] = {}
        for uid in self._agent_ids(env):
            observation_space, action_space, state_space = self._spaces(env, uid)
            roles = {role: self._process_cfg(role_cfg, f"models.{role}") for role, role_cfg in models_cfg.items()}
            if not separate:
                if len(roles) != 2:
                    raise RunnerConfigError(
                        f"models.separate: False shares one model between exactly two roles, got {len(roles)} "
                        f"({', '.join(roles)}): set separate: True"
                    )
                privileged = [
                    role
                    for role, role_cfg in roles.items()
                    if self._states_are_privileged and reads_privileged_states(role_cfg, f"models.{role}")
                ]
                if privileged:
                    raise RunnerConfigError(
                        f"models.{privileged[0]} reads STATES, which in a skrl 2.x config are the env's privileged "
                        "states, but models.separate: False shares one model between the policy (which reads the "
                        "observations) and the value model: set separate: True for an asymmetric actor-critic"
                    )
                model = self._shared_model(env, uid, roles)
                models[uid] = {role: model for role in roles}
            else:
                models[uid] = {}
                for role, role_cfg in roles.items():
                    instantiator = self._component(MODELS, role_cfg.pop("class"), "model class", f"models.{role}.class")
                    space = observation_space
                    if role == "value" and component_key(self._class_name) == "mappo":
                        space = state_space
                    elif role == "discriminator" and component_key(self._class_name) == "amp":
                        from skrl_like.core.envs.wrappers import env_attribute  # gymnasium: imported when needed

                        space = env_attribute(env, "amp_observation_space")
                        if space is None:
                            logger.warning("The env has no amp_observation_space: the discriminator uses observations")
                            space = observation_space
                    if instantiator.__name__ == "tabular_model":
                        role_cfg.setdefault("num_envs", env.num_envs)
                    if self._states_are_privileged and reads_privileged_states(role_cfg, f"models.{role}"):
                        role_cfg["state_space"] = self._privileged_state_space(instantiator, state_space, role)
                    try:
                        models[uid][role] = instantiator(
                            observation_space=space, action_space=action_space, device=env.device, **role_cfg
                        )
                    except (TypeError, ValueError) as error:
                        raise RunnerConfigError(f"models.{role}: {error}") from error
            for role, model in models[uid].items():
                model.init_state_dict(role)
        return models

    @staticmethod
    def _privileged_state_space(instantiator: Any, state_space: Any, role: str) -> Any:
        """The env's state space for a model of a skrl 2.x config that reads ``STATES``, checked."""
        if instantiator.__name__ != "deterministic_model":
            raise RunnerConfigError(
                f"models.{role} reads STATES, which in a skrl 2.x config are the env's privileged states; only value "
                "models and critics (DeterministicMixin) read them: give it OBSERVATIONS"
            )
        if state_space is None:
            raise RunnerConfigError(
                f"models.{role} reads STATES, which in a skrl 2.x config are the env's privileged states, but the env "
                "has no state space (an Isaac Lab env has one with a 'critic' observation group): give it OBSERVATIONS"
            )
        return state_space

    def _memory(self, env: Any, section: Mapping[str, Any], where: str, rollouts: Any) -> Any:
        section = dict(section)
        memory_class = self._component(MEMORIES, section.pop("class", "RandomMemory"), "memory", f"{where}.class")
        size = section.get("memory_size", -1)
        if isinstance(size, (int, float)) and not isinstance(size, bool) and size < 0:  # skrl: the agent's rollouts
            if rollouts is None:
                raise RunnerConfigError(
                    f"{where}.memory_size is {size}, which means the agent's rollouts, but {self._class_name} has no "
                    f"rollouts: give the replay memory's size, e.g. {where}.memory_size: 100000"
                )
            section["memory_size"] = rollouts
        try:  # the memory checks its arguments (memory_size "200" or 200.7 is refused there)
            return memory_class(num_envs=env.num_envs, device=env.device, **section)
        except ValueError as error:
            raise RunnerConfigError(f"{where}: {error}") from error

    def _default_agent_config(self) -> Mapping[str, Any]:
        """The backend's ``<ALGORITHM>_DEFAULT_CONFIG`` of ``agent.class``."""
        module, attribute = AGENTS[component_key(self._cfg["agent"]["class"])]
        config = f"{attribute.removesuffix('_RNN')}_DEFAULT_CONFIG"  # an _RNN agent takes its feedforward config
        return getattr(importlib.import_module(f"skrl_like.{self.backend}.{module}"), config)

    def _generate_agent(self, env: Any, cfg: dict, models: Dict[str, Dict[str, Any]]) -> Any:
        key = component_key(cfg["agent"]["class"])
        agent_class = self._component(AGENTS, cfg["agent"]["class"], "agent", "agent.class")
        recurrent = recurrent_model_roles(self._class_name, models)
        if recurrent and key in RECURRENT_AGENTS:
            logger.info(f"models {recurrent} are recurrent: agent.class {self._class_name} runs as its recurrent form")
            agent_class = self._component(AGENTS, RECURRENT_AGENTS[key], "agent", "agent.class")
        defaults = self._default_agent_config()
        section = self._process_cfg({k: v for k, v in cfg["agent"].items() if k != "class"}, "agent")
        agent_cfg = copy.deepcopy(dict(defaults))
        agent_cfg.update(section)  # nested dicts replace the default ones, as in skrl
        device = env.device
        uids = self._agent_ids(env)

        if "memory" not in cfg:
            if agent_cfg.get("rollouts") is None:
                raise RunnerConfigError(
                    f"the configuration has no 'memory' section, and {self._class_name} has no rollouts to size one "
                    "by: add one with the replay memory's size, e.g. memory: {class: RandomMemory, memory_size: "
                    "100000} (or memory: null for an agent that learns without one, such as Q_LEARNING or SARSA)"
                )
            logger.warning("No 'memory' section: using RandomMemory with memory_size -1 (the agent's rollouts)")
            cfg["memory"] = {"class": "RandomMemory", "memory_size": -1}
        memories = {
            uid: None
            if cfg["memory"] is None
            else self._memory(env, cfg["memory"], "memory", agent_cfg.get("rollouts"))
            for uid in uids
        }

        if key in MULTI_AGENT:
            observation_spaces = {uid: env.observation_space(uid) for uid in uids}
            state_spaces = {uid: env.state_space(uid) for uid in uids}
            agent_cfg.setdefault("state_preprocessor_kwargs", {})
            agent_cfg["state_preprocessor_kwargs"].update(
                {uid: {"size": observation_spaces[uid], "device": device} for uid in uids}
            )
            if key == "mappo":
                agent_cfg.setdefault("shared_state_preprocessor_kwargs", {})
                agent_cfg["shared_state_preprocessor_kwargs"].update(
                    {uid: {"size": state_spaces[uid], "device": device} for uid in uids}
                )
            if "value_preprocessor_kwargs" in agent_cfg:
                agent_cfg["value_preprocessor_kwargs"].update(size=1, device=device)
            kwargs = dict(
                possible_agents=uids,
                models=models,
                memories=memories,
                observation_spaces=observation_spaces,
                action_spaces={uid: env.action_space(uid) for uid in uids},
            )
            if key == "mappo":
                kwargs["shared_observation_spaces"] = state_spaces
        else:
            observation_space, action_space, state_space = self._spaces(env, "agent")
            if "state_preprocessor_kwargs" in agent_cfg:
                agent_cfg["state_preprocessor_kwargs"].update(size=observation_space, device=device)
            if agent_cfg.get("privileged_state_preprocessor") and state_space is not None:
                agent_cfg.setdefault("privileged_state_preprocessor_kwargs", {})
                agent_cfg["privileged_state_preprocessor_kwargs"].update(size=state_space, device=device)
            if "value_preprocessor_kwargs" in agent_cfg:
                agent_cfg["value_preprocessor_kwargs"].update(size=1, device=device)
            # noises are built here from their *_kwargs, which the agent does not know (skrl's agents ignore them)
            exploration = agent_cfg.get("exploration")
            if isinstance(exploration, dict):
                noise_kwargs = exploration.pop("noise_kwargs", None) or {}
                if exploration.get("noise") is not None:
                    exploration["noise"] = exploration["noise"](**noise_kwargs, device=device)
            smoothing_kwargs = agent_cfg.pop("smooth_regularization_noise_kwargs", None) or {}
            if agent_cfg.get("smooth_regularization_noise") is not None:
                agent_cfg["smooth_regularization_noise"] = agent_cfg["smooth_regularization_noise"](
                    **smoothing_kwargs, device=device
                )
            kwargs = dict(
                models=models["agent"],
                memory=memories["agent"],
                observation_space=observation_space,
                action_space=action_space,
            )
            if key == "amp":
                kwargs.update(self._amp_arguments(env, cfg, agent_cfg))
        return agent_class(cfg=agent_cfg, device=device, **kwargs)

    def _amp_arguments(self, env: Any, cfg: dict, agent_cfg: dict) -> dict:
        """AMP's extras: the AMP observation space, the motion dataset and reply buffer, the reference motions."""
        from skrl_like.core.envs.wrappers import env_attribute  # gymnasium: imported when needed

        amp_space = env_attribute(env, "amp_observation_space")
        if "amp_state_preprocessor_kwargs" in agent_cfg:
            agent_cfg["amp_state_preprocessor_kwargs"].update(size=amp_space, device=env.device)
        kwargs: Dict[str, Any] = {"amp_observation_space": amp_space}
        for name in ("motion_dataset", "reply_buffer"):
            if cfg.get(name) is not None:
                section = dict(cfg[name])
                if "class" not in section:
                    raise RunnerConfigError(f"The '{name}' section needs a 'class' (RandomMemory)")
                memory_class = self._component(MEMORIES, section.pop("class"), "memory", f"{name}.class")
                kwargs[name] = memory_class(device=env.device, **section)
        collect_reference_motions = env_attribute(env, "collect_reference_motions")
        if collect_reference_motions is not None:
            kwargs["collect_reference_motions"] = collect_reference_motions
        return kwargs

    def _generate_trainer(self, env: Any, cfg: dict, agent: Any, evaluation_env: Any = None) -> Any:
        trainer_cfg = dict(cfg.get("trainer") or {})
        name = trainer_cfg.pop("class", None)
        if name is None:
            logger.warning("trainer.class is not set: using SequentialTrainer")
            name = "SequentialTrainer"
        trainer_class = self._component(TRAINERS, name, "trainer", "trainer.class")
        for key in ("env", "backend"):  # the command line's sections
            trainer_cfg.pop(key, None)
        # a file that does not ask for rendering (no trainer section, or one without headless) is not rendered
        trainer_cfg.setdefault("headless", True)
        if evaluation_env is None:  # skrl's trainer signature, for a trainer that takes no evaluation env
            if trainer_cfg.get("evaluation_interval"):
                raise RunnerConfigError(
                    f"trainer.evaluation_interval = {trainer_cfg['evaluation_interval']} evaluates during training on a "
                    "second env: pass Runner(env, cfg, evaluation_env=wrap_env(<an env built like env>)), or set "
                    "trainer.evaluation_interval: 0 (skrl_like train builds that env from the file's env section)"
                )
            return trainer_class(env=env, agents=agent, cfg=trainer_cfg)
        return trainer_class(env=env, agents=agent, cfg=trainer_cfg, evaluation_env=evaluation_env)


def apply_overrides(cfg: Dict[str, Any], overrides: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """``cfg`` with ``overrides`` merged in: keys naming a section (``agent``, ``trainer``, ``env``...) merge into it
    (nested mappings recursively), any other key goes into the ``agent`` section (``{"learning_rate": 1e-3}``).
    An agent key in one spelling replaces the file's other spelling (``gae_lambda`` over a file's ``lambda``)."""
    merged = copy.deepcopy(cfg)
    for key, value in (overrides or {}).items():
        if key in SECTIONS:
            if key == "agent" and isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
                merged[key] = _without_other_spellings(merged[key], value)
            if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
                merged[key] = _deep_merge(merged[key], value)
            else:
                merged[key] = copy.deepcopy(value)
        else:
            merged["agent"] = _without_other_spellings(merged.get("agent") or {}, {key: value})
            merged["agent"] = _deep_merge(merged["agent"], {key: value})
    return merged


def _without_other_spellings(agent: Mapping, overrides: Mapping) -> dict:
    """``agent`` less the keys that ``overrides`` sets in their other spelling (skrl 1.4's or 2.x's)."""
    other = {**SKRL2_RENAMES, **{key_14: key_2x for key_2x, key_14 in SKRL2_RENAMES.items()}}
    dropped = {other[key] for key in overrides if key in other}
    return {key: value for key, value in agent.items() if key not in dropped}


def _deep_merge(base: Mapping, update: Mapping) -> dict:
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
