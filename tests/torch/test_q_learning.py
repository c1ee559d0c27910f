"""Q-learning (torch, tabular): config, the table update by hand on a 2-state/2-action table, the vectorised update
over 3 environments against a per-environment NumPy loop, no update in eval mode, learning_starts, random_timesteps,
rewards_shaper, greedy evaluation actions, save/load, determinism, the construction errors, and the CI learning check
of the tabular family (FrozenLake-v1, not slippery).

The agent machinery Q-learning and SARSA share (skrl_like/torch/agents/tabular.py) is tested here; test_sarsa.py
covers what SARSA does differently (its next action)."""

import logging

import gymnasium
import numpy as np
import pytest
import torch
from tabular_helpers import ACTIONS, NO_FILES, QUIET, STATES, FixedPolicy, column, step

from examples import load_example
from skrl_like.torch.agents.q_learning import Q_LEARNING, Q_LEARNING_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, Model, TabularMixin
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed


def make_agent(policy, algorithm=Q_LEARNING, memory=None, observation_space=STATES, action_space=ACTIONS, **cfg):
    return algorithm(
        models={"policy": policy},
        memory=memory,
        cfg={"experiment": NO_FILES, **cfg},
        observation_space=observation_space,
        action_space=action_space,
        device="cpu",
    )


def frozen_lake(num_envs=1):
    if num_envs == 1:
        return wrap_env(gymnasium.make("FrozenLake-v1", is_slippery=False), verbose=False)
    return wrap_env(gymnasium.make_vec("FrozenLake-v1", num_envs=num_envs, is_slippery=False), verbose=False)


# -- config -----------------------------------------------------------------------------------------------------


def test_default_config_has_the_spec_keys_and_defaults():
    expected = {
        "discount_factor": 0.99,
        "random_timesteps": 0,
        "learning_starts": 0,
        "learning_rate": 0.5,
        "rewards_shaper": None,
    }
    assert list(Q_LEARNING_DEFAULT_CONFIG) == [*expected, "experiment"]
    assert {key: Q_LEARNING_DEFAULT_CONFIG[key] for key in expected} == expected
    assert set(Q_LEARNING_DEFAULT_CONFIG["experiment"]) == {
        "directory",
        "experiment_name",
        "write_interval",
        "checkpoint_interval",
        "store_separately",
        "checkpoint_memory",
        "wandb",
        "wandb_kwargs",
    }


def test_skrl_examples_alpha_key_is_ignored_with_a_warning(caplog):
    """skrl's published FrozenLake/Taxi scripts set cfg["alpha"] = 0.4, which skrl's agents never read: the script
    must run, and the step size must stay learning_rate (0.5), as in skrl."""
    policy = FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]])
    user_cfg = {**Q_LEARNING_DEFAULT_CONFIG, "alpha": 0.4, "experiment": NO_FILES}
    with caplog.at_level(logging.WARNING):
        agent = Q_LEARNING(models={"policy": policy}, cfg=user_cfg, observation_space=STATES, action_space=ACTIONS)
    assert "'alpha'" in caplog.text and "learning_rate" in caplog.text
    assert "alpha" in user_cfg and "alpha" not in agent.cfg
    step(agent, [0], [1], [1.0], [1], [True])
    assert agent.policy.q_table[0, 0, 1].item() == 0.5  # 0 + 0.5 * (1 - 0), not 0.4


def test_unknown_and_invalid_keys_are_refused():
    with pytest.raises(ValueError, match="learning_rate"):
        make_agent(FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]]), learning_rat=0.1)
    with pytest.raises(ValueError, match="discount_factor"):
        make_agent(FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]]), discount_factor=1.5)


# -- the update -------------------------------------------------------------------------------------------------


