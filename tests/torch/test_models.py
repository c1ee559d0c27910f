"""Behaviour of the torch Model base and mixins, checked against torch.distributions and hand computation."""

import copy
import math

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn
from torch.distributions import Categorical, MultivariateNormal, Normal

from skrl_like.torch.models import (
    CategoricalMixin,
    DeterministicMixin,
    GaussianMixin,
    Model,
    MultiCategoricalMixin,
    MultivariateGaussianMixin,
    TabularMixin,
)

OBSERVATION_SPACE = gymnasium.spaces.Box(-1.0, 1.0, (3,))
ACTION_SPACE = gymnasium.spaces.Box(-1.0, 1.0, (2,))


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


# --- models whose compute returns hand-made tensors ---------------------------------------------------------


class FixedGaussian(GaussianMixin, Model):
    def __init__(self, mean, log_std, action_space=ACTION_SPACE, **kwargs):
        Model.__init__(self, OBSERVATION_SPACE, action_space, "cpu")
        GaussianMixin.__init__(self, **kwargs)
        self.mean = nn.Parameter(mean.clone())
        self.log_std_parameter = nn.Parameter(log_std.clone())

    def compute(self, inputs, role=""):
        return self.mean.expand(inputs["states"].shape[0], -1), self.log_std_parameter, {}


class FixedMultivariate(MultivariateGaussianMixin, Model):
    def __init__(self, mean, log_std, **kwargs):
        Model.__init__(self, OBSERVATION_SPACE, ACTION_SPACE, "cpu")
        MultivariateGaussianMixin.__init__(self, **kwargs)
        self.mean = nn.Parameter(mean.clone())
        self.log_std_parameter = nn.Parameter(log_std.clone())

    def compute(self, inputs, role=""):
        return self.mean.expand(inputs["states"].shape[0], -1), self.log_std_parameter, {}


class FixedOutput(Model):
    """Returns ``self.net_output`` (one row per state) as the network output."""

    def __init__(self, net_output, action_space, **kwargs):
        Model.__init__(self, OBSERVATION_SPACE, action_space, "cpu")
        self.net_output = nn.Parameter(net_output.clone())

    def compute(self, inputs, role=""):
        return self.net_output, {}


class FixedCategorical(CategoricalMixin, FixedOutput):
    def __init__(self, net_output, unnormalized_log_prob=True):
        FixedOutput.__init__(self, net_output, gymnasium.spaces.Discrete(net_output.shape[-1]))
        CategoricalMixin.__init__(self, unnormalized_log_prob=unnormalized_log_prob)


class FixedMultiCategorical(MultiCategoricalMixin, FixedOutput):
    def __init__(self, net_output, nvec, **kwargs):
        FixedOutput.__init__(self, net_output, gymnasium.spaces.MultiDiscrete(nvec))
        MultiCategoricalMixin.__init__(self, **kwargs)


class FixedDeterministic(DeterministicMixin, FixedOutput):
    def __init__(self, net_output, clip_actions=False):
        FixedOutput.__init__(self, net_output, ACTION_SPACE)
        DeterministicMixin.__init__(self, clip_actions=clip_actions)


def states(batch):
    return torch.zeros(batch, 3)


# --- GaussianMixin -----------------------------------------------------------------------------------------


def test_gaussian_outputs_and_taken_action_log_prob_match_normal():
    mean, log_std = torch.tensor([0.3, -0.2]), torch.tensor([-0.5, 0.1])
    model = FixedGaussian(mean, log_std)
    taken = torch.tensor([[0.1, 0.4], [-0.7, 0.0], [0.5, 0.5]])
    actions, log_prob, outputs = model.act({"states": states(3), "taken_actions": taken}, role="policy")

    reference = Normal(mean, log_std.exp())
    assert actions.shape == (3, 2) and actions.dtype == torch.float32
    assert log_prob.shape == (3, 1)
    torch.testing.assert_close(log_prob, reference.log_prob(taken).sum(-1, keepdim=True))
    torch.testing.assert_close(outputs["mean_actions"], mean.expand(3, -1))
    torch.testing.assert_close(model.get_entropy(role="policy"), reference.entropy().expand(3, -1))
    torch.testing.assert_close(model.distribution(role="policy").stddev, log_std.exp().expand(3, -1))
    torch.testing.assert_close(model.get_log_std(role="policy"), log_std.expand(3, -1))


