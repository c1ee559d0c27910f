"""JAX models and mixins: shapes, log-probabilities and entropies against scipy/numpy, purity under jax.jit."""

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

from skrl_like import config
from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, GaussianMixin, Model, MultiCategoricalMixin
from skrl_like.jax.models.base import StateDict

OBSERVATIONS = gymnasium.spaces.Box(-1.0, 1.0, (3,), dtype=np.float32)
ACTIONS = gymnasium.spaces.Box(np.array([-1.0, -0.5, -2.0]), np.array([1.0, 0.5, 2.0]), dtype=np.float32)


@pytest.fixture(autouse=True)
def fixed_key():
    previous = config.jax._key
    config.jax.key = 7
    yield
    config.jax._key = previous


class IdentityGaussian(GaussianMixin, Model):
    """mean = states (3 dims), log_std = a parameter starting at ``initial_log_std``: outputs known by hand."""

    initial_log_std = 0.0

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        mixin_kwargs = {key: kwargs.pop(key) for key in list(kwargs) if key not in ("parent", "name")}
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self, **mixin_kwargs)

    @nn.compact
    def __call__(self, inputs, role):
        log_std = self.param("log_std", lambda _: jnp.full(self.num_actions, self.initial_log_std, jnp.float32))
        return inputs["states"] * 1.0, log_std, {"extra": 1}


def gaussian(initial_log_std=0.0, **mixin_kwargs):
    model_class = type("G", (IdentityGaussian,), {"initial_log_std": initial_log_std})
    model = model_class(OBSERVATIONS, ACTIONS, **mixin_kwargs)
    model.init_state_dict("policy")
    return model


def states(batch=5, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, (batch, 3)).astype(np.float32)


def normal_log_pdf(x, mean, std):
    return stats.norm.logpdf(np.asarray(x, np.float64), loc=np.asarray(mean, np.float64), scale=std)


# ------------------------------------------------------------------------------------------ Gaussian


def test_gaussian_shapes_outputs_and_sample_log_prob():
    model = gaussian(initial_log_std=np.log(0.3))
    s = states()
    actions, log_prob, outputs = model.act({"states": s}, "policy")
    assert actions.shape == (5, 3) and actions.dtype == jnp.float32
    assert log_prob.shape == (5, 1)
    np.testing.assert_allclose(outputs["mean_actions"], s)
    np.testing.assert_allclose(outputs["stddev"], [0.3] * 3, rtol=1e-6)
    np.testing.assert_allclose(outputs["log_std"], np.log([0.3] * 3), rtol=1e-6)
    assert outputs["extra"] == 1
    expected = normal_log_pdf(actions, s, 0.3).sum(-1, keepdims=True)
    np.testing.assert_allclose(log_prob, expected, rtol=1e-5, atol=1e-5)


def test_gaussian_log_prob_of_taken_actions_and_reductions():
    s, taken = states(seed=1), states(seed=2)
    per_dimension = normal_log_pdf(taken, s, 1.0)
    for reduction, expected in (
        ("sum", per_dimension.sum(-1, keepdims=True)),
        ("mean", per_dimension.mean(-1, keepdims=True)),
        ("prod", per_dimension.prod(-1, keepdims=True)),
        ("none", per_dimension),
    ):
        model = gaussian(reduction=reduction)
        _, log_prob, _ = model.act({"states": s, "taken_actions": taken}, "policy")
        assert log_prob.shape == expected.shape, reduction
        np.testing.assert_allclose(log_prob, expected, rtol=1e-5, atol=1e-6, err_msg=reduction)
    with pytest.raises(ValueError, match="reduction"):
        gaussian(reduction="max")


def test_gaussian_clip_log_std():
    s = states()
    _, _, outputs = gaussian(initial_log_std=5.0).act({"states": s}, "policy")
    np.testing.assert_allclose(outputs["log_std"], [2.0] * 3)
    np.testing.assert_allclose(outputs["stddev"], [np.exp(2.0)] * 3, rtol=1e-6)
    _, _, outputs = gaussian(initial_log_std=-5.0, min_log_std=-1.5).act({"states": s}, "policy")
    np.testing.assert_allclose(outputs["log_std"], [-1.5] * 3)
    _, _, outputs = gaussian(initial_log_std=5.0, clip_log_std=False).act({"states": s}, "policy")
    np.testing.assert_allclose(outputs["log_std"], [5.0] * 3)


