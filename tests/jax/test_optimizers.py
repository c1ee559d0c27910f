"""JAX Adam: one step against a hand-computed Adam update, clipping, scaling, purity and no recompilation."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like.jax.models import DeterministicMixin, Model
from skrl_like.jax.resources.optimizers import Adam
from skrl_like.jax.resources.optimizers import adam as adam_module

BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


class Vector(DeterministicMixin, Model):
    """A model whose only parameter is a 3-vector ``w`` (output = w, for any input)."""

    def __init__(self, observation_space=1, action_space=3, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return self.param("w", lambda _: jnp.array([1.0, -2.0, 0.5], jnp.float32)), {}


def vector_model():
    model = Vector()
    model.init_state_dict("policy", {"states": np.zeros((1, 1), np.float32)})
    return model


def weights(model):
    return np.asarray(model.state_dict.params["params"]["w"], np.float64)


def gradient(values):
    return {"params": {"w": jnp.array(values, jnp.float32)}}


def hand_adam(w, gradients, lr):
    """Reference Adam (Kingma & Ba, bias-corrected), one update per gradient in ``gradients``."""
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t, g in enumerate(gradients, start=1):
        g = np.asarray(g, np.float64)
        m = BETA1 * m + (1 - BETA1) * g
        v = BETA2 * v + (1 - BETA2) * g**2
        m_hat, v_hat = m / (1 - BETA1**t), v / (1 - BETA2**t)
        w = w - lr * m_hat / (np.sqrt(v_hat) + EPS)
    return w


def test_two_steps_match_hand_computed_adam():
    model = vector_model()
    start = weights(model)
    optimizer = Adam(model, lr=0.1)
    gradients = [[0.3, -1.2, 2.0], [-0.1, 0.4, 1.0]]
    for g in gradients:
        optimizer = optimizer.step(gradient(g), model)
    np.testing.assert_allclose(weights(model), hand_adam(start, gradients, 0.1), rtol=1e-6, atol=2e-6)


def test_gradient_clipping_by_global_norm():
    model = vector_model()
    start = weights(model)
    optimizer = Adam(model, lr=0.05, grad_norm_clip=0.5)
    g = np.array([3.0, 4.0, 0.0])  # global norm 5 -> scaled to norm 0.5
    clipped = g * 0.5 / 5.0
    optimizer = optimizer.step(gradient(g), model)
    optimizer = optimizer.step(gradient(g), model)
    np.testing.assert_allclose(weights(model), hand_adam(start, [clipped, clipped], 0.05), rtol=1e-6, atol=2e-6)
    # Adam's first step is +-lr whatever the gradient scale, so also check the moments saw the clipped gradient
    adam_state = optimizer.state[1][0]  # over the raveled parameters: here the one vector "w"
    np.testing.assert_allclose(adam_state.mu, (1 - BETA1**2) * clipped, rtol=1e-5)
    small = np.array([0.1, 0.2, 0.0])  # below the threshold: untouched
    model = vector_model()
    optimizer = Adam(model, lr=0.05, grad_norm_clip=0.5).step(gradient(small), model)
    np.testing.assert_allclose(optimizer.state[1][0].nu, (1 - BETA2) * small**2, rtol=1e-5)


def test_scale_false_uses_the_rate_given_to_step():
    model = vector_model()
    start = weights(model)
    optimizer = Adam(model, lr=123.0, scale=False)  # the constructor rate is not used without scaling
    gradients = [[0.3, -1.2, 2.0], [-0.1, 0.4, 1.0]]
    optimizer = optimizer.step(gradient(gradients[0]), model, lr=0.1)
    after_one = hand_adam(start, gradients[:1], 0.1)
    np.testing.assert_allclose(weights(model), after_one, rtol=1e-6, atol=2e-6)
    optimizer = optimizer.step(gradient(gradients[1]), model, lr=0.01)
    # second update with rate 0.01 on the bias-corrected moments of both gradients
    both = hand_adam(start, gradients, 1.0) - hand_adam(start, gradients[:1], 1.0)  # unit-rate second update
    np.testing.assert_allclose(weights(model), after_one + 0.01 * both, rtol=1e-6, atol=2e-6)


def test_scale_true_with_an_explicit_rate_uses_that_rate():
    model = vector_model()
    start = weights(model)
    optimizer = Adam(model, lr=0.1)
    optimizer.step(gradient([0.3, -1.2, 2.0]), model, lr=0.02)
    np.testing.assert_allclose(weights(model), hand_adam(start, [[0.3, -1.2, 2.0]], 0.02), rtol=1e-6, atol=2e-6)


def test_changing_the_rate_does_not_recompile():
    model = vector_model()
    optimizer = Adam(model, lr=1e-3, scale=False)
    optimizer = optimizer.step(gradient([1.0, 1.0, 1.0]), model, lr=1e-3)
    compiled = adam_module._jitted_update._cache_size()
    for lr in (5e-4, 2e-4, 1e-4, 0.3):
        optimizer = optimizer.step(gradient([1.0, 1.0, 1.0]), model, lr=lr)
    assert adam_module._jitted_update._cache_size() == compiled


def test_functional_update_inside_jit_matches_step():
    model, reference = vector_model(), vector_model()
    optimizer = Adam(model, lr=0.1, grad_norm_clip=1.0, scale=False)
    reference_optimizer = Adam(reference, lr=0.1, grad_norm_clip=1.0, scale=False)
    traces = []

    @jax.jit
    def update(optimizer, params, lr):
        traces.append(1)
        grad = jax.grad(lambda p: jnp.sum(jnp.square(model.act({"states": jnp.zeros((1, 1))}, "policy", p)[0])))(params)
        return optimizer.update(grad, params, lr)

    params = model.state_dict.params
    for lr in (0.1, 0.05):
        optimizer, params = update(optimizer, params, lr)
        grad = gradient(2 * weights(reference))
        reference_optimizer = reference_optimizer.step(grad, reference, lr=lr)
    assert len(traces) == 1
    np.testing.assert_allclose(params["params"]["w"], weights(reference), rtol=1e-6, atol=2e-6)
    for a, b in zip(jax.tree_util.tree_leaves(optimizer.state), jax.tree_util.tree_leaves(reference_optimizer.state)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=2e-6)


def test_optimizer_is_an_immutable_pytree():
    model = vector_model()
    optimizer = Adam(model)
    leaves = jax.tree_util.tree_leaves(optimizer)
    assert leaves and all(isinstance(leaf, jax.Array) for leaf in leaves)
    new = optimizer.step(gradient([1.0, 0.0, 0.0]), model)
    assert new is not optimizer and int(optimizer.state[0].count) == 0 and int(new.state[0].count) == 1
    restored = optimizer.replace(state=new.state)
    assert restored.transformation is optimizer.transformation


def test_zero_rate_with_scaling_cannot_be_rescaled():
    model = vector_model()
    with pytest.raises(ValueError, match="scale=False"):
        Adam(model, lr=0.0).step(gradient([1.0, 1.0, 1.0]), model, lr=0.1)
