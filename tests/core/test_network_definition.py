"""The network-definition language: one parser, one set of rules, and both backends agreeing on every case."""

import gymnasium
import numpy as np
import pytest

from skrl_like.core.network_definition import (
    OUTPUT_KEY,
    Activation,
    Binary,
    Concatenate,
    Constant,
    Index,
    Layer,
    Name,
    OneHot,
    Permute,
    Shape,
    Space,
    Unary,
    generate_containers,
    get_num_units,
    instantiator_definition,
    parse_shared_model,
)


def container(layers=(8,), activations="relu", input="STATES", name="net"):
    return {"name": name, "input": input, "layers": list(layers), "activations": activations}


# --- the parser: definition -> parsed description ------------------------------------------------------------

VALID = {
    "layers_and_activations": (
        [container([64, "FLATTEN", {"conv2d": [8, 3, 2, "SAME", False]}], activations="ELU")],
        "",
        [
            Layer("linear", {"features": 64}, "elu"),
            Layer("flatten", {}, None),  # no activation after a flatten layer
            Layer("conv2d", {"features": 8, "kernel_size": 3, "stride": 2, "padding": "same", "bias": False}, "elu"),
        ],
        (None, "ACTIONS", None),
    ),
    "keyword_layers_tokens_and_final_layer": (
        [
            container(
                [
                    {"linear": {"out_features": "Shape.STATES", "use_bias": False, "in_features": 4}},
                    {"conv2d": {"out_channels": 2, "kernel_size": [2, 3], "strides": 1, "padding": 1}},
                    {"flatten": [1, -1]},
                ],
                activations=["tanh", "", "relu"],
            )
        ],
        "ACTIONS",
        [
            Layer("linear", {"features": "STATES", "bias": False, "in_features": 4}, "tanh"),
            Layer("conv2d", {"features": 2, "kernel_size": (2, 3), "stride": 1, "padding": 1}, None),
            Layer("flatten", {"start_dim": 1, "end_dim": -1}, None),
            Layer("linear", {"features": "ACTIONS"}, None),  # the ACTIONS token's layer, embedded
        ],
        ("ACTIONS", "ACTIONS", None),
    ),
    "output_expression": (
        [container([16, 4.0], activations=[])],
        "2 * tanh(Shape.ONE)",
        [Layer("linear", {"features": 16}), Layer("linear", {"features": 4}), Layer("linear", {"features": "ONE"})],
        ("ONE", "ONE", Binary("*", Constant(2), Activation("tanh", Name(OUTPUT_KEY)))),
    ),
    "output_is_the_last_container": (
        [container([3])],
        "net",
        [Layer("linear", {"features": 3}, "relu")],
        (None, "ACTIONS", None),
    ),
    "shape_member_as_output": ([container([3])], Shape.ONE, None, ("ONE", "ONE", None)),
}


@pytest.mark.parametrize("case", VALID, ids=list(VALID))
def test_valid_definitions_parse_to_the_expected_description(case):
    network, output, layers, (token, size, tree) = VALID[case]
    containers, parsed = generate_containers(network, output)
    if layers is not None:
        assert containers[-1].layers == layers
    assert (parsed.token, parsed.size) == (token, size)
    assert (parsed.expression and parsed.expression.tree) == tree


INPUTS = {
    "OBSERVATIONS": Name("states"),
    "Shape.STATES": Name("states"),
    "ACTIONS": Name("taken_actions"),
    "STATES_ACTIONS": Concatenate((Name("states"), Name("taken_actions"))),
    "concatenate([features, -ACTIONS])": Concatenate((Name("features"), Unary("-", Name("taken_actions")))),
    "STATES['joints'][:, 0:2]": Index(Index(Name("states"), "joints"), (slice(None), slice(0, 2))),
    "PERMUTE(STATES, (0, 3, 1, 2))": Permute(Name("states"), (0, 3, 1, 2)),
    "one_hot_encoding(OBSERVATION_SPACE, STATES)": OneHot(Space("observation_space"), Name("states")),
    "features ** 2 / 3": Binary("/", Binary("**", Name("features"), Constant(2)), Constant(3)),
    "Sigmoid(features)": Activation("sigmoid", Name("features")),
}


