"""Running a GRU, LSTM or plain RNN over skrl's recurrent layouts, with the hidden state reset at episode ends.

skrl's recurrent models receive two layouts. Acting: ``states`` of ``(num_envs, features)`` and hidden states of
``(num_layers, num_envs, hidden_size)``, one step. Training: ``states`` of ``(num_sequences * L, features)`` where
row ``s * L + t`` is step ``t`` of sequence ``s``, hidden states of ``(num_layers, num_sequences * L, hidden_size)``
of which only each sequence's first step is read (the state stored when the sequence began), and
``terminated`` of ``(num_sequences * L, 1)``: where step ``t`` ended an episode, the state entering step ``t + 1``
is zero. Every recurrent model (hand-written or built by the instantiators) calls :func:`recurrent_forward`.
"""

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["RECURRENT_MODULES", "make_recurrent_module", "run_sequence", "recurrent_forward", "hidden_state_sizes"]

#: the ``type`` names of the network language -> torch module (LSTM carries two tensors: hidden and cell)
RECURRENT_MODULES = {"GRU": nn.GRU, "LSTM": nn.LSTM, "RNN": nn.RNN}


def make_recurrent_module(kind: str, input_size: int, hidden_size: int, num_layers: int = 1) -> nn.RNNBase:
    """A batch-first ``nn.GRU``/``nn.LSTM``/``nn.RNN`` (tanh) as the recurrent models use it."""
    if kind not in RECURRENT_MODULES:
        raise ValueError(f"Unknown recurrent type {kind!r}: use one of {', '.join(RECURRENT_MODULES)}")
    return RECURRENT_MODULES[kind](input_size, hidden_size, num_layers=num_layers, batch_first=True)


#: the ATen kernels behind the modules, called by :func:`run_sequence` with the arguments the modules' ``forward``
#: passes them: the same numbers and gradients without ``nn.RNNBase.forward``'s Python checks, about 30 us a call (a
#: third of a one-step call on a few envs; an update makes several calls per mini-batch)
_KERNELS = {nn.GRU: torch.gru, nn.LSTM: torch.lstm, nn.RNN: torch.rnn_tanh}


def _call_module(module: nn.RNNBase, sequence: torch.Tensor, states: list) -> tuple[torch.Tensor, list]:
    """``module(sequence, states)`` on batch-first ``sequence``; returns the outputs and the list of final states."""
    kernel = _KERNELS.get(type(module))
    direct = (
        kernel is not None
        and module.batch_first
        and not module.bidirectional
        and not getattr(module, "proj_size", 0)
        and getattr(module, "nonlinearity", "tanh") == "tanh"
    )
    if not direct:  # anything else (a subclass, relu, bidirectional, projections): the module's own forward
        outputs, final = module(sequence, states[0] if len(states) == 1 else tuple(states))
        return outputs, [final] if len(states) == 1 else list(final)
    weights = [weight for layer in module.all_weights for weight in layer]
    hidden = states[0] if len(states) == 1 else tuple(states)
    arguments = (weights, module.bias, module.num_layers, float(module.dropout), module.training, False, True)
    outputs, *final = kernel(sequence, hidden, *arguments)
    return outputs, final


def hidden_state_sizes(kind: str, num_layers: int, num_envs: int, hidden_size: int) -> list:
    """The ``sizes`` entry of a model's ``{"rnn": ...}`` specification: one tuple, two for LSTM (hidden, cell)."""
    return [(num_layers, num_envs, hidden_size)] * (2 if kind == "LSTM" else 1)


def _check_states(module: nn.RNNBase, states: Sequence[torch.Tensor], batch: int, where: str) -> None:
    expected = 2 if isinstance(module, nn.LSTM) else 1
    shape = (module.num_layers, batch, module.hidden_size)
    if len(states) != expected or any(tuple(state.shape) != shape for state in states):
        got = [tuple(state.shape) for state in states]
        raise ValueError(
            f"{where}: the hidden states {got} do not match the {type(module).__name__} layer, which takes {expected} "
            f"tensor(s) of shape {shape} (num_layers, batch, hidden_size): pass inputs['rnn'] with the sizes of the "
            "model's get_specification()['rnn']['sizes']"
        )


