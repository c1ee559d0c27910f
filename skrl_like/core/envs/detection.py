"""Which wrapper fits an environment (``wrap_env``'s tag detection), shared by both backends; the wrapper classes
themselves are in :mod:`skrl_like.core.envs.wrappers`.

Detection looks at class names only, so it needs neither torch nor jax; each backend maps the resulting
tag (``"gymnasium"``, ``"gym"``, ``"pettingzoo"``, ``"isaaclab-single-agent"``, ``"isaaclab-multi-agent"``,
``"brax"``, ``"playground"``, and ``"gymnax"`` in JAX) to its own wrapper class.
"""

import re
from typing import Any, List

from skrl_like import logger

SUPPORTED_TAGS = ("gymnasium", "gym", "pettingzoo", "isaaclab-single-agent", "isaaclab-multi-agent")
# environments written in JAX: only the JAX backend wraps them
JAX_NATIVE_TAGS = ("gymnax",)
# simulators written in JAX that the torch backend wraps too (their arrays cross to torch by DLPack)
DLPACK_TAGS = ("brax", "playground")

# first match wins; the order matters (e.g. Isaac Lab envs are also gymnasium envs)
_DETECTION_RULES = [
    # the last pattern: skrl_like's own stand-in for an Isaac Lab env (skrl_like.envs.isaaclab_standin)
    (["omni.isaac.lab.*", "isaaclab.*", "skrl_like.envs.isaaclab_standin.*"], "isaaclab-*"),
    (["omni.isaac.gym..*"], "omniverse-isaacgym"),
    (["isaacgymenvs..*", "tasks..*.VecTask"], "isaacgym-preview4"),
    (["rlgpu.tasks..*.VecTask"], "isaacgym-preview2"),
    (["mujoco_playground..*"], "playground"),
    (["brax.envs..*"], "brax"),
    (["robosuite.environments."], "robosuite"),
    (["dm_env..*"], "dm"),
    (["pettingzoo.utils.env", "pettingzoo.utils.wrappers"], "pettingzoo"),
    (["gymnax.environments..*"], "gymnax"),
    (["gymnasium..*"], "gymnasium"),
    (["gym..*"], "gym"),
]

# recognised for compatibility with skrl 1.4.3, but their simulators are out of skrl_like's scope
_UNSUPPORTED_TAGS = {
    "dm",
    "robosuite",
    "bidexhands",
}
# recognised, but NVIDIA deprecated these simulators in favour of Isaac Lab, and skrl 2.x dropped them
_DEPRECATED_ISAAC_TAGS = ("isaacgym-preview2", "isaacgym-preview3", "isaacgym-preview4", "omniverse-isaacgym")


def _base_class_names(env: Any) -> List[str]:
    # [compat] only the direct base classes of the env and of env.unwrapped are inspected
    classes = list(type(env).__bases__)
    try:
        classes += list(type(env.unwrapped).__bases__)
    except Exception:  # an env without (or with a broken) `unwrapped`
        pass
    return sorted({f"{base.__module__}.{base.__qualname__}" for base in classes})


def _unwrapped(env: Any) -> Any:
    try:
        return env.unwrapped
    except Exception:  # an env without (or with a broken) `unwrapped`
        return env


def _matches(patterns: List[str], names: List[str]) -> bool:
    return any(pattern in name or re.match(pattern, name) for pattern in patterns for name in names)


def resolve_wrapper_tag(env: Any, wrapper: str = "auto", verbose: bool = True, jax_native: bool = False) -> str:
    """The supported tag (``"gymnasium"``, ``"gym"``, ``"pettingzoo"``, ``"isaaclab-single-agent"``,
    ``"isaaclab-multi-agent"``, ``"brax"``, ``"playground"``, or ``"gymnax"`` where ``jax_native``) of the wrapper to
    use for ``env``.

    :param env: the environment to wrap.
    :param wrapper: ``"auto"`` (detect from the env's base classes) or an explicit skrl tag (``"isaaclab"`` picks
        the multi-agent wrapper for an env with ``possible_agents``, as skrl does).
    :param verbose: log the detected class names.
    :param jax_native: the backend wraps environments written in JAX (the JAX backend).
    :raises ValueError: the env or tag is unknown, or names a simulator skrl_like does not support.
    """
    tag = wrapper
    if wrapper == "auto":
        names = _base_class_names(env)
        if verbose:
            logger.info(f"Environment wrapper: 'auto' (class: {', '.join(names)})")
        for patterns, rule_tag in _DETECTION_RULES:
            if _matches(patterns, names):
                tag = rule_tag
                break
        else:
            raise ValueError(f"Unknown wrapper type: {names}")
    if tag in ("isaaclab", "isaaclab-*"):  # single- or multi-agent: a DirectMARLEnv lists its possible agents
        tag = "isaaclab-multi-agent" if hasattr(_unwrapped(env), "possible_agents") else "isaaclab-single-agent"
    if tag in SUPPORTED_TAGS or tag in DLPACK_TAGS or (jax_native and tag in JAX_NATIVE_TAGS):
        return tag
    if tag in JAX_NATIVE_TAGS:
        raise ValueError(
            f"The environment is a {tag} environment, written in JAX: wrap it with skrl_like.jax.envs.wrappers.wrap_env "
            "and train it with a JAX agent (skrl_like.jax.agents)"
        )
    if tag in _DEPRECATED_ISAAC_TAGS:
        raise ValueError(
            f"Environment wrapper '{tag}' is not supported in skrl_like: NVIDIA deprecated Isaac Gym (preview) and "
            "Omniverse Isaac Gym in favour of Isaac Lab, and skrl 2.x dropped them too. Port the task to Isaac Lab "
            "and use wrapper='isaaclab', or use skrl 1.4 for this simulator"
        )
    if tag in _UNSUPPORTED_TAGS:
        raise ValueError(
            f"Environment wrapper '{tag}' is not supported in skrl_like (its simulator is out of scope): wrap the "
            "environment as a gymnasium env (or write a Wrapper subclass), or use skrl for this simulator"
        )
    raise ValueError(f"Unknown wrapper type: {tag}")
