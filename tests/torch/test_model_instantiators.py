"""The torch model instantiators: built layer stacks, output shapes and values, errors on invalid definitions."""

import os
import pickle

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn

from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.utils.model_instantiators import (
    Shape,
    categorical_model,
    deterministic_model,
    gaussian_model,
    multicategorical_model,
    multivariate_gaussian_model,
    shared_model,
)
from skrl_like.torch.utils.model_instantiators.common import one_hot_encoding

OBSERVATION_SPACE = gymnasium.spaces.Box(-1.0, 1.0, (4,))
ACTION_SPACE = gymnasium.spaces.Box(-2.0, 2.0, (2,))
SPACES = {"observation_space": OBSERVATION_SPACE, "action_space": ACTION_SPACE, "device": "cpu"}
NETWORK = [{"name": "net", "input": "OBSERVATIONS", "layers": [16, 8], "activations": "elu"}]


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def layer_types(sequential: nn.Sequential) -> list:
    return [type(module) for module in sequential]


def test_gaussian_model_layer_stack_output_and_log_std():
    policy = gaussian_model(
        **SPACES, clip_actions=True, initial_log_std=-0.5, network=NETWORK, output="2 * tanh(ACTIONS)"
    )
    policy.init_state_dict("policy")
    assert isinstance(policy, GaussianMixin) and isinstance(policy, Model)
    assert type(policy).__name__ == "GaussianModel"
    # lazy layers are materialised into ordinary ones by init_state_dict
    assert layer_types(policy.net_container) == [nn.Linear, nn.ELU, nn.Linear, nn.ELU, nn.Linear]
    assert [policy.net_container[i].out_features for i in (0, 2, 4)] == [16, 8, 2]
    assert policy.net_container[0].in_features == 4
    torch.testing.assert_close(policy.log_std_parameter.detach(), torch.full((2,), -0.5))
    assert policy.log_std_parameter.requires_grad

    x = torch.randn(5, 4)
    actions, log_prob, outputs = policy.act({"states": x}, role="policy")
    assert actions.shape == (5, 2) and log_prob.shape == (5, 1)
    expected_mean = 2 * torch.tanh(policy.net_container(x))  # the expression, computed by hand
    torch.testing.assert_close(outputs["mean_actions"], expected_mean)
    assert actions.abs().max() <= 2.0


def test_parameter_names_follow_skrl_generated_models():
    policy = gaussian_model(**SPACES, network=NETWORK, output="ACTIONS")
    policy.init_state_dict("policy")
    assert set(policy.state_dict()) == {
        "log_std_parameter",
        "net_container.0.weight",
        "net_container.0.bias",
        "net_container.2.weight",
        "net_container.2.bias",
        "net_container.4.weight",
        "net_container.4.bias",
    }


def test_fixed_log_std_and_multivariate():
    policy = multivariate_gaussian_model(
        **SPACES, fixed_log_std=True, initial_log_std=0.3, network=NETWORK, output="ACTIONS"
    )
    policy.init_state_dict("policy")
    assert not policy.log_std_parameter.requires_grad
    actions, log_prob, _ = policy.act({"states": torch.randn(3, 4)}, role="policy")
    assert actions.shape == (3, 2) and log_prob.shape == (3, 1)


def test_deterministic_q_function_with_concatenated_input():
    network = [{"name": "q", "input": "concatenate([STATES, ACTIONS])", "layers": [32], "activations": ["relu"]}]
    critic = deterministic_model(**SPACES, network=network, output="ONE")
    critic.init_state_dict("critic")
    assert layer_types(critic.q_container) == [nn.Linear, nn.ReLU, nn.Linear]
    assert critic.q_container[0].in_features == 6 and critic.q_container[2].out_features == 1
    x, a = torch.randn(7, 4), torch.randn(7, 2)
    values, log_prob, _ = critic.act({"states": x, "taken_actions": a}, role="critic")
    assert values.shape == (7, 1) and log_prob is None
    torch.testing.assert_close(values, critic.q_container(torch.cat([x, a], dim=1)))


