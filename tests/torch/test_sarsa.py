"""SARSA (torch, tabular): config, the table update by hand (the target bootstraps from the behaviour policy's next
action, not the greedy one), the vectorised update over 3 environments against a per-environment NumPy loop, no
update in eval mode, save/load, determinism, and the construction errors. The machinery SARSA shares with Q-learning
(learning_starts, random_timesteps, rewards_shaper, memory, the table checks) is tested in test_q_learning.py."""

import gymnasium
import numpy as np
import pytest
import torch
from tabular_helpers import ACTIONS, NO_FILES, QUIET, STATES, FixedPolicy, column, step

from examples import load_example
from skrl_like.torch.agents.q_learning import Q_LEARNING_DEFAULT_CONFIG
from skrl_like.torch.agents.sarsa import SARSA, SARSA_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.models import Model, TabularMixin
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed


def make_sarsa(policy, **cfg):
    return SARSA(
        models={"policy": policy},
        cfg={"experiment": NO_FILES, **cfg},
        observation_space=STATES,
        action_space=ACTIONS,
        device="cpu",
    )


class OtherActionPolicy(TabularMixin, Model):
    """Plays ``(state + 1) % 2`` and remembers the states it was asked about."""

    def __init__(self, table):
        table = torch.as_tensor(table, dtype=torch.float32).clone()
        Model.__init__(self, STATES, ACTIONS, "cpu")
        TabularMixin.__init__(self, num_envs=table.shape[0])
        self.q_table = table
        self.asked = []

    def compute(self, inputs, role):
        self.asked.append(inputs["states"].clone())
        return (inputs["states"].long().view(-1, 1) + 1) % 2, {}


def taxi():
    return wrap_env(gymnasium.make("Taxi-v4"), verbose=False)


def test_default_config_has_the_spec_keys_and_is_its_own_dict():
    expected = {
        "discount_factor": 0.99,
        "random_timesteps": 0,
        "learning_starts": 0,
        "learning_rate": 0.5,
        "rewards_shaper": None,
    }
    assert list(SARSA_DEFAULT_CONFIG) == [*expected, "experiment"]
    assert {key: SARSA_DEFAULT_CONFIG[key] for key in expected} == expected
    assert SARSA_DEFAULT_CONFIG is not Q_LEARNING_DEFAULT_CONFIG
    assert SARSA_DEFAULT_CONFIG["experiment"] is not Q_LEARNING_DEFAULT_CONFIG["experiment"]


def test_one_update_by_hand_bootstraps_from_the_policy_action():
    """Q = [[0.5, 1.0], [2.0, -1.0]], gamma 0.9, lr 0.5; from s=0, a=1, r=1 to s'=1 (not done), the policy plays
    a' = 1 at s'=1: target = 1 + 0.9 * Q(1, 1) = 1 - 0.9 = 0.1, Q(0, 1) = 1 + 0.5 * (0.1 - 1) = 0.55 (Q-learning
    would bootstrap from max = 2 and give 1.9)."""
    agent = make_sarsa(FixedPolicy([[[0.5, 1.0], [2.0, -1.0]]], action=1), discount_factor=0.9, learning_rate=0.5)
    step(agent, [0], [1], [1.0], [1], [False])
    torch.testing.assert_close(agent.policy.q_table, torch.tensor([[[0.5, 0.55], [2.0, -1.0]]]))

    # terminated: no bootstrap; from s=1, a=0, r=-0.4: Q(1, 0) = 2 + 0.5 * (-0.4 - 2) = 0.8
    step(agent, [1], [0], [-0.4], [0], [True], timestep=1)
    torch.testing.assert_close(agent.policy.q_table, torch.tensor([[[0.5, 0.55], [0.8, -1.0]]]))


def numpy_sarsa(tables, states, actions, rewards, next_states, next_actions, dones, gamma, lr):
    """An independent per-environment loop of the textbook update."""
    tables = tables.copy()
    for env, (s, a, r, s2, a2, done) in enumerate(zip(states, actions, rewards, next_states, next_actions, dones)):
        target = r + gamma * (0.0 if done else tables[env, s2, a2])
        tables[env, s, a] += lr * (target - tables[env, s, a])
    return tables