def test_one_update_by_hand():
    """Q = [[0.5, 1.0], [2.0, -1.0]], gamma 0.9, lr 0.5; from s=0, a=1, r=1 to s'=1 (not done):
    target = 1 + 0.9 * max(2, -1) = 2.8, Q(0, 1) = 1 + 0.5 * (2.8 - 1) = 1.9; every other cell unchanged."""
    agent = make_agent(FixedPolicy([[[0.5, 1.0], [2.0, -1.0]]]), discount_factor=0.9, learning_rate=0.5)
    step(agent, [0], [1], [1.0], [1], [False])
    torch.testing.assert_close(agent.policy.q_table, torch.tensor([[[0.5, 1.9], [2.0, -1.0]]]))

    # then from s=1, a=0, r=-0.4 to s'=0, terminated: target = -0.4, Q(1, 0) = 2 + 0.5 * (-0.4 - 2) = 0.8
    step(agent, [1], [0], [-0.4], [0], [True], timestep=1)
    torch.testing.assert_close(agent.policy.q_table, torch.tensor([[[0.5, 1.9], [0.8, -1.0]]]))


def test_a_truncated_step_does_not_bootstrap():
    """skrl's dones = terminated + truncated [compat]: a time-limit end is treated as terminal."""
    agent = make_agent(FixedPolicy([[[0.0, 0.0], [4.0, 0.0]]]), discount_factor=0.9, learning_rate=0.5)
    step(agent, [0], [0], [1.0], [1], [False], truncated=[True])
    assert agent.policy.q_table[0, 0, 0].item() == 0.5  # 0 + 0.5 * (1 - 0), no 0.9 * 4


def numpy_q_learning(tables, states, actions, rewards, next_states, dones, gamma, lr):
    """An independent per-environment loop of the textbook update."""
    tables = tables.copy()
    for env, (s, a, r, s2, done) in enumerate(zip(states, actions, rewards, next_states, dones)):
        target = r + gamma * (0.0 if done else tables[env, s2].max())
        tables[env, s, a] += lr * (target - tables[env, s, a])
    return tables


def test_vectorised_update_over_three_envs_matches_a_per_env_loop():
    generator = np.random.default_rng(0)
    tables = generator.normal(size=(3, 2, 2)).astype(np.float32)
    states, actions, next_states = [0, 1, 1], [1, 0, 1], [1, 0, 1]
    rewards, dones = [0.5, -1.0, 2.0], [False, True, False]
    agent = make_agent(FixedPolicy(tables), discount_factor=0.8, learning_rate=0.3)
    step(agent, states, actions, rewards, next_states, dones)
    expected = numpy_q_learning(tables, states, actions, rewards, next_states, dones, 0.8, 0.3)
    np.testing.assert_allclose(agent.policy.q_table.numpy(), expected, rtol=1e-6)
    assert (agent.policy.q_table.numpy() != tables).sum() == 3  # one cell per environment's table


def test_no_update_in_eval_mode():
    agent = make_agent(FixedPolicy([[[0.5, 1.0], [2.0, -1.0]]]))
    agent.set_running_mode("eval")
    step(agent, [0], [1], [1.0], [1], [False])
    torch.testing.assert_close(agent.policy.q_table, torch.tensor([[[0.5, 1.0], [2.0, -1.0]]]))
    # a step recorded in eval is not applied once training resumes either
    agent.set_running_mode("train")
    agent.post_interaction(timestep=1, timesteps=100)
    torch.testing.assert_close(agent.policy.q_table, torch.tensor([[[0.5, 1.0], [2.0, -1.0]]]))


def test_trainer_eval_leaves_the_table_unchanged():
    env = frozen_lake()
    set_seed(0)
    agent = load_example("torch", "q_learning_frozen_lake").make_agent(env, experiment=NO_FILES)
    before = agent.policy.q_table.clone()
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 200}).eval()
    torch.testing.assert_close(agent.policy.q_table, before)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 200}).train()
    assert not torch.equal(agent.policy.q_table, before)


def test_learning_starts_delays_the_update():
    agent = make_agent(FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]]), learning_starts=3)
    for timestep in range(3):
        step(agent, [0], [0], [1.0], [1], [True], timestep=timestep)
    assert agent.policy.q_table.abs().sum().item() == 0.0
    step(agent, [0], [0], [1.0], [1], [True], timestep=3)
    assert agent.policy.q_table[0, 0, 0].item() == 0.5