def test_states_actions_token_and_explicit_sizes():
    network = [
        {
            "name": "body",
            "input": "Shape.STATES_ACTIONS",
            "layers": [{"linear": {"in_features": "STATES_ACTIONS", "out_features": 8}}, {"linear": [4, False]}],
            "activations": ["tanh", "sigmoid"],
        }
    ]
    critic = deterministic_model(**SPACES, network=network, output="body")
    assert layer_types(critic.body_container) == [nn.Linear, nn.Tanh, nn.LazyLinear, nn.Sigmoid]
    assert critic.body_container[0].in_features == 6  # not lazy: in_features was given
    critic.init_state_dict("critic")
    assert critic.body_container[2].bias is None
    values, _, _ = critic.act({"states": torch.randn(3, 4), "taken_actions": torch.randn(3, 2)})
    assert values.shape == (3, 4)  # output is the last container itself: no final layer


def test_several_containers_referring_to_each_other():
    network = [
        {"name": "features", "input": "STATES", "layers": [8], "activations": "relu"},
        {"name": "head", "input": "concatenate([features, ACTIONS])", "layers": [{"linear": {"features": 4}}]},
    ]
    critic = deterministic_model(**SPACES, network=network, output="ONE")
    critic.init_state_dict("critic")
    assert layer_types(critic.head_container) == [nn.Linear, nn.Linear]
    assert critic.head_container[0].in_features == 8 + 2
    x, a = torch.randn(2, 4), torch.randn(2, 2)
    expected = critic.head_container(torch.cat([critic.features_container(x), a], dim=1))
    torch.testing.assert_close(critic.act({"states": x, "taken_actions": a})[0], expected)


def test_convolution_flatten_and_permute_on_images():
    image_space = gymnasium.spaces.Box(0.0, 1.0, (8, 8, 3))
    network = [
        {
            "name": "cnn",
            "input": "permute(STATES, (0, 3, 1, 2))",
            "layers": [
                {"conv2d": [4, 3, 1, "SAME"]},
                {"conv2d": {"features": 2, "kernel_size": 2, "strides": 2}},
                "flatten",
            ],
            "activations": "relu",
        }
    ]
    value = deterministic_model(image_space, ACTION_SPACE, "cpu", network=network, output="ONE")
    value.init_state_dict("value")
    assert layer_types(value.cnn_container) == [nn.Conv2d, nn.ReLU, nn.Conv2d, nn.ReLU, nn.Flatten, nn.Linear]
    assert value.cnn_container[0].padding == "same" and value.cnn_container[2].stride == (2, 2)
    assert value.cnn_container[5].in_features == 2 * 4 * 4
    flat_images = torch.rand(3, 8 * 8 * 3)  # agents pass flat observations
    assert value.act({"states": flat_images})[0].shape == (3, 1)


def test_indexing_dict_observations_and_slices():
    space = gymnasium.spaces.Dict(
        {"joints": gymnasium.spaces.Box(-1, 1, (3,)), "goal": gymnasium.spaces.Box(-1, 1, (2,))}
    )
    network = [{"name": "net", "input": "concatenate([STATES['joints'][:, 0:2], -STATES['goal']])", "layers": [5]}]
    model = deterministic_model(space, ACTION_SPACE, "cpu", network=network, output="net")
    model.init_state_dict("value")
    flat = torch.randn(4, 5)  # sorted keys: goal (2) then joints (3)
    expected = model.net_container(torch.cat([flat[:, 2:4], -flat[:, 0:2]], dim=1))
    torch.testing.assert_close(model.act({"states": flat})[0], expected)


def test_categorical_model_with_one_hot_observations():
    observation_space = gymnasium.spaces.Discrete(5)
    action_space = gymnasium.spaces.Discrete(3)
    network = [
        {"name": "net", "input": "one_hot_encoding(OBSERVATION_SPACE, STATES)", "layers": [8], "activations": "tanh"}
    ]
    policy = categorical_model(observation_space, action_space, "cpu", network=network, output="ACTIONS")
    policy.init_state_dict("policy")
    assert policy.net_container[0].in_features == 5 and policy.net_container[2].out_features == 3
    actions, log_prob, outputs = policy.act({"states": torch.tensor([[0], [4]])}, role="policy")
    assert actions.shape == (2, 1) and log_prob.shape == (2, 1) and outputs["net_output"].shape == (2, 3)


def test_one_hot_encoding():
    encoded = one_hot_encoding(gymnasium.spaces.MultiDiscrete([2, 3]), torch.tensor([[1, 0], [0, 2]]))
    expected = torch.tensor([[0.0, 1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 1.0]])
    torch.testing.assert_close(encoded, expected)
    with pytest.raises(ValueError, match="Discrete"):
        one_hot_encoding(OBSERVATION_SPACE, torch.zeros(1, 4))


