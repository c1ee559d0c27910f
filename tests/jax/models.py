"""The tiny JAX models and CartPole builders that several JAX test files use (the torch mirror: tests/torch/models.py).

The widths are class attributes so that a file whose numbers were taken with another width binds it once with a
two-line subclass (which keeps ``Model``'s constructor); the layers are those of the copies they replaced, so the
parameters drawn from the same key are the same.
"""

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, GaussianMixin, Model


class CategoricalMlp(CategoricalMixin, Model):
    """A categorical policy: logits from one tanh layer of ``hidden`` units."""

    hidden = 16

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions)(nn.tanh(nn.Dense(self.hidden)(inputs["states"]))), {}


class ValueMlp(DeterministicMixin, Model):
    """A state value: one output from one tanh layer of ``hidden`` units."""

    hidden = 16

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(1)(nn.tanh(nn.Dense(self.hidden)(inputs["states"]))), {}


class PerturbedGaussianPolicy(GaussianMixin, Model):
    """RPO's policy: the mean from one tanh layer of 16 units perturbed by U(-alpha, alpha), drawn with
    ``inputs["key"]``; where ``draws`` is a list, every perturbation is appended to it as it runs (also inside
    compiled code)."""

    draws = None

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        mean = nn.Dense(self.num_actions)(nn.tanh(nn.Dense(16)(inputs["states"])))
        alpha = inputs.get("alpha", 0.0)
        key = inputs.get("key", jax.random.PRNGKey(0))  # (no key when the parameters are initialised)
        perturbation = jax.random.uniform(key, mean.shape, minval=-alpha, maxval=alpha)
        if self.draws is not None:
            draws = self.draws
            jax.debug.callback(lambda x: draws.append(np.asarray(x)), perturbation)
        log_std = self.param("log_std_parameter", lambda _: jnp.full(self.num_actions, -0.5, jnp.float32))
        return mean + perturbation, log_std, {}


class LinearCategoricalPolicy(CategoricalMixin, Model):
    """A categorical policy of one linear layer: the model of the wrong kind in the tests that refuse one."""

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions)(inputs["states"]), {}


class LinearDeterministicPolicy(DeterministicMixin, Model):
    """A deterministic policy of one linear layer: the model of the wrong kind in the tests that refuse one."""

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions)(inputs["states"]), {}


def vector_cartpole(num_envs=4):
    """CartPole-v1 as a synchronous gymnasium vector env (even of one env), wrapped."""
    return wrap_env(gymnasium.make_vec("CartPole-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def cartpole(num_envs=1):
    """CartPole-v1 wrapped: the plain env for one env, a synchronous vector env for more."""
    if num_envs == 1:
        return wrap_env(gymnasium.make("CartPole-v1"), verbose=False)
    return vector_cartpole(num_envs)
