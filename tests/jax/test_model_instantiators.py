"""JAX model instantiators: built networks against hand-written numpy forward passes; unsafe text is refused."""

import gymnasium
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like import config
from skrl_like.jax.utils.model_instantiators import (
    Shape,
    categorical_model,
    deterministic_model,
    gaussian_model,
    multicategorical_model,
)
from skrl_like.jax.utils.model_instantiators.common import generate_containers, get_num_units, one_hot_encoding

OBSERVATIONS = gymnasium.spaces.Box(-1.0, 1.0, (4,), dtype=np.float32)
ACTIONS = gymnasium.spaces.Box(-2.0, 2.0, (2,), dtype=np.float32)
NET = [{"name": "net", "input": "OBSERVATIONS", "layers": [8, 6], "activations": "elu"}]


@pytest.fixture(autouse=True)
def fixed_key():
    previous = config.jax._key
    config.jax.key = 3
    yield
    config.jax._key = previous


def np_elu(x):
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


def dense(params, x):
    return x @ np.asarray(params["kernel"], np.float64) + np.asarray(params["bias"], np.float64)


def batch(size=5, columns=4, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, (size, columns)).astype(np.float32)


def test_gaussian_model_network_parameters_and_forward():
    policy = gaussian_model(
        OBSERVATIONS, ACTIONS, clip_actions=True, initial_log_std=-0.5, network=NET, output="2 * tanh(ACTIONS)"
    )
    policy.init_state_dict("policy")
    params = policy.state_dict.params["params"]
    container = params["net_container"]
    # layer, activation, layer, activation, final (embedded) layer: flax names the Sequential entries by index
    assert sorted(container) == ["layers_0", "layers_2", "layers_4"]
    assert container["layers_0"]["kernel"].shape == (4, 8) and container["layers_4"]["kernel"].shape == (6, 2)
    np.testing.assert_array_equal(params["log_std_parameter"], [-0.5, -0.5])
    s = batch()
    hidden = np_elu(dense(container["layers_2"], np_elu(dense(container["layers_0"], s))))
    expected = 2 * np.tanh(dense(container["layers_4"], hidden))
    actions, log_prob, outputs = policy.act({"states": s}, "policy")
    np.testing.assert_allclose(outputs["mean_actions"], expected, rtol=1e-5, atol=1e-6)
    assert actions.shape == (5, 2) and log_prob.shape == (5, 1)
    assert np.all(np.abs(np.asarray(actions)) <= 2.0)  # clip_actions reached the mixin
    np.testing.assert_allclose(outputs["stddev"], np.exp([-0.5, -0.5]), rtol=1e-6)


def test_fixed_log_std_is_not_a_parameter():
    policy = gaussian_model(
        OBSERVATIONS, ACTIONS, initial_log_std=0.3, fixed_log_std=True, network=NET, output="ACTIONS"
    )
    policy.init_state_dict("policy")
    assert "log_std_parameter" not in policy.state_dict.params["params"]
    np.testing.assert_allclose(policy.act({"states": batch()}, "policy")[2]["log_std"], [0.3, 0.3], rtol=1e-6)


def test_deterministic_critic_with_actions_and_container_references():
    critic = deterministic_model(
        OBSERVATIONS,
        ACTIONS,
        network=[
            {
                "name": "features",
                "input": "STATES_ACTIONS",
                "layers": [{"linear": {"out_features": 5}}],
                "activations": ["relu"],
            },
            {
                "name": "head",
                "input": "concatenate([features, ACTIONS])",
                "layers": [{"linear": [3, False]}],
                "activations": [],
            },
        ],
        output="ONE",
    )
    critic.init_state_dict("critic")
    params = critic.state_dict.params["params"]
    assert "bias" not in params["head_container"]["layers_0"]
    s, a = batch(), batch(columns=2, seed=1)
    features = np.maximum(dense(params["features_container"]["layers_0"], np.concatenate([s, a], -1)), 0)
    head = np.concatenate([features, a], -1) @ np.asarray(params["head_container"]["layers_0"]["kernel"])
    expected = dense(params["head_container"]["layers_1"], head)
    values, log_prob, _ = critic.act({"states": s, "taken_actions": a}, "critic")
    assert values.shape == (5, 1) and log_prob is None
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-6)