def test_multicategorical_model():
    action_space = gymnasium.spaces.MultiDiscrete([2, 4])
    policy = multicategorical_model(OBSERVATION_SPACE, action_space, "cpu", network=NETWORK, output="ACTIONS")
    policy.init_state_dict("policy")
    assert policy.net_container[4].out_features == 6
    actions, log_prob, _ = policy.act({"states": torch.randn(3, 4)}, role="policy")
    assert actions.shape == (3, 2) and log_prob.shape == (3, 1)


def test_legacy_parameters_are_converted():
    policy = gaussian_model(
        **SPACES,
        input_shape=Shape.STATES,
        hiddens=[8, 8],
        hidden_activation=["relu", "relu"],
        output_shape=Shape.ACTIONS,
        output_activation="tanh",
        output_scale=2.0,
    )
    policy.init_state_dict("policy")
    assert layer_types(policy.net_container) == [nn.Linear, nn.ReLU, nn.Linear, nn.ReLU, nn.Linear]
    x = torch.randn(4, 4)
    _, _, outputs = policy.act({"states": x})
    torch.testing.assert_close(outputs["mean_actions"], 2.0 * torch.tanh(policy.net_container(x)))


def test_return_source_is_a_readable_description():
    source = gaussian_model(**SPACES, network=NETWORK, output="2 * tanh(ACTIONS)", return_source=True)
    assert isinstance(source, str)
    assert "class GaussianModel(GaussianMixin, Model):" in source
    assert "self.net_container = nn.Sequential(" in source and "nn.LazyLinear(out_features=16)" in source
    assert "output = 2 * tanh(net)" in source and "return output, self.log_std_parameter, {}" in source


# --- shared model -----------------------------------------------------------------------------------------


def make_shared(single_forward_pass=True):
    return shared_model(
        **SPACES,
        structure=["GaussianMixin", "DeterministicMixin"],
        roles=["policy", "value"],
        parameters=[
            {"network": NETWORK, "output": "ACTIONS", "clip_actions": False, "initial_log_std": -1.0},
            {"output": "ONE", "clip_actions": False},
        ],
        single_forward_pass=single_forward_pass,
    )


def count_trunk_calls(model):
    calls = []
    model.net_container.register_forward_hook(lambda *args: calls.append(1))
    return calls


def test_shared_model_structure_and_dispatch():
    model = make_shared()
    model.init_state_dict("policy")
    model.init_state_dict("value")
    assert isinstance(model, GaussianMixin) and isinstance(model, DeterministicMixin)
    assert layer_types(model.net_container) == [nn.Linear, nn.ELU, nn.Linear, nn.ELU]  # no embedded final layer
    assert model.policy_layer.out_features == 2 and model.value_layer.out_features == 1
    torch.testing.assert_close(model.log_std_parameter.detach(), torch.full((2,), -1.0))

    x = torch.randn(6, 4)
    actions, log_prob, outputs = model.act({"states": x}, role="policy")
    values, value_log_prob, _ = model.act({"states": x}, role="value")
    assert actions.shape == (6, 2) and log_prob.shape == (6, 1) and values.shape == (6, 1) and value_log_prob is None
    trunk = model.net_container(x)
    torch.testing.assert_close(outputs["mean_actions"], model.policy_layer(trunk))
    torch.testing.assert_close(values, model.value_layer(trunk))
    assert model.get_entropy(role="policy").shape == (6, 2)
    assert model.distribution(role="policy").stddev.shape == (6, 2)
    with pytest.raises(ValueError, match="Unknown role 'critic'"):
        model.act({"states": x}, role="critic")
    with pytest.raises(AttributeError, match="DeterministicMixin"):
        model.get_entropy(role="value")


def test_shared_model_single_forward_pass():
    model = make_shared(single_forward_pass=True)
    model.init_state_dict("policy")
    model.init_state_dict("value")
    calls = count_trunk_calls(model)
    x = torch.randn(3, 4)
    model.act({"states": x}, role="policy")
    model.act({"states": x}, role="value")
    assert len(calls) == 1  # the value call reused the policy's trunk output
    model.act({"states": x}, role="value")
    assert len(calls) == 2  # cache consumed: a value-only call recomputes

    separate = make_shared(single_forward_pass=False)
    separate.init_state_dict("policy")
    separate.init_state_dict("value")
    calls = count_trunk_calls(separate)
    separate.act({"states": x}, role="policy")
    separate.act({"states": x}, role="value")
    assert len(calls) == 2