def test_gaussian_log_prob_gradient_matches_normal():
    mean, log_std = torch.tensor([0.3, -0.2]), torch.tensor([-0.5, 0.1])
    model = FixedGaussian(mean, log_std)
    taken = torch.tensor([[0.1, 0.4], [-0.7, 0.0]])
    _, log_prob, _ = model.act({"states": states(2), "taken_actions": taken})
    log_prob.sum().backward()

    reference_mean = mean.clone().requires_grad_()
    reference_log_std = log_std.clone().requires_grad_()
    Normal(reference_mean, reference_log_std.exp()).log_prob(taken).sum().backward()
    torch.testing.assert_close(model.mean.grad, reference_mean.grad)
    torch.testing.assert_close(model.log_std_parameter.grad, reference_log_std.grad)


def test_gaussian_sampled_actions_follow_the_distribution_and_their_log_prob():
    mean, log_std = torch.tensor([1.0, -2.0]), torch.tensor([-1.0, 0.5])
    model = FixedGaussian(mean, log_std, action_space=gymnasium.spaces.Box(-10, 10, (2,)))
    actions, log_prob, _ = model.act({"states": states(20000)})
    np.testing.assert_allclose(actions.mean(0).detach().numpy(), mean.numpy(), atol=0.05)
    np.testing.assert_allclose(actions.std(0).detach().numpy(), log_std.exp().numpy(), rtol=0.03)
    expected = Normal(mean, log_std.exp()).log_prob(actions.detach()).sum(-1, keepdim=True)
    torch.testing.assert_close(log_prob.detach(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "reduction, reduce",
    [
        ("mean", lambda x: x.mean(-1, keepdim=True)),
        ("prod", lambda x: x.prod(-1, keepdim=True)),
        ("none", lambda x: x),
    ],
)
def test_gaussian_reduction(reduction, reduce):
    mean, log_std = torch.tensor([0.3, -0.2]), torch.tensor([-0.5, 0.1])
    taken = torch.tensor([[0.1, 0.4], [-0.7, 0.0]])
    model = FixedGaussian(mean, log_std, reduction=reduction)
    _, log_prob, _ = model.act({"states": states(2), "taken_actions": taken})
    torch.testing.assert_close(log_prob, reduce(Normal(mean, log_std.exp()).log_prob(taken)))


def test_gaussian_invalid_reduction():
    with pytest.raises(ValueError, match="reduction"):
        FixedGaussian(torch.zeros(2), torch.zeros(2), reduction="max")


def test_gaussian_clip_log_std():
    model = FixedGaussian(torch.zeros(2), torch.tensor([5.0, -30.0]), min_log_std=-20, max_log_std=2)
    model.act({"states": states(1)})
    torch.testing.assert_close(model.distribution().stddev, torch.tensor([[math.exp(2), math.exp(-20)]]))
    unclipped = FixedGaussian(torch.zeros(2), torch.tensor([5.0, -30.0]), clip_log_std=False)
    unclipped.act({"states": states(1)})
    torch.testing.assert_close(unclipped.get_log_std(), torch.tensor([[5.0, -30.0]]))


def test_gaussian_clip_actions_uses_bounds_and_clipped_log_prob():
    mean, log_std = torch.tensor([5.0, -5.0]), torch.tensor([0.0, 0.0])
    model = FixedGaussian(mean, log_std, clip_actions=True)
    actions, log_prob, outputs = model.act({"states": states(100)})
    assert actions.min() >= -1.0 and actions.max() <= 1.0
    # far outside the bounds, (nearly) every sample is clamped to the nearest bound
    assert (actions[:, 0] == 1.0).float().mean() > 0.99 and (actions[:, 1] == -1.0).float().mean() > 0.99
    expected = Normal(mean, log_std.exp()).log_prob(actions.detach()).sum(-1, keepdim=True)
    torch.testing.assert_close(log_prob.detach(), expected)
    torch.testing.assert_close(outputs["mean_actions"].detach(), mean.expand(100, -1))  # never clipped


def test_gaussian_before_act():
    model = FixedGaussian(torch.zeros(2), torch.zeros(2))
    assert model.get_entropy().item() == 0.0 and model.distribution() is None


def test_gaussian_compute_returning_wrong_count_fails_clearly():
    class Wrong(GaussianMixin, Model):
        def __init__(self):
            Model.__init__(self, OBSERVATION_SPACE, ACTION_SPACE, "cpu")
            GaussianMixin.__init__(self)

        def compute(self, inputs, role=""):
            return inputs["states"], {}

    with pytest.raises(ValueError, match=r"returned 2 value\(s\) but GaussianMixin expects \(mean_actions, log_std"):
        Wrong().act({"states": states(3)}, role="policy")


# --- MultivariateGaussianMixin -----------------------------------------------------------------------------


def test_multivariate_gaussian_matches_multivariate_normal_with_skrl_scale_tril():
    mean, log_std = torch.tensor([0.3, -0.2]), torch.tensor([-0.5, 0.1])
    model = FixedMultivariate(mean, log_std)
    taken = torch.tensor([[0.1, 0.4], [-0.7, 0.0], [0.5, 0.5]])
    actions, log_prob, outputs = model.act({"states": states(3), "taken_actions": taken})
    reference = MultivariateNormal(mean, scale_tril=torch.diag(log_std.exp() ** 2))
    assert actions.shape == (3, 2) and log_prob.shape == (3, 1)
    torch.testing.assert_close(log_prob, reference.log_prob(taken).unsqueeze(-1))
    torch.testing.assert_close(model.get_entropy(), reference.entropy().expand(3))
    torch.testing.assert_close(model.distribution().covariance_matrix[0], reference.covariance_matrix)
    torch.testing.assert_close(outputs["mean_actions"], mean.expand(3, -1))


def test_multivariate_gaussian_sampled_log_prob():
    mean, log_std = torch.tensor([0.3, -0.2]), torch.tensor([-0.5, 0.1])
    model = FixedMultivariate(mean, log_std)
    actions, log_prob, _ = model.act({"states": states(5)})
    reference = MultivariateNormal(mean, scale_tril=torch.diag(log_std.exp() ** 2))
    torch.testing.assert_close(log_prob.detach(), reference.log_prob(actions.detach()).unsqueeze(-1))


# --- DeterministicMixin ------------------------------------------------------------------------------------


def test_deterministic_passes_output_through_and_clips():
    output = torch.tensor([[0.5, -3.0], [2.0, 0.0]])
    actions, log_prob, outputs = FixedDeterministic(output).act({"states": states(2)})
    torch.testing.assert_close(actions, output)
    assert log_prob is None and outputs == {}
    clipped, _, _ = FixedDeterministic(output, clip_actions=True).act({"states": states(2)})
    torch.testing.assert_close(clipped, torch.tensor([[0.5, -1.0], [1.0, 0.0]]))


# --- CategoricalMixin ---------------------------------------------------------------------------------------


def test_categorical_logits_match_torch_categorical():
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    model = FixedCategorical(logits)
    taken = torch.tensor([[2.0], [0.0]])  # memories store actions as floats
    actions, log_prob, outputs = model.act({"states": states(2), "taken_actions": taken})
    reference = Categorical(logits=logits)
    assert actions.shape == (2, 1) and actions.dtype == torch.int64
    assert log_prob.shape == (2, 1)
    torch.testing.assert_close(log_prob, reference.log_prob(taken.view(-1).long()).unsqueeze(-1))
    torch.testing.assert_close(model.get_entropy(), reference.entropy())
    torch.testing.assert_close(model.distribution().probs, reference.probs)
    torch.testing.assert_close(outputs["net_output"], logits)


def test_categorical_probabilities_and_sampling_frequencies():
    probs = torch.tensor([[0.2, 0.5, 0.3]]).expand(30000, -1)
    model = FixedCategorical(probs * 4.0, unnormalized_log_prob=False)  # unnormalised probabilities
    actions, log_prob, _ = model.act({"states": states(30000)})
    frequencies = torch.bincount(actions.view(-1), minlength=3).float() / 30000
    np.testing.assert_allclose(frequencies.numpy(), [0.2, 0.5, 0.3], atol=0.015)
    torch.testing.assert_close(log_prob.detach(), torch.log(probs.gather(1, actions)))
    torch.testing.assert_close(model.get_entropy()[0].detach(), Categorical(probs=probs[0]).entropy())


# --- MultiCategoricalMixin ---------------------------------------------------------------------------------


@pytest.mark.parametrize("nvec", [[3, 2, 4], [3, 3]])
def test_multicategorical_matches_separate_categoricals(nvec):
    torch.manual_seed(1)
    logits = torch.randn(4, sum(nvec))
    model = FixedMultiCategorical(logits, nvec)
    taken = torch.stack([torch.randint(n, (4,)) for n in nvec], dim=-1).float()
    actions, log_prob, outputs = model.act({"states": states(4), "taken_actions": taken})
    references = [Categorical(logits=chunk) for chunk in torch.split(logits, nvec, dim=-1)]
    expected = torch.stack([ref.log_prob(taken[:, i].long()) for i, ref in enumerate(references)], dim=-1)
    assert actions.shape == (4, len(nvec)) and actions.dtype == torch.int64
    torch.testing.assert_close(log_prob, expected.sum(-1, keepdim=True))
    entropies = torch.stack([ref.entropy() for ref in references], dim=-1)
    torch.testing.assert_close(model.get_entropy(), entropies.sum(-1, keepdim=True))
    torch.testing.assert_close(model.distribution().probs, references[0].probs)
    torch.testing.assert_close(outputs["net_output"], logits)


def test_multicategorical_reduction_none_and_mean():
    nvec = [3, 2]
    logits = torch.tensor([[1.0, 0.0, -1.0, 0.5, 0.2]])
    taken = torch.tensor([[2, 1]])
    references = [Categorical(logits=chunk) for chunk in torch.split(logits, nvec, dim=-1)]
    expected = torch.stack([ref.log_prob(taken[:, i]) for i, ref in enumerate(references)], dim=-1)
    model = FixedMultiCategorical(logits, nvec, reduction="none")
    _, log_prob, _ = model.act({"states": states(1), "taken_actions": taken})
    torch.testing.assert_close(log_prob, expected)
    assert model.get_entropy().shape == (1, 2)
    model = FixedMultiCategorical(logits, nvec, reduction="mean")
    _, log_prob, _ = model.act({"states": states(1), "taken_actions": taken})
    torch.testing.assert_close(log_prob, expected.mean(-1, keepdim=True))


def test_multicategorical_never_samples_padding_and_has_finite_gradients():
    nvec = [2, 5]
    logits = torch.zeros(5000, 7)
    model = FixedMultiCategorical(logits, nvec)
    actions, log_prob, _ = model.act({"states": states(5000)})
    assert actions[:, 0].max() == 1 and actions[:, 1].max() == 4
    (log_prob.sum() + model.get_entropy().sum()).backward()
    assert torch.isfinite(model.net_output.grad).all()


def test_multicategorical_entropy_gradient_is_finite_for_any_scale_with_padding():
    # found by tests/torch/test_ppo_properties.py: nvec [1, 2] pads component 0 with a -inf logit; the gradient of
    # p log p at that class was (scale * float32 min) * 0 = inf * 0 = NaN once the entropy scale exceeded 1
    nvec = [1, 2]
    model = FixedMultiCategorical(torch.tensor([[0.3, 0.1, -0.4]]), nvec)
    model.act({"states": states(1)})
    (-2.0 * model.get_entropy()).sum().backward()
    p = torch.softmax(torch.tensor([0.1, -0.4]), -1)
    # d(-2 H)/dz_j = 2 p_j (log p_j + H) for the 2-class component; the 1-class component has no gradient
    expected = torch.cat([torch.zeros(1), 2 * p * (p.log() - (p * p.log()).sum())])
    torch.testing.assert_close(model.net_output.grad[0], expected)


def test_multicategorical_probabilities():
    nvec = [2, 3]
    probs = torch.tensor([[0.25, 0.75, 0.2, 0.2, 0.6]])
    taken = torch.tensor([[1, 2]])
    model = FixedMultiCategorical(probs, nvec, unnormalized_log_prob=False)
    _, log_prob, _ = model.act({"states": states(1), "taken_actions": taken})
    torch.testing.assert_close(log_prob, torch.log(torch.tensor([[0.75 * 0.6]])))


def test_multicategorical_requires_multidiscrete():
    class Bad(MultiCategoricalMixin, Model):
        def __init__(self):
            Model.__init__(self, OBSERVATION_SPACE, gymnasium.spaces.Discrete(3), "cpu")
            MultiCategoricalMixin.__init__(self)

    with pytest.raises(ValueError, match="MultiDiscrete"):
        Bad()


# --- Model base ---------------------------------------------------------------------------------------------


def test_num_observations_and_actions_use_one_hot_sizes():
    model = Model(gymnasium.spaces.Discrete(5), gymnasium.spaces.MultiDiscrete([2, 3]), "cpu")
    assert model.num_observations == 5 and model.num_actions == 5
    assert Model(None, (2, 3), "cpu").num_observations is None and Model(None, (2, 3), "cpu").num_actions == 6


def test_random_act_shapes_and_ranges():
    discrete = Model(OBSERVATION_SPACE, gymnasium.spaces.Discrete(4), "cpu")
    actions, log_prob, outputs = discrete.random_act({"states": states(500)})
    assert actions.shape == (500, 1) and log_prob is None and outputs == {}
    assert set(actions.view(-1).tolist()) == {0, 1, 2, 3}

    box = Model(
        OBSERVATION_SPACE,
        gymnasium.spaces.Box(np.array([-1.0, 0.0], np.float32), np.array([2.0, 5.0], np.float32)),
        "cpu",
    )
    actions, _, _ = box.random_act({"states": states(2000)})
    assert actions.shape == (2000, 2) and actions.dtype == torch.float32
    # each dimension from its own bounds (skrl 1.4.3 used those of dimension 0 for all: [-1, 2])
    first, second = actions[:, 0], actions[:, 1]
    assert first.min() >= -1.0 and first.max() <= 2.0 and first.min() < -0.9 and first.max() > 1.9
    assert second.min() >= 0.0 and second.max() <= 5.0 and second.min() < 0.1 and second.max() > 4.9

    with pytest.raises(NotImplementedError, match="random_act"):
        Model(OBSERVATION_SPACE, gymnasium.spaces.MultiDiscrete([2, 2]), "cpu").random_act({"states": states(2)})


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
    # skrl drew torch.rand * (inf - -inf) + -inf: NaN actions sent to the environment
    actions, log_prob, outputs = Model(OBSERVATION_SPACE, space, "cpu").random_act({"states": states(1000)})
    assert actions.shape == (1000, space.low.size) and actions.dtype == torch.float32
    assert log_prob is None and outputs == {}
    assert torch.isfinite(actions).all()
    low, high = torch.tensor(space.low.reshape(-1)), torch.tensor(space.high.reshape(-1))
    assert (actions >= low).all() and (actions <= high).all()


def test_random_act_rule_per_kind_of_bound():
    # uniform in [-1, 1] (mean 0, variance 1/3); standard normal (mean 0, variance 1);
    # 0 + Exponential(1) (mean 1, variance 1); 2 - Exponential(1) (mean 1, variance 1)
    space = gymnasium.spaces.Box(
        np.array([-1.0, -np.inf, 0.0, -np.inf], np.float32), np.array([1.0, np.inf, np.inf, 2.0], np.float32)
    )
    actions = Model(OBSERVATION_SPACE, space, "cpu").random_act({"states": states(200_000)})[0].double()
    torch.testing.assert_close(
        actions.mean(0), torch.tensor([0.0, 0.0, 1.0, 1.0], dtype=torch.double), atol=0.01, rtol=0
    )
    torch.testing.assert_close(
        actions.var(0), torch.tensor([1 / 3, 1.0, 1.0, 1.0], dtype=torch.double), atol=0.02, rtol=0
    )
    assert (actions[:, 2] >= 0).all() and (actions[:, 3] <= 2).all() and (actions[:, 1] < 0).any()


def test_set_mode():
    model = Model(OBSERVATION_SPACE, ACTION_SPACE, "cpu")
    model.set_mode("eval")
    assert not model.training
    model.set_mode("train")
    assert model.training
    with pytest.raises(ValueError, match="train"):
        model.set_mode("evaluation")


class TwoLayer(Model):
    def __init__(self):
        Model.__init__(self, 1, 1, "cpu")
        self.first = nn.Linear(1, 1)
        self.second = nn.Linear(1, 1, bias=False)


def test_update_parameters_polyak_and_copy():
    target, source = TwoLayer(), TwoLayer()
    with torch.no_grad():
        target.first.weight.fill_(1.0)
        target.first.bias.fill_(2.0)
        target.second.weight.fill_(-4.0)
        source.first.weight.fill_(3.0)
        source.first.bias.fill_(0.0)
        source.second.weight.fill_(4.0)
    target.update_parameters(source, polyak=0.25)
    # (1 - 0.25) * target + 0.25 * source, by hand
    assert target.first.weight.item() == pytest.approx(1.5)
    assert target.first.bias.item() == pytest.approx(1.5)
    assert target.second.weight.item() == pytest.approx(-2.0)
    target.update_parameters(source, polyak=1)
    assert target.first.weight.item() == 3.0 and target.second.weight.item() == 4.0
    with pytest.raises(ValueError, match="same architecture"):
        target.update_parameters(nn.Linear(1, 1))


def test_init_weights_and_biases_traverse_linear_and_sequential_children_only():
    class Net(Model):
        def __init__(self):
            Model.__init__(self, 2, 2, "cpu")
            self.direct = nn.Linear(2, 2)
            self.sequence = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Linear(2, 2)))
            self.listed = nn.ModuleList([nn.Linear(2, 2)])  # not traversed (as skrl)

    model = Net()
    listed_before = model.listed[0].weight.detach().clone()
    model.init_weights("constant_", 0.5)
    model.init_biases("constant_", -0.5)
    for layer in (model.direct, model.sequence[0], model.sequence[2][0]):
        assert torch.all(layer.weight == 0.5) and torch.all(layer.bias == -0.5)
    torch.testing.assert_close(model.listed[0].weight, listed_before)
    model.init_parameters("constant_", 0.0)
    assert all(torch.all(parameter == 0.0) for parameter in model.parameters())
    with pytest.raises(AttributeError, match="torch.nn.init"):
        model.init_weights("no_such_init_")


