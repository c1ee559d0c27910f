"""Discrete observations, alone or inside Dict/Tuple spaces, in both backends.

The agent feeds observations as skrl stores them: one integer column per ``Discrete`` part (``num_observations``
counts it one-hot, as skrl's does). Instantiated models take the index columns as numbers (torch casts them as
flax does); a hand-written model sized one-hot is reported at construction; a whole Dict/Tuple fed to a
container is reported with the way to select or join its parts.
"""

import flax.linen
import gymnasium
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from skrl_like.jax.agents.ppo import PPO as JaxPPO
from skrl_like.jax.agents.ppo import PPO_DEFAULT_CONFIG as JAX_PPO_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env as jax_wrap_env
from skrl_like.jax.memories import RandomMemory as JaxRandomMemory
from skrl_like.jax.models import CategoricalMixin as JaxCategoricalMixin
from skrl_like.jax.models import DeterministicMixin as JaxDeterministicMixin
from skrl_like.jax.models import Model as JaxModel
from skrl_like.jax.trainers import SequentialTrainer as JaxSequentialTrainer
from skrl_like.jax.utils import model_instantiators as jax_instantiators
from skrl_like.torch.agents.ppo import PPO as TorchPPO
from skrl_like.torch.agents.ppo import PPO_DEFAULT_CONFIG as TORCH_PPO_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env as torch_wrap_env
from skrl_like.torch.memories import RandomMemory as TorchRandomMemory
from skrl_like.torch.models import CategoricalMixin as TorchCategoricalMixin
from skrl_like.torch.models import DeterministicMixin as TorchDeterministicMixin
from skrl_like.torch.models import Model as TorchModel
from skrl_like.torch.trainers import SequentialTrainer as TorchSequentialTrainer
from skrl_like.torch.utils import model_instantiators as torch_instantiators
from skrl_like.utils import set_seed

BACKENDS = {
    "torch": (
        torch_wrap_env,
        torch_instantiators,
        TorchRandomMemory,
        TorchPPO,
        TORCH_PPO_DEFAULT_CONFIG,
        TorchSequentialTrainer,
    ),
    "jax": (jax_wrap_env, jax_instantiators, JaxRandomMemory, JaxPPO, JAX_PPO_DEFAULT_CONFIG, JaxSequentialTrainer),
}
DISCRETE = gymnasium.spaces.Discrete(5)
MIXED = gymnasium.spaces.Dict({"a": gymnasium.spaces.Discrete(5), "b": gymnasium.spaces.Box(-1, 1, (3,))})
ACTIONS = gymnasium.spaces.Discrete(2)


class RandomEnv(gymnasium.Env):
    def __init__(self, observation_space):
        self.observation_space, self.action_space = observation_space, ACTIONS

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.observation_space.seed(seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), float(action), False, False, {}