def test_shared_model_value_call_before_any_policy_call():
    model = make_shared()  # [fix] skrl's generated class never initialises the cache attribute
    values, _, _ = model.act({"states": torch.randn(2, 4)}, role="value")
    assert values.shape == (2, 1)


def test_shared_model_pickles_and_rejects_bad_structures():
    model = make_shared()
    model.init_state_dict("policy")
    restored = pickle.loads(pickle.dumps(model))
    assert type(restored).__name__ == "SharedModel"
    with pytest.raises(ValueError, match="Unknown mixin"):
        shared_model(**SPACES, structure=["GaussianMixin", "BetaMixin"], roles=["a", "b"], parameters=[{}, {}])
    with pytest.raises(ValueError, match="exactly two"):
        shared_model(**SPACES, roles=["policy"], parameters=[{"network": NETWORK}])
    with pytest.raises(ValueError, match="Unknown key"):
        shared_model(
            **SPACES, roles=["policy", "value"], parameters=[{"network": NETWORK, "unnormalized_log_prob": True}, {}]
        )


# --- invalid definitions ------------------------------------------------------------------------------------


def build(input_expression="STATES", layers=(8,), activations="relu", output="ONE"):
    network = [{"name": "net", "input": input_expression, "layers": list(layers), "activations": activations}]
    return deterministic_model(**SPACES, network=network, output=output)


@pytest.mark.parametrize(
    "expression, token",
    [
        ("__import__('os')", "__import__"),
        ("__import__('os').system('touch pwned')", "system"),
        ("os.system('ls')", "os.system"),
        ("STATES.__class__", "STATES.__class__"),
        ("eval('1')", "eval"),
        ("lambda: STATES", "Lambda"),
        ("[s for s in STATES]", "ListComp"),
        ("STATES[__import__('os')]", "__import__"),
        ("STATE_SPACE", "STATE_SPACE"),
        ("unknown_name", "unknown_name"),
        ("STATES +", "syntax"),
        ("'text'", "text"),
    ],
)
def test_malicious_or_invalid_input_expressions_are_rejected(expression, token, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError) as error:
        build(input_expression=expression)
    where, _, problem = str(error.value).partition(" for network container 'net' input: ")
    assert where.startswith("Invalid expression") and problem
    assert token in problem  # the message names what is wrong, not only the expression
    assert not os.path.exists(tmp_path / "pwned")


@pytest.mark.parametrize("output", ["__import__('os')", "exec('x = 1')", "ACTIONS + ONE", "getattr(ONE, 'x')"])
def test_invalid_output_expressions_are_rejected(output):
    with pytest.raises(ValueError, match="network output"):
        build(output=output)


def test_invalid_layers_and_activations():
    with pytest.raises(ValueError, match="'linear'.*only layer written as a string is 'flatten'"):
        build(layers=["linear"])
    with pytest.raises(ValueError, match="Unknown layer type 'lstm'"):
        build(layers=[{"lstm": 8}])
    with pytest.raises(ValueError, match="Unknown linear argument 'units'"):
        build(layers=[{"linear": {"units": 8}}])
    with pytest.raises(ValueError, match="Invalid size 'HIDDEN'"):
        build(layers=[{"linear": {"out_features": "HIDDEN"}}])
    with pytest.raises(ValueError, match="Unknown activation 'swish'"):
        build(activations="swish")
    with pytest.raises(NotImplementedError, match="2 layers but 3 activations"):
        build(layers=[8, 8], activations=["relu", "tanh", "elu"])
    with pytest.raises(NotImplementedError, match="Multiple outputs"):
        build(output=["ACTIONS", "ONE"])
    with pytest.raises(ValueError, match="Invalid name"):
        deterministic_model(**SPACES, network=[{"name": "my net", "input": "STATES", "layers": [8]}], output="ONE")
    with pytest.raises(ValueError, match="network is empty"):
        deterministic_model(**SPACES, network=[], output="ONE")
    with pytest.raises(TypeError, match="clip_action"):
        deterministic_model(**SPACES, network=NETWORK, output="ONE", clip_action=True)