def test_freeze_save_load(tmp_path):
    model = TwoLayer()
    model.freeze_parameters(True)
    assert not any(parameter.requires_grad for parameter in model.parameters())
    model.freeze_parameters(False)
    path = str(tmp_path / "model.pt")
    model.save(path)
    other = TwoLayer()
    other.load(path)
    torch.testing.assert_close(other.first.weight, model.first.weight)
    assert not other.training


def test_load_checks_the_whole_file_before_changing_anything(tmp_path):
    # load_state_dict copies the entries that fit before raising for the ones that do not: a half-loaded model
    model = TwoLayer()
    before = copy.deepcopy(model.state_dict())
    path = str(tmp_path / "model.pt")
    other = TwoLayer()
    other.second = nn.Linear(1, 2, bias=False)  # "first" fits, "second.weight" is (2, 1)
    with torch.no_grad():
        other.first.weight.fill_(7.0)
    other.save(path)
    with pytest.raises(
        ValueError, match=r"does not match this TwoLayer \(second.weight: shape \(2, 1\) in the checkpoint"
    ):
        model.load(path)

    torch.save({**before, "first.bias": before["first.bias"].double()}, path)
    with pytest.raises(ValueError, match="first.bias: dtype torch.float64 in the checkpoint, torch.float32 here"):
        model.load(path)
    torch.save({"first.weight": before["first.weight"], "third.weight": before["first.weight"]}, path)
    with pytest.raises(ValueError, match=r"missing \['first.bias', 'second.weight'\]; unexpected \['third.weight'\]"):
        model.load(path)

    (tmp_path / "garbage.pt").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="garbage.pt' could not be read as a model checkpoint.*corrupt"):
        model.load(str(tmp_path / "garbage.pt"))
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(tensor, before[name], rtol=0, atol=0)