def test_output_expression_with_a_container_name_and_slicing():
    model = deterministic_model(
        OBSERVATIONS,
        ACTIONS,
        network=[{"name": "net", "input": "OBSERVATIONS[:, 0:2] * 2 - 1", "layers": [3], "activations": "tanh"}],
        output="-net",
    )
    model.init_state_dict("policy")
    layer = model.state_dict.params["params"]["net_container"]["layers_0"]
    s = batch()
    np.testing.assert_allclose(
        model.act({"states": s}, "policy")[0], -np.tanh(dense(layer, s[:, :2] * 2 - 1)), rtol=1e-5
    )


def test_categorical_and_multicategorical_models():
    policy = categorical_model(OBSERVATIONS, gymnasium.spaces.Discrete(3), network=NET, output="ACTIONS")
    policy.init_state_dict("policy")
    actions, log_prob, outputs = policy.act({"states": batch()}, "policy")
    assert actions.shape == (5, 1) and outputs["net_output"].shape == (5, 3)
    policy = multicategorical_model(
        OBSERVATIONS, gymnasium.spaces.MultiDiscrete([2, 3]), reduction="none", network=NET, output="ACTIONS"
    )
    policy.init_state_dict("policy")
    actions, log_prob, outputs = policy.act({"states": batch()}, "policy")
    assert actions.shape == (5, 2) and log_prob.shape == (5, 2) and outputs["net_output"].shape == (5, 5)


def test_discrete_observations_with_one_hot_encoding():
    model = deterministic_model(
        gymnasium.spaces.Discrete(4),
        ACTIONS,
        network=[{"name": "net", "input": "one_hot_encoding(OBSERVATION_SPACE, OBSERVATIONS)", "layers": [2]}],
        output="net",
    )
    model.init_state_dict("value")
    layer = model.state_dict.params["params"]["net_container"]["layers_0"]
    assert layer["kernel"].shape == (4, 2)
    s = np.array([[0], [3], [1]], np.int32)
    np.testing.assert_allclose(model.act({"states": s}, "value")[0], dense(layer, np.eye(4)[[0, 3, 1]]), rtol=1e-6)
    multi = one_hot_encoding(gymnasium.spaces.MultiDiscrete([2, 3]), jnp.array([[1, 2], [0, 0]]))
    np.testing.assert_array_equal(multi, [[0, 1, 0, 0, 1], [1, 0, 1, 0, 0]])
    with pytest.raises(ValueError):
        one_hot_encoding(OBSERVATIONS, jnp.zeros((1, 4)))


def test_dict_observations_are_unflattened_for_key_access():
    space = gymnasium.spaces.Dict(
        {
            "joints": gymnasium.spaces.Box(-1, 1, (3,), dtype=np.float32),
            "goal": gymnasium.spaces.Box(-1, 1, (2,), dtype=np.float32),
        }
    )
    model = deterministic_model(
        space, ACTIONS, network=[{"name": "net", "input": "STATES['joints']", "layers": [2]}], output="net"
    )
    model.init_state_dict("value")
    layer = model.state_dict.params["params"]["net_container"]["layers_0"]
    assert layer["kernel"].shape == (3, 2)
    flat = batch(columns=5)  # sorted keys: goal (2 columns) then joints (3 columns)
    np.testing.assert_allclose(model.act({"states": flat}, "value")[0], dense(layer, flat[:, 2:]), rtol=1e-5)


