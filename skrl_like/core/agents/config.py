"""Agent configs checked at construction: every key's type and range, with the fix named in the error.

A rule describes what one config key accepts; ``check_config`` applies a table of rules to a merged config.
The tables of keys that recur across algorithms live here, so that each algorithm lists only its own keys.
"""

import math
import numbers
from typing import Any, Callable, Mapping, NamedTuple, Optional


class Rule(NamedTuple):
    """What a config key accepts: ``accepts(value)`` is true for valid values; ``expected`` describes them."""

    accepts: Callable[[Any], bool]
    expected: str


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def count(minimum: int = 0) -> Rule:
    """An int (numpy ints included) ``>= minimum``."""
    return Rule(lambda v: _is_int(v) and v >= minimum, f"an int >= {minimum}")


def number(minimum: float = -math.inf, maximum: float = math.inf, exclusive_minimum: bool = False) -> Rule:
    """A finite int or float in ``[minimum, maximum]`` (or ``(minimum, maximum]``)."""

    def accepts(value: Any) -> bool:
        if not _is_number(value) or value > maximum:
            return False
        return value > minimum if exclusive_minimum else value >= minimum

    bounds = []
    if minimum > -math.inf:
        bounds.append(f"{'>' if exclusive_minimum else '>='} {minimum}")
    if maximum < math.inf:
        bounds.append(f"<= {maximum}")
    return Rule(accepts, "a number" + (" " + " and ".join(bounds) if bounds else ""))


FLAG = Rule(lambda v: isinstance(v, bool) or (_is_int(v) and v in (0, 1)), "True or False")
KWARGS = Rule(lambda v: isinstance(v, Mapping), "a dict of keyword arguments")
OPTIONAL_CALLABLE = Rule(lambda v: v is None or v is False or callable(v), "None or a callable (class or function)")
INTERVAL = Rule(lambda v: v == "auto" or (_is_int(v) and v >= 0), "'auto' or an int >= 0")
TEXT = Rule(lambda v: isinstance(v, str), "a str")
NOISE = Rule(lambda v: v is None or callable(getattr(v, "sample", None)), "None or a Noise instance (with .sample)")


def optional(rule: Rule) -> Rule:
    """``None`` or what ``rule`` accepts."""
    return Rule(lambda v: v is None or rule.accepts(v), f"None or {rule.expected}")


# keys that several algorithms share (spec, agents §2.2); an algorithm adds its own keys to these
COMMON_RULES = {
    "rollouts": count(1),
    "learning_epochs": count(1),
    "mini_batches": count(1),
    "batch_size": count(1),
    "gradient_steps": count(1),
    "discount_factor": number(0.0, 1.0),
    "lambda": number(0.0, 1.0),
    "polyak": number(0.0, 1.0),
    "learning_rate": number(0.0),
    "actor_learning_rate": number(0.0),
    "critic_learning_rate": number(0.0),
    "learning_rate_scheduler": OPTIONAL_CALLABLE,
    "learning_rate_scheduler_kwargs": KWARGS,
    "state_preprocessor": OPTIONAL_CALLABLE,
    "state_preprocessor_kwargs": KWARGS,
    "privileged_state_preprocessor": OPTIONAL_CALLABLE,
    "privileged_state_preprocessor_kwargs": KWARGS,
    "value_preprocessor": OPTIONAL_CALLABLE,
    "value_preprocessor_kwargs": KWARGS,
    "random_timesteps": count(0),
    "learning_starts": count(0),
    "grad_norm_clip": number(0.0),
    "ratio_clip": number(0.0),
    "value_clip": number(0.0),
    "clip_predicted_values": FLAG,
    "entropy_loss_scale": number(0.0),
    "value_loss_scale": number(0.0),
    "kl_threshold": number(0.0),
    "rewards_shaper": OPTIONAL_CALLABLE,
    "time_limit_bootstrap": FLAG,
    "mixed_precision": FLAG,
    "compile_update": Rule(
        lambda v: FLAG.accepts(v) or isinstance(v, Mapping),
        "True, False or a dict of torch.compile keyword arguments (e.g. {'mode': 'max-autotune'})",
    ),
    # off-policy (DDPG, TD3, SAC, DQN, DDQN)
    "entropy_learning_rate": number(0.0),
    "learn_entropy": FLAG,
    "initial_entropy_value": number(0.0, exclusive_minimum=True),
    "target_entropy": optional(number()),
    "policy_delay": count(1),
    "smooth_regularization_noise": NOISE,
    "smooth_regularization_clip": number(0.0),
    "update_interval": count(1),
    "target_update_interval": count(1),
    # the rest of the single-agent algorithms (RPO, CEM, TRPO, AMP)
    "alpha": number(0.0),
    "percentile": number(0.0, 1.0),
    "value_learning_rate": number(0.0),
    "damping": number(0.0),
    "max_kl_divergence": number(0.0, exclusive_minimum=True),
    "conjugate_gradient_steps": count(1),
    "max_backtrack_steps": count(1),
    "accept_ratio": number(0.0),
    "step_fraction": number(0.0, 1.0, exclusive_minimum=True),
    "amp_state_preprocessor": OPTIONAL_CALLABLE,
    "amp_state_preprocessor_kwargs": KWARGS,
    "discriminator_loss_scale": number(0.0),
    "amp_batch_size": count(1),
    "task_reward_weight": number(),
    "style_reward_weight": number(),
    "discriminator_batch_size": count(0),
    "discriminator_reward_scale": number(),
    "discriminator_logit_regularization_scale": number(0.0),
    "discriminator_gradient_penalty_scale": number(0.0),
    "discriminator_weight_decay_scale": number(0.0),
}