def test_gaussian_clip_actions_keeps_mean_unclipped_and_evaluates_the_clipped_sample():
    s = states(batch=400) * 3  # means outside the bounds, so that clipping happens
    model = gaussian(initial_log_std=0.0, clip_actions=True)
    actions, log_prob, outputs = model.act({"states": s}, "policy")
    assert np.all(np.asarray(actions) >= ACTIONS.low) and np.all(np.asarray(actions) <= ACTIONS.high)
    assert np.any(np.asarray(actions) == ACTIONS.high)
    np.testing.assert_allclose(outputs["mean_actions"], s)  # not clipped (skrl behaviour)
    expected = normal_log_pdf(actions, s, 1.0).sum(-1, keepdims=True)
    np.testing.assert_allclose(log_prob, expected, rtol=1e-5, atol=1e-4)
    unclipped, _, _ = gaussian(initial_log_std=0.0).act({"states": s}, "policy")
    assert np.any(np.abs(np.asarray(unclipped)) > ACTIONS.high)


def test_gaussian_entropy_matches_scipy_and_accepts_outputs():
    model = gaussian(initial_log_std=np.log(0.7))
    _, _, outputs = model.act({"states": states()}, "policy")
    expected = stats.norm(scale=0.7).entropy()
    np.testing.assert_allclose(model.get_entropy(outputs["stddev"], role="policy"), [expected] * 3, rtol=1e-6)
    np.testing.assert_allclose(model.get_entropy(outputs, role="policy"), [expected] * 3, rtol=1e-6)
    stddev = jnp.array([[0.1, 2.0]])
    np.testing.assert_allclose(
        jax.jit(model.get_entropy)(stddev), stats.norm(scale=np.array([[0.1, 2.0]])).entropy(), rtol=1e-6
    )


def test_gaussian_samples_follow_the_distribution():
    model = gaussian(initial_log_std=np.log(0.5))
    s = np.tile(np.array([[0.2, -0.3, 0.0]], np.float32), (20000, 1))
    actions = np.asarray(model.act({"states": s}, "policy")[0])
    np.testing.assert_allclose(actions.mean(0), [0.2, -0.3, 0.0], atol=0.02)
    np.testing.assert_allclose(actions.std(0), [0.5] * 3, atol=0.02)


def test_act_is_reproducible_from_the_configured_key_and_draws_fresh_noise_each_call():
    s = states()
    first = np.asarray(gaussian().act({"states": s}, "policy")[0])
    model = gaussian()
    sequence = [np.asarray(model.act({"states": s}, "policy")[0]) for _ in range(3)]
    np.testing.assert_array_equal(sequence[0], first)
    assert not np.allclose(sequence[0], sequence[1])
    replay = gaussian()
    for expected in sequence:
        np.testing.assert_array_equal(replay.act({"states": s}, "policy")[0], expected)
    config.jax.key = 8
    assert not np.allclose(gaussian().act({"states": s}, "policy")[0], sequence[0])


def test_explicit_key_is_used_and_the_inputs_dict_is_not_modified():
    model = gaussian()
    inputs = {"states": states()}
    key = jax.random.PRNGKey(3)
    a = model.act({**inputs, "key": key}, "policy")[0]
    b = model.act({**inputs, "key": key}, "policy")[0]
    np.testing.assert_array_equal(a, b)
    model.act(inputs, "policy")
    assert set(inputs) == {"states"}


def test_gaussian_act_is_jittable_and_differentiable():
    model = gaussian(initial_log_std=-0.5, clip_actions=True)
    s, taken, key = states(), states(seed=3) * 0.4, jax.random.PRNGKey(11)

    @jax.jit
    def act(params, s, key):
        return model.act({"states": s, "key": key}, "policy", params)

    jitted = act(model.state_dict.params, s, key)
    eager = model.act({"states": s, "key": key}, "policy")
    for a, b in zip(jax.tree_util.tree_leaves(jitted), jax.tree_util.tree_leaves(eager)):
        np.testing.assert_allclose(a, b, rtol=1e-6)

    def loss(params):
        _, log_prob, outputs = model.act({"states": s, "taken_actions": taken, "key": key}, "policy", params)
        return -log_prob.mean() - model.get_entropy(outputs["stddev"], "policy").mean()

    gradient = jax.jit(jax.grad(loss))(model.state_dict.params)["params"]["log_std"]
    # d/dlog_std of mean over batch of -sum_d logN(taken; s, e^log_std) - sum_d entropy / 3
    std = np.exp(-0.5)
    expected = (1 - np.mean((taken - s) ** 2, axis=0) / std**2) - 1 / 3
    np.testing.assert_allclose(gradient, expected, rtol=1e-4, atol=1e-5)


