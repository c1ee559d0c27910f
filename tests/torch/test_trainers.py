"""Trainer loop behaviour with a scripted environment and a recording agent (no networks involved)."""

import gymnasium
import numpy as np
import pytest
import torch

from skrl_like.torch.agents import Agent
from skrl_like.torch.trainers import SequentialTrainer, StepTrainer, generate_equally_spaced_scopes

NO_FILES = {"experiment": {"write_interval": 0, "checkpoint_interval": 0}}


class CountingEnv:
    """A vector env whose observation is the step count; env ``i`` ends its episode every ``i + 2`` steps."""

    def __init__(self, num_envs=4):
        self.num_envs = num_envs
        self.num_agents = 1
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (1,))
        self.action_space = gymnasium.spaces.Box(-1, 1, (1,))
        self.device = torch.device("cpu")
        self.steps = 0
        self.resets = 0
        self.received_actions = []

    def reset(self):
        self.resets += 1
        return torch.full((self.num_envs, 1), float(self.steps)), {}

    def step(self, actions):
        self.received_actions.append(actions.clone())
        self.steps += 1
        obs = torch.full((self.num_envs, 1), float(self.steps))
        ends = torch.tensor([[self.steps % (i + 2) == 0] for i in range(self.num_envs)])
        return (
            obs,
            torch.ones(self.num_envs, 1),
            ends,
            torch.zeros_like(ends),
            {"episode": {"score": torch.tensor(3.0)}},
        )

    def render(self):
        pass

    def close(self):
        pass


class RecordingAgent(Agent):
    """Acts with ``+1`` (sampled) and ``-1`` (mean) actions and logs every hook call."""

    def __init__(self, observation_space=None, action_space=None, memory=None, log=None, name="agent"):
        super().__init__(
            models={},
            memory=memory,
            observation_space=observation_space,
            action_space=action_space,
            device="cpu",
            cfg=NO_FILES,
        )
        self.log = log if log is not None else []
        self.name = name
        self.seen_states = []

    def init(self, trainer_cfg=None):
        super().init(trainer_cfg)
        self.log.append((self.name, "init"))

    def pre_interaction(self, timestep, timesteps):
        self.log.append((self.name, "pre_interaction", timestep))

    def act(self, states, timestep, timesteps):
        self.log.append((self.name, "act", timestep))
        self.seen_states.append(states.clone())
        n = states.shape[0]
        return torch.ones(n, 1), None, {"mean_actions": -torch.ones(n, 1)}

    def record_transition(self, **kwargs):
        super().record_transition(**kwargs)
        self.log.append((self.name, "record_transition", kwargs["timestep"], kwargs["states"].shape[0]))

    def post_interaction(self, timestep, timesteps):
        self.log.append((self.name, "post_interaction", timestep))
        super().post_interaction(timestep, timesteps)


