"""The two backends' on-policy ``_RNN`` agents (PPO_RNN, A2C_RNN, RPO_RNN, TRPO_RNN) implement the same algorithms:
from the same weights (a GRU policy and an LSTM value model, copied from torch into flax's per-gate layout) and the
same steps, with episode ends inside the sequences, one update gives the same losses and new weights to 1e-4. (The
models ignore RPO's ``inputs["alpha"]``, whose draws the backends cannot share: RPO_RNN's own perturbation is checked
by the feedforward RPO's agreement test.)

torch's cells have two biases where flax's have one (or none): Adam steps each parameter on its own, so two biases
whose sum flax keeps as one would move twice as far. The torch models here keep only the biases flax has (the others
zero, without gradient), so both backends train the same parametrisation."""

import importlib

import jax
import numpy as np
import pytest
import torch

from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.torch.memories import RandomMemory as TorchMemory
from tests.jax import recurrent_models as jax_models
from tests.test_recurrent_backends_agree import flax_cell_params
from tests.torch import recurrent_models as torch_models

ROLLOUTS, NUM_ENVS, LENGTH = 4, 2, 2
CFG = {
    "rollouts": ROLLOUTS,
    "learning_epochs": 2,
    "mini_batches": 2,
    "discount_factor": 0.9,
    "lambda": 0.8,
    "learning_rate": 1e-2,
    "grad_norm_clip": 0.0,  # torch clips the joint norm, JAX each model's: compare unclipped
    "entropy_loss_scale": 0.01,
    "experiment": {"write_interval": 0, "checkpoint_interval": 0},
}
#: per algorithm: the config keys that differ from CFG (None: a key it does not have), and the losses it tracks
ALGORITHMS = {
    "PPO_RNN": ({}, ("Policy", "Value", "Entropy")),
    "A2C_RNN": ({"learning_epochs": None}, ("Policy", "Value", "Entropy")),
    "RPO_RNN": ({"alpha": 0.5}, ("Policy", "Value", "Entropy")),
    "TRPO_RNN": (
        {"learning_rate": None, "entropy_loss_scale": None, "value_learning_rate": 1e-2, "max_kl_divergence": 0.05},
        ("Policy", "Value"),
    ),
}


def agent_classes(algorithm):
    """The torch and JAX classes of ``algorithm`` (``PPO_RNN`` lives in ``agents.ppo``)."""
    module = algorithm.removesuffix("_RNN").lower()
    return tuple(
        getattr(importlib.import_module(f"skrl_like.{backend}.agents.{module}"), algorithm)
        for backend in ("torch", "jax")
    )


def config(algorithm):
    changes = ALGORITHMS[algorithm][0]
    cfg = {**CFG, **{key: value for key, value in changes.items() if value is not None}}
    return {key: value for key, value in cfg.items() if changes.get(key, 0) is not None}


class JaxPolicy(jax_models.RecurrentGaussianPolicy):
    kind, hidden = "GRU", 3


def keep_flax_biases(module: torch.nn.RNNBase, kind: str) -> None:
    """Zero the torch biases flax's cell has no counterpart for, and keep them at zero (no gradient)."""
    with torch.no_grad():
        if kind == "LSTM":  # flax: biases on the hidden side only
            module.bias_ih_l0.zero_()
            module.bias_ih_l0.requires_grad_(False)
        elif kind == "GRU":  # flax: no bias on hr, hz (torch's bias_hh rows of the r and z gates)
            mask = torch.ones_like(module.bias_hh_l0)
            mask[: 2 * module.hidden_size] = 0
            module.bias_hh_l0.mul_(mask)
            module.bias_hh_l0.register_hook(lambda grad: grad * mask)


def flax_params(torch_model, kind: str) -> dict:
    params = {
        "rnn": {"layer_0": {"cell": flax_cell_params(kind, torch_model.rnn, 0)}},
        "head": {"kernel": torch_model.head.weight.detach().numpy().T, "bias": torch_model.head.bias.detach().numpy()},
    }
    if hasattr(torch_model, "log_std_parameter"):
        params["log_std_parameter"] = torch_model.log_std_parameter.detach().numpy()
    return {"params": params}