def test_tracing_without_a_key_is_refused():
    model = gaussian()
    with pytest.raises(ValueError, match="inputs\\['key'\\]"):
        jax.jit(lambda params, s: model.act({"states": s}, "policy", params))(model.state_dict.params, states())


def test_state_dict_can_be_a_jit_argument():
    model = gaussian()
    assert isinstance(model.state_dict, StateDict)
    s, key = states(), jax.random.PRNGKey(0)
    out = jax.jit(lambda sd: sd.apply_fn(sd.params, {"states": s, "key": key}, "policy")[0])(model.state_dict)
    np.testing.assert_allclose(out, s)


# ------------------------------------------------------------------------------------------ Deterministic


class Linear(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, clip_actions=False, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self, clip_actions=clip_actions)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions)(inputs["states"]), {"role": role}


def test_deterministic_output_and_clipping():
    s = states() * 10
    model = Linear(OBSERVATIONS, ACTIONS)
    model.init_state_dict("value")
    params = model.state_dict.params["params"]["Dense_0"]
    expected = s @ np.asarray(params["kernel"]) + np.asarray(params["bias"])
    actions, log_prob, outputs = model.act({"states": s}, "value")
    assert log_prob is None and outputs == {"role": "value"}
    np.testing.assert_allclose(actions, expected, rtol=1e-5)
    clipped_model = Linear(OBSERVATIONS, ACTIONS, clip_actions=True)
    clipped_model.state_dict = model.state_dict
    clipped = jax.jit(lambda p: clipped_model.act({"states": s}, "value", p)[0])(model.state_dict.params)
    np.testing.assert_allclose(clipped, np.clip(expected, ACTIONS.low, ACTIONS.high), rtol=1e-5)


def test_models_initialised_with_the_default_key_differ_and_set_seed_repeats_them():
    from skrl_like.utils import set_seed

    def kernels():
        models = [Linear(OBSERVATIONS, ACTIONS) for _ in range(2)]
        for model in models:
            model.init_state_dict("critic")  # no key: each model gets its own (skrl gives every model the same)
        return [np.asarray(model.state_dict.params["params"]["Dense_0"]["kernel"]) for model in models]

    set_seed(5)
    first, second = kernels()
    assert not np.allclose(first, second)
    set_seed(5)
    again = kernels()
    np.testing.assert_array_equal(again[0], first)
    np.testing.assert_array_equal(again[1], second)


# ------------------------------------------------------------------------------------------ Categorical


class FixedLogits(CategoricalMixin, Model):
    """net_output = states (the logits or probabilities are given directly)."""

    def __init__(self, observation_space, action_space, device=None, unnormalized_log_prob=True, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self, unnormalized_log_prob=unnormalized_log_prob)

    def __call__(self, inputs, role):
        return inputs["states"], {}


def categorical(unnormalized_log_prob=True):
    model = FixedLogits(4, gymnasium.spaces.Discrete(4), unnormalized_log_prob=unnormalized_log_prob)
    model.init_state_dict("policy", {"states": np.zeros((1, 4), np.float32)})
    return model


