"""SAC_RNN, TD3_RNN and DDPG_RNN (JAX; skrl's JAX backend has none): the policy's hidden states carried per
environment and zeroed at episode ends, stored with each step and fed to the update's sequences; run state; clear
errors; short runs on Pendulum."""

import flax.linen as nn
import gymnasium
import jax.numpy as jnp
import numpy as np
import pytest
from recurrent_offpolicy_runner import runner_cfg

from skrl_like.jax.agents.ddpg import DDPG_RNN
from skrl_like.jax.agents.sac import SAC, SAC_RNN
from skrl_like.jax.agents.td3 import TD3_RNN
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.models.recurrent import RecurrentLayer
from skrl_like.jax.trainers import SequentialTrainer

OBSERVATIONS = gymnasium.spaces.Box(-1.0, 1.0, (3,))
ACTIONS = gymnasium.spaces.Box(-2.0, 2.0, (1,))
NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
HIDDEN, NUM_ENVS, LENGTH = 4, 2, 3
ROLES = {
    SAC_RNN: ("policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2"),
    TD3_RNN: ("policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2"),
    DDPG_RNN: ("policy", "target_policy", "critic", "target_critic"),
}


class _Recurrent(Model):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device=None, parent=None, name=None):
        Model.__init__(self, observation_space, action_space, device, parent, name)

    def get_specification(self):
        return {"rnn": {"sequence_length": LENGTH, "sizes": [(1, NUM_ENVS, HIDDEN)]}}

    def features(self, inputs):
        terminated = inputs.get("terminated")
        return self.gru(inputs["states"], inputs["rnn"], terminated, terminated is not None)


class GaussianPolicy(GaussianMixin, _Recurrent):
    def __init__(self, **kwargs):
        _Recurrent.__init__(self, **kwargs)
        GaussianMixin.__init__(self)

    def setup(self):
        self.gru = RecurrentLayer("GRU", HIDDEN, 1, LENGTH)
        self.head = nn.Dense(1)
        self.log_std = self.param("log_std", lambda _: jnp.zeros(1))

    def __call__(self, inputs, role=""):
        features, states = self.features(inputs)
        return self.head(features), self.log_std, {"rnn": states}


class DeterministicPolicy(DeterministicMixin, _Recurrent):
    def __init__(self, **kwargs):
        _Recurrent.__init__(self, **kwargs)
        DeterministicMixin.__init__(self, clip_actions=True)

    def setup(self):
        self.gru = RecurrentLayer("GRU", HIDDEN, 1, LENGTH)
        self.head = nn.Dense(1)

    def __call__(self, inputs, role=""):
        features, states = self.features(inputs)
        return jnp.tanh(self.head(features)), {"rnn": states}


class Critic(DeterministicMixin, _Recurrent):
    def __init__(self, **kwargs):
        _Recurrent.__init__(self, **kwargs)
        DeterministicMixin.__init__(self)

    def setup(self):
        self.gru = RecurrentLayer("GRU", HIDDEN, 1, LENGTH)
        self.head = nn.Dense(1)

    def __call__(self, inputs, role=""):
        features, states = self.features(inputs)
        return self.head(jnp.concatenate([features, inputs["taken_actions"]], -1)), {"rnn": states}


def make_agent(agent_class=SAC_RNN, memory_size=16, **cfg):
    policy = GaussianPolicy if agent_class is SAC_RNN else DeterministicPolicy
    models = {}
    for role in ROLES[agent_class]:
        models[role] = (policy if "policy" in role else Critic)()
        models[role].init_state_dict(role)
    memory = RandomMemory(memory_size=memory_size, num_envs=NUM_ENVS)
    cfg = {"batch_size": 2, "experiment": NO_FILES, **cfg}
    return agent_class(models=models, memory=memory, cfg=cfg, observation_space=OBSERVATIONS, action_space=ACTIONS)


def step(agent, states, ended, timestep=0):
    actions, _, _ = agent.act(states, timestep, 100)
    terminated = np.asarray(ended).reshape(-1, 1)
    agent.record_transition(
        states, actions, np.zeros((len(ended), 1)), states, terminated, np.zeros_like(terminated), {}, timestep, 100
    )


def test_the_hidden_state_is_zeroed_where_an_episode_ended_and_carried_elsewhere():
    agent = make_agent()
    agent.init()
    agent.set_running_mode("train")
    states = np.random.default_rng(0).random((2, NUM_ENVS, 3), dtype=np.float32)
    expected = agent.policy.act({"states": states[0], "rnn": [jnp.zeros((1, NUM_ENVS, HIDDEN))]}, "policy")[2]["rnn"]
    step(agent, states[0], [True, False])
    step(agent, states[1], [False, False])
    stored = np.asarray(agent.memory.get_tensor_by_name("rnn_policy_0"))
    np.testing.assert_array_equal(stored[0], 0.0)  # an episode starts from zeros
    np.testing.assert_array_equal(stored[1, 0], 0.0)  # environment 0 ended at step 0: reset
    np.testing.assert_allclose(stored[1, 1], np.asarray(expected[0])[:, 1], atol=1e-6)  # environment 1: carried
    assert np.abs(stored[1, 1]).sum() > 0


def test_the_hidden_states_are_run_state():
    agent = make_agent()
    agent.init()
    agent.set_running_mode("train")
    step(agent, np.ones((NUM_ENVS, 3), np.float32), [False, False])
    other = make_agent()
    other.init()
    other.load_run_state(agent.run_state())
    carried = np.asarray(agent.hidden_states.inputs("policy")[0])
    np.testing.assert_array_equal(np.asarray(other.hidden_states.inputs("policy")[0]), carried)
    assert np.abs(carried).sum() > 0


def test_the_feedforward_agent_refuses_recurrent_models_and_short_memories_are_refused():
    models = make_agent().models
    with pytest.raises(ValueError, match="use SAC_RNN"):
        SAC(models=models, memory=None, observation_space=OBSERVATIONS, action_space=ACTIONS)
    with pytest.raises(ValueError, match="fewer than one sequence of 3 steps"):
        make_agent(memory_size=2)


def test_the_compiled_trainer_is_refused_with_the_reason():
    assert "no compiled form" in " ".join(make_agent().compiled_obstacles())


@pytest.mark.parametrize("agent_class", [SAC_RNN, TD3_RNN, DDPG_RNN])
def test_a_short_run_on_pendulum(agent_class):
    env = wrap_env(
        gymnasium.make_vec("Pendulum-v1", num_envs=NUM_ENVS, vectorization_mode="sync", max_episode_steps=10),
        verbose=False,
    )
    agent = make_agent(agent_class, memory_size=32, learning_starts=8)
    before = np.asarray(agent.policy.state_dict.params["params"]["head"]["kernel"]).copy()
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 24}).train()
    after = np.asarray(agent.policy.state_dict.params["params"]["head"]["kernel"])
    assert not np.array_equal(before, after) and np.isfinite(after).all()


@pytest.mark.parametrize("agent_class", ["DDPG"])  # (SAC: the same path, twice the compilation time)
def test_the_runner_runs_a_policy_with_a_recurrent_layer_as_the_recurrent_agent(agent_class):
    from skrl_like.jax.utils.runner import Runner

    env = wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=2, vectorization_mode="sync"), verbose=False)
    runner = Runner(env, runner_cfg(agent_class))
    assert type(runner.agent).__name__ == f"{agent_class}_RNN"
    runner.run("train")
    assert tuple(runner.agent.hidden_states.inputs("policy")[0].shape) == (1, 2, 8)