def with_weights(jax_model, role, torch_model, kind):
    jax_model.init_state_dict(role)
    # copies: NumPy views of torch's parameters would follow torch's in-place optimizer steps
    params = jax.tree_util.tree_map(np.array, flax_params(torch_model, kind))
    jax_model.state_dict = jax_model.state_dict.replace(params=params)
    return jax_model


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_one_update_agrees_between_torch_and_jax(algorithm):
    torch_class, jax_class = agent_classes(algorithm)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    states = rng.normal(size=(ROLLOUTS, NUM_ENVS, 1)).astype(np.float32)
    actions = rng.normal(size=(ROLLOUTS, NUM_ENVS, 1)).astype(np.float32)
    rewards = rng.normal(size=(ROLLOUTS, NUM_ENVS, 1)).astype(np.float32)
    terminated = np.zeros((ROLLOUTS, NUM_ENVS, 1), dtype=bool)
    truncated = np.zeros((ROLLOUTS, NUM_ENVS, 1), dtype=bool)
    terminated[0, 0] = truncated[2, 1] = True  # a reset inside a sequence of each environment
    last_states = rng.normal(size=(NUM_ENVS, 1)).astype(np.float32)

    spaces = (torch_models.OBSERVATIONS, torch_models.ACTIONS)
    torch_policy = torch_models.RecurrentGaussianPolicy(*spaces, kind="GRU", hidden=3)
    torch_value = torch_models.RecurrentValue(*spaces, kind="LSTM", hidden=3)
    keep_flax_biases(torch_policy.rnn, "GRU")
    keep_flax_biases(torch_value.rnn, "LSTM")
    with torch.no_grad():
        torch_policy.log_std_parameter.fill_(-0.5)
    jax_policy = with_weights(JaxPolicy(*spaces), "policy", torch_policy, "GRU")
    jax_value = with_weights(jax_models.RecurrentValue(*spaces), "value", torch_value, "LSTM")

    torch_agent = torch_class(
        models={"policy": torch_policy, "value": torch_value},
        memory=TorchMemory(ROLLOUTS, NUM_ENVS, "cpu"),
        observation_space=spaces[0],
        action_space=spaces[1],
        device="cpu",
        cfg=config(algorithm),
    )
    jax_agent = jax_class(
        models={"policy": jax_policy, "value": jax_value},
        memory=JaxMemory(ROLLOUTS, NUM_ENVS),
        observation_space=spaces[0],
        action_space=spaces[1],
        cfg=config(algorithm),
    )
    initial = {model: [p.detach().clone() for p in model.parameters()] for model in (torch_policy, torch_value)}
    for agent, to_array in ((torch_agent, torch.from_numpy), (jax_agent, np.asarray)):
        agent.init({"timesteps": ROLLOUTS})
        for t in range(ROLLOUTS):
            with torch.no_grad():
                agent.act(to_array(states[t]), t, ROLLOUTS)  # advances the hidden states; the actions are given
            next_states = states[t + 1] if t + 1 < ROLLOUTS else last_states
            agent.record_transition(
                *(to_array(x) for x in (states[t], actions[t], rewards[t], next_states, terminated[t], truncated[t])),
                infos={},
                timestep=t,
                timesteps=ROLLOUTS,
            )
            agent.post_interaction(t, ROLLOUTS)

    for loss in ALGORITHMS[algorithm][1]:
        tag = f"Loss / {loss} loss"
        assert float(jax_agent.tracking_data[tag][0]) == pytest.approx(
            float(torch_agent.tracking_data[tag][0]), abs=1e-4
        )
    for jax_model, torch_model, kind in ((jax_policy, torch_policy, "GRU"), (jax_value, torch_value, "LSTM")):
        expected = jax.tree_util.tree_leaves_with_path(flax_params(torch_model, kind))
        found = dict(jax.tree_util.tree_leaves_with_path(jax.device_get(jax_model.state_dict.params)))
        for path, value in expected:
            np.testing.assert_allclose(found[path], value, atol=1e-4, err_msg=jax.tree_util.keystr(path))
    # the carried hidden states agree too (LSTM: flax's carry order is handled by the layer)
    for role in ("policy", "value"):
        for torch_state, jax_state in zip(
            torch_agent.hidden_states.current[role], jax_agent.hidden_states.current[role]
        ):
            np.testing.assert_allclose(np.asarray(jax_state), torch_state.numpy(), atol=1e-5)
    # the update moved both models (not a vacuous agreement)
    for model, before in initial.items():
        assert any(not torch.equal(a, b) for a, b in zip(model.parameters(), before))