def test_migrate_auto_mapping_and_ambiguity():
    model = TwoLayer()
    external = {"a.weight": torch.full((1, 1), 7.0), "a.bias": torch.full((1,), 8.0), "b": torch.zeros(3)}
    # first.weight and second.weight both have shape (1, 1): ambiguous without a name_map
    assert model.migrate(state_dict=external) is False
    mapped = TwoLayer()
    status = mapped.migrate(
        state_dict={"x.weight": torch.full((1, 1), 7.0), "x.bias": torch.full((1,), 8.0), "y": torch.full((1, 1), 9.0)},
        name_map={"second.weight": "y"},
    )
    assert status is True
    assert mapped.first.weight.item() == 7.0 and mapped.first.bias.item() == 8.0 and mapped.second.weight.item() == 9.0
    with pytest.raises(ValueError, match="exactly one"):
        mapped.migrate()


def test_mixin_after_model_fails_clearly():
    class Misordered(Model, GaussianMixin):
        def __init__(self):
            Model.__init__(self, OBSERVATION_SPACE, ACTION_SPACE, "cpu")
            GaussianMixin.__init__(self)

        def compute(self, inputs, role=""):
            return inputs["states"][:, :2], torch.zeros(2), {}

    with pytest.raises(NotImplementedError, match="GaussianMixin comes after Model"):
        Misordered().act({"states": states(1)})