@pytest.mark.parametrize("source", INPUTS)
def test_input_expressions_parse_to_trees(source):
    network = [container([4], name="features"), container([2], input=source, name="head")]
    containers, _ = generate_containers(network, "")
    assert containers[1].input.tree == INPUTS[source]


# (network, output) -> (error type, message fragment); the same table runs through both backends below
NET = [container([8])]
INVALID = {
    "unknown_activation": ([container(activations="swish")], "", ValueError, "Unknown activation 'swish'"),
    "string_layer_other_than_flatten": (
        [container(["dense"])],
        "",
        ValueError,
        "only layer written as a string is 'flatten'",
    ),
    "unknown_layer_keyword": (
        [container([{"linear": {"units": 8}}])],
        "",
        ValueError,
        "Unknown linear argument 'units'",
    ),
    "unknown_layer_type": ([container([{"lstm": 8}])], "", ValueError, "Unknown layer type 'lstm'"),
    "negative_size": ([container([-3])], "", ValueError, "sizes must be positive"),
    "fractional_size": ([container([4.5])], "", ValueError, "Invalid size 4.5"),
    "unknown_size_token": ([container([{"linear": "HIDDEN"}])], "", ValueError, "Invalid size 'HIDDEN'"),
    "boolean_bias_only": ([container([{"linear": [4, "no"]}])], "", ValueError, "Invalid bias 'no'"),
    "conv_without_kernel": ([container([{"conv2d": {"features": 4}}])], "", ValueError, "needs kernel_size"),
    "bad_padding": ([container([{"conv2d": [4, 3, 1, "full"]}])], "", ValueError, "Invalid padding 'full'"),
    "too_many_activations": (
        [container([8, 8], ["relu", "tanh", "elu"])],
        "",
        NotImplementedError,
        "2 layers but 3 activations",
    ),
    "name_not_an_identifier": ([container(name="my net")], "", ValueError, "Invalid name 'my net'"),
    "reserved_name_token": ([container(name="ACTIONS")], "", ValueError, "reserved by the network language"),
    "reserved_name_activation": ([container(name="Tanh")], "", ValueError, "reserved by the network language"),
    "private_name": ([container(name="_net")], "", ValueError, "not starting with '_'"),
    "duplicate_name": ([container(), container()], "", ValueError, "Duplicate network container name 'net'"),
    "missing_input": ([{"name": "net", "layers": [4]}], "", ValueError, "has no 'input'"),
    "unknown_container_key": ([{**container(), "units": 4}], "", ValueError, "Unknown key(s) ['units']"),
    "empty_network": ([], "ONE", ValueError, "The network is empty"),
    "network_not_a_list": ({"name": "net"}, "ONE", ValueError, "use a list of containers"),
    "import_in_input": ([container(input="__import__('os')")], "", ValueError, "unknown function '__import__'"),
    "attribute_access": ([container(input="STATES.__class__")], "", ValueError, "attribute access"),
    "lambda": ([container(input="lambda: STATES")], "", ValueError, "Lambda expressions"),
    "conditional": ([container(input="STATES if 1 else 0")], "", ValueError, "IfExp expressions"),
    "string_constant": ([container(input="'a' * 10")], "", ValueError, "constant 'a' is not allowed"),
    "computed_index": ([container(input="STATES[STATES]")], "", ValueError, "index 'STATES' is not allowed"),
    "huge_exponent": ([container(input="STATES ** 1000")], "", ValueError, "exponent 1000 is too large"),
    "computed_exponent": ([container(input="STATES ** (10 ** 10)")], "", ValueError, "must be a number literal"),
    "keyword_arguments": (
        [container(input="concatenate([STATES], axis=0)")],
        "",
        ValueError,
        "takes no keyword arguments",
    ),
    "self_reference": ([container(input="net")], "", ValueError, "unknown name 'net'"),
    "state_space": ([container(input="STATE_SPACE")], "", ValueError, "STATE_SPACE is not defined on models"),
    "bare_space": ([container(input="ACTION_SPACE")], "", ValueError, "only be the first argument of one_hot"),
    "syntax_error": ([container(input="STATES +")], "", ValueError, "syntax error"),
    "too_long": ([container(input="x" * 2000)], "", ValueError, "longer than 1000 characters"),
    "empty_input": ([container(input="  ")], "", ValueError, "the expression is empty"),
    "output_with_both_tokens": (NET, "ACTIONS + ONE", ValueError, "uses both ACTIONS and ONE"),
    "output_import": (NET, "__import__('os')", ValueError, "for network output: unknown function"),
    "several_outputs": (NET, ["ACTIONS", "ONE"], NotImplementedError, "Multiple outputs"),
}