def test_activation_expansion_rules():
    assert layer_types(build(layers=[8, 8], activations=["tanh"]).net_container) == [
        nn.LazyLinear, nn.Tanh, nn.LazyLinear, nn.Tanh, nn.LazyLinear,
    ]  # fmt: skip
    assert layer_types(build(layers=[8, 8], activations=["tanh", "relu"]).net_container) == [
        nn.LazyLinear, nn.Tanh, nn.LazyLinear, nn.ReLU, nn.LazyLinear,
    ]  # fmt: skip
    assert layer_types(build(layers=[8], activations=[]).net_container) == [nn.LazyLinear, nn.LazyLinear]


def test_spaces_given_as_sizes():
    model = deterministic_model(4, 2, "cpu", network=NETWORK, output="ACTIONS")
    model.init_state_dict("value", {"states": torch.zeros(1, 4)})
    assert model.act({"states": torch.randn(3, 4)})[0].shape == (3, 2)
    assert np.isfinite(model.act({"states": torch.randn(3, 4)})[0].detach().numpy()).all()


def test_a_kernel_larger_than_its_input_is_named_with_the_container_and_sizes():
    small = gymnasium.spaces.Box(0.0, 1.0, (6, 6, 3), dtype=np.float32)
    network = [
        {
            "name": "encoder",
            "input": "permute(STATES, (0, 3, 1, 2))",
            "layers": [{"conv2d": [8, 3, 1]}, {"conv2d": [8, 5, 1]}, "flatten"],
            "activations": "relu",
        }
    ]
    model = deterministic_model(small, gymnasium.spaces.Box(-1, 1, (2,)), network=network, output="ACTIONS")
    with pytest.raises(
        ValueError, match=r"'encoder': its conv2d layer 1 \(kernel_size \(5, 5\).*spatial size \(4, 4\)"
    ):
        model.act({"states": torch.zeros(2, 6 * 6 * 3)})


# --- recurrent containers (Isaac Lab 3.0's form) -------------------------------------------------------------

RECURRENT_NETWORK = [
    {"name": "mlp", "input": "OBSERVATIONS", "layers": [8], "activations": "elu"},
    {"name": "rnn", "input": "mlp", "type": "GRU", "layers": [6], "num_layers": 2, "sequence_length": 3},
]


def recurrent_policy(kind="GRU"):
    network = [RECURRENT_NETWORK[0], {**RECURRENT_NETWORK[1], "type": kind}]
    model = gaussian_model(**SPACES, network=network, output="ACTIONS")
    model.num_envs = 4
    return model


@pytest.mark.parametrize("kind", ["GRU", "LSTM", "RNN"])
def test_recurrent_container_builds_and_acts_with_hidden_states(kind):
    model = recurrent_policy(kind)
    sizes = [(2, 4, 6)] * (2 if kind == "LSTM" else 1)
    assert model.get_specification() == {"rnn": {"sequence_length": 3, "sizes": sizes}}
    assert gaussian_model(**SPACES, network=NETWORK, output="ACTIONS").get_specification() == {}
    model.set_mode("eval")
    states, hidden = torch.randn(4, 4), [torch.randn(size) for size in sizes]
    _, _, outputs = model.act({"states": states, "rnn": hidden}, role="policy")
    with torch.no_grad():  # by hand: the MLP, the torch recurrent module on one step, the final layer
        features = torch.nn.functional.elu(model.mlp_container[0](states))
        recurrent = model.rnn_container.rnn
        output, final = recurrent(features[:, None], hidden[0] if kind != "LSTM" else tuple(hidden))
        mean = model.rnn_container.layers[0](output[:, 0])
    torch.testing.assert_close(outputs["mean_actions"], mean)
    for new, expected in zip(outputs["rnn"], [final] if kind != "LSTM" else final):
        torch.testing.assert_close(new, expected)


def test_recurrent_model_resets_hidden_states_at_dones_in_a_training_sequence():
    torch.manual_seed(0)
    model = recurrent_policy()
    length, num_sequences = 3, 2
    rows = length * num_sequences
    states = torch.randn(rows, 4)
    stored = torch.randn(2, rows, 6)  # per row, as a memory holds them; each sequence's first is used
    terminated = torch.tensor([False, True, False, False, False, False]).view(rows, 1)
    model.set_mode("train")
    mean, _, outputs = model.compute({"states": states, "rnn": [stored], "terminated": terminated}, role="policy")
    # reference: the same model acting one step at a time, its state zeroed after the done
    model.set_mode("eval")
    expected = []
    with torch.no_grad():
        for sequence in range(num_sequences):
            hidden = stored[:, sequence * length : sequence * length + 1]
            for step in range(length):
                row = sequence * length + step
                if step > 0 and terminated[row - 1]:
                    hidden = torch.zeros_like(hidden)
                step_mean, _, step_outputs = model.compute({"states": states[row : row + 1], "rnn": [hidden]})
                hidden = step_outputs["rnn"][0]
                expected.append(step_mean)
    torch.testing.assert_close(mean.detach(), torch.cat(expected), atol=1e-6, rtol=1e-5)
    assert outputs["rnn"][0].shape == (2, num_sequences, 6)