#: keys of the torch agents that their JAX twins do not have: configs shared between backends carry them (Isaac Lab's
#: JAX PPO files set ``mixed_precision``), so the JAX agents drop them with a warning (``merge_config``'s ``ignored``)
#: instead of calling them unknown; skrl 1.4.3 accepts them silently
TORCH_ONLY_KEYS = {
    "mixed_precision": "JAX agents have no automatic mixed precision (only the torch agents read this key), so it has "
    "no effect here",
    "compile_update": "JAX updates are always compiled (jax.jit; only the torch agents read this key), so it has no "
    "effect here",
}

# cfg["exploration"] of the off-policy agents: noise and its decay (DDPG, TD3), epsilon-greedy (DQN, DDQN)
EXPLORATION_RULES = {
    "noise": NOISE,
    "initial_scale": number(),
    "final_scale": number(),
    "timesteps": optional(count(0)),
    "initial_epsilon": number(0.0, 1.0),
    "final_epsilon": number(0.0, 1.0),
}


def experiment_defaults() -> dict:
    """A fresh ``cfg["experiment"]`` of the default values, the same for every algorithm (each algorithm's default
    config gets its own dict, so that editing one does not change another's)."""
    # fmt: off
    return {
        "directory": "",            # experiment's parent directory
        "experiment_name": "",      # experiment name
        "write_interval": "auto",   # TensorBoard writing interval (timesteps)

        "checkpoint_interval": "auto",      # interval for checkpoints (timesteps)
        "store_separately": False,          # whether to store checkpoints separately
        "checkpoint_memory": "auto",        # memory contents in run checkpoints ("auto": whenever a resume needs them)

        "wandb": False,             # whether to use Weights & Biases
        "wandb_kwargs": {},         # wandb kwargs (see https://docs.wandb.ai/ref/python/init)
    }
    # fmt: on


EXPERIMENT_RULES = {
    "directory": TEXT,
    "experiment_name": TEXT,
    "write_interval": INTERVAL,
    "checkpoint_interval": INTERVAL,
    "store_separately": FLAG,
    "checkpoint_memory": Rule(
        lambda v: v == "auto" or isinstance(v, bool),
        "'auto' (off-policy agents' memories, on-policy ones mid-rollout), True or False",
    ),
    "wandb": FLAG,
    "wandb_kwargs": KWARGS,
}


def _fix(key: str, value: Any, rule: Rule) -> str:
    """A concrete suggestion for the commonest mistakes (a number written as a string, a float count)."""
    if isinstance(value, str):
        try:
            converted = float(value)
        except ValueError:
            return f"set it to {rule.expected}"
        if rule.accepts(converted):
            return f"pass the number {converted!r}, not the string {value!r}"
        if converted.is_integer() and rule.accepts(int(converted)):
            return f"pass the int {int(converted)}, not the string {value!r}"
    if isinstance(value, float) and value.is_integer() and rule.accepts(int(value)):
        return f"pass the int {int(value)}"
    return f"set it to {rule.expected}"


def check_value(key: str, value: Any, rule: Rule, where: str) -> None:
    """Raise ``ValueError`` naming ``where[key]``, the value, what is accepted and the fix."""
    if not rule.accepts(value):
        raise ValueError(
            f"{where}[{key!r}] must be {rule.expected}, got {value!r} ({type(value).__name__}): "
            f"{_fix(key, value, rule)}"
        )


def check_config(cfg: Mapping[str, Any], where: str, rules: Optional[Mapping[str, Rule]] = None) -> None:
    """Check every key of a merged agent config that has a rule (``COMMON_RULES`` updated with ``rules``)."""
    table = {**COMMON_RULES, **(rules or {})}
    for key, value in cfg.items():
        if key in table:
            check_value(key, value, table[key], where)
    for name, nested_rules in (("experiment", EXPERIMENT_RULES), ("exploration", EXPLORATION_RULES)):
        nested = cfg.get(name)
        if isinstance(nested, Mapping):
            for key, value in nested.items():
                if key in nested_rules:
                    check_value(key, value, nested_rules[key], f"{where}[{name!r}]")


def with_backend_keys(default: Mapping[str, Any], **keys: Any) -> dict:
    """A backend's ``*_DEFAULT_CONFIG``: the neutral one with the backend's own keys inserted before ``experiment``
    (so that printing the config lists them where skrl does)."""
    merged = {}
    for key, value in default.items():
        if key == "experiment":
            merged.update(keys)
        merged[key] = value
    merged.update({key: value for key, value in keys.items() if key not in merged})
    return merged