def test_categorical_log_prob_entropy_and_outputs():
    logits = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32) * 2
    model = categorical()
    actions, log_prob, outputs = model.act({"states": logits}, "policy")
    assert actions.shape == (6, 1) and actions.dtype == jnp.int32 and log_prob.shape == (6, 1)
    log_softmax = logits - special.logsumexp(logits, axis=-1, keepdims=True)
    index = np.asarray(actions)[:, 0]
    np.testing.assert_allclose(log_prob[:, 0], log_softmax[np.arange(6), index], rtol=1e-5)
    taken = np.array([[0], [1], [2], [3], [0], [1]], np.float32)
    _, log_prob, _ = model.act({"states": logits, "taken_actions": taken}, "policy")
    np.testing.assert_allclose(log_prob[:, 0], log_softmax[np.arange(6), taken[:, 0].astype(int)], rtol=1e-5)
    np.testing.assert_allclose(outputs["net_output"], logits)
    assert outputs["stddev"].shape == (6, 1) and np.all(np.isnan(outputs["stddev"]))
    probabilities = special.softmax(logits, axis=-1)
    expected_entropy = stats.entropy(probabilities, axis=-1)
    np.testing.assert_allclose(model.get_entropy(outputs["net_output"], "policy"), expected_entropy, rtol=1e-5)
    np.testing.assert_allclose(model.get_entropy(outputs, "policy"), expected_entropy, rtol=1e-5)


def test_categorical_with_probabilities():
    probabilities = np.array([[0.1, 0.2, 0.3, 0.4], [2.0, 0.0, 1.0, 1.0]], np.float32)  # second row unnormalised
    model = categorical(unnormalized_log_prob=False)
    taken = np.array([[3], [2]])
    _, log_prob, _ = model.act({"states": probabilities, "taken_actions": taken}, "policy")
    np.testing.assert_allclose(log_prob[:, 0], np.log([0.4, 0.25]), rtol=1e-5)
    normalised = probabilities / probabilities.sum(-1, keepdims=True)
    np.testing.assert_allclose(model.get_entropy(probabilities), stats.entropy(normalised, axis=-1), rtol=1e-5)


def test_categorical_sampling_frequencies_and_jit():
    logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4]], np.float32))
    model = categorical()
    actions = np.asarray(model.act({"states": np.tile(logits, (20000, 1))}, "policy")[0])[:, 0]
    np.testing.assert_allclose(np.bincount(actions, minlength=4) / 20000, [0.1, 0.2, 0.3, 0.4], atol=0.015)
    key = jax.random.PRNGKey(5)
    jitted = jax.jit(lambda p, s, k: model.act({"states": s, "key": k}, "policy", p)[:2])
    eager = model.act({"states": np.tile(logits, (8, 1)), "key": key}, "policy")[:2]
    for a, b in zip(jitted(model.state_dict.params, np.tile(logits, (8, 1)), key), eager):
        np.testing.assert_allclose(a, b)


# ------------------------------------------------------------------------------------------ MultiCategorical