def run_sequence(
    module: nn.RNNBase,
    sequence: torch.Tensor,
    states: Sequence[torch.Tensor],
    terminated: torch.Tensor | None = None,
    where: str = "recurrent layer",
) -> tuple[torch.Tensor, list]:
    """Run ``module`` over ``sequence`` of ``(batch, L, features)`` from ``states``, zeroing a row's state after a done.

    :param module: a batch-first ``nn.GRU``, ``nn.LSTM`` or ``nn.RNN``.
    :param states: the initial hidden states, each ``(num_layers, batch, hidden_size)`` (LSTM: hidden, cell).
    :param terminated: ``(batch, L)`` booleans; where step ``t`` ended an episode the state entering ``t + 1`` is
        zero. ``None``: no resets.
    :return: the outputs ``(batch, L, hidden_size)`` and the final hidden states.
    """
    _check_states(module, states, sequence.shape[0], where)
    states = list(states)
    if terminated is None or sequence.shape[1] == 1:
        return _call_module(module, sequence, states)
    terminated = terminated.reshape(sequence.shape[0], sequence.shape[1]).bool()
    # run piecewise between the steps after which some row's episode ended (one module call per piece)
    cuts = (terminated[:, :-1].any(dim=0).nonzero(as_tuple=True)[0] + 1).tolist()
    bounds = [0, *cuts, sequence.shape[1]]
    pieces = []
    for start, end in zip(bounds[:-1], bounds[1:]):
        if start > 0:
            keep = (~terminated[:, start - 1]).to(sequence.dtype).view(1, -1, 1)
            states = [state * keep for state in states]
        output, states = _call_module(module, sequence[:, start:end], states)
        pieces.append(output)
    return torch.cat(pieces, dim=1), states


def recurrent_forward(
    module: nn.RNNBase,
    features: torch.Tensor,
    states: Sequence[torch.Tensor],
    sequence_length: int,
    terminated: torch.Tensor | None = None,
    training: bool = False,
    where: str = "recurrent layer",
) -> tuple[torch.Tensor, list]:
    """One recurrent layer in skrl's acting or training layout (see the module docstring).

    :param features: ``(num_envs, features)`` when acting, ``(num_sequences * sequence_length, features)`` training.
    :param states: ``inputs["rnn"]``: the hidden states, ``(num_layers, rows, hidden_size)`` each.
    :param sequence_length: ``L`` of the training layout.
    :param terminated: training only: ``(num_sequences * L,)`` or ``(..., 1)`` episode ends.
    :param training: read the training layout.
    :return: the outputs ``(rows, hidden_size)`` (flat, as the following layers take them) and the new hidden
        states (acting: ``(num_layers, num_envs, hidden_size)``; training: each sequence's final state).
    """
    rows = features.shape[0]
    if not training:
        outputs, final = run_sequence(module, features.unsqueeze(1), states, None, where)
        return outputs.squeeze(1), final
    if rows % sequence_length:
        raise ValueError(
            f"{where}: the batch of {rows} rows is not a whole number of sequences of length {sequence_length}: "
            "sample the memory in sequences (a mini-batch size that is a multiple of the sequence length) or change "
            "the model's sequence_length"
        )
    num_sequences = rows // sequence_length
    for state in states:
        if state.ndim != 3 or state.shape[1] != rows:
            raise ValueError(
                f"{where}: training hidden states must be (num_layers, {rows}, hidden_size), one per row as stored in "
                f"the memory; got {tuple(state.shape)}"
            )
    # the state stored at each sequence's first step
    initial = [state.view(state.shape[0], num_sequences, sequence_length, -1)[:, :, 0].contiguous() for state in states]
    if terminated is not None:
        terminated = terminated.reshape(num_sequences, sequence_length)
    sequence = features.reshape(num_sequences, sequence_length, -1)
    outputs, final = run_sequence(module, sequence, initial, terminated, where)
    return outputs.reshape(rows, -1), final
