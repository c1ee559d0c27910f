"""Recurrent agents outside the training loop (JAX; the torch mirror: tests/torch/test_recurrent_deployment.py):
``compute_action`` taking and returning the policy's hidden states (equal to the agent's acting in eval mode, step by
step with resets), and evaluation on an env with another number of environments than training's, which leaves the
training run as it was."""

import jax
import numpy as np
import pytest

from skrl_like.jax.agents.ppo import PPO_RNN
from skrl_like.jax.agents.sac import SAC_RNN
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.jax.recurrent_models import ACTIONS, OBSERVATIONS, RecurrentGaussianPolicy, RecurrentValue
from tests.jax.test_recurrent_offpolicy import make_agent as make_replay_agent
from tests.recurrent_rollouts import short_masked_pendulum

NUM_ENVS = 2
NO_WRITING = {"write_interval": 0, "checkpoint_interval": 0}
LATE = 10**6  # a timestep past any random warm-up


class GruPolicy(RecurrentGaussianPolicy):
    kind, hidden = "GRU", 3


class LstmPolicy(RecurrentGaussianPolicy):
    kind, hidden = "LSTM", 3


def ppo_rnn(policy=GruPolicy, observation_space=OBSERVATIONS, action_space=ACTIONS, rollouts=4, experiment=None):
    """A recurrent policy and a separate LSTM value model (whose states deployment ignores)."""
    models = {
        "policy": policy(observation_space, action_space),
        "value": RecurrentValue(observation_space, action_space),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    return PPO_RNN(
        models=models,
        memory=RandomMemory(memory_size=rollouts, num_envs=NUM_ENVS),
        observation_space=observation_space,
        action_space=action_space,
        cfg={"rollouts": rollouts, "mini_batches": 1, "experiment": experiment or NO_WRITING},
    )


def sac_rnn():
    return make_replay_agent(SAC_RNN)


def acted_in_eval_mode(agent, observations, dones):
    """The trainer's evaluation path: the agent's deterministic actions from its carried states, reset after dones."""
    agent.set_running_mode("eval")
    actions = []
    for t in range(len(observations)):
        _, _, outputs = agent.act(observations[t], LATE, LATE)
        actions.append(np.asarray(outputs["mean_actions"]))
        ended = dones[t].reshape(-1, 1)
        agent._advance_carried_state(ended, np.zeros_like(ended))
    agent.set_running_mode("train")
    return np.stack(actions)


@pytest.mark.parametrize("make", [ppo_rnn, sac_rnn], ids=["PPO_RNN", "SAC_RNN"])
def test_a_compute_action_loop_with_carried_state_plays_the_agents_evaluation_actions(make):
    agent = make()
    agent.init()
    size = agent.observation_space.shape[0]
    observations = np.random.default_rng(0).normal(size=(6, NUM_ENVS, size)).astype(np.float32)
    dones = np.zeros((6, NUM_ENVS), dtype=bool)
    dones[2, 1] = True  # env 1 starts a new episode at step 3
    expected = acted_in_eval_mode(agent, observations, dones)
    training_states = [np.asarray(state) for state in agent.hidden_states.current["policy"]]

    hidden_states, episode_start, actions = None, np.ones(NUM_ENVS, dtype=bool), []
    for t in range(6):
        action, hidden_states = agent.compute_action(
            observations[t], hidden_states=hidden_states, episode_start=episode_start
        )
        actions.append(action)
        episode_start = dones[t]
    np.testing.assert_allclose(np.stack(actions), expected, rtol=1e-5, atol=1e-6)
    assert [state.shape for state in hidden_states] == [(1, NUM_ENVS, agent.hidden_states.shapes["policy"][0][2])]
    for before, after in zip(training_states, agent.hidden_states.current["policy"]):
        np.testing.assert_array_equal(before, np.asarray(after))

    # without the reset at step 3, env 1 plays other actions from there on: the reset is applied
    hidden_states, unreset = None, []
    for t in range(6):
        action, hidden_states = agent.compute_action(observations[t], hidden_states=hidden_states)
        unreset.append(action)
    np.testing.assert_allclose(np.stack(unreset)[:, 0], expected[:, 0], rtol=1e-5, atol=1e-6)
    assert not np.allclose(np.stack(unreset)[3:, 1], expected[3:, 1])


def test_one_observation_at_a_time_carries_a_batch_of_one():
    agent = ppo_rnn()
    observations = np.random.default_rng(1).normal(size=(4, NUM_ENVS, 1)).astype(np.float32)
    batched, hidden_states = [], None
    for t in range(4):
        action, hidden_states = agent.compute_action(observations[t], hidden_states=hidden_states)
        batched.append(action)
    hidden_states = None
    for t in range(4):
        action, hidden_states = agent.compute_action(observations[t, 1], hidden_states=hidden_states)
        assert action.shape == (1,) and hidden_states[0].shape == (1, 1, 3)
        np.testing.assert_allclose(action, batched[t][1], rtol=1e-5, atol=1e-6)


def test_lstm_policies_carry_two_arrays():
    agent = ppo_rnn(LstmPolicy)
    action, hidden_states = agent.compute_action(np.ones((3, 1), dtype=np.float32))
    assert action.shape == (3, 1) and [state.shape for state in hidden_states] == [(1, 3, 3), (1, 3, 3)]
    again, _ = agent.compute_action(np.ones((3, 1), dtype=np.float32), hidden_states=hidden_states)
    assert not np.allclose(again, action)  # the second step reads the first one's states


def test_hidden_states_of_the_wrong_shape_are_refused_naming_the_expected_ones():
    agent = ppo_rnn()
    observations = np.zeros((2, 1), dtype=np.float32)
    expected = r"PPO_RNN.compute_action: hidden_states has shapes \[\(1, 3, 3\)\], .* are \[\(1, 2, 3\)\]"
    with pytest.raises(ValueError, match=expected):
        agent.compute_action(observations, hidden_states=[np.zeros((1, 3, 3))])


def parameters(agent):
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(agent.policy.state_dict.params)]


def test_evaluation_on_another_number_of_environments_leaves_training_as_it_was(tmp_path):
    """Evaluation acts with hidden states of its own, sized for its env (torch's test also covers an evaluation env
    as large as training's, whose states must not overwrite training's either: the mechanism is shared)."""
    spaces = wrap_env(short_masked_pendulum(1))
    space, actions = spaces.observation_space, spaces.action_space
    cfg = {"timesteps": 16, "headless": True, "disable_progressbar": True}
    trained = {}
    for evaluated in (False, True):
        set_seed(3)
        raw = short_masked_pendulum(NUM_ENVS)
        raw.reset(seed=0)
        env = wrap_env(raw)
        experiment = {"directory": str(tmp_path / str(evaluated)), "write_interval": 8, "checkpoint_interval": 0}
        agent = ppo_rnn(GruPolicy, space, actions, rollouts=8, experiment=experiment)
        evaluation = {"evaluation_interval": 8, "evaluation_episodes": 3} if evaluated else {}
        evaluation_env = wrap_env(short_masked_pendulum(3)) if evaluated else None
        trainer = SequentialTrainer(env=env, agents=agent, cfg={**cfg, **evaluation}, evaluation_env=evaluation_env)
        trainer.train()
        trained[evaluated] = parameters(agent) + [np.asarray(s) for s in agent.hidden_states.current["policy"]]
    assert trainer.last_evaluation["timestep"] == 16 and len(trainer.last_evaluation["returns"]) == 3
    assert agent.hidden_states.num_envs == NUM_ENVS
    for plain, evaluated in zip(trained[False], trained[True]):
        np.testing.assert_array_equal(plain, evaluated)