class FixedMultiLogits(MultiCategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device=None, reduction="sum", **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        MultiCategoricalMixin.__init__(self, reduction=reduction)

    def __call__(self, inputs, role):
        return inputs["states"], {}


def multicategorical(reduction="sum"):
    space = gymnasium.spaces.MultiDiscrete([3, 2])
    model = FixedMultiLogits(5, space, reduction=reduction)
    model.init_state_dict("policy", {"states": np.zeros((1, 5), np.float32)})
    return model


def test_multicategorical_log_prob_reductions_and_entropy():
    logits = np.random.default_rng(1).normal(size=(4, 5)).astype(np.float32)
    first = logits[:, :3] - special.logsumexp(logits[:, :3], axis=-1, keepdims=True)
    second = logits[:, 3:] - special.logsumexp(logits[:, 3:], axis=-1, keepdims=True)
    taken = np.array([[0, 1], [2, 0], [1, 1], [2, 1]])
    per_component = np.stack([first[np.arange(4), taken[:, 0]], second[np.arange(4), taken[:, 1]]], axis=-1)
    entropies = np.stack(
        [
            stats.entropy(special.softmax(logits[:, :3], -1), axis=-1),
            stats.entropy(special.softmax(logits[:, 3:], -1), axis=-1),
        ],
        axis=-1,
    )
    for reduction, expected, expected_entropy in (
        ("sum", per_component.sum(-1, keepdims=True), entropies.sum(-1, keepdims=True)),
        ("none", per_component, entropies),
    ):
        model = multicategorical(reduction)
        actions, log_prob, outputs = model.act({"states": logits, "taken_actions": taken}, "policy")
        assert actions.shape == (4, 2) and actions.dtype == jnp.int32
        np.testing.assert_allclose(log_prob, expected, rtol=1e-5, err_msg=reduction)
        assert np.all(np.isnan(outputs["stddev"])) and outputs["stddev"].shape == expected.shape
        np.testing.assert_allclose(model.get_entropy(outputs, "policy"), expected_entropy, rtol=1e-5, err_msg=reduction)


def test_multicategorical_sample_log_prob_and_independent_components():
    model = multicategorical()
    logits = np.zeros((2000, 5), np.float32)  # uniform components: log-prob of any sample is log(1/3) + log(1/2)
    actions, log_prob, _ = model.act({"states": logits}, "policy")
    actions = np.asarray(actions)
    assert actions[:, 0].max() == 2 and actions[:, 1].max() == 1 and actions.min() == 0
    np.testing.assert_allclose(log_prob, np.log(1 / 6), rtol=1e-5)
    # the components use independent keys: their samples are not tied to each other
    assert 0.28 < np.mean(actions[:, 0] == actions[:, 1]) < 0.39  # 1/3 when independent


# ------------------------------------------------------------------------------------------ Model base


def test_space_sizes_and_default_state_dict_inputs():
    model = Linear(gymnasium.spaces.Discrete(5), gymnasium.spaces.MultiDiscrete([2, 3]))
    assert (model.num_observations, model.num_actions) == (5, 5)
    model = Linear(
        gymnasium.spaces.Dict({"b": gymnasium.spaces.Box(-1, 1, (2,)), "a": gymnasium.spaces.Discrete(3)}), 2
    )
    assert model.num_observations == 5
    model.init_state_dict("value")  # sample of the Dict space flattens to 2 + 1 columns
    assert model.state_dict.params["params"]["Dense_0"]["kernel"].shape == (3, 2)
    assert Linear(None, None).num_observations is None


def test_random_act_shapes_and_bounds():
    np.random.seed(0)
    model = Linear(OBSERVATIONS, gymnasium.spaces.Box(-0.5, 0.5, (3,)))
    actions, log_prob, outputs = model.random_act({"states": states(batch=50)})
    assert actions.shape == (50, 3) and log_prob is None and outputs == {}
    assert np.all(np.abs(actions) <= 0.5)
    discrete = Linear(OBSERVATIONS, gymnasium.spaces.Discrete(4)).random_act({"states": states(batch=50)})[0]
    assert discrete.shape == (50, 1) and set(np.unique(discrete)) <= {0, 1, 2, 3}
    with pytest.raises(NotImplementedError):
        Linear(OBSERVATIONS, gymnasium.spaces.MultiDiscrete([2, 2])).random_act({"states": states()})


UNBOUNDED_SPACES = {
    "both infinite": gymnasium.spaces.Box(-np.inf, np.inf, (3,), np.float32),
    "half-bounded and mixed": gymnasium.spaces.Box(
        np.array([0.0, -np.inf, -1.0, -np.inf], np.float32), np.array([np.inf, 2.0, 1.0, np.inf], np.float32)
    ),
    "2-d, near the float32 limits": gymnasium.spaces.Box(
        np.array([[-3e38], [3e38]], np.float32), np.array([[3e38], [np.inf]], np.float32)
    ),
}


@pytest.mark.parametrize("space", UNBOUNDED_SPACES.values(), ids=UNBOUNDED_SPACES.keys())
def test_random_act_with_infinite_bounds_gives_finite_actions_inside_the_space(space):
    # skrl called np.random.uniform(-inf, inf): OverflowError
    np.random.seed(0)
    actions, log_prob, outputs = Linear(OBSERVATIONS, space).random_act({"states": states(batch=1000)})
    assert actions.shape == (1000, space.low.size) and actions.dtype == np.float32
    assert log_prob is None and outputs == {}
    actions = np.asarray(actions)
    assert np.isfinite(actions).all()
    assert (actions >= space.low.reshape(-1)).all() and (actions <= space.high.reshape(-1)).all()


def test_random_act_rule_per_kind_of_bound():
    # uniform in [-1, 1] (mean 0, variance 1/3); standard normal (mean 0, variance 1);
    # 0 + Exponential(1) (mean 1, variance 1); 2 - Exponential(1) (mean 1, variance 1)
    np.random.seed(0)
    space = gymnasium.spaces.Box(
        np.array([-1.0, -np.inf, 0.0, -np.inf], np.float32), np.array([1.0, np.inf, np.inf, 2.0], np.float32)
    )
    actions = np.asarray(Linear(OBSERVATIONS, space).random_act({"states": states(batch=200_000)})[0], np.float64)
    np.testing.assert_allclose(actions.mean(0), [0.0, 0.0, 1.0, 1.0], atol=0.01)
    np.testing.assert_allclose(actions.var(0), [1 / 3, 1.0, 1.0, 1.0], atol=0.02)
    assert (actions[:, 2] >= 0).all() and (actions[:, 3] <= 2).all() and (actions[:, 1] < 0).any()


def test_random_act_draws_each_dimension_from_its_own_bounds():
    np.random.seed(0)
    space = gymnasium.spaces.Box(np.array([-1.0, 0.0], np.float32), np.array([2.0, 5.0], np.float32))
    actions = np.asarray(Linear(OBSERVATIONS, space).random_act({"states": states(batch=2000)})[0])
    first, second = actions[:, 0], actions[:, 1]  # skrl 1.4.3 drew both from dimension 0's [-1, 2]
    assert first.min() >= -1.0 and first.max() <= 2.0 and first.min() < -0.9 and first.max() > 1.9
    assert second.min() >= 0.0 and second.max() <= 5.0 and second.min() < 0.1 and second.max() > 4.9


def test_load_checks_the_whole_file_before_changing_anything(tmp_path):
    model = Linear(OBSERVATIONS, ACTIONS)
    model.init_state_dict("value", key=jax.random.PRNGKey(1))
    before = jax.tree_util.tree_map(np.asarray, model.state_dict.params)

    wider = Linear(OBSERVATIONS, gymnasium.spaces.Box(-1.0, 1.0, (5,)))  # kernel (3, 5), bias (5,)
    wider.init_state_dict("value", key=jax.random.PRNGKey(2))
    path = str(tmp_path / "wider.flax")
    wider.save(path)
    with pytest.raises(ValueError, match=r"does not match this Linear.*kernel: shape \(3, 5\) in the checkpoint"):
        model.load(path)

    as_float16 = jax.tree_util.tree_map(lambda x: x.astype(jnp.float16), model.state_dict.params)
    model.save(path, model.state_dict.replace(params=as_float16))
    with pytest.raises(ValueError, match="dtype float16 in the checkpoint, float32 here"):
        model.load(path)

    (tmp_path / "garbage.flax").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="garbage.flax' could not be read as a model checkpoint.*corrupt"):
        model.load(str(tmp_path / "garbage.flax"))
    for got, expected in zip(jax.tree_util.tree_leaves(model.state_dict.params), jax.tree_util.tree_leaves(before)):
        np.testing.assert_array_equal(got, expected)