def test_convolution_and_flatten_layers():
    image = gymnasium.spaces.Box(0, 1, (8, 8, 2), dtype=np.float32)
    model = deterministic_model(
        image,
        ACTIONS,
        network=[
            {
                "name": "cnn",
                "input": "OBSERVATIONS",
                "layers": [
                    {"conv2d": {"out_channels": 4, "kernel_size": 3, "stride": 2, "padding": "valid"}},
                    "flatten",
                    5,
                ],
                "activations": "relu",
            }
        ],
        output="ACTIONS",
    )
    model.init_state_dict("policy")
    container = model.state_dict.params["params"]["cnn_container"]
    assert container["layers_0"]["kernel"].shape == (3, 3, 2, 4)
    assert container["layers_3"]["kernel"].shape == (3 * 3 * 4, 5)  # no activation after the flatten layer
    assert model.act({"states": batch(columns=128)}, "policy")[0].shape == (5, 2)


def test_activation_expansion():
    per_layer = generate_containers(
        [{"name": "n", "input": "STATES", "layers": [4, 4], "activations": ["relu", "tanh"]}], "ONE"
    )[0][0]
    assert [layer.kind for layer in per_layer.layers] == ["linear", "linear", "linear"]  # the last is the ONE layer
    assert [layer.activation for layer in per_layer.layers] == ["relu", "tanh", None]
    none = generate_containers([{"name": "n", "input": "STATES", "layers": [4, 4], "activations": []}], "")[0][0]
    assert [layer.activation for layer in none.layers] == [None, None]
    # an unknown activation is refused, as in torch (it used to be skipped with a warning here)
    with pytest.raises(ValueError, match="Unknown activation 'swishy'"):
        generate_containers([{"name": "n", "input": "STATES", "layers": [4], "activations": "swishy"}], "")
    with pytest.raises(NotImplementedError):
        generate_containers([{"name": "n", "input": "STATES", "layers": [4, 4, 4], "activations": ["relu", "elu"]}], "")


def test_layer_sizes_from_tokens_and_num_units():
    model = deterministic_model(
        OBSERVATIONS,
        ACTIONS,
        network=[
            {
                "name": "n",
                "input": "STATES",
                "layers": [{"linear": {"features": "STATES_ACTIONS"}}, {"linear": "Shape.ACTIONS"}],
            }
        ],
        output="n",
    )
    model.init_state_dict("value")
    container = model.state_dict.params["params"]["n_container"]
    assert container["layers_0"]["kernel"].shape == (4, 6) and container["layers_1"]["kernel"].shape == (6, 2)
    assert get_num_units("ACTIONS", 4, 2) == 2 and get_num_units(Shape.ONE, 4, 2) == 1
    assert get_num_units("OBSERVATIONS") == "num_observations"
    assert (Shape.ONE.value, Shape.STATES.value, Shape.ACTIONS.value, Shape.STATES_ACTIONS.value) == (1, 0, -1, -2)
    assert Shape.OBSERVATIONS is Shape.STATES


def test_legacy_parameters_are_converted():
    model = deterministic_model(
        OBSERVATIONS,
        ACTIONS,
        input_shape=Shape.STATES,
        hiddens=[7],
        hidden_activation=["relu"],
        output_shape=Shape.ACTIONS,
        output_activation="tanh",
        output_scale=3.0,
    )
    model.init_state_dict("policy")
    container = model.state_dict.params["params"]["net_container"]
    s = batch()
    expected = 3 * np.tanh(dense(container["layers_2"], np.maximum(dense(container["layers_0"], s), 0)))
    np.testing.assert_allclose(model.act({"states": s}, "policy")[0], expected, rtol=1e-5, atol=1e-6)


