"""Recurrent agents outside the training loop (torch): ``compute_action`` taking and returning the policy's hidden
states (equal to the agent's acting in eval mode, step by step with resets), and evaluation on an env with another
number of environments than training's, which leaves the training run as it was."""

import numpy as np
import pytest
import torch

from skrl_like.torch.agents.ppo import PPO_RNN
from skrl_like.torch.agents.sac import SAC_RNN
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.trainers import SequentialTrainer
from tests.recurrent_rollouts import short_masked_pendulum
from tests.torch.recurrent_models import ACTIONS, OBSERVATIONS, RecurrentGaussianPolicy, RecurrentValue
from tests.torch.test_recurrent_offpolicy import make_agent as make_replay_agent

NUM_ENVS = 2
NO_WRITING = {"write_interval": 0, "checkpoint_interval": 0}
LATE = 10**6  # a timestep past any random warm-up


def ppo_rnn(
    num_envs=NUM_ENVS, observation_space=OBSERVATIONS, action_space=ACTIONS, rollouts=4, kind="GRU", experiment=None
):
    """A GRU policy and a separate LSTM value model (whose states deployment ignores)."""
    torch.manual_seed(0)
    models = {
        "policy": RecurrentGaussianPolicy(observation_space, action_space, kind=kind, hidden=3),
        "value": RecurrentValue(observation_space, action_space),
    }
    return PPO_RNN(
        models=models,
        memory=RandomMemory(memory_size=rollouts, num_envs=num_envs),
        observation_space=observation_space,
        action_space=action_space,
        device="cpu",
        cfg={"rollouts": rollouts, "mini_batches": 1, "experiment": experiment or NO_WRITING},
    )


def sac_rnn():
    torch.manual_seed(0)
    return make_replay_agent(SAC_RNN)


def acted_in_eval_mode(agent, observations, dones):
    """The trainer's evaluation path: the agent's deterministic actions from its carried states, reset after dones."""
    agent.set_running_mode("eval")
    actions = []
    for t in range(len(observations)):
        with torch.no_grad():
            _, _, outputs = agent.act(torch.from_numpy(observations[t]), LATE, LATE)
        actions.append(outputs["mean_actions"].numpy())
        ended = torch.from_numpy(dones[t]).reshape(-1, 1)
        agent._advance_carried_state(ended, torch.zeros_like(ended))
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
    training_states = [state.clone() for state in agent.hidden_states.current["policy"]]

    hidden_states, episode_start, actions = None, np.ones(NUM_ENVS, dtype=bool), []
    for t in range(6):
        action, hidden_states = agent.compute_action(
            observations[t], hidden_states=hidden_states, episode_start=episode_start
        )
        actions.append(action)
        episode_start = dones[t]
    np.testing.assert_allclose(np.stack(actions), expected, rtol=1e-5, atol=1e-6)
    # the states are the model's layout, and the training run's carried states are untouched
    assert [state.shape for state in hidden_states] == [(1, NUM_ENVS, agent.hidden_states.shapes["policy"][0][2])]
    for before, after in zip(training_states, agent.hidden_states.current["policy"]):
        assert torch.equal(before, after)

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
    agent = ppo_rnn(kind="LSTM")
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
    with pytest.raises(ValueError, match=r"shapes \[\(1, 2, 3\), \(1, 2, 3\)\]"):  # an LSTM's pair for a GRU
        agent.compute_action(observations, hidden_states=[np.zeros((1, 2, 3))] * 2)


def test_a_feedforward_agent_refuses_hidden_states():
    from tests.torch.test_compute_action import ACTIONS as BOX_ACTIONS
    from tests.torch.test_compute_action import BOX, make_ppo

    with pytest.raises(ValueError, match="PPO carries no hidden states: call compute_action"):
        make_ppo(BOX, BOX_ACTIONS).compute_action(np.zeros(3), hidden_states=[np.zeros((1, 1, 3))])


def parameters(agent):
    return [p.detach().clone() for p in agent.policy.parameters()]


@pytest.mark.parametrize("evaluation_envs", [3, NUM_ENVS])
def test_evaluation_on_its_own_env_leaves_training_as_it_was(tmp_path, evaluation_envs):
    """Evaluation acts with hidden states of its own, sized for its env (3 environments, or as many as training's:
    the training run's states are not overwritten either)."""
    env = wrap_env(short_masked_pendulum(NUM_ENVS))
    space, actions = env.observation_space, env.action_space
    cfg = {"timesteps": 16, "headless": True, "disable_progressbar": True}
    trained = {}
    for evaluated in (False, True):
        torch.manual_seed(3)
        raw = short_masked_pendulum(NUM_ENVS)
        raw.reset(seed=0)
        env = wrap_env(raw)
        experiment = {"directory": str(tmp_path / str(evaluated)), "write_interval": 8, "checkpoint_interval": 0}
        agent = ppo_rnn(observation_space=space, action_space=actions, rollouts=8, experiment=experiment)
        evaluation = {"evaluation_interval": 8, "evaluation_episodes": 3} if evaluated else {}
        evaluation_env = wrap_env(short_masked_pendulum(evaluation_envs)) if evaluated else None
        trainer = SequentialTrainer(env=env, agents=agent, cfg={**cfg, **evaluation}, evaluation_env=evaluation_env)
        trainer.train()
        trained[evaluated] = (parameters(agent), [s.clone() for s in agent.hidden_states.current["policy"]])
    assert trainer.last_evaluation["timestep"] == 16 and len(trainer.last_evaluation["returns"]) == 3
    assert agent.hidden_states.num_envs == NUM_ENVS
    for plain, evaluated in zip(*(trained[False][0], trained[True][0])):
        assert torch.equal(plain, evaluated)
    for plain, evaluated in zip(*(trained[False][1], trained[True][1])):
        assert torch.equal(plain, evaluated)
