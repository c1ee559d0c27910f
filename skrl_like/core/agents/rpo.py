"""RPO's configuration, written once for both backends: PPO's keys plus ``alpha`` (torch adds ``mixed_precision``;
JAX re-exports it as ``RPO_DEFAULT_CONFIG``)."""

import copy

import gymnasium

from skrl_like.core.agents.ppo import PPO_DEFAULT_CONFIG


def _with_alpha(ppo: dict) -> dict:
    """PPO's keys, in skrl's order, with ``alpha`` after ``mini_batches``; fresh nested dicts (``experiment``)."""
    config = {}
    for key, value in ppo.items():
        config[key] = copy.deepcopy(value) if isinstance(value, dict) else value
        if key == "mini_batches":
            # half-width of the uniform perturbation the policy adds to its mean actions: U(-alpha, alpha)
            config["alpha"] = 0.5
    return config


RPO_DEFAULT_CONFIG = _with_alpha(PPO_DEFAULT_CONFIG)


def check_action_space(action_space: object) -> None:
    """RPO perturbs the mean of continuous actions: any gymnasium space other than ``Box`` is rejected (a shape or
    size given instead of a space cannot be checked and is accepted)."""
    if isinstance(action_space, gymnasium.Space) and not isinstance(action_space, gymnasium.spaces.Box):
        raise ValueError(
            f"RPO: the action space {action_space} is not a Box; RPO perturbs the mean of a Gaussian policy's "
            "continuous actions by U(-alpha, alpha): use PPO (or A2C) for discrete action spaces"
        )