def test_rewards_shaper_changes_the_learned_reward_only():
    agent = make_agent(FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]]), rewards_shaper=lambda r, t, T: 10 * r)
    step(agent, [0], [0], [1.0], [1], [True])
    assert agent.policy.q_table[0, 0, 0].item() == 5.0


def test_random_timesteps_act_randomly_while_training_only():
    agent = make_agent(FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]], action=1), random_timesteps=1000)
    states = torch.zeros((1, 1), dtype=torch.int32)
    set_seed(0)
    actions = torch.cat([agent.act(states, timestep=0, timesteps=1000)[0] for _ in range(200)])
    assert set(actions.view(-1).tolist()) == {0, 1}
    agent.set_running_mode("eval")
    actions = torch.cat([agent.act(states, timestep=0, timesteps=1000)[0] for _ in range(20)])
    assert set(actions.view(-1).tolist()) == {1}


def test_eval_outputs_hold_the_greedy_actions_of_the_table():
    """The behaviour policy always plays 0; deterministic evaluation plays argmax_a Q(s, a) per env."""
    policy = FixedPolicy([[[0.0, 1.0], [3.0, 2.0]], [[5.0, 4.0], [0.0, 7.0]]], action=0)
    agent = make_agent(policy)
    agent.set_running_mode("eval")
    actions, log_prob, outputs = agent.act(column([0, 1], torch.int32), timestep=0, timesteps=1)
    assert actions.view(-1).tolist() == [0, 0] and log_prob is None
    assert outputs["mean_actions"].tolist() == [[1], [1]]


def test_transitions_go_to_a_memory_with_user_created_tensors():
    memory = RandomMemory(memory_size=4, num_envs=1, device="cpu")
    memory.create_tensor("rewards", 1, torch.float32)
    agent = make_agent(FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]]), memory=memory, rewards_shaper=lambda r, t, T: r + 1)
    step(agent, [0], [0], [2.0], [1], [False])
    assert memory.get_tensor_by_name("rewards")[0, 0, 0].item() == 3.0


# -- save/load, determinism ----------------------------------------------------------------------------------------


def test_save_load_round_trip(tmp_path):
    env = frozen_lake()
    set_seed(0)
    example = load_example("torch", "q_learning_frozen_lake")
    agent = example.make_agent(env, experiment=NO_FILES)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 300}).train()
    path = str(tmp_path / "agent.pt")
    agent.save(path)
    other = example.make_agent(env, experiment=NO_FILES)
    assert not torch.equal(other.policy.q_table, agent.policy.q_table)
    other.load(path)
    torch.testing.assert_close(other.policy.q_table, agent.policy.q_table)
    assert list(torch.load(path, weights_only=False)) == ["policy"]


def test_a_fixed_seed_reproduces_a_short_run():
    example = load_example("torch", "q_learning_frozen_lake")

    def run():
        env = frozen_lake(num_envs=2)
        set_seed(3)
        env._env.reset(seed=3)
        agent = example.make_agent(env, experiment=NO_FILES)
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 400}).train()
        return agent.policy.q_table.clone()

    first, second = run(), run()
    assert first.shape == (2, 16, 4) and not torch.equal(first, torch.ones_like(first))
    torch.testing.assert_close(first, second, rtol=0, atol=0)


# -- bad input ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "observation_space, action_space, kind, found",
    [
        (gymnasium.spaces.Box(0, 1, (2,)), ACTIONS, "observation", "Box"),
        (STATES, gymnasium.spaces.Box(-1, 1, (1,)), "action", "Box"),
        (gymnasium.spaces.MultiDiscrete([2, 2]), ACTIONS, "observation", "MultiDiscrete"),
        (None, ACTIONS, "observation", "None"),
    ],
)
def test_non_discrete_spaces_are_refused(observation_space, action_space, kind, found):
    with pytest.raises(ValueError, match=f"Q_LEARNING is tabular and needs a gymnasium.spaces.Discrete {kind}") as info:
        make_agent(
            FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]]), observation_space=observation_space, action_space=action_space
        )
    assert found in str(info.value) and ("discretise" in str(info.value))