def test_return_source_is_a_description():
    text = gaussian_model(OBSERVATIONS, ACTIONS, network=NET, output="2 * tanh(ACTIONS)", return_source=True)
    assert isinstance(text, str)
    assert (
        "self.net_container = nn.Sequential([nn.Dense(8), nn.elu, nn.Dense(6), nn.elu, nn.Dense(num_actions)])" in text
    )
    assert "output = 2 * nn.tanh(net)" in text


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('touch /tmp/skrl_like_pwned')",
        "OBSERVATIONS.__class__",
        "OBSERVATIONS.T",
        "lambda: 0",
        "[x for x in OBSERVATIONS]",
        "open('/etc/passwd')",
        "eval('1')",
        "exec",
        "OBSERVATIONS ** (10 ** 10)",
        "OBSERVATIONS ** 1000",
        "'a' * 10",
        "OBSERVATIONS[OBSERVATIONS]",
        "concatenate([OBSERVATIONS], axis=0)",
        "unknown_name",
        "STATE_SPACE",
        "OBSERVATIONS +",
        "(" * 300 + "OBSERVATIONS" + ")" * 300,
        "x" * 2000,
        "OBSERVATIONS if True else 0",
        "net",  # a container cannot use itself
    ],
)
def test_unsafe_or_invalid_input_expressions_are_refused(expression):
    with pytest.raises(ValueError, match="expression|longer|nested"):
        deterministic_model(
            OBSERVATIONS, ACTIONS, network=[{"name": "net", "input": expression, "layers": [2]}], output="ONE"
        )


@pytest.mark.parametrize(
    "network, output, error",
    [
        ([], "ONE", ValueError),
        ([{"name": "net", "input": "STATES", "layers": [{"lstm": 4}]}], "ONE", ValueError),
        (
            [{"name": "net", "input": "STATES", "layers": [{"linear": {"out_features": 4, "init": "x"}}]}],
            "ONE",
            ValueError,
        ),
        ([{"name": "net", "input": "STATES", "layers": [{"linear": "os.system"}]}], "ONE", ValueError),
        ([{"name": "net", "input": "STATES", "layers": [-3]}], "ONE", ValueError),
        ([{"name": "net", "input": "STATES", "layers": [4.5]}], "ONE", ValueError),
        ([{"name": "import os", "input": "STATES", "layers": [4]}], "ONE", ValueError),
        ([{"name": "ACTIONS", "input": "STATES", "layers": [4]}], "ONE", ValueError),
        (
            [{"name": "a", "input": "STATES", "layers": [4]}, {"name": "a", "input": "a", "layers": [4]}],
            "ONE",
            ValueError,
        ),
        ([{"name": "net", "layers": [4]}], "ONE", ValueError),
        ([{"name": "net", "input": "STATES", "layers": [4]}], "__import__('os')", ValueError),
        ([{"name": "net", "input": "STATES", "layers": [4]}], "ACTIONS + ONE", ValueError),
        ([{"name": "net", "input": "STATES", "layers": [4]}], ["ACTIONS", "ONE"], NotImplementedError),
    ],
)
def test_invalid_definitions_are_refused(network, output, error):
    with pytest.raises(error):
        deterministic_model(OBSERVATIONS, ACTIONS, network=network, output=output)


# Isaac Lab's camera tasks (skrl_camera_ppo_cfg.yaml): written for torch, shared with JAX
CAMERA_NETWORK = [
    {
        "name": "features_extractor",
        "input": "permute(STATES, (0, 3, 1, 2))",  # NHWC -> torch's NCHW
        "layers": [
            {"conv2d": {"out_channels": 32, "kernel_size": 8, "stride": 4, "padding": 0}},
            {"conv2d": {"out_channels": 64, "kernel_size": 4, "stride": 2, "padding": 0}},
            {"conv2d": {"out_channels": 64, "kernel_size": 3, "stride": 1, "padding": 0}},
            "flatten",
        ],
        "activations": "relu",
    },
    {"name": "net", "input": "features_extractor", "layers": [512], "activations": "elu"},
]
CAMERA = gymnasium.spaces.Box(0.0, 1.0, (64, 64, 3), dtype=np.float32)


