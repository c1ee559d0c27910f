"""The JAX trainers run the same neutral loop: NumPy arrays in, NumPy arrays stacked out."""

import gymnasium
import numpy as np

from skrl_like.jax.agents import Agent
from skrl_like.jax.trainers import SequentialTrainer, StepTrainer

CFG = {"timesteps": 3, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


class NumpyEnv:
    num_envs, num_agents = 3, 1
    observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (2,))
    action_space = gymnasium.spaces.Box(-1, 1, (1,))

    def __init__(self):
        self.actions = []

    def reset(self):
        return np.zeros((3, 2), np.float32), {}

    def step(self, actions):
        self.actions.append(np.asarray(actions))
        flags = np.zeros((3, 1), np.int8)
        return np.ones((3, 2), np.float32), np.ones((3, 1), np.float32), flags, flags, {"episode": {"r": np.array(2.0)}}

    def close(self):
        pass


class ConstantAgent(Agent):
    def __init__(self, value):
        super().__init__(models={}, cfg={"experiment": {"write_interval": 0, "checkpoint_interval": 0}})
        self.value = value
        self.transitions = 0

    def act(self, states, timestep, timesteps):
        return np.full((states.shape[0], 1), self.value, np.float32), None, None  # None outputs: falls back

    def record_transition(self, **kwargs):
        self.transitions += 1


def test_simultaneous_agents_actions_are_stacked_in_scope_order():
    env = NumpyEnv()
    agents = [ConstantAgent(1.0), ConstantAgent(2.0)]
    SequentialTrainer(env=env, agents=agents, agents_scope=[1, 2], cfg=CFG).eval()
    np.testing.assert_array_equal(env.actions[0], [[1.0], [2.0], [2.0]])
    assert [agent.transitions for agent in agents] == [3, 3]


def test_environment_info_arrays_of_one_element_are_tracked():
    agent = ConstantAgent(0.0)
    SequentialTrainer(env=NumpyEnv(), agents=agent, cfg=CFG).train()
    assert [float(v) for v in agent.tracking_data["Info / r"]] == [2.0, 2.0, 2.0]


def test_step_trainer_returns_the_step_outputs():
    trainer = StepTrainer(env=NumpyEnv(), agents=ConstantAgent(0.5), cfg=CFG)
    next_states, rewards, terminated, truncated, infos = trainer.train()
    assert next_states.shape == (3, 2) and rewards.shape == (3, 1) and terminated.dtype == np.int8