def test_mixin_initialised_before_model_fails_clearly():
    class Early(GaussianMixin, Model):
        def __init__(self):
            GaussianMixin.__init__(self)

    with pytest.raises(RuntimeError, match="before Model.__init__"):
        Early()


def test_deepcopy_after_act_with_gradients():
    model = FixedGaussian(torch.zeros(2), torch.zeros(2))
    model.act({"states": states(2)})  # caches tensors that belong to an autograd graph
    copied = copy.deepcopy(model)
    torch.testing.assert_close(copied.mean, model.mean)
    assert copied.distribution() is None


# --- shared models (spec §4 pattern) -------------------------------------------------------------------------


class ActorCritic(GaussianMixin, DeterministicMixin, Model):
    def __init__(self):
        Model.__init__(self, OBSERVATION_SPACE, ACTION_SPACE, "cpu")
        GaussianMixin.__init__(self, clip_actions=False, role="policy")
        DeterministicMixin.__init__(self, clip_actions=True, role="value")
        self.trunk = nn.Sequential(nn.Linear(3, 8), nn.ELU())
        self.mean_layer = nn.Linear(8, 2)
        self.value_layer = nn.Linear(8, 2)
        self.log_std_parameter = nn.Parameter(torch.zeros(2))

    def act(self, inputs, role):
        if role == "policy":
            return GaussianMixin.act(self, inputs, role)
        if role == "value":
            return DeterministicMixin.act(self, inputs, role)
        raise ValueError(f"unknown role {role}")

    def compute(self, inputs, role):
        features = self.trunk(inputs["states"])
        if role == "policy":
            return 10 + self.mean_layer(features), self.log_std_parameter, {}
        return 10 + self.value_layer(features), {}