def test_vectorised_update_over_three_envs_matches_a_per_env_loop():
    generator = np.random.default_rng(1)
    tables = generator.normal(size=(3, 2, 2)).astype(np.float32)
    states, actions, next_states = [0, 1, 1], [1, 0, 1], [1, 0, 1]
    rewards, dones = [0.5, -1.0, 2.0], [False, True, False]
    policy = OtherActionPolicy(tables)
    agent = make_sarsa(policy, discount_factor=0.8, learning_rate=0.3)
    step(agent, states, actions, rewards, next_states, dones)
    next_actions = [(s2 + 1) % 2 for s2 in next_states]
    expected = numpy_sarsa(tables, states, actions, rewards, next_states, next_actions, dones, 0.8, 0.3)
    np.testing.assert_allclose(agent.policy.q_table.numpy(), expected, rtol=1e-6)
    # the policy was asked once, about all three next states at once
    assert len(policy.asked) == 1 and policy.asked[0].view(-1).tolist() == next_states


def test_no_update_and_no_policy_call_in_eval_mode():
    policy = OtherActionPolicy([[[0.5, 1.0], [2.0, -1.0]]])
    agent = make_sarsa(policy)
    agent.set_running_mode("eval")
    step(agent, [0], [1], [1.0], [1], [False])
    torch.testing.assert_close(agent.policy.q_table, torch.tensor([[[0.5, 1.0], [2.0, -1.0]]]))
    assert policy.asked == []


def test_non_discrete_spaces_are_refused():
    with pytest.raises(ValueError, match=r"SARSA is tabular .*Discrete observation space.*Box"):
        SARSA(
            models={"policy": FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]])},
            cfg={"experiment": NO_FILES},
            observation_space=gymnasium.spaces.Box(0, 1, (2,)),
            action_space=ACTIONS,
        )
    with pytest.raises(ValueError, match=r"SARSA is tabular .*Discrete action space.*Box.*SAC/TD3/DDPG"):
        SARSA(
            models={"policy": FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]])},
            cfg={"experiment": NO_FILES},
            observation_space=STATES,
            action_space=gymnasium.spaces.Box(-1, 1, (1,)),
        )


def test_a_table_of_the_wrong_shape_is_refused():
    policy = FixedPolicy(torch.zeros((1, 2, 2)))
    policy.q_table = torch.zeros((1, 5, 2))
    with pytest.raises(ValueError, match=r"SARSA: .*shape \[1, 5, 2\].*= \[1, 2, 2\]"):
        make_sarsa(policy)


def test_save_load_round_trip(tmp_path):
    example = load_example("torch", "sarsa_taxi")
    env = taxi()
    set_seed(0)
    agent = example.make_agent(env, experiment=NO_FILES)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 300}).train()
    path = str(tmp_path / "agent.pt")
    agent.save(path)
    other = example.make_agent(env, experiment=NO_FILES)
    other.load(path)
    torch.testing.assert_close(other.policy.q_table, agent.policy.q_table)
    assert not torch.equal(agent.policy.q_table, torch.ones_like(agent.policy.q_table))


def test_a_fixed_seed_reproduces_a_short_run():
    example = load_example("torch", "sarsa_taxi")

    def run():
        env = taxi()
        set_seed(5)
        env._env.reset(seed=5)
        agent = example.make_agent(env, experiment=NO_FILES)
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 500}).train()
        return agent.policy.q_table.clone()

    torch.testing.assert_close(run(), run(), rtol=0, atol=0)


def test_eval_plays_the_greedy_table_actions():
    agent = make_sarsa(FixedPolicy([[[0.0, 1.0], [3.0, 2.0]]], action=1))
    agent.set_running_mode("eval")
    _, _, outputs = agent.act(column([1], torch.int32), timestep=0, timesteps=1)
    assert outputs["mean_actions"].tolist() == [[0]]


def test_sarsa_solves_frozen_lake_with_the_examples_settings():
    """The FrozenLake example's SARSA settings (discount 0.9, epsilon 0.2): 20k steps make the greedy policy reach the
    goal in every episode (seeds 0-9 all do); with discount 0.999 no seed of 0-4 does (the greedy policy bumps into a
    wall forever), so the example's settings are what this checks."""
    torch.set_num_threads(1)
    example = load_example("torch", "q_learning_frozen_lake")
    env = wrap_env(gymnasium.make("FrozenLake-v1", is_slippery=False), verbose=False)
    set_seed(0)
    agent = example.make_agent(env, experiment=NO_FILES, agent="sarsa")
    assert isinstance(agent, SARSA) and agent.cfg["discount_factor"] == 0.9 and agent.policy.epsilon == 0.2
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": example.TIMESTEPS})
    trainer.train()
    assert example.greedy_success_rate(trainer) == 1.0
