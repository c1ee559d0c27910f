"""The JAX recurrent layer: hidden states carried across calls, zeroed after an episode end inside a training
sequence (checked against stepping each flax cell one step at a time by hand), LSTM's two tensors, the acting and
training layouts for several sequence lengths and env counts, and the errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skrl_like.jax.models.recurrent import RECURRENT_CELLS, RecurrentLayer, hidden_state_sizes

KINDS = ["GRU", "LSTM", "RNN"]
FEATURES, HIDDEN = 3, 5


def random_states(kind, num_layers, batch, seed=0):
    keys = jax.random.split(jax.random.key(seed), 2)
    return [
        jax.random.normal(key, size) for key, size in zip(keys, hidden_state_sizes(kind, num_layers, batch, HIDDEN))
    ]


def zero_states(kind, num_layers, batch):
    return [jnp.zeros(size) for size in hidden_state_sizes(kind, num_layers, batch, HIDDEN)]


def init_layer(kind, num_layers, sequence_length=1, batch=2):
    layer = RecurrentLayer(kind, HIDDEN, num_layers, sequence_length)
    params = layer.init(jax.random.key(7), jnp.zeros((batch, FEATURES)), zero_states(kind, num_layers, batch))
    return layer, params


def step_by_hand(kind, params, sequence, states, terminated):
    """Reference: each layer's flax cell applied one step and one row at a time, zeroed after the row's done."""
    cell = RECURRENT_CELLS[kind](features=HIDDEN)
    sequence, states = np.asarray(sequence), [np.asarray(state) for state in states]
    batch, length = sequence.shape[:2]
    outputs = np.zeros((batch, length, HIDDEN), dtype=np.float32)
    finals = [np.array(state) for state in states]
    num_layers = states[0].shape[0]
    for row in range(batch):
        row_states = [[state[layer, row : row + 1] for state in states] for layer in range(num_layers)]
        for step in range(length):
            if step > 0 and terminated is not None and terminated[row, step - 1]:
                row_states = [[np.zeros_like(part) for part in layer] for layer in row_states]
            x = sequence[row : row + 1, step]
            for layer in range(num_layers):
                carry = (row_states[layer][1], row_states[layer][0]) if kind == "LSTM" else row_states[layer][0]
                cell_params = {"params": params["params"][f"layer_{layer}"]["cell"]}
                carry, x = cell.apply(cell_params, carry, x)
                row_states[layer] = [carry[1], carry[0]] if kind == "LSTM" else [carry]
            outputs[row, step] = np.asarray(x[0])
        for index, final in enumerate(finals):
            for layer in range(num_layers):
                final[layer, row] = np.asarray(row_states[layer][index][0])
    return outputs, finals


@pytest.mark.parametrize("kind", KINDS)
def test_run_sequence_resets_after_dones_as_stepping_by_hand(kind):
    layer, params = init_layer(kind, 2)
    sequence = jax.random.normal(jax.random.key(1), (3, 6, FEATURES))
    states = random_states(kind, 2, 3)
    terminated = np.zeros((3, 6), dtype=bool)
    terminated[0, 1] = terminated[2, 3] = terminated[2, 5] = True
    outputs, finals = layer.apply(params, sequence, states, jnp.asarray(terminated), method=RecurrentLayer.run_sequence)
    unreset, _ = layer.apply(params, sequence, states, None, method=RecurrentLayer.run_sequence)
    expected, expected_finals = step_by_hand(kind, params, sequence, states, terminated)
    np.testing.assert_allclose(outputs, expected, atol=1e-5, rtol=1e-5)
    for final, reference in zip(finals, expected_finals):
        np.testing.assert_allclose(final, reference, atol=1e-5, rtol=1e-5)
    assert not np.allclose(outputs[0, 2:], unreset[0, 2:])
    assert not np.allclose(outputs[2, 4:], unreset[2, 4:])
    np.testing.assert_allclose(outputs[1], unreset[1], atol=1e-6)
    np.testing.assert_allclose(outputs[:, :2], unreset[:, :2], atol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_hidden_state_is_carried_across_acting_calls(kind):
    layer, params = init_layer(kind, 1, batch=4)
    sequence = jax.random.normal(jax.random.key(2), (4, 3, FEATURES))
    states = zero_states(kind, 1, 4)
    outputs = []
    for step in range(3):
        output, states = layer.apply(params, sequence[:, step], states)
        outputs.append(output)
    expected, expected_finals = step_by_hand(kind, params, sequence, zero_states(kind, 1, 4), None)
    fresh, _ = layer.apply(params, sequence[:, 2], zero_states(kind, 1, 4))
    np.testing.assert_allclose(jnp.stack(outputs, axis=1), expected, atol=1e-5, rtol=1e-5)
    for final, reference in zip(states, expected_finals):
        np.testing.assert_allclose(final, reference, atol=1e-5, rtol=1e-5)
    assert not np.allclose(outputs[2], fresh)


def test_lstm_carries_two_tensors_hidden_then_cell():
    layer, params = init_layer("LSTM", 2, batch=4)
    assert hidden_state_sizes("LSTM", 2, 4, HIDDEN) == [(2, 4, HIDDEN), (2, 4, HIDDEN)]
    states = random_states("LSTM", 2, 4, seed=3)
    features = jax.random.normal(jax.random.key(4), (4, FEATURES))
    output, (hidden, cell) = layer.apply(params, features, states)
    _, (expected_hidden, expected_cell) = step_by_hand("LSTM", params, features[:, None], states, None)
    np.testing.assert_allclose(hidden, expected_hidden, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(cell, expected_cell, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(output, hidden[-1], atol=1e-6)
    assert not np.allclose(hidden, cell)


@settings(max_examples=10, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    sequence_length=st.integers(1, 5),
    num_sequences=st.integers(1, 4),
    num_layers=st.integers(1, 2),
    data=st.data(),
)
def test_training_layout_matches_stepping_by_hand(kind, sequence_length, num_sequences, num_layers, data):
    layer, params = init_layer(kind, num_layers, sequence_length)
    rows = num_sequences * sequence_length
    features = jax.random.normal(jax.random.key(5), (rows, FEATURES))
    stored = random_states(kind, num_layers, rows, seed=6)
    terminated = np.array(data.draw(st.lists(st.booleans(), min_size=rows, max_size=rows))).reshape(rows, 1)
    outputs, finals = layer.apply(params, features, stored, jnp.asarray(terminated), True)
    expected, expected_finals = step_by_hand(
        kind,
        params,
        np.asarray(features).reshape(num_sequences, sequence_length, FEATURES),
        [np.asarray(state)[:, ::sequence_length] for state in stored],
        terminated.reshape(num_sequences, sequence_length),
    )
    assert outputs.shape == (rows, HIDDEN)
    assert [tuple(final.shape) for final in finals] == hidden_state_sizes(kind, num_layers, num_sequences, HIDDEN)
    np.testing.assert_allclose(outputs, expected.reshape(rows, HIDDEN), atol=1e-5, rtol=1e-5)
    for final, reference in zip(finals, expected_finals):
        np.testing.assert_allclose(final, reference, atol=1e-5, rtol=1e-5)


def test_sequence_length_that_does_not_divide_the_batch_is_refused():
    layer, params = init_layer("GRU", 1, sequence_length=4)
    with pytest.raises(ValueError, match=r"batch of 10 rows is not a whole number of sequences of length 4"):
        layer.apply(params, jnp.zeros((10, FEATURES)), zero_states("GRU", 1, 10), None, True)


@pytest.mark.parametrize(
    ("kind", "sizes", "message"),
    [
        (
            "GRU",
            [(1, 2, HIDDEN + 1)],
            r"\[\(1, 2, 6\)\] do not match the GRU layer, which takes 1 tensor\(s\) of shape",
        ),
        ("LSTM", [(1, 2, HIDDEN)], r"do not match the LSTM layer, which takes 2 tensor\(s\) of shape \(1, 2, 5\)"),
    ],
)
def test_hidden_states_not_matching_the_layer_are_refused(kind, sizes, message):
    layer = RecurrentLayer(kind, HIDDEN)
    with pytest.raises(ValueError, match=message):
        layer.init(jax.random.key(0), jnp.zeros((2, FEATURES)), [jnp.zeros(size) for size in sizes])


def test_training_layout_compiles_with_static_shapes():
    layer, params = init_layer("GRU", 1, sequence_length=4)
    apply = jax.jit(lambda p, x, s, d: layer.apply(p, x, s, d, True))
    outputs, finals = apply(params, jnp.ones((8, FEATURES)), zero_states("GRU", 1, 8), jnp.zeros((8, 1), dtype=bool))
    assert outputs.shape == (8, HIDDEN) and finals[0].shape == (1, 2, HIDDEN)


def make_hand_written_policy(num_envs: int, sequence_length: int):
    """A skrl-style JAX model: it declares its specification and threads inputs['rnn'] through RecurrentLayer."""
    import flax.linen as nn
    import gymnasium

    from skrl_like.jax.models import DeterministicMixin, Model

    class Policy(DeterministicMixin, Model):
        def __init__(self, observation_space=None, action_space=None, device=None, parent=None, name=None):
            Model.__init__(self, observation_space, action_space, device, parent, name)
            DeterministicMixin.__init__(self)

        def setup(self):
            self.gru = RecurrentLayer("GRU", HIDDEN, 1, sequence_length)
            self.head = nn.Dense(1)

        def get_specification(self):
            return {"rnn": {"sequence_length": sequence_length, "sizes": [(1, num_envs, HIDDEN)]}}

        def __call__(self, inputs, role=""):
            terminated = inputs.get("terminated")
            features, states = self.gru(inputs["states"], inputs["rnn"], terminated, terminated is not None)
            return self.head(features), {"rnn": states}

    space = gymnasium.spaces.Box(-1, 1, (FEATURES,))
    return Policy(observation_space=space, action_space=gymnasium.spaces.Box(-1, 1, (1,)))


def test_a_hand_written_skrl_style_model_initialises_and_threads_its_hidden_state():
    policy = make_hand_written_policy(num_envs=2, sequence_length=4)
    policy.init_state_dict("policy")  # traced with zero hidden states of the specification's sizes
    params = policy.state_dict.params
    assert params["params"]["gru"]["layer_0"]["cell"]["hn"]["kernel"].shape == (HIDDEN, HIDDEN)
    states = [jnp.zeros(size) for size in policy.get_specification()["rnn"]["sizes"]]
    observations = jax.random.normal(jax.random.key(8), (3, 2, FEATURES))
    actions = []
    for step in range(3):
        action, _, outputs = policy.act({"states": observations[step], "rnn": states}, "policy")
        states = outputs["rnn"]
        actions.append(action)
    gru_params = {"params": params["params"]["gru"]}
    expected, _ = step_by_hand("GRU", gru_params, jnp.swapaxes(observations, 0, 1), [jnp.zeros((1, 2, HIDDEN))], None)
    head = params["params"]["head"]
    reference = expected @ np.asarray(head["kernel"]) + np.asarray(head["bias"])
    np.testing.assert_allclose(jnp.stack(actions, axis=1), reference, atol=1e-5, rtol=1e-5)
