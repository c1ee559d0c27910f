"""The torch recurrent layer utility: hidden states carried across calls, zeroed after an episode end inside a
training sequence (checked against stepping the layer one step at a time by hand), LSTM's two tensors, the
acting and training layouts for several sequence lengths and env counts, and the errors."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from skrl_like.torch.models.recurrent import hidden_state_sizes, make_recurrent_module, recurrent_forward, run_sequence

KINDS = ["GRU", "LSTM", "RNN"]
FEATURES, HIDDEN = 3, 5


def zero_states(kind: str, num_layers: int, batch: int) -> list:
    return [torch.zeros(size) for size in hidden_state_sizes(kind, num_layers, batch, HIDDEN)]


def random_states(kind: str, num_layers: int, batch: int) -> list:
    return [torch.randn(size) for size in hidden_state_sizes(kind, num_layers, batch, HIDDEN)]


def step_by_hand(module, sequence, states, terminated):
    """Reference: one module call per step and per row, the row's state set to zero after its done."""
    outputs = torch.zeros(sequence.shape[0], sequence.shape[1], module.hidden_size)
    finals = [state.clone() for state in states]
    for row in range(sequence.shape[0]):
        row_states = [state[:, row : row + 1].clone() for state in states]
        for step in range(sequence.shape[1]):
            if step > 0 and terminated is not None and bool(terminated[row, step - 1]):
                row_states = [torch.zeros_like(state) for state in row_states]
            hidden = row_states[0] if len(row_states) == 1 else tuple(row_states)
            output, hidden = module(sequence[row : row + 1, step : step + 1], hidden)
            row_states = [hidden] if len(row_states) == 1 else list(hidden)
            outputs[row, step] = output[0, 0]
        for final, state in zip(finals, row_states):
            final[:, row] = state[:, 0]
    return outputs, finals


@pytest.mark.parametrize("kind", KINDS)
def test_run_sequence_resets_after_dones_as_stepping_by_hand(kind):
    torch.manual_seed(0)
    module = make_recurrent_module(kind, FEATURES, HIDDEN, num_layers=2)
    sequence = torch.randn(3, 6, FEATURES)
    states = random_states(kind, 2, 3)
    terminated = torch.zeros(3, 6, dtype=torch.bool)
    terminated[0, 1] = terminated[2, 3] = terminated[2, 5] = True  # the last step's done affects no output
    with torch.no_grad():
        outputs, finals = run_sequence(module, sequence, states, terminated)
        expected_outputs, expected_finals = step_by_hand(module, sequence, states, terminated)
        unreset, _ = run_sequence(module, sequence, states, None)
    torch.testing.assert_close(outputs, expected_outputs, atol=1e-6, rtol=1e-5)
    for final, expected in zip(finals, expected_finals):
        torch.testing.assert_close(final, expected, atol=1e-6, rtol=1e-5)
    # the rows with a done differ after it from a run that ignores it; the row without one does not
    assert not torch.allclose(outputs[0, 2:], unreset[0, 2:])
    assert not torch.allclose(outputs[2, 4:], unreset[2, 4:])
    torch.testing.assert_close(outputs[1], unreset[1])
    torch.testing.assert_close(outputs[:, :2], unreset[:, :2])


@pytest.mark.parametrize("kind", KINDS)
def test_hidden_state_is_carried_across_acting_calls(kind):
    torch.manual_seed(1)
    module = make_recurrent_module(kind, FEATURES, HIDDEN)
    sequence = torch.randn(4, 3, FEATURES)
    states = zero_states(kind, 1, 4)
    outputs = []
    with torch.no_grad():
        for step in range(3):
            output, states = recurrent_forward(module, sequence[:, step], states, sequence_length=3)
            outputs.append(output)
        expected, expected_finals = step_by_hand(module, sequence, zero_states(kind, 1, 4), None)
        fresh, _ = recurrent_forward(module, sequence[:, 2], zero_states(kind, 1, 4), sequence_length=3)
    torch.testing.assert_close(torch.stack(outputs, dim=1), expected, atol=1e-6, rtol=1e-5)
    for final, reference in zip(states, expected_finals):
        torch.testing.assert_close(final, reference, atol=1e-6, rtol=1e-5)
    assert not torch.allclose(outputs[2], fresh)  # a forgotten state would give the fresh output


