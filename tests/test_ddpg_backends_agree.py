"""The two DDPG backends implement the same algorithm: from identical weights on identical replay data, two updates
give the same losses, Q-values, TD targets, new weights of all four models and state statistics (to 1e-4)."""

import flax.linen as fnn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import torch
import torch.nn as tnn
from agree_models import flax_params, load_torch_weights

from skrl_like.jax.agents.ddpg import DDPG as JaxDDPG
from skrl_like.jax.memories import RandomMemory as JaxMemory
from skrl_like.jax.models import DeterministicMixin as JaxDeterministic
from skrl_like.jax.models import Model as JaxModel
from skrl_like.jax.resources.preprocessors import RunningStandardScaler as JaxScaler
from skrl_like.torch.agents.ddpg import DDPG as TorchDDPG
from skrl_like.torch.memories import RandomMemory as TorchMemory
from skrl_like.torch.models import DeterministicMixin as TorchDeterministic
from skrl_like.torch.models import Model as TorchModel
from skrl_like.torch.resources.preprocessors import RunningStandardScaler as TorchScaler

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (3,), np.float32)
ACTIONS = gymnasium.spaces.Box(-2, 2, (2,), np.float32)
ROLES = ("policy", "target_policy", "critic", "target_critic")
MEMORY_SIZE, NUM_ENVS, HIDDEN = 6, 2, 16
CFG = {
    "batch_size": MEMORY_SIZE * NUM_ENVS,  # without replacement: every update sees every row
    "discount_factor": 0.95,
    "polyak": 0.1,
    "actor_learning_rate": 3e-3,
    "critic_learning_rate": 5e-3,
    "grad_norm_clip": 1.0,
    "experiment": {"write_interval": 0, "checkpoint_interval": 0},
}


class TorchActor(TorchDeterministic, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchDeterministic.__init__(self, clip_actions=True)
        self.net = tnn.Sequential(tnn.Linear(3, HIDDEN), tnn.Tanh(), tnn.Linear(HIDDEN, 2))

    def compute(self, inputs, role):
        return 3 * torch.tanh(self.net(inputs["states"])), {}  # beyond the bounds: clip_actions matters


class TorchCritic(TorchDeterministic, TorchModel):
    def __init__(self):
        TorchModel.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        TorchDeterministic.__init__(self)
        self.net = tnn.Sequential(tnn.Linear(5, HIDDEN), tnn.ReLU(), tnn.Linear(HIDDEN, 1))

    def compute(self, inputs, role):
        return self.net(torch.cat([inputs["states"], inputs["taken_actions"]], dim=1)), {}


class JaxActor(JaxDeterministic, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxDeterministic.__init__(self, clip_actions=True)

    @fnn.compact
    def __call__(self, inputs, role):
        x = fnn.tanh(fnn.Dense(HIDDEN, name="hidden")(inputs["states"]))
        return 3 * jnp.tanh(fnn.Dense(2, name="output")(x)), {}


class JaxCritic(JaxDeterministic, JaxModel):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, device, **kwargs)
        JaxDeterministic.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        x = jnp.concatenate([inputs["states"], inputs["taken_actions"]], axis=-1)
        return fnn.Dense(1, name="output")(fnn.relu(fnn.Dense(HIDDEN, name="hidden")(x))), {}


def _replay(rng):
    steps = []
    for step in range(MEMORY_SIZE):
        steps.append(
            {
                "states": rng.normal(1.0, 2.0, (NUM_ENVS, 3)).astype(np.float32),
                "actions": rng.uniform(-2, 2, (NUM_ENVS, 2)).astype(np.float32),
                "rewards": rng.normal(size=(NUM_ENVS, 1)).astype(np.float32),
                "next_states": rng.normal(1.0, 2.0, (NUM_ENVS, 3)).astype(np.float32),
                "terminated": np.array([[step == 2], [False]]),
                "truncated": np.array([[False], [step == 4]]),
            }
        )
    return steps


def test_two_updates_agree_between_torch_and_jax():
    torch.manual_seed(0)
    torch_models = {role: TorchActor() if "policy" in role else TorchCritic() for role in ROLES}
    jax_models = {role: JaxActor() if "policy" in role else JaxCritic() for role in ROLES}
    for role, model in jax_models.items():
        source = torch_models["policy" if "policy" in role else "critic"]  # targets start as copies anyway
        load_torch_weights(model, role, source)

    start = {
        role: torch_models["policy" if "policy" in role else "critic"].net[2].weight.detach().clone() for role in ROLES
    }
    # with a state preprocessor, whose statistics are updated twice per gradient step
    torch_cfg, jax_cfg = dict(CFG), dict(CFG)
    torch_cfg.update(state_preprocessor=TorchScaler, state_preprocessor_kwargs={"size": OBSERVATIONS, "device": "cpu"})
    jax_cfg.update(state_preprocessor=JaxScaler, state_preprocessor_kwargs={"size": OBSERVATIONS})
    spaces = {"observation_space": OBSERVATIONS, "action_space": ACTIONS}
    torch_agent = TorchDDPG(
        models=torch_models,
        memory=TorchMemory(MEMORY_SIZE, NUM_ENVS, device="cpu", replacement=False),
        cfg=torch_cfg,
        device="cpu",
        **spaces,
    )
    jax_agent = JaxDDPG(
        models=jax_models, memory=JaxMemory(MEMORY_SIZE, NUM_ENVS, replacement=False), cfg=jax_cfg, **spaces
    )
    for agent in (torch_agent, jax_agent):
        agent.init()

    for step in _replay(np.random.default_rng(1)):
        torch_agent.record_transition(
            **{k: torch.as_tensor(v) for k, v in step.items()}, infos={}, timestep=0, timesteps=9
        )
        jax_agent.record_transition(**step, infos={}, timestep=0, timesteps=9)
    for timestep in range(2):
        torch_agent.post_interaction(timestep=timestep, timesteps=9)
        jax_agent.post_interaction(timestep=timestep, timesteps=9)

    tags = ["Loss / Critic loss", "Loss / Policy loss"]
    tags += [
        f"{group} ({reduction})"
        for group in ("Q-network / Q1", "Target / Target")
        for reduction in ("max", "min", "mean")
    ]
    for tag in tags:
        torch_values = [float(v) for v in torch_agent.tracking_data[tag]]
        jax_values = [float(v) for v in jax_agent.tracking_data[tag]]
        assert len(torch_values) == 2
        np.testing.assert_allclose(jax_values, torch_values, rtol=1e-4, atol=1e-5, err_msg=tag)
    for role in ROLES:
        expected = flax_params(torch_models[role])
        found = jax_models[role].state_dict.params
        for path, leaf in jax.tree_util.tree_leaves_with_path(expected):
            np.testing.assert_allclose(
                np.asarray(found["params"][path[1].key][path[2].key]),
                np.asarray(leaf),
                atol=1e-4,
                err_msg=f"{role}{path}",
            )
    # every model moved (so this is not the agreement of two frozen models)
    for role in ROLES:
        assert not torch.equal(torch_models[role].net[2].weight, start[role]), role
    torch_scaler = torch_agent.checkpoint_modules["state_preprocessor"]
    jax_scaler = jax_agent.checkpoint_modules["state_preprocessor"]
    np.testing.assert_allclose(np.asarray(jax_scaler.running_mean), torch_scaler.running_mean.numpy(), rtol=1e-5)
    np.testing.assert_allclose(
        np.asarray(jax_scaler.running_variance), torch_scaler.running_variance.numpy(), rtol=1e-4
    )