def test_shared_model_dispatches_by_role_and_keeps_mixin_state_apart():
    model = ActorCritic()
    x = torch.randn(4, 3)
    actions, log_prob, outputs = model.act({"states": x}, role="policy")
    values, value_log_prob, _ = model.act({"states": x}, role="value")
    assert actions.shape == (4, 2) and log_prob.shape == (4, 1) and "mean_actions" in outputs
    assert actions.max() > 5  # the policy role does not clip ...
    assert values.max() <= 1.0 and value_log_prob is None  # ... the value role does
    # the policy's distribution survives the value call
    assert model.get_entropy(role="policy").shape == (4, 2)
    torch.testing.assert_close(model.distribution(role="policy").mean, outputs["mean_actions"])
    with pytest.raises(ValueError, match="unknown role"):
        model.act({"states": x}, role="critic")


# --- TabularMixin --------------------------------------------------------------------------------------------


class Table(TabularMixin, Model):
    def __init__(self, num_envs=2):
        Model.__init__(self, gymnasium.spaces.Discrete(4), gymnasium.spaces.Discrete(3), "cpu")
        TabularMixin.__init__(self, num_envs=num_envs)
        self.q_table = torch.zeros((num_envs, 4, 3))

    def compute(self, inputs, role=""):
        rows = self.q_table[torch.arange(self.num_envs).view(-1, 1), inputs["states"]]
        return torch.argmax(rows, dim=-1).view(-1, 1), {}


