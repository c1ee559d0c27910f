"""Recurrent containers in the network language (Isaac Lab 3.0's form): what they parse to, the specification
they give a model, and the definitions refused with the reason."""

import pytest
import yaml

from skrl_like.core.network_definition import DEFAULT_SEQUENCE_LENGTH, Recurrent, parse_model, recurrent_container

ISAACLAB_STYLE = """
network:
  - name: mlp
    input: OBSERVATIONS
    layers: [64, 64]
    activations: elu
  - name: rnn
    input: mlp
    type: GRU
    layers: [64]
    num_layers: 1
output: ACTIONS
"""


def test_the_isaaclab_yaml_form_parses_to_a_recurrent_container():
    definition = parse_model("GaussianMixin", yaml.safe_load(ISAACLAB_STYLE))
    mlp, rnn = definition.containers
    assert mlp.recurrent is None and [layer.options["features"] for layer in mlp.layers] == [64, 64]
    assert rnn.recurrent == Recurrent("GRU", 64, 1, DEFAULT_SEQUENCE_LENGTH)
    assert DEFAULT_SEQUENCE_LENGTH == 16
    # the output token's final layer follows the recurrent layer inside its container
    assert [(layer.kind, layer.options) for layer in rnn.layers] == [("linear", {"features": "ACTIONS"})]
    assert recurrent_container(definition.containers) is rnn


def test_type_is_case_insensitive_and_sequence_length_and_num_layers_are_read():
    network = [{"name": "memory", "input": "STATES", "type": "lstm", "layers": [8], "num_layers": 3}]
    network[0]["sequence_length"] = 32
    definition = parse_model("DeterministicMixin", {"network": network, "output": "ONE"})
    recurrent = definition.containers[0].recurrent
    assert recurrent == Recurrent("LSTM", 8, 3, 32)
    assert recurrent.specification(num_envs=5) == {"rnn": {"sequence_length": 32, "sizes": [(3, 5, 8), (3, 5, 8)]}}
    assert Recurrent("RNN", 4).specification(2) == {"rnn": {"sequence_length": 16, "sizes": [(1, 2, 4)]}}


def test_a_feedforward_network_has_no_recurrent_container():
    definition = parse_model("DeterministicMixin", {"network": [{"name": "n", "input": "STATES", "layers": [4]}]})
    assert recurrent_container(definition.containers) is None


@pytest.mark.parametrize(
    ("container", "message"),
    [
        (
            {"type": "Transformer", "layers": [8]},
            r"Unknown type 'Transformer' in network container 'rnn'.*GRU, LSTM, RNN",
        ),
        ({"type": "GRU", "layers": [8, 8]}, r"a GRU container takes one hidden size, e.g. layers: \[64\]"),
        ({"type": "GRU", "layers": 8}, r"Invalid layers 8 .*takes one hidden size"),
        ({"type": "GRU", "layers": [0]}, r"Invalid hidden size 0 in network container 'rnn': use a positive integer"),
        ({"type": "GRU", "layers": [8], "num_layers": 0}, r"Invalid num_layers 0 .*positive integer"),
        ({"type": "LSTM", "layers": [8], "sequence_length": -1}, r"Invalid sequence_length -1"),
        ({"type": "GRU", "layers": [8], "activations": "elu"}, r"is a GRU container: it takes no activations"),
        ({"layers": [8], "num_layers": 2}, r"has num_layers but no type: only recurrent containers"),
    ],
)
def test_invalid_recurrent_containers_are_refused_with_the_reason(container, message):
    network = [{"name": "rnn", "input": "STATES", **container}]
    with pytest.raises(ValueError, match=message):
        parse_model("DeterministicMixin", {"network": network, "output": "ONE"})


def test_a_second_recurrent_container_is_refused():
    network = [
        {"name": "first", "input": "STATES", "type": "GRU", "layers": [8]},
        {"name": "second", "input": "first", "type": "GRU", "layers": [8]},
    ]
    with pytest.raises(ValueError, match=r"'second' is a second recurrent container \(after 'first'\).*num_layers"):
        parse_model("DeterministicMixin", {"network": network, "output": "ONE"})
