"""Running a GRU, LSTM or plain RNN over skrl's recurrent layouts, with the hidden state reset at episode ends.

The JAX twin of ``skrl_like.torch.models.recurrent`` (same layouts, same reset rule, same errors): flax's
``GRUCell``, ``OptimizedLSTMCell`` and ``SimpleCell`` (tanh) under ``nn.scan`` over the time axis, one scan per
layer, all shapes static. Where step ``t`` of a row ended an episode, the state entering step ``t + 1`` is zero.

Weights differ in layout from torch's (see ``docs/recurrent.md``): flax keeps one dense layer per gate with kernels
``(in, out)`` where torch stacks the gates in rows (GRU ``r, z, n``; LSTM ``i, f, g, o``), and flax has fewer
biases (GRU: none on ``hr``/``hz``; LSTM: none on the input side; RNN: none on the hidden side), so torch's two
biases of a gate are summed into the one flax keeps, except GRU's ``b_hn``, which flax keeps as ``hn``'s bias.
"""

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

__all__ = ["RECURRENT_CELLS", "RecurrentLayer", "hidden_state_sizes"]

#: the ``type`` names of the network language -> flax cell (LSTM carries two tensors: hidden and cell)
RECURRENT_CELLS = {"GRU": nn.GRUCell, "LSTM": nn.OptimizedLSTMCell, "RNN": nn.SimpleCell}


def hidden_state_sizes(kind: str, num_layers: int, num_envs: int, hidden_size: int) -> list:
    """The ``sizes`` entry of a model's ``{"rnn": ...}`` specification: one tuple, two for LSTM (hidden, cell)."""
    return [(num_layers, num_envs, hidden_size)] * (2 if kind == "LSTM" else 1)


class _ResetCell(nn.Module):
    """One time step: zero the carry of the rows whose previous step ended an episode, then step the cell."""

    kind: str
    hidden_size: int

    @nn.compact
    def __call__(self, carry, inputs):
        x, reset = inputs
        carry = jax.tree_util.tree_map(lambda value: jnp.where(reset[:, None], 0.0, value), carry)
        return RECURRENT_CELLS[self.kind](features=self.hidden_size, name="cell")(carry, x)


_ScanCell = nn.scan(_ResetCell, variable_broadcast="params", split_rngs={"params": False}, in_axes=1, out_axes=1)


class RecurrentLayer(nn.Module):
    """A stack of ``num_layers`` recurrent cells in skrl's acting or training layout.

    Parameters live under ``layer_<k>/cell`` (the flax cell's own names: ``ir``, ``hn``... for GRU).

    :param kind: ``"GRU"``, ``"LSTM"`` or ``"RNN"``.
    :param hidden_size: units of each layer.
    :param num_layers: stacked layers (the first reads the features, each next one the previous outputs).
    :param sequence_length: ``L`` of the training layout.
    :param where: how errors name the layer.
    """

    kind: str
    hidden_size: int
    num_layers: int = 1
    sequence_length: int = 16
    where: str = "recurrent layer"

    def setup(self) -> None:
        # a list attribute named ``layer``: flax names its items layer_0, layer_1...
        self.layer = [_ScanCell(self.kind, self.hidden_size) for _ in range(self.num_layers)]

    def run_sequence(self, sequence: jax.Array, states: Sequence[jax.Array], terminated: jax.Array | None = None):
        """Run over ``sequence`` of ``(batch, L, features)`` from ``states`` (``(num_layers, batch, hidden)`` each).

        :param terminated: ``(batch, L)`` episode ends, or ``None``.
        :return: the outputs ``(batch, L, hidden_size)`` and the final hidden states.
        """
        self.check_states(states, sequence.shape[0])
        batch, length = sequence.shape[:2]
        if terminated is None:
            resets = jnp.zeros((batch, length), dtype=bool)
        else:
            terminated = jnp.reshape(terminated, (batch, length)).astype(bool)
            resets = jnp.concatenate([jnp.zeros((batch, 1), dtype=bool), terminated[:, :-1]], axis=1)
        finals = []
        outputs = sequence
        for index in range(self.num_layers):
            # flax's LSTM carry is (cell, hidden); skrl's list is [hidden, cell]
            carry = (states[1][index], states[0][index]) if self.kind == "LSTM" else states[0][index]
            carry, outputs = self.layer[index](carry, (outputs, resets))
            finals.append((carry[1], carry[0]) if self.kind == "LSTM" else (carry,))
        return outputs, [jnp.stack(parts) for parts in zip(*finals)]

    def check_states(self, states: Sequence[jax.Array], batch: int) -> None:
        expected = 2 if self.kind == "LSTM" else 1
        shape = (self.num_layers, batch, self.hidden_size)
        if len(states) != expected or any(tuple(state.shape) != shape for state in states):
            got = [tuple(state.shape) for state in states]
            raise ValueError(
                f"{self.where}: the hidden states {got} do not match the {self.kind} layer, which takes {expected} "
                f"tensor(s) of shape {shape} (num_layers, batch, hidden_size): pass inputs['rnn'] with the sizes of "
                "the model's get_specification()['rnn']['sizes']"
            )

    def __call__(
        self,
        features: jax.Array,
        states: Sequence[jax.Array],
        terminated: jax.Array | None = None,
        training: bool = False,
    ):
        """One call in the acting (``training=False``) or training layout; see ``recurrent_forward`` in torch.

        :return: the outputs ``(rows, hidden_size)`` and the new hidden states.
        """
        rows = features.shape[0]
        if not training:
            outputs, final = self.run_sequence(features[:, None], states, None)
            return outputs[:, 0], final
        length = self.sequence_length
        if rows % length:
            raise ValueError(
                f"{self.where}: the batch of {rows} rows is not a whole number of sequences of length {length}: "
                "sample the memory in sequences (a mini-batch size that is a multiple of the sequence length) or "
                "change the model's sequence_length"
            )
        num_sequences = rows // length
        for state in states:
            if state.ndim != 3 or state.shape[1] != rows:
                raise ValueError(
                    f"{self.where}: training hidden states must be (num_layers, {rows}, hidden_size), one per row as "
                    f"stored in the memory; got {tuple(state.shape)}"
                )
        initial = [jnp.reshape(state, (state.shape[0], num_sequences, length, -1))[:, :, 0] for state in states]
        if terminated is not None:
            terminated = jnp.reshape(terminated, (num_sequences, length))
        sequence = jnp.reshape(features, (num_sequences, length, -1))
        outputs, final = self.run_sequence(sequence, initial, terminated)
        return jnp.reshape(outputs, (rows, -1)), final
