"""Checks every algorithm runs, written once: the rollout memory, and NaN/inf named at its first appearance.

A backend computes the finite flags (one host transfer for all of them); the decision of which quantity went
non-finite first and the message that says where it came from are neutral.
"""

import math
from typing import Any, Iterable, Optional, Sequence, Tuple

import gymnasium
import numpy as np

# where a non-finite quantity comes from, by a word of its name (the first match wins)
_SOURCES = (
    ("rewards", "the environment or cfg['rewards_shaper'] produced them"),
    ("states", "the environment produced them"),
    ("log_prob", "the policy, with the parameters the rollout was collected with, produced them"),
    ("values", "the value model, with the parameters the rollout was collected with, produced them"),
    ("returns", "they are computed from the rewards and values, which were finite: the values are too large"),
    ("advantages", "they are computed from the rewards and values, which were finite: the values are too large"),
    (
        "policy loss",
        "computed from finite inputs: a probability of 0, or a log-probability far above the rollout's (PPO/RPO's "
        "ratio exp(log_prob - old_log_prob) passes float32's range beyond a difference of 88), which a standard "
        "deviation collapsed toward the policy's min_log_std produces",
    ),
    ("loss", "computed from finite inputs: a probability of 0 or an overflow in the loss"),
    ("parameter", "the optimizer step produced them from finite losses: the step was too large"),
)
_ADVICE = (
    "lower the learning rate, keep grad_norm_clip > 0, or standardise inputs and values with "
    "state_preprocessor / value_preprocessor=RunningStandardScaler"
)
# advice of its own for a source that the general advice does not fix (by a word of the quantity's name)
_SPECIFIC_ADVICE = (
    ("policy loss", "raise the policy's min_log_std (clip_log_std=True) so its standard deviation cannot collapse; "),
)


def first_non_finite(named_flags: Iterable[Tuple[str, Any]]) -> Optional[str]:
    """The name of the first quantity whose finite flag is false (flags are bools or 0-d host arrays)."""
    for name, finite in named_flags:
        if not bool(finite):
            return name
    return None


def raise_non_finite(algorithm: str, timestep: int, name: str) -> None:
    """Raise ``FloatingPointError`` naming the quantity that went non-finite first and what produced it."""
    source = next((text for word, text in _SOURCES if word in name), "the networks produced them")
    advice = next((text for word, text in _SPECIFIC_ADVICE if word in name), "") + _ADVICE
    raise FloatingPointError(f"{algorithm} update at timestep {timestep}: {name} contain NaN/inf ({source}); {advice}")


def check_named_flags(algorithm: str, timestep: int, names: Sequence[str], flags: Sequence[Any]) -> None:
    """Raise for the first false flag of ``flags`` (aligned with ``names``); nothing when all are true."""
    name = first_non_finite(zip(names, flags))
    if name is not None:
        raise_non_finite(algorithm, timestep, name)


def check_rollout_memory(algorithm: str, memory: Any, rollouts: int, mini_batches: int) -> None:
    """An on-policy memory holds exactly one rollout, with at least one sample per mini-batch."""
    if memory.memory_size != rollouts:
        raise ValueError(
            f"{algorithm}: the memory holds {memory.memory_size} steps but cfg['rollouts'] is {rollouts}; "
            "the update uses the whole memory as one rollout: create it with memory_size=cfg['rollouts']"
        )
    samples = rollouts * memory.num_envs
    if mini_batches > samples:
        raise ValueError(
            f"{algorithm}: cfg['mini_batches'] ({mini_batches}) exceeds the samples per update "
            f"(rollouts x num_envs = {samples}); use at most {samples} mini-batches"
        )


def policy_output_size(distribution: Optional[str], action_space: Any) -> Optional[int]:
    """How many outputs a policy of ``distribution`` needs for ``action_space`` (``None``: not checkable)."""
    if distribution == "categorical" and isinstance(action_space, gymnasium.spaces.Discrete):
        return int(action_space.n)
    if distribution == "multicategorical" and isinstance(action_space, gymnasium.spaces.MultiDiscrete):
        return int(np.sum(action_space.nvec))
    if distribution in ("gaussian", "deterministic") and isinstance(action_space, gymnasium.spaces.Box):
        return int(np.prod(action_space.shape))
    return None