def test_a_missing_policy_is_refused():
    with pytest.raises(ValueError, match=r"needs a model for role\(s\) \['policy'\]"):
        Q_LEARNING(models={}, cfg={"experiment": NO_FILES}, observation_space=STATES, action_space=ACTIONS)


class NotTabular(DeterministicMixin, Model):
    def __init__(self):
        Model.__init__(self, STATES, ACTIONS, "cpu")
        DeterministicMixin.__init__(self)

    def compute(self, inputs, role):
        return torch.zeros(inputs["states"].shape[0], 2), {}


class NoTable(TabularMixin, Model):
    def __init__(self):
        Model.__init__(self, STATES, ACTIONS, "cpu")
        TabularMixin.__init__(self)

    def compute(self, inputs, role):
        return inputs["states"], {}


def test_a_policy_without_a_table_is_refused():
    with pytest.raises(ValueError, match=r"'policy' model \(NotTabular\) has no table\(\) method.*TabularMixin"):
        make_agent(NotTabular())
    with pytest.raises(ValueError, match=r"table\(\) failed.*self.q_table = torch.zeros"):
        make_agent(NoTable())


@pytest.mark.parametrize(
    "shape",
    [(1, 3, 2), (1, 2, 3), (2, 2), (2, 2, 2)],  # too many states, too many actions, no env axis, num_envs 1 vs 2
)
def test_a_table_of_the_wrong_shape_is_refused(shape):
    policy = FixedPolicy(torch.zeros((1, 2, 2)))
    policy.q_table = torch.zeros(shape)
    with pytest.raises(
        ValueError, match=r"Q-table of shape .* needs \(num_envs, num_states, num_actions\) = \[1, 2, 2"
    ):
        make_agent(policy)


def test_an_integer_table_is_refused():
    policy = FixedPolicy(torch.zeros((1, 2, 2)))
    policy.q_table = torch.zeros((1, 2, 2), dtype=torch.int64)
    with pytest.raises(ValueError, match="torch.int64 tensor.*floating-point"):
        make_agent(policy)


def test_a_transition_of_another_num_envs_is_refused():
    agent = make_agent(FixedPolicy([[[0.0, 0.0], [0.0, 0.0]]]))
    with pytest.raises(ValueError, match=r"transition of 3 environment\(s\).*holds 1.*num_envs=env.num_envs"):
        step(agent, [0, 1, 0], [0, 0, 0], [1.0, 1.0, 1.0], [1, 1, 1], [False, False, False])


# -- CI learning check of the tabular family ------------------------------------------------------------------------


def test_q_learning_solves_frozen_lake():
    """A silent break of the update fails the suite: with the example's settings (optimistic table of ones, epsilon
    0.1, gamma 0.999) 10k steps (~1 s) make the greedy policy reach the goal in every episode; with the table frozen
    (no update) the greedy policy only ever plays action 0 (left) and never reaches it."""
    torch.set_num_threads(1)
    example = load_example("torch", "q_learning_frozen_lake")
    env = frozen_lake()
    set_seed(0)
    env._env.reset(seed=0)
    agent = example.make_agent(env, experiment=NO_FILES)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 10_000})
    trainer.train()
    assert example.greedy_success_rate(trainer) == 1.0


def test_set_learning_rate_changes_the_step_size_of_the_next_update():
    # as test_one_update_by_hand, then the second update at lr 0.25: Q(1, 0) = 2 + 0.25 * (-0.4 - 2) = 1.4
    agent = make_agent(FixedPolicy([[[0.5, 1.0], [2.0, -1.0]]]), discount_factor=0.9, learning_rate=0.5)
    step(agent, [0], [1], [1.0], [1], [False])
    assert agent.learning_rate_keys() == ("learning_rate",)
    agent.set_learning_rate(0.25)
    step(agent, [1], [0], [-0.4], [0], [True], timestep=1)
    torch.testing.assert_close(agent.policy.q_table, torch.tensor([[[0.5, 1.9], [1.4, -1.0]]]))