def test_tabular_act_state_dict_and_checks(tmp_path):
    model = Table()
    model.q_table[0, 1, 2] = 5.0
    actions, log_prob, _ = model.act({"states": torch.tensor([[1], [1]])})
    assert actions.view(-1).tolist() == [2, 0] and log_prob is None
    assert model.table() is model.q_table
    assert set(model.state_dict()) == {"q_table"}

    other = Table()
    other.load_state_dict(model.state_dict())
    torch.testing.assert_close(other.q_table, model.q_table)
    with pytest.raises(ValueError, match="shape"):
        other.load_state_dict({"q_table": torch.zeros(1, 4, 3)})
    with pytest.raises(ValueError, match="no tensor attribute"):
        other.load_state_dict({"v_table": torch.zeros(2, 4, 3)})

    path = str(tmp_path / "table.pt")
    model.save(path)
    loaded = Table()
    loaded.load(path)
    torch.testing.assert_close(loaded.q_table, model.q_table)
    assert "q_table" in repr(model)


def test_tabular_load_reads_one_module_of_an_agent_checkpoint(tmp_path):
    model = Table()
    model.q_table[1, 3, 0] = -2.0
    path = str(tmp_path / "agent.pt")
    torch.save({"policy": model.state_dict(), "optimizer": {"state": {}, "param_groups": []}}, path)  # Agent.save
    loaded = Table()
    with pytest.raises(ValueError, match=r"agent checkpoint with modules \['optimizer', 'policy'\].*module='policy'"):
        loaded.load(path)
    loaded.load(path, module="policy")
    torch.testing.assert_close(loaded.q_table, model.q_table)