CFG = {"timesteps": 3, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


def test_single_agent_call_order_and_no_reset_of_vector_envs():
    env, agent = CountingEnv(), RecordingAgent()
    SequentialTrainer(env=env, agents=agent, cfg=CFG).train()
    calls = [entry[1:] for entry in agent.log]
    assert calls[0] == ("init",)
    assert calls[1:6] == [
        ("pre_interaction", 0),
        ("act", 0),
        ("record_transition", 0, 4),
        ("post_interaction", 0),
        ("pre_interaction", 1),
    ]
    assert env.resets == 1  # vector envs reset themselves; the trainer resets once at the start
    assert [s[0, 0].item() for s in agent.seen_states] == [0.0, 1.0, 2.0]  # next_states become states


def test_evaluation_uses_mean_actions_and_leaves_learning_to_the_agents_running_mode():
    env, agent = CountingEnv(), RecordingAgent()
    SequentialTrainer(env=env, agents=agent, cfg=CFG).eval()
    assert all(torch.equal(a, -torch.ones(4, 1)) for a in env.received_actions)
    # the agent's own hook is called (it skips learning itself when not training)
    assert [entry[2] for entry in agent.log if entry[1] == "post_interaction"] == [0, 1, 2]
    assert not agent.training


def test_stochastic_evaluation_uses_sampled_actions():
    env, agent = CountingEnv(), RecordingAgent()
    SequentialTrainer(env=env, agents=agent, cfg={**CFG, "stochastic_evaluation": True}).eval()
    assert all(torch.equal(a, torch.ones(4, 1)) for a in env.received_actions)


def test_single_env_is_reset_when_its_episode_ends():
    env, agent = CountingEnv(num_envs=1), RecordingAgent()
    SequentialTrainer(env=env, agents=agent, cfg={**CFG, "timesteps": 4}).train()
    assert env.resets == 1 + 2  # env 0 ends every 2 steps


def test_two_agents_share_one_vector_env_through_their_scopes():
    log = []
    env = CountingEnv(num_envs=5)
    first, second = RecordingAgent(log=log, name="a"), RecordingAgent(log=log, name="b")
    trainer = SequentialTrainer(env=env, agents=[first, second], agents_scope=[2, 3], cfg=CFG)
    assert trainer.agents_scope == [(0, 2), (2, 5)]
    trainer.train()
    assert [s.shape[0] for s in first.seen_states] == [2, 2, 2]
    assert [s.shape[0] for s in second.seen_states] == [3, 3, 3]
    assert env.received_actions[0].shape == (5, 1)
    assert ("a", "record_transition", 0, 2) in log and ("b", "record_transition", 0, 3) in log
    assert "2 environments (0:2)" in str(trainer) and "3 environments (2:5)" in str(trainer)


@pytest.mark.parametrize(
    "scope, message",
    [
        ([2, 2], "sums to 4, but the environment has 5"),
        ([5], "has 1 entries but there are 2 agents"),
        ([5, 0], r"agents_scope\[1\] is 0: each agent needs at least one environment"),
        ([6, -1], r"agents_scope\[1\] is -1"),
    ],
)
def test_bad_agents_scope_is_rejected_with_the_fix(scope, message):
    with pytest.raises(ValueError, match=message):
        SequentialTrainer(
            env=CountingEnv(num_envs=5), agents=[RecordingAgent(), RecordingAgent()], agents_scope=scope, cfg=CFG
        )


def test_equal_scopes_give_the_remainder_to_the_last_agent():
    assert generate_equally_spaced_scopes(7, 3) == [2, 2, 3]
    with pytest.raises(ValueError, match="more agents"):
        generate_equally_spaced_scopes(2, 3)


def test_unknown_trainer_key_suggests_the_close_match():
    with pytest.raises(ValueError, match="Did you mean 'timesteps'"):
        SequentialTrainer(env=CountingEnv(), agents=RecordingAgent(), cfg={"timestep": 10})


def test_agent_built_for_another_observation_space_is_rejected():
    agent = RecordingAgent(observation_space=gymnasium.spaces.Box(-1, 1, (3,)))
    with pytest.raises(ValueError, match="observation space of size 3, but the environment's has size 1"):
        SequentialTrainer(env=CountingEnv(), agents=agent, cfg=CFG)


def test_memory_for_another_number_of_envs_is_rejected():
    class Memory:
        num_envs = 8

    with pytest.raises(ValueError, match="memory was created with num_envs=8, but the agent steps 4"):
        SequentialTrainer(env=CountingEnv(), agents=RecordingAgent(memory=Memory()), cfg=CFG)


def test_environment_info_scalars_are_tracked_without_conversion():
    env, agent = CountingEnv(), RecordingAgent()
    SequentialTrainer(env=env, agents=agent, cfg=CFG).train()
    assert [float(v) for v in agent.tracking_data["Info / score"]] == [3.0, 3.0, 3.0]


def test_step_trainer_runs_one_step_per_call_and_counts_from_one():
    env, agent = CountingEnv(), RecordingAgent()
    trainer = StepTrainer(env=env, agents=agent, cfg=CFG)
    next_states, rewards, terminated, truncated, infos = trainer.train()
    assert next_states.shape == (4, 1) and rewards.shape == (4, 1)
    trainer.train()
    trainer.eval(timestep=7)
    assert [e[2] for e in agent.log if e[1] == "act"] == [1, 2, 7]
    assert env.steps == 3 and env.resets == 1
    assert torch.equal(env.received_actions[-1], -torch.ones(4, 1))


def test_trainer_str_does_not_recurse():
    text = str(SequentialTrainer(env=CountingEnv(), agents=RecordingAgent(), cfg=CFG))
    assert "Number of parallelizable environments: 4" in text


def test_evaluate_episodes_returns_whole_episode_returns_with_mean_actions():
    env, agent = CountingEnv(num_envs=2), RecordingAgent()  # env 0 ends every 2 steps, env 1 every 3
    returns = SequentialTrainer(env=env, agents=agent, cfg=CFG).evaluate_episodes(num_episodes=3)
    # env 0 ends every 2 steps, env 1 every 3; each plays 2 counted episodes after its first (possibly partial)
    # one: the first 3 of [2, 2, 3, 3]
    assert returns == [2.0, 2.0, 3.0]
    assert env.steps == 9  # env 1's third episode ends at step 9
    assert all(torch.equal(a, -torch.ones(2, 1)) for a in env.received_actions)
    assert not any(entry[1] in ("record_transition", "post_interaction") for entry in agent.log)