def test_lstm_carries_two_tensors_hidden_then_cell():
    torch.manual_seed(2)
    module = make_recurrent_module("LSTM", FEATURES, HIDDEN, num_layers=2)
    assert hidden_state_sizes("LSTM", 2, 4, HIDDEN) == [(2, 4, HIDDEN), (2, 4, HIDDEN)]
    hidden, cell = torch.randn(2, 4, HIDDEN), torch.randn(2, 4, HIDDEN)
    features = torch.randn(4, FEATURES)
    with torch.no_grad():
        output, (new_hidden, new_cell) = recurrent_forward(module, features, [hidden, cell], sequence_length=1)
        reference, (reference_hidden, reference_cell) = module(features[:, None], (hidden, cell))
    torch.testing.assert_close(new_hidden, reference_hidden)
    torch.testing.assert_close(new_cell, reference_cell)
    torch.testing.assert_close(output, new_hidden[-1])  # the output is the last layer's hidden state
    assert not torch.allclose(new_hidden, new_cell)


@settings(max_examples=15, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    sequence_length=st.integers(1, 5),
    num_sequences=st.integers(1, 4),
    num_layers=st.integers(1, 2),
    data=st.data(),
)
def test_training_layout_matches_stepping_by_hand(kind, sequence_length, num_sequences, num_layers, data):
    torch.manual_seed(3)
    module = make_recurrent_module(kind, FEATURES, HIDDEN, num_layers=num_layers)
    rows = num_sequences * sequence_length
    features = torch.randn(rows, FEATURES)
    # as the memory stores them: a hidden state per row; only each sequence's first is read
    stored = random_states(kind, num_layers, rows)
    flags = data.draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
    terminated = torch.tensor(flags).view(rows, 1)
    with torch.no_grad():
        outputs, finals = recurrent_forward(module, features, stored, sequence_length, terminated, training=True)
        initial = [state[:, ::sequence_length] for state in stored]
        expected, expected_finals = step_by_hand(
            module,
            features.view(num_sequences, sequence_length, FEATURES),
            initial,
            terminated.view(num_sequences, sequence_length),
        )
    assert outputs.shape == (rows, HIDDEN)
    assert [tuple(final.shape) for final in finals] == hidden_state_sizes(kind, num_layers, num_sequences, HIDDEN)
    torch.testing.assert_close(outputs, expected.reshape(rows, HIDDEN), atol=1e-5, rtol=1e-5)
    for final, reference in zip(finals, expected_finals):
        torch.testing.assert_close(final, reference, atol=1e-5, rtol=1e-5)


def test_sequence_length_that_does_not_divide_the_batch_is_refused():
    module = make_recurrent_module("GRU", FEATURES, HIDDEN)
    with pytest.raises(ValueError, match=r"batch of 10 rows is not a whole number of sequences of length 4"):
        recurrent_forward(module, torch.zeros(10, FEATURES), zero_states("GRU", 1, 10), 4, training=True)


@pytest.mark.parametrize(
    ("kind", "sizes", "message"),
    [
        (
            "GRU",
            [(1, 4, HIDDEN + 1)],
            r"\[\(1, 4, 6\)\] do not match the GRU layer, which takes 1 tensor\(s\) of shape",
        ),
        ("LSTM", [(1, 4, HIDDEN)], r"do not match the LSTM layer, which takes 2 tensor\(s\) of shape \(1, 4, 5\)"),
        ("GRU", [(2, 4, HIDDEN)], r"get_specification\(\)\['rnn'\]\['sizes'\]"),
    ],
)
def test_hidden_states_not_matching_the_layer_are_refused(kind, sizes, message):
    module = make_recurrent_module(kind, FEATURES, HIDDEN)
    with pytest.raises(ValueError, match=message):
        recurrent_forward(module, torch.zeros(4, FEATURES), [torch.zeros(size) for size in sizes], 1)