@pytest.mark.parametrize("case", INVALID, ids=list(INVALID))
def test_invalid_definitions_are_refused_with_the_reason(case):
    network, output, error, fragment = INVALID[case]
    with pytest.raises(error) as raised:
        generate_containers(network, output)
    assert fragment in str(raised.value)


def test_sizes_and_tokens():
    assert get_num_units("STATES_ACTIONS", 4, 2) == 6 and get_num_units(Shape.ONE, 4, 2) == 1
    assert get_num_units("Shape.ACTIONS") == "num_actions" and get_num_units(5) == 5
    with pytest.raises(ValueError, match="needs the model's action space"):
        get_num_units("ACTIONS", 4, None)
    assert Shape.OBSERVATIONS is Shape.STATES


def test_instantiator_parameters_legacy_conversion_and_unknown_keywords():
    definition = instantiator_definition(
        "gaussian_model",
        "GaussianMixin",
        {"clip_actions": True, "initial_log_std": -1, "network": [], "output": ""},
        (),
        {"hiddens": [7], "hidden_activation": ["relu", "relu"], "output_activation": "tanh", "output_scale": 3},
    )
    assert (definition.class_name, definition.log_std) == ("GaussianModel", (-1.0, False))
    assert definition.mixin_options == {
        "clip_actions": True, "clip_log_std": True, "min_log_std": -20, "max_log_std": 2, "reduction": "sum"
    }  # fmt: skip
    assert definition.containers[0].layers == [
        Layer("linear", {"features": 7}, "relu"),
        Layer("linear", {"features": "ACTIONS"}),
    ]
    assert definition.output.expression.tree == Binary("*", Constant(3.0), Activation("tanh", Name(OUTPUT_KEY)))
    with pytest.raises(TypeError, match="unexpected keyword argument.*clip_action;"):
        instantiator_definition("deterministic_model", "DeterministicMixin", {"network": NET}, (), {"clip_action": 1})


def test_shared_model_parameters():
    definition = parse_shared_model(
        ["gaussianmixin", "DeterministicMixin"],
        ["policy", "value"],
        [
            {"network": NET, "output": "ACTIONS", "initial_log_std": 0.5},
            {"class": "DeterministicMixin", "output": "ONE"},
        ],
    )
    assert [role.role for role in definition.roles] == ["policy", "value"]
    assert [role.output.token for role in definition.roles] == ["ACTIONS", "ONE"]
    assert definition.containers[0].layers == [Layer("linear", {"features": 8}, "relu")]  # final layers not embedded
    assert definition.roles[0].log_std == (0.5, False) and definition.roles[1].log_std is None
    with pytest.raises(ValueError, match=r"Unknown key\(s\) \['reduction'\].*role 'value'"):
        parse_shared_model(
            ["GaussianMixin", "DeterministicMixin"], ["p", "value"], [{"network": NET}, {"reduction": "sum"}]
        )
    with pytest.raises(ValueError, match="one Gaussian-type role"):
        parse_shared_model(["GaussianMixin", "MultivariateGaussianMixin"], ["a", "b"], [{"network": NET}, {}])
    with pytest.raises(ValueError, match="Unknown mixin 'BetaMixin'"):
        parse_shared_model(["GaussianMixin", "BetaMixin"], ["a", "b"], [{"network": NET}, {}])


# --- both backends: the same definitions build the same networks, or fail the same way ----------------------

OBSERVATION_SPACE = gymnasium.spaces.Box(-1.0, 1.0, (4,), dtype=np.float32)
ACTION_SPACE = gymnasium.spaces.Box(-2.0, 2.0, (2,), dtype=np.float32)

