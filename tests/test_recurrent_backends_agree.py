"""The torch and JAX recurrent layers compute the same thing: one GRU, LSTM and RNN forward over a training
sequence with resets, from the same weights (copied from torch into flax's per-gate layout), agrees to 1e-5."""

import jax.numpy as jnp
import numpy as np
import pytest
import torch

from skrl_like.jax.models.recurrent import RecurrentLayer
from skrl_like.torch.models.recurrent import hidden_state_sizes, make_recurrent_module, recurrent_forward

FEATURES, HIDDEN, NUM_LAYERS, LENGTH, NUM_SEQUENCES = 3, 4, 2, 5, 3

# torch stacks the gates in rows of weight_ih/weight_hh in this order; flax has one dense layer per gate
GATES = {"GRU": ("r", "z", "n"), "LSTM": ("i", "f", "g", "o"), "RNN": ("",)}


def flax_cell_params(kind: str, module: torch.nn.RNNBase, layer: int) -> dict:
    """One torch layer's weights as the flax cell's parameters (kernels transposed, biases merged where flax has one)."""

    def split(name):
        tensor = getattr(module, f"{name}_l{layer}").detach().numpy()
        return dict(zip(GATES[kind], np.split(tensor, len(GATES[kind]))))

    w_i, w_h, b_i, b_h = split("weight_ih"), split("weight_hh"), split("bias_ih"), split("bias_hh")
    if kind == "RNN":  # flax SimpleCell: bias on the input side only
        return {"i": {"kernel": w_i[""].T, "bias": b_i[""] + b_h[""]}, "h": {"kernel": w_h[""].T}}
    if kind == "LSTM":  # flax LSTM cells: bias on the hidden side only
        params = {f"i{gate}": {"kernel": w_i[gate].T} for gate in GATES[kind]}
        params.update({f"h{gate}": {"kernel": w_h[gate].T, "bias": b_i[gate] + b_h[gate]} for gate in GATES[kind]})
        return params
    # GRU: no bias on hr/hz (torch's is merged into ir/iz); b_hn stays inside r * (W_hn h + b_hn), as hn's bias
    params = {f"i{gate}": {"kernel": w_i[gate].T, "bias": b_i[gate] + b_h[gate]} for gate in ("r", "z")}
    params["in"] = {"kernel": w_i["n"].T, "bias": b_i["n"]}
    params.update({f"h{gate}": {"kernel": w_h[gate].T} for gate in ("r", "z")})
    params["hn"] = {"kernel": w_h["n"].T, "bias": b_h["n"]}
    return params


@pytest.mark.parametrize("kind", ["GRU", "LSTM", "RNN"])
def test_one_forward_agrees_from_the_same_weights(kind):
    torch.manual_seed(0)
    module = make_recurrent_module(kind, FEATURES, HIDDEN, NUM_LAYERS)
    with torch.no_grad():
        for parameter in module.parameters():  # non-zero biases everywhere, so a misplaced bias shows
            parameter.uniform_(-0.8, 0.8)
    rows = NUM_SEQUENCES * LENGTH
    features = torch.randn(rows, FEATURES)
    states = [torch.randn(size) for size in hidden_state_sizes(kind, NUM_LAYERS, rows, HIDDEN)]
    terminated = torch.zeros(rows, 1, dtype=torch.bool)
    terminated[[1, 7, 12]] = True
    with torch.no_grad():
        torch_outputs, torch_finals = recurrent_forward(module, features, states, LENGTH, terminated, training=True)

    layer = RecurrentLayer(kind, HIDDEN, NUM_LAYERS, LENGTH)
    params = {
        "params": {f"layer_{index}": {"cell": flax_cell_params(kind, module, index)} for index in range(NUM_LAYERS)}
    }
    to_jax = [jnp.asarray(state.numpy()) for state in states]
    jax_outputs, jax_finals = layer.apply(
        params, jnp.asarray(features.numpy()), to_jax, jnp.asarray(terminated.numpy()), True
    )
    np.testing.assert_allclose(np.asarray(jax_outputs), torch_outputs.numpy(), atol=1e-5, rtol=1e-5)
    for jax_final, torch_final in zip(jax_finals, torch_finals):
        np.testing.assert_allclose(np.asarray(jax_final), torch_final.numpy(), atol=1e-5, rtol=1e-5)


ISAACLAB_STYLE_POLICY = """
class: GaussianMixin
network:
  - name: mlp
    input: OBSERVATIONS
    layers: [8]
    activations: elu
  - name: rnn
    input: mlp
    type: {kind}
    layers: [4]
    num_layers: 2
    sequence_length: 5
output: ACTIONS
"""


@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_the_yaml_form_builds_in_both_backends_and_agrees_from_the_same_weights(kind):
    import gymnasium
    import yaml

    from skrl_like.jax.utils.model_instantiators import gaussian_model as jax_gaussian_model
    from skrl_like.torch.utils.model_instantiators import gaussian_model as torch_gaussian_model

    parameters = yaml.safe_load(ISAACLAB_STYLE_POLICY.format(kind=kind))
    del parameters["class"]
    spaces = (gymnasium.spaces.Box(-1, 1, (FEATURES,)), gymnasium.spaces.Box(-1, 1, (2,)))
    torch.manual_seed(1)
    torch_model = torch_gaussian_model(*spaces, "cpu", **parameters)
    jax_model = jax_gaussian_model(*spaces, **parameters)
    jax_model.init_state_dict("policy")
    torch_model.num_envs = jax_model.num_envs = 3
    assert torch_model.get_specification() == jax_model.get_specification()
    assert torch_model.get_specification()["rnn"]["sequence_length"] == 5

    torch_model.set_mode("eval")  # one acting call materialises the lazy linear layers
    torch_model.act(
        {"states": torch.zeros(3, FEATURES), "rnn": [torch.zeros(size) for size in hidden_state_sizes(kind, 2, 3, 4)]}
    )

    def dense(linear):
        return {"kernel": linear.weight.detach().numpy().T, "bias": linear.bias.detach().numpy()}

    params = {
        "log_std_parameter": torch_model.log_std_parameter.detach().numpy(),
        "mlp_container": {"layers_0": dense(torch_model.mlp_container[0])},
        "rnn_container": {
            f"layer_{index}": {"cell": flax_cell_params(kind, torch_model.rnn_container.rnn, index)} for index in (0, 1)
        },
        "rnn_head": {"layers_0": dense(torch_model.rnn_container.layers[0])},
    }
    rows = 2 * 5
    states = torch.randn(rows, FEATURES)
    hidden = [torch.randn(size) for size in hidden_state_sizes(kind, 2, rows, 4)]
    terminated = torch.zeros(rows, 1, dtype=torch.bool)
    terminated[[2, 6]] = True
    torch_model.set_mode("train")
    with torch.no_grad():
        torch_mean, _, torch_outputs = torch_model.compute({"states": states, "rnn": hidden, "terminated": terminated})
    jax_inputs = {
        "states": jnp.asarray(states.numpy()),
        "rnn": [jnp.asarray(state.numpy()) for state in hidden],
        "terminated": jnp.asarray(terminated.numpy()),
    }
    jax_mean, _, jax_outputs = jax_model.apply({"params": params}, jax_inputs, "policy")
    np.testing.assert_allclose(np.asarray(jax_mean), torch_mean.numpy(), atol=1e-5, rtol=1e-5)
    for jax_state, torch_state in zip(jax_outputs["rnn"], torch_outputs["rnn"]):
        np.testing.assert_allclose(np.asarray(jax_state), torch_state.numpy(), atol=1e-5, rtol=1e-5)