def test_unknown_recurrent_type_is_refused():
    with pytest.raises(ValueError, match=r"Unknown recurrent type 'gru2': use one of GRU, LSTM, RNN"):
        make_recurrent_module("gru2", FEATURES, HIDDEN)


def make_hand_written_policy(num_envs: int, sequence_length: int):
    """A skrl-style model: it declares its specification and threads inputs['rnn'] through the shared utility."""
    import gymnasium

    from skrl_like.torch.models import DeterministicMixin, Model

    class Policy(DeterministicMixin, Model):
        def __init__(self):
            Model.__init__(self, gymnasium.spaces.Box(-1, 1, (FEATURES,)), gymnasium.spaces.Box(-1, 1, (1,)), "cpu")
            DeterministicMixin.__init__(self)
            self.gru = make_recurrent_module("GRU", FEATURES, HIDDEN)
            self.head = torch.nn.Linear(HIDDEN, 1)

        def get_specification(self):
            return {"rnn": {"sequence_length": sequence_length, "sizes": [(1, num_envs, HIDDEN)]}}

        def compute(self, inputs, role=""):
            features, states = recurrent_forward(
                self.gru, inputs["states"], inputs["rnn"], sequence_length, inputs.get("terminated"), self.training
            )
            return self.head(features), {"rnn": states}

    return Policy()


def test_a_hand_written_skrl_style_model_threads_its_hidden_state():
    torch.manual_seed(4)
    policy = make_hand_written_policy(num_envs=2, sequence_length=4)
    assert policy.get_specification()["rnn"]["sizes"] == [(1, 2, HIDDEN)]
    policy.set_mode("eval")
    states = [torch.zeros(size) for size in policy.get_specification()["rnn"]["sizes"]]
    observations = torch.randn(3, 2, FEATURES)
    actions = []
    with torch.no_grad():
        for step in range(3):
            action, _, outputs = policy.act({"states": observations[step], "rnn": states})
            states = outputs["rnn"]
            actions.append(action)
        expected, _ = step_by_hand(policy.gru, observations.transpose(0, 1), zero_states("GRU", 1, 2), None)
    torch.testing.assert_close(torch.stack(actions, dim=1), policy.head(expected).detach(), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("num_layers", [1, 2])
def test_run_sequence_gives_the_modules_own_numbers_and_gradients(kind, num_layers):
    """run_sequence calls the modules' kernels directly: outputs, final states and gradients equal the module's
    forward, bit for bit, in training mode (dropout 0) and with the weights replaced after construction."""
    torch.manual_seed(1)
    module = make_recurrent_module(kind, FEATURES, HIDDEN, num_layers=num_layers)
    with torch.no_grad():  # a weight changed in place after construction is read by both paths
        module.weight_hh_l0.mul_(1.5)
    sequence = torch.randn(4, 7, FEATURES)
    states = random_states(kind, num_layers, 4)
    outputs, finals = run_sequence(module, sequence, states)
    expected, expected_final = module(sequence, states[0] if len(states) == 1 else tuple(states))
    expected_finals = [expected_final] if len(states) == 1 else list(expected_final)
    assert torch.equal(outputs, expected)
    assert all(torch.equal(final, reference) for final, reference in zip(finals, expected_finals))
    gradients = torch.autograd.grad((outputs**2).sum() + sum(final.sum() for final in finals), module.parameters())
    expected_loss = (expected**2).sum() + sum(final.sum() for final in expected_finals)
    expected_gradients = torch.autograd.grad(expected_loss, module.parameters())
    assert all(torch.equal(a, b) for a, b in zip(gradients, expected_gradients))


def test_run_sequence_leaves_other_layers_to_their_forward():
    """A relu RNN (no direct kernel here) runs through the module's forward: its numbers, not tanh's."""
    torch.manual_seed(2)
    module = torch.nn.RNN(FEATURES, HIDDEN, batch_first=True, nonlinearity="relu")
    sequence, state = torch.randn(2, 3, FEATURES), torch.randn(1, 2, HIDDEN)
    outputs, finals = run_sequence(module, sequence, [state])
    expected, expected_final = module(sequence, state)
    assert torch.equal(outputs, expected) and torch.equal(finals[0], expected_final)
    assert (outputs >= 0).all()
