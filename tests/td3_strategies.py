"""Hypothesis strategies for TD3 (both backends): small random envs with Box actions of any shape, and configs
across every key's documented range (noises given as standard deviations; each backend builds its own)."""

import dataclasses
from typing import Any, Optional

from hypothesis import strategies as st
from strategies import CLIPS, LEARNING_RATES, UNIT_INTERVAL, RandomEnvSpec, box_spaces, random_env_specs

MEMORY_SIZE = 16
TIMESTEPS = 12


@dataclasses.dataclass(frozen=True)
class TD3Setup:
    env: RandomEnvSpec
    cfg: dict  # without the noises and the preprocessor, which are backend objects
    exploration_std: Optional[float]  # GaussianNoise(0, std) or None
    smoothing_std: Optional[float]
    preprocessor: bool  # RunningStandardScaler for the states
    shaped: bool  # rewards_shaper halves the rewards


def optional_std() -> st.SearchStrategy:
    return st.one_of(st.none(), st.sampled_from([0.01, 0.1, 1.0]), st.floats(0.01, 2.0))  # torch: std > 0


@st.composite
def td3_setups(draw: Any) -> TD3Setup:
    env = draw(random_env_specs(observation_spaces=box_spaces(), action_spaces=box_spaces(infinite_bounds=False)))
    cfg = {
        "gradient_steps": draw(st.integers(1, 3)),
        "batch_size": draw(st.integers(1, MEMORY_SIZE)),
        "discount_factor": draw(UNIT_INTERVAL),
        "polyak": draw(UNIT_INTERVAL),
        "actor_learning_rate": draw(LEARNING_RATES),
        "critic_learning_rate": draw(LEARNING_RATES),
        "random_timesteps": draw(st.integers(0, 5)),
        "learning_starts": draw(st.integers(0, 8)),
        "grad_norm_clip": draw(CLIPS),
        "policy_delay": draw(st.integers(1, 4)),
        "smooth_regularization_clip": draw(st.one_of(st.just(0.0), st.floats(0.0, 1.0))),
        "exploration": {
            "initial_scale": draw(st.floats(0.0, 2.0)),
            "final_scale": draw(st.floats(0.0, 2.0)),
            "timesteps": draw(st.one_of(st.none(), st.integers(0, 2 * TIMESTEPS))),
        },
    }
    return TD3Setup(
        env=env,
        cfg=cfg,
        exploration_std=draw(optional_std()),
        smoothing_std=draw(optional_std()),
        preprocessor=draw(st.booleans()),
        shaped=draw(st.booleans()),
    )


def expected_critic_steps(setup: TD3Setup) -> int:
    """Gradient steps over a run of TIMESTEPS: one update per timestep from learning_starts."""
    return setup.cfg["gradient_steps"] * sum(1 for t in range(TIMESTEPS) if t >= setup.cfg["learning_starts"])