def instantiated_ppo(backend, space, network_input):
    wrap_env, instantiators, RandomMemory, PPO, defaults, _ = BACKENDS[backend]
    env = wrap_env(gymnasium.vector.SyncVectorEnv([lambda: RandomEnv(space)] * 2), verbose=False)
    network = [{"name": "net", "input": network_input, "layers": [8], "activations": "relu"}]
    models = {
        "policy": instantiators.categorical_model(
            env.observation_space, env.action_space, network=network, output="ACTIONS"
        ),
        "value": instantiators.deterministic_model(
            env.observation_space, env.action_space, network=network, output="ONE"
        ),
    }
    if backend == "jax":
        for role, model in models.items():
            model.init_state_dict(role)
    cfg = {**defaults, "rollouts": 4, "mini_batches": 2}
    memory = RandomMemory(memory_size=4, num_envs=env.num_envs)
    agent = PPO(
        models=models, memory=memory, cfg=cfg, observation_space=env.observation_space, action_space=env.action_space
    )
    return env, agent


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "space, network_input",
    [
        (DISCRETE, "OBSERVATIONS"),
        (DISCRETE, "one_hot_encoding(OBSERVATION_SPACE, OBSERVATIONS)"),
        (MIXED, "concatenate([OBSERVATIONS['a'], OBSERVATIONS['b']])"),
    ],
)
def test_instantiated_models_train_on_discrete_observations(backend, space, network_input):
    set_seed(0)
    env, agent = instantiated_ppo(backend, space, network_input)
    observations, _ = env.reset()
    assert observations.shape == (2, 1 if space is DISCRETE else 4)  # skrl's layout: one column per Discrete part
    Trainer = BACKENDS[backend][-1]
    Trainer(cfg={"timesteps": 8, "headless": True, "disable_progressbar": True}, env=env, agents=agent).train()
    losses = agent.tracking_data["Loss / Policy loss"]
    assert len(losses) == 2 and np.all(np.isfinite(losses))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_whole_dict_observation_fed_to_a_container_names_the_fix(backend):
    with pytest.raises(
        ValueError,
        match=r"container 'net': its input 'OBSERVATIONS' is a dict of parts.*OBSERVATIONS\['key'\].*concatenate",
    ):
        instantiated_ppo(backend, MIXED, "OBSERVATIONS")


class TorchOneHotSizedPolicy(TorchCategoricalMixin, TorchModel):
    def __init__(self, observation_space, action_space):
        TorchModel.__init__(self, observation_space, action_space, "cpu")
        TorchCategoricalMixin.__init__(self)
        self.net = torch.nn.Linear(self.num_observations, self.num_actions)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class TorchOneHotSizedValue(TorchDeterministicMixin, TorchModel):
    def __init__(self, observation_space, action_space):
        TorchModel.__init__(self, observation_space, action_space, "cpu")
        TorchDeterministicMixin.__init__(self)
        self.net = torch.nn.Linear(self.num_observations, 1)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class JaxOneHotSizedPolicy(JaxCategoricalMixin, JaxModel):
    def __init__(self, observation_space, action_space, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, **kwargs)
        JaxCategoricalMixin.__init__(self)

    @flax.linen.compact
    def __call__(self, inputs, role):
        states = inputs["states"]
        if states.shape[-1] != self.num_observations:  # what a shape-checked hand-written layer does
            raise ValueError(f"expected {self.num_observations} columns, got {states.shape[-1]}")
        return flax.linen.Dense(self.num_actions)(states), {}


class JaxOneHotSizedValue(JaxDeterministicMixin, JaxModel):
    def __init__(self, observation_space, action_space, **kwargs):
        JaxModel.__init__(self, observation_space, action_space, **kwargs)
        JaxDeterministicMixin.__init__(self)

    @flax.linen.compact
    def __call__(self, inputs, role):
        return flax.linen.Dense(1)(inputs["states"]), {}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_hand_written_model_sized_one_hot_is_reported_at_construction(backend):
    _, _, RandomMemory, PPO, defaults, _ = BACKENDS[backend]
    if backend == "torch":
        models = {"policy": TorchOneHotSizedPolicy(MIXED, ACTIONS), "value": TorchOneHotSizedValue(MIXED, ACTIONS)}
    else:
        models = {"policy": JaxOneHotSizedPolicy(MIXED, ACTIONS), "value": JaxOneHotSizedValue(MIXED, ACTIONS)}
        models["policy"].init_state_dict("policy", {"states": jnp.zeros((1, 8))})
        models["value"].init_state_dict("value")
    with pytest.raises(
        ValueError,
        match=r"'(policy|value)' model .*takes 8 observation columns .*feeds 4 .*one_hot_encoding.*occupied_size=True",
    ):
        PPO(
            models=models,
            memory=RandomMemory(memory_size=4, num_envs=1),
            cfg=dict(defaults),
            observation_space=MIXED,
            action_space=ACTIONS,
        )