def test_recurrent_model_without_hidden_states_says_what_it_needs():
    model = recurrent_policy()
    model.set_mode("eval")
    with pytest.raises(ValueError, match=r"This model is recurrent \(container 'rnn' is a GRU\).*inputs\['rnn'\]"):
        model.act({"states": torch.zeros(4, 4)}, role="policy")
    with pytest.raises(ValueError, match=r"do not match the GRU layer, which takes 1 tensor\(s\) of shape \(2, 4, 6\)"):
        model.act({"states": torch.zeros(4, 4), "rnn": [torch.zeros(1, 4, 6)]}, role="policy")
    model.set_mode("train")
    with pytest.raises(ValueError, match=r"batch of 4 rows is not a whole number of sequences of length 3"):
        model.act({"states": torch.zeros(4, 4), "rnn": [torch.zeros(2, 4, 6)]}, role="policy")


def test_recurrent_shared_model_serves_both_roles_from_one_trunk():
    model = shared_model(
        **SPACES,
        structure=["GaussianMixin", "DeterministicMixin"],
        roles=["policy", "value"],
        parameters=[{"network": RECURRENT_NETWORK, "output": "ACTIONS"}, {"output": "ONE"}],
    )
    model.set_mode("eval")
    inputs = {"states": torch.randn(4, 4), "rnn": [torch.randn(2, 4, 6)]}
    _, _, policy_outputs = model.act(inputs, role="policy")
    values, _, value_outputs = model.act(inputs, role="value")
    assert values.shape == (4, 1)
    torch.testing.assert_close(policy_outputs["rnn"][0], value_outputs["rnn"][0])
    assert model.get_specification()["rnn"]["sizes"] == [(2, 1, 6)]  # num_envs defaults to 1


def test_recurrent_model_description_shows_the_recurrent_layer_and_its_states():
    source = gaussian_model(**SPACES, network=RECURRENT_NETWORK, output="ACTIONS", return_source=True)
    assert "RecurrentContainer(nn.GRU(hidden_size=6, num_layers=2, batch_first=True), sequence_length=3" in source
    assert 'rnn, rnn_states = self.rnn_container(mlp, inputs["rnn"], inputs.get("terminated"), self.training)' in source
    assert 'return rnn, self.log_std_parameter, {"rnn": rnn_states}' in source


def test_recurrent_container_on_observations_pickles_and_reloads(tmp_path):
    network = [{"name": "memory", "input": "OBSERVATIONS", "type": "LSTM", "layers": [5]}]
    model = deterministic_model(**SPACES, network=network, output="ONE")
    assert model.memory_container.rnn.input_size == 4  # the observation size, read up front
    model.set_mode("eval")
    inputs = {"states": torch.randn(3, 4), "rnn": [torch.randn(1, 3, 5), torch.randn(1, 3, 5)]}
    values, _, outputs = model.act(inputs)
    clone = pickle.loads(pickle.dumps(model))
    clone_values, _, clone_outputs = clone.act(inputs)
    torch.testing.assert_close(clone_values, values)
    model.save(str(tmp_path / "memory.pt"))
    other = deterministic_model(**SPACES, network=network, output="ONE")
    other.load(str(tmp_path / "memory.pt"))
    other.set_mode("eval")
    torch.testing.assert_close(other.act(inputs)[0], values)
    torch.testing.assert_close(clone_outputs["rnn"][1], outputs["rnn"][1])


def test_recurrent_container_whose_input_size_is_unknown_is_refused():
    network = [
        {"name": "mlp", "input": "OBSERVATIONS", "layers": [8], "activations": "elu"},
        {"name": "rnn", "input": "2 * mlp", "type": "GRU", "layers": [4]},
    ]
    with pytest.raises(ValueError, match=r"The input of recurrent container 'rnn' has no known size: feed it"):
        deterministic_model(**SPACES, network=network, output="ONE")