def test_discrete_policies_report_their_most_likely_action_for_deterministic_evaluation():
    import gymnasium as gym

    from skrl_like.torch.models import CategoricalMixin, Model, MultiCategoricalMixin

    class Fixed(CategoricalMixin, Model):
        def __init__(self):
            Model.__init__(self, gym.spaces.Box(-1, 1, (1,)), gym.spaces.Discrete(3), "cpu")
            CategoricalMixin.__init__(self)

        def compute(self, inputs, role):
            return torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.0, 0.0]]), {}

    class FixedMulti(MultiCategoricalMixin, Model):
        def __init__(self):
            Model.__init__(self, gym.spaces.Box(-1, 1, (1,)), gym.spaces.MultiDiscrete([2, 3]), "cpu")
            MultiCategoricalMixin.__init__(self)

        def compute(self, inputs, role):
            return torch.tensor([[0.0, 1.0, 5.0, 0.0, 0.0]]), {}

    states = {"states": torch.zeros(2, 1)}
    assert Fixed().act(states)[2]["mean_actions"].tolist() == [[1], [0]]
    assert FixedMulti().act({"states": torch.zeros(1, 1)})[2]["mean_actions"].tolist() == [[1, 0]]


def test_categorical_sampling_frequencies_match_the_probabilities():
    from skrl_like.torch.models.categorical import sample_classes

    torch.manual_seed(0)
    probs = torch.tensor([[0.1, 0.0, 0.6, 0.3]]).expand(200_000, 4)
    counts = torch.bincount(sample_classes(probs).view(-1), minlength=4).double() / 200_000
    assert counts[1] == 0  # a zero-probability class is never drawn
    torch.testing.assert_close(counts, torch.tensor([0.1, 0.0, 0.6, 0.3], dtype=torch.double), atol=4e-3, rtol=0)


@pytest.mark.parametrize("mixin", [GaussianMixin, MultivariateGaussianMixin, DeterministicMixin])
def test_clip_actions_with_a_multidimensional_box_clamps_flat_actions(mixin):
    # found by tests/torch/test_ppo_properties.py: the bounds kept the space's (2, 1) shape and could not broadcast
    # against (batch, 2) actions
    space = gymnasium.spaces.Box(np.array([[-1.0], [0.0]]), np.array([[1.0], [0.5]]), dtype=np.float32)

    class Clipped(mixin, Model):
        def __init__(self):
            Model.__init__(self, OBSERVATION_SPACE, space, "cpu")
            mixin.__init__(self, clip_actions=True)

        def compute(self, inputs, role=""):
            mean = torch.tensor([[5.0, -5.0], [0.5, 0.25], [-5.0, 5.0]])
            return (mean, {}) if mixin is DeterministicMixin else (mean, torch.full((2,), -20.0), {})

    actions, _, _ = Clipped().act({"states": states(3)})
    torch.testing.assert_close(actions, torch.tensor([[1.0, 0.0], [0.5, 0.25], [-1.0, 0.5]]), atol=1e-6, rtol=0)