def test_camera_configs_written_for_torch_build_the_same_network_in_jax():
    policy = gaussian_model(CAMERA, ACTIONS, network=CAMERA_NETWORK, output="ACTIONS")
    policy.init_state_dict("policy")
    layers = policy.state_dict.params["params"]["features_extractor_container"]
    # flax convolutions take the NHWC image as it is: 3 input channels, not the 64 "channels" of a permuted image
    assert layers["layers_0"]["kernel"].shape == (8, 8, 3, 32)
    assert layers["layers_2"]["kernel"].shape == (4, 4, 32, 64)
    # 64 -> 15 -> 6 -> 4 pixels per side, as torch's Conv2d with padding 0: the same 4 * 4 * 64 features
    assert policy.state_dict.params["params"]["net_container"]["layers_0"]["kernel"].shape == (4 * 4 * 64, 512)
    images = np.random.default_rng(0).uniform(0, 1, (3, 64 * 64 * 3)).astype(np.float32)
    actions, log_std, _ = policy.act({"states": images}, "policy")
    assert actions.shape == (3, 2) and np.isfinite(np.asarray(actions)).all()
    assert "permute" not in gaussian_model(CAMERA, ACTIONS, network=CAMERA_NETWORK, return_source=True)


def test_a_kernel_larger_than_its_input_is_named_with_the_container_and_sizes():
    small = gymnasium.spaces.Box(0.0, 1.0, (6, 6, 3), dtype=np.float32)
    network = [
        {
            "name": "encoder",
            "input": "STATES",
            "layers": [{"conv2d": [8, 3, 1, "valid"]}, {"conv2d": [8, 5, 1, "valid"]}, "flatten"],
            "activations": "relu",
        }
    ]
    model = deterministic_model(small, ACTIONS, network=network, output="ACTIONS")
    with pytest.raises(
        ValueError, match=r"container 'encoder': its conv2d layer 1 \(kernel_size \(5, 5\).*spatial size \(4, 4\)"
    ):
        model.init_state_dict("policy")
    flat = gymnasium.spaces.Box(0.0, 1.0, (12,), dtype=np.float32)
    model = deterministic_model(flat, ACTIONS, network=network, output="ACTIONS")
    with pytest.raises(
        ValueError,
        match=r"'encoder': its conv2d layers take \(batch, height, width, channels\) images .* shape \(1, 12\)",
    ):
        model.init_state_dict("policy")


# --- recurrent containers (Isaac Lab 3.0's form) -------------------------------------------------------------

RECURRENT_NET = [
    {"name": "mlp", "input": "OBSERVATIONS", "layers": [8], "activations": "elu"},
    {"name": "rnn", "input": "mlp", "type": "GRU", "layers": [6], "num_layers": 2, "sequence_length": 3},
]


def recurrent_policy(kind="GRU"):
    network = [RECURRENT_NET[0], {**RECURRENT_NET[1], "type": kind}]
    model = gaussian_model(OBSERVATIONS, ACTIONS, network=network, output="ACTIONS")
    model.init_state_dict("policy")
    model.num_envs = 4
    return model


