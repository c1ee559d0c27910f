"""Stand-ins with brax's ``Env``/``State`` contract (no brax needed): a point mass on a line, pushed by the action.

``reset(key)`` puts it at a uniform position in [-0.5, 0.5] at rest; ``step`` adds ``0.1 * action`` to the velocity
and the velocity to the position, pays ``1 - position**2`` and is done once ``|position| > 1``. Their base classes
carry brax's and Playground's module names, so ``wrap_env(..., wrapper="auto")`` detects them as it would the real
ones.
"""

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp


class State(NamedTuple):  # brax.envs.base.State's fields that the wrappers read, and the physics
    pipeline_state: jax.Array  # (position, velocity)
    obs: Any
    reward: jax.Array
    done: jax.Array
    metrics: dict
    info: dict


class Env:
    """Stands for ``brax.envs.base.PipelineEnv``."""


Env.__module__ = "brax.envs.base"


class MjxEnv:
    """Stands for ``mujoco_playground._src.mjx_env.MjxEnv``."""


MjxEnv.__module__ = "mujoco_playground._src.mjx_env"


class PointMass(Env):
    observation_size = 2
    action_size = 1

    def _observe(self, physics: jax.Array) -> Any:
        return physics

    def reset(self, key: jax.Array) -> State:
        physics = jnp.array([jax.random.uniform(key, minval=-0.5, maxval=0.5), 0.0])
        zero = jnp.zeros(())
        return State(physics, self._observe(physics), zero, zero, {"distance": zero}, {"pushes": zero})

    def step(self, state: State, action: jax.Array) -> State:
        velocity = state.pipeline_state[1] + 0.1 * action[0]
        position = state.pipeline_state[0] + velocity
        physics = jnp.stack([position, velocity])
        done = (jnp.abs(position) > 1.0).astype(jnp.float32)
        metrics = {"distance": jnp.abs(position)}
        info = {"pushes": state.info["pushes"] + 1}
        return State(physics, self._observe(physics), 1.0 - position**2, done, metrics, info)


class PlaygroundPointMass(MjxEnv, PointMass):
    """The point mass as a Playground env with a privileged critic observation (position, velocity, their product)."""

    observation_size = {"state": (2,), "privileged_state": (3,)}

    def _observe(self, physics: jax.Array) -> Any:
        return {"state": physics, "privileged_state": jnp.append(physics, physics[0] * physics[1])}