ROLLOUT_QUANTITIES = ("rewards", "log_prob", "values", "returns", "advantages")
LOSS_TERMS = ("policy", "value", "entropy")


def rollout_flag_names(quantities: Sequence[str] = ROLLOUT_QUANTITIES) -> Tuple[str, ...]:
    """The names of an on-policy rollout's finite flags, in the order they are checked."""
    return tuple(f"the rollout's {name}" for name in quantities)


def step_flag_names(steps: Iterable[Tuple[int, int]], parameters_note: str, terms: Sequence[str] = LOSS_TERMS) -> list:
    """The names of the finite flags of each optimizer step, given as ``(epoch, mini_batch)`` in order: one per
    loss term, then one for the parameters after the step (``parameters_note`` says which are non-finite)."""
    names = []
    for epoch, mini_batch in steps:
        where = f"mini-batch {mini_batch} (epoch {epoch})"
        names += [f"the {term} loss of {where}" for term in terms]
        names.append(f"the parameters after the optimizer step of {where} ({parameters_note})")
    return names


def non_finite_note(names: Sequence[str], shown: int = 3) -> str:
    """``"non-finite now: a, b, c, ..."``: the first ``shown`` of the non-finite parameters' descriptions."""
    return "non-finite now: " + ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")


#: what each noise parameter may be: (lowest value, whether the lowest is allowed, what it means)
_NOISE_PARAMETERS = {
    "std": (0.0, True, "a standard deviation (0 gives the constant mean; for no noise at all, set it to None)"),
    "sigma": (0.0, True, "the scale of the process's random increment"),
    "theta": (0.0, True, "the rate at which the process reverts to 0, per sample"),
    "mean": (-math.inf, True, "a mean"),
    "base_scale": (-math.inf, True, "the factor applied to the process's state"),
}


def check_noise_parameters(noise: str, **values: Any) -> None:
    """Raise ``ValueError`` for an exploration-noise parameter (``std``, ``sigma``, ``theta``, ``mean``,
    ``base_scale``) that is not a finite real number in its range, naming the noise class and the parameter
    (torch's ``Normal`` would reject a negative ``std`` without naming it; JAX would sample with it silently)."""
    for name, value in values.items():
        lowest, inclusive, meaning = _NOISE_PARAMETERS[name]
        number = _real_number(value)
        if number is None or not math.isfinite(number):
            raise ValueError(
                f"{noise}: {name} must be a finite number, got {value!r} ({type(value).__name__}); it is {meaning}"
            )
        if number < lowest or (number == lowest and not inclusive):
            bound = f"{'>=' if inclusive else '>'} {lowest:g}"
            raise ValueError(f"{noise}: {name} must be {bound}, got {value!r}; it is {meaning}")


def _real_number(value: Any) -> Optional[float]:
    """``value`` as a float if it is one real number (a Python, NumPy or 0-d tensor number; not a bool or a string)."""
    if isinstance(value, (str, bytes, bool, np.bool_)) or np.ndim(value) != 0:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def suggested_module(fitting: Sequence[str], modules: Sequence[str]) -> str:
    """The ``module=`` advice for an agent checkpoint: the modules whose state fits the model (``policy`` first), or
    else the models among ``modules`` (never an optimizer's or a preprocessor's entry)."""
    if fitting:
        first = "policy" if "policy" in fitting else fitting[0]
        others = [name for name in fitting if name != first]
        return f"model.load(path, module={first!r})" + (f" (also fitting: {others})" if others else "")
    models = [name for name in modules if not any(word in str(name) for word in _NOT_MODELS)]
    return (
        f"none of them fits this model's parameters (build the model with the architecture that saved it); "
        f"its models are {models}"
    )


#: words of the checkpoint entries that are not models
_NOT_MODELS = ("optimizer", "scheduler", "preprocessor")