@pytest.mark.parametrize("kind", ["GRU", "LSTM", "RNN"])
def test_recurrent_container_builds_and_acts_with_hidden_states(kind):
    import flax.linen as nn

    model = recurrent_policy(kind)
    sizes = [(2, 4, 6)] * (2 if kind == "LSTM" else 1)
    assert model.get_specification() == {"rnn": {"sequence_length": 3, "sizes": sizes}}
    plain = gaussian_model(OBSERVATIONS, ACTIONS, network=NET, output="ACTIONS")
    assert plain.get_specification() == {}
    params = model.state_dict.params["params"]
    assert sorted(params["rnn_container"]) == ["layer_0", "layer_1"] and "rnn_head" in params
    s = batch(size=4)
    hidden = [np.random.default_rng(1).normal(size=size).astype(np.float32) for size in sizes]
    _, _, outputs = model.act({"states": s, "rnn": hidden}, "policy")
    # by hand: the MLP in numpy, each layer's flax cell for one step, the final layer in numpy
    x = np_elu(dense(params["mlp_container"]["layers_0"], s)).astype(np.float32)
    cell = {"GRU": nn.GRUCell, "LSTM": nn.OptimizedLSTMCell, "RNN": nn.SimpleCell}[kind](features=6)
    finals = []
    for layer in range(2):
        carry = (hidden[1][layer], hidden[0][layer]) if kind == "LSTM" else hidden[0][layer]
        carry, x = cell.apply({"params": params["rnn_container"][f"layer_{layer}"]["cell"]}, carry, x)
        finals.append(carry)
    np.testing.assert_allclose(outputs["mean_actions"], dense(params["rnn_head"]["layers_0"], x), rtol=1e-5, atol=1e-5)
    expected = [np.stack([c[1] for c in finals]), np.stack([c[0] for c in finals])] if kind == "LSTM" else [finals]
    for new, reference in zip(outputs["rnn"], expected):
        np.testing.assert_allclose(new, np.asarray(reference).reshape(new.shape), rtol=1e-5, atol=1e-5)


def test_recurrent_model_resets_hidden_states_at_dones_in_a_training_sequence():
    model = recurrent_policy()
    length, num_sequences = 3, 2
    rows = length * num_sequences
    states = batch(size=rows)
    stored = np.random.default_rng(2).normal(size=(2, rows, 6)).astype(np.float32)
    terminated = np.array([False, True, False, False, False, False]).reshape(rows, 1)
    inputs = {"states": states, "rnn": [stored], "terminated": terminated}
    _, _, outputs = model.act(inputs, "policy")
    expected = []
    for sequence in range(num_sequences):
        hidden = stored[:, sequence * length : sequence * length + 1]
        for step in range(length):
            row = sequence * length + step
            if step > 0 and terminated[row - 1]:
                hidden = np.zeros_like(hidden)
            _, _, step_outputs = model.act({"states": states[row : row + 1], "rnn": [hidden]}, "policy")
            hidden = step_outputs["rnn"][0]
            expected.append(step_outputs["mean_actions"])
    np.testing.assert_allclose(outputs["mean_actions"], np.concatenate(expected), rtol=1e-5, atol=1e-6)
    assert outputs["rnn"][0].shape == (2, num_sequences, 6)


def test_recurrent_model_errors_say_what_is_needed():
    model = recurrent_policy()
    with pytest.raises(ValueError, match=r"This model is recurrent \(container 'rnn' is a GRU\).*inputs\['rnn'\]"):
        model.act({"states": batch(size=4)}, "policy")
    with pytest.raises(ValueError, match=r"do not match the GRU layer, which takes 1 tensor\(s\) of shape \(2, 4, 6\)"):
        model.act({"states": batch(size=4), "rnn": [np.zeros((1, 4, 6), np.float32)]}, "policy")
    terminated = np.zeros((4, 1), dtype=bool)
    with pytest.raises(ValueError, match=r"batch of 4 rows is not a whole number of sequences of length 3"):
        model.act({"states": batch(size=4), "rnn": [np.zeros((2, 4, 6), np.float32)], "terminated": terminated}, "")


def test_recurrent_model_description_shows_the_recurrent_layer_and_its_states():
    source = gaussian_model(OBSERVATIONS, ACTIONS, network=RECURRENT_NET, output="ACTIONS", return_source=True)
    assert "self.rnn_container = RecurrentLayer('GRU', hidden_size=6, num_layers=2, sequence_length=3)" in source
    assert "rnn, rnn_states = self.rnn_container(mlp, inputs['rnn'], inputs.get('terminated')" in source
    assert "return output, self.log_std_parameter, {'rnn': rnn_states}" in source
