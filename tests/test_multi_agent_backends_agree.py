"""The two backends implement the same IPPO and MAPPO: one update (2 epochs x 2 mini-batches, preprocessors on) on
the same data from the same weights gives the same per-agent losses and new weights to 1e-4."""

import numpy as np
import pytest
import torch
from agree_models import (
    ACTIONS,
    OBSERVATIONS,
    JaxPolicy,
    JaxValue,
    TorchPolicy,
    TorchValue,
    flax_params,
    load_torch_weights,
)

from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.multi_agents.ippo import IPPO as JaxIPPO
from skrl_like.jax.multi_agents.ippo import IPPO_DEFAULT_CONFIG as JAX_IPPO_CFG
from skrl_like.jax.multi_agents.mappo import MAPPO as JaxMAPPO
from skrl_like.jax.multi_agents.mappo import MAPPO_DEFAULT_CONFIG as JAX_MAPPO_CFG
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.multi_agents.ippo import IPPO as TorchIPPO
from skrl_like.torch.multi_agents.ippo import IPPO_DEFAULT_CONFIG as TORCH_IPPO_CFG
from skrl_like.torch.multi_agents.mappo import MAPPO as TorchMAPPO
from skrl_like.torch.multi_agents.mappo import MAPPO_DEFAULT_CONFIG as TORCH_MAPPO_CFG
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

AGENTS = ["red", "blue"]
ROLLOUTS, NUM_ENVS = 6, 2


def make(backend, mappo, torch_models):
    cfg = {
        "rollouts": ROLLOUTS,
        "learning_epochs": 2,
        "mini_batches": 2,
        "learning_rate": {"red": 1e-3, "blue": 3e-3},
        "entropy_loss_scale": 0.01,
        "grad_norm_clip": 0,  # torch clips the joint norm of both models, JAX each model's (quirk 12)
        "clip_predicted_values": {"red": True, "blue": False},
        "time_limit_bootstrap": True,
        "state_preprocessor_kwargs": {"size": 4},
        "value_preprocessor_kwargs": {"size": 1},
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    scaler = TorchScaler if backend == "torch" else JaxScaler
    cfg.update(state_preprocessor=scaler, value_preprocessor=scaler)
    if mappo:
        cfg.update(shared_state_preprocessor=scaler, shared_state_preprocessor_kwargs={"size": 4})
    if backend == "torch":
        models = torch_models
        memory, algorithm = TorchMemory, (TorchMAPPO if mappo else TorchIPPO)
        cfg = {**(TORCH_MAPPO_CFG if mappo else TORCH_IPPO_CFG), **cfg}
    else:
        models = {}
        for uid in AGENTS:
            models[uid] = {
                "policy": load_torch_weights(JaxPolicy(), "policy", torch_models[uid]["policy"]),
                "value": load_torch_weights(JaxValue(), "value", torch_models[uid]["value"]),
            }
        memory, algorithm = JaxMemory, (JaxMAPPO if mappo else JaxIPPO)
        cfg = {**(JAX_MAPPO_CFG if mappo else JAX_IPPO_CFG), **cfg}
    kwargs = {"shared_observation_spaces": {uid: OBSERVATIONS for uid in AGENTS}} if mappo else {}
    agent = algorithm(
        possible_agents=AGENTS,
        models=models,
        memories={uid: memory(memory_size=ROLLOUTS, num_envs=NUM_ENVS) for uid in AGENTS},
        observation_spaces={uid: OBSERVATIONS for uid in AGENTS},
        action_spaces={uid: ACTIONS for uid in AGENTS},
        cfg=cfg,
        **kwargs,
    )
    agent.init()
    return agent


@pytest.mark.parametrize("mappo", [False, True], ids=["IPPO", "MAPPO"])
def test_one_update_agrees(mappo):
    torch.manual_seed(0)
    torch_models = {uid: {"policy": TorchPolicy(), "value": TorchValue()} for uid in AGENTS}
    agents = {backend: make(backend, mappo, torch_models) for backend in ("jax", "torch")}
    initial = torch_models["red"]["policy"].net[2].weight.detach().clone()
    rng = np.random.default_rng(1)
    obs = {uid: rng.normal(size=(ROLLOUTS + 1, NUM_ENVS, 4)).astype(np.float32) for uid in AGENTS}
    shared = rng.normal(size=(ROLLOUTS + 1, NUM_ENVS, 4)).astype(np.float32) * 2 + 1
    actions = {uid: rng.integers(0, 3, size=(ROLLOUTS, NUM_ENVS, 1)).astype(np.float32) for uid in AGENTS}
    rewards = {uid: rng.normal(size=(ROLLOUTS, NUM_ENVS, 1)).astype(np.float32) for uid in AGENTS}
    truncated = np.zeros((ROLLOUTS, NUM_ENVS, 1), bool)
    truncated[2, 1] = True
    tracked = {backend: {} for backend in agents}
    for backend, agent in agents.items():
        convert = torch.as_tensor if backend == "torch" else np.asarray
        agent.track_data = lambda tag, value, store=tracked[backend]: store.setdefault(tag, float(value))
        for t in range(ROLLOUTS):
            agent.record_transition(
                states={uid: convert(obs[uid][t]) for uid in AGENTS},
                actions={uid: convert(actions[uid][t]) for uid in AGENTS},
                rewards={uid: convert(rewards[uid][t]) for uid in AGENTS},
                next_states={uid: convert(obs[uid][t + 1]) for uid in AGENTS},
                terminated={uid: convert(np.zeros((NUM_ENVS, 1), bool)) for uid in AGENTS},
                truncated={uid: convert(truncated[t]) for uid in AGENTS},
                infos={"shared_states": convert(shared[t]), "shared_next_states": convert(shared[t + 1])},
                timestep=t,
                timesteps=ROLLOUTS,
            )
            agent.post_interaction(timestep=t, timesteps=ROLLOUTS)
    for uid in AGENTS:
        for tag in ("Policy loss", "Value loss", "Entropy loss"):
            key = f"Loss / {tag} ({uid})"
            assert tracked["jax"][key] == pytest.approx(tracked["torch"][key], abs=1e-4), key
        for role in ("policy", "value"):
            expected = flax_params(torch_models[uid][role])["params"]
            actual = agents["jax"].models[uid][role].state_dict.params["params"]
            for layer in ("hidden", "output"):
                for name in ("kernel", "bias"):
                    np.testing.assert_allclose(
                        np.asarray(actual[layer][name]), np.asarray(expected[layer][name]), atol=1e-4
                    )
    # the update changed the weights (the comparison is not of two untouched copies)
    assert not torch.allclose(torch_models["red"]["policy"].net[2].weight, initial, atol=1e-4)