def test_usage_errors():
    model = Linear(OBSERVATIONS, ACTIONS)
    with pytest.raises(RuntimeError, match="init_state_dict"):
        model.act({"states": states()}, "value")

    class NoMixin(Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            nn.Module.__post_init__(self)

    with pytest.raises(NotImplementedError):
        NoMixin(OBSERVATIONS, ACTIONS).act({"states": states()})
    with pytest.raises(ValueError):
        model.set_mode("testing")
    model.set_mode("train")
    assert model.training
    with pytest.raises(NotImplementedError):
        model.migrate(path="x.pt")


def test_init_weights_biases_parameters():
    model = Linear(OBSERVATIONS, ACTIONS)
    model.init_state_dict("value")
    model.init_weights("constant", 0.5)
    model.init_biases("constant_", -1.0)
    dense = model.state_dict.params["params"]["Dense_0"]
    np.testing.assert_array_equal(dense["kernel"], np.full((3, 3), 0.5))
    np.testing.assert_array_equal(dense["bias"], np.full(3, -1.0))
    model.init_parameters("zeros")
    assert all(np.all(leaf == 0) for leaf in jax.tree_util.tree_leaves(model.state_dict.params))
    with pytest.raises(ValueError, match="Unknown initializer"):
        model.init_weights("no_such_initializer")
    with pytest.raises(ValueError, match="constant"):
        model.init_biases()  # the default name needs a value


def test_update_parameters_polyak_and_save_load(tmp_path):
    target, source = Linear(OBSERVATIONS, ACTIONS), Linear(OBSERVATIONS, ACTIONS)
    target.init_state_dict("value", key=jax.random.PRNGKey(1))
    source.init_state_dict("value", key=jax.random.PRNGKey(2))
    old = jax.tree_util.tree_map(np.asarray, target.state_dict.params)
    new = jax.tree_util.tree_map(np.asarray, source.state_dict.params)
    target.update_parameters(source, polyak=0.25)
    for got, a, b in zip(*(jax.tree_util.tree_leaves(t) for t in (target.state_dict.params, old, new))):
        np.testing.assert_allclose(got, 0.75 * a + 0.25 * b, rtol=1e-6)
    path = str(tmp_path / "model.flax")
    source.save(path)
    target.set_mode("train")
    target.load(path)
    assert not target.training
    for got, expected in zip(jax.tree_util.tree_leaves(target.state_dict.params), jax.tree_util.tree_leaves(new)):
        np.testing.assert_array_equal(got, expected)
    target.update_parameters(source)  # polyak 1: copy
    assert target.state_dict.params is source.state_dict.params


def test_no_torch_import():
    import subprocess
    import sys

    code = (
        "import sys; import skrl_like.jax.models, skrl_like.jax.resources.optimizers, "
        "skrl_like.jax.utils.model_instantiators; assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_discrete_policies_report_their_most_likely_action_for_deterministic_evaluation():
    import flax.linen as nn
    import gymnasium as gym

    from skrl_like.jax.models import CategoricalMixin, Model, MultiCategoricalMixin

    class Fixed(CategoricalMixin, Model):
        def __init__(
            self,
            observation_space=gym.spaces.Box(-1, 1, (1,)),
            action_space=gym.spaces.Discrete(3),
            device=None,
            **kwargs,
        ):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            CategoricalMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            return jnp.array([[0.1, 2.0, -1.0], [3.0, 0.0, 0.0]]) + 0 * inputs["states"], {}

    class FixedMulti(MultiCategoricalMixin, Model):
        def __init__(
            self,
            observation_space=gym.spaces.Box(-1, 1, (1,)),
            action_space=gym.spaces.MultiDiscrete([2, 3]),
            device=None,
            **kwargs,
        ):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            MultiCategoricalMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            return jnp.array([[0.0, 1.0, 5.0, 0.0, 0.0]]) + 0 * inputs["states"], {}

    single, multi = Fixed(), FixedMulti()
    single.init_state_dict("policy")
    multi.init_state_dict("policy")
    assert np.asarray(single.act({"states": jnp.zeros((2, 1))})[2]["mean_actions"]).tolist() == [[1], [0]]
    assert np.asarray(multi.act({"states": jnp.zeros((1, 1))})[2]["mean_actions"]).tolist() == [[1, 0]]


def test_init_parameters_draws_every_leaf_from_its_own_key():
    """skrl 1.4.3 initialised every leaf from the one ``config.jax.key``: same-shaped leaves came out equal (the biases
    of two 8-unit layers) and every leaf started with the same numbers. Here each leaf has its own key, and a second
    call draws new values."""
    import flax.linen as nn
    import gymnasium
    import numpy as np

    from skrl_like.jax.models import DeterministicMixin, Model

    class Net(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            x = nn.relu(nn.Dense(8)(inputs["states"]))
            return nn.Dense(8)(x), {}

    model = Net(gymnasium.spaces.Box(-1, 1, (8,)), gymnasium.spaces.Box(-1, 1, (8,)))
    model.init_state_dict("net")
    model.init_parameters("normal", stddev=0.1)
    params = model.state_dict.params["params"]
    first, second = np.asarray(params["Dense_0"]["bias"]), np.asarray(params["Dense_1"]["bias"])
    kernel_0, kernel_1 = np.asarray(params["Dense_0"]["kernel"]), np.asarray(params["Dense_1"]["kernel"])
    assert not np.allclose(first, second)
    assert not np.allclose(kernel_0, kernel_1)
    assert 0.05 < np.std(kernel_0) < 0.2
    model.init_parameters("normal", stddev=0.1)
    assert not np.allclose(np.asarray(model.state_dict.params["params"]["Dense_0"]["kernel"]), kernel_0)
