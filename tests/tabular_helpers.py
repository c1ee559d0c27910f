"""What the tabular agents' tests (tests/torch/test_q_learning.py, test_sarsa.py) share: a tabular policy with a
given table that plays a fixed action (or its table's greedy one), and one trainer-like step."""

import gymnasium
import torch

from skrl_like.torch.models import Model, TabularMixin

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
STATES = gymnasium.spaces.Discrete(2)
ACTIONS = gymnasium.spaces.Discrete(2)


class FixedPolicy(TabularMixin, Model):
    """Acts ``action`` everywhere (``None``: greedy over its own table); the table is given."""

    def __init__(self, table, action=None, observation_space=STATES, action_space=ACTIONS):
        table = torch.as_tensor(table, dtype=torch.float32).clone()
        Model.__init__(self, observation_space, action_space, "cpu")
        TabularMixin.__init__(self, num_envs=table.shape[0])
        self.q_table = table
        self.action = action

    def compute(self, inputs, role):
        states = inputs["states"].long().view(-1, 1)
        if self.action is not None:
            return torch.full_like(states, self.action), {}
        return torch.argmax(self.q_table[torch.arange(self.num_envs).view(-1, 1), states], dim=-1), {}


def column(values, dtype=torch.int64):
    return torch.tensor(values, dtype=dtype).view(-1, 1)


def step(agent, states, actions, rewards, next_states, terminated, truncated=None, timestep=0, infos=None):
    """One recorded transition and its post_interaction (where the update happens), as a trainer calls them."""
    terminated = column(terminated, torch.bool)
    truncated = torch.zeros_like(terminated) if truncated is None else column(truncated, torch.bool)
    agent.record_transition(
        states=column(states, torch.int32),
        actions=column(actions),
        rewards=column(rewards, torch.float32),
        next_states=column(next_states, torch.int32),
        terminated=terminated,
        truncated=truncated,
        infos=infos or {},
        timestep=timestep,
        timesteps=100,
    )
    agent.post_interaction(timestep=timestep, timesteps=100)