# instantiator, keyword arguments -> trainable parameter count and output shape for a batch of 3, by hand
BUILDS = {
    "gaussian_mlp": (
        "gaussian_model",
        {"network": [container([16, 8], "elu")], "output": "2 * tanh(ACTIONS)", "initial_log_std": -0.5},
        (4 * 16 + 16) + (16 * 8 + 8) + (8 * 2 + 2) + 2,  # three layers and log_std_parameter
        (3, 2),
    ),
    "containers_reading_each_other": (
        "deterministic_model",
        {
            "network": [
                container([8], name="features"),
                container([{"linear": {"features": 4, "bias": False}}], [], "concatenate([features, ACTIONS])", "head"),
            ],
            "output": "ONE",
        },
        (4 * 8 + 8) + (8 + 2) * 4 + (4 * 1 + 1),
        (3, 1),
    ),
    "size_tokens": (
        "deterministic_model",
        {
            "network": [
                container(
                    [{"linear": {"out_features": "STATES_ACTIONS"}}, {"linear": [3]}],
                    ["tanh", "sigmoid"],
                    "Shape.STATES_ACTIONS",
                )
            ],
            "output": Shape.ONE,
        },
        (6 * 6 + 6) + (6 * 3 + 3) + (3 * 1 + 1),
        (3, 1),
    ),
    "identity_container": (
        "deterministic_model",
        {"network": [container([], input="OBSERVATIONS[:, 0:2] * 2 - 1")], "output": "ACTIONS"},
        2 * 2 + 2,
        (3, 2),
    ),
    "output_is_last_container": (
        "deterministic_model",
        {"network": [container([5])], "output": "net"},
        4 * 5 + 5,
        (3, 5),
    ),
    "legacy_parameters": (
        "deterministic_model",
        {"hiddens": [7], "hidden_activation": ["relu"], "output_activation": "tanh", "output_scale": 3.0},
        (4 * 7 + 7) + (7 * 2 + 2),
        (3, 2),
    ),
}
# invalid cases for both backends: every parser error above, plus one the instantiator's signature catches
REFUSALS = {
    **{case: ("deterministic_model", {"network": network, "output": output}, error, fragment)
       for case, (network, output, error, fragment) in INVALID.items()},
    "unknown_instantiator_keyword": (
        "deterministic_model", {"network": NET, "output": "ONE", "clip_action": True}, TypeError, "clip_action"
    ),
}  # fmt: skip


def _torch_build(function, kwargs):
    import torch

    from skrl_like.torch.utils import model_instantiators

    torch.manual_seed(0)
    model = getattr(model_instantiators, function)(OBSERVATION_SPACE, ACTION_SPACE, "cpu", **kwargs)
    model.init_state_dict("role")
    count = sum(parameter.numel() for parameter in model.parameters() if parameter.requires_grad)
    states, actions = torch.rand(3, 4), torch.rand(3, 2)
    return count, tuple(model.act({"states": states, "taken_actions": actions}, role="role")[0].shape)


def _jax_build(function, kwargs):
    import jax

    from skrl_like.jax.utils import model_instantiators

    model = getattr(model_instantiators, function)(OBSERVATION_SPACE, ACTION_SPACE, **kwargs)
    model.init_state_dict("role")
    count = sum(leaf.size for leaf in jax.tree_util.tree_leaves(model.state_dict.params))
    states, actions = np.random.rand(3, 4).astype(np.float32), np.random.rand(3, 2).astype(np.float32)
    return count, tuple(model.act({"states": states, "taken_actions": actions}, "role")[0].shape)


BACKENDS = {"torch": _torch_build, "jax": _jax_build}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", BUILDS, ids=list(BUILDS))
def test_both_backends_build_the_same_network(backend, case):
    function, kwargs, parameters, shape = BUILDS[case]
    assert BACKENDS[backend](function, kwargs) == (parameters, shape)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", REFUSALS, ids=list(REFUSALS))
def test_both_backends_refuse_the_same_definitions(backend, case):
    function, kwargs, error, fragment = REFUSALS[case]
    with pytest.raises(error) as raised:
        BACKENDS[backend](function, kwargs)
    assert fragment in str(raised.value)
