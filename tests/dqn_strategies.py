"""Hypothesis strategies for DQN/DDQN property tests (both backends): a small random env with a Discrete action
space and Box observations, and a config drawn across every key's documented range.

The expected counts are computed here from the spec's rules, not with the code under test.
"""

import dataclasses
from typing import Any

from hypothesis import strategies as st
from strategies import LEARNING_RATES, UNIT_INTERVAL, RandomEnvSpec, box_spaces, discrete_spaces, random_env_specs

TIMESTEPS = 12


@dataclasses.dataclass
class DQNSetup:
    env: RandomEnvSpec
    algorithm: str  # "DQN" or "DDQN"
    memory_size: int
    cfg: dict


def expected_update_timesteps(cfg: dict, timesteps: int = TIMESTEPS) -> list:
    """The timesteps a run updates at: ``t >= learning_starts`` and ``t % update_interval == 0``."""
    return [t for t in range(timesteps) if t >= cfg["learning_starts"] and t % cfg["update_interval"] == 0]


@st.composite
def dqn_setups(draw: Any) -> DQNSetup:
    env = draw(
        random_env_specs(
            observation_spaces=box_spaces(infinite_bounds=True),
            action_spaces=discrete_spaces(max_n=4),
        )
    )
    memory_size = draw(st.integers(4, 20))
    timesteps = draw(st.one_of(st.just(0), st.just(None), st.integers(1, 50)))
    cfg = {
        "gradient_steps": draw(st.integers(1, 3)),
        "batch_size": draw(st.integers(1, memory_size * env.num_envs)),
        "discount_factor": draw(UNIT_INTERVAL),
        "polyak": draw(UNIT_INTERVAL),
        "learning_rate": draw(LEARNING_RATES),
        "random_timesteps": draw(st.integers(0, TIMESTEPS)),
        "learning_starts": draw(st.integers(0, TIMESTEPS)),
        "update_interval": draw(st.integers(1, 4)),
        "target_update_interval": draw(st.integers(1, 6)),
        "exploration": {
            "initial_epsilon": draw(UNIT_INTERVAL),
            "final_epsilon": draw(UNIT_INTERVAL),
            "timesteps": timesteps,
        },
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    return DQNSetup(env=env, algorithm=draw(st.sampled_from(["DQN", "DDQN"])), memory_size=memory_size, cfg=cfg)
