"""The JAX ``_RNN`` on-policy agents (skrl's JAX backend has none): hidden states carried per environment, zeroed at
episode ends (terminated or truncated) and carried across rollouts otherwise (against the RNN stepped by hand in
NumPy); the run state round trip; the shared checks applied; a short training run. One update's numbers are checked against the
torch agent in tests/test_recurrent_agents_agree.py (the torch one against a hand-written reference)."""

import jax
import numpy as np
import pytest

from skrl_like.jax.agents.a2c import A2C_RNN
from skrl_like.jax.agents.ppo import PPO, PPO_RNN
from skrl_like.jax.agents.rpo import RPO_RNN
from skrl_like.jax.agents.trpo import TRPO_RNN
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.trainers import SequentialTrainer
from tests.jax.recurrent_models import ACTIONS, OBSERVATIONS, LinearValue, RecurrentGaussianPolicy, RecurrentValue
from tests.recurrent_rollouts import masked_pendulum, rollout_data

NUM_ENVS, ROLLOUTS = 2, 4
NO_WRITING = {"write_interval": 0, "checkpoint_interval": 0}


class GruPolicy(RecurrentGaussianPolicy):
    kind, hidden = "GRU", 3


def built(model_class, role, observation_space=OBSERVATIONS, action_space=ACTIONS):
    model = model_class(observation_space, action_space)
    model.init_state_dict(role)
    return model


def make_agent(models, agent_class=PPO_RNN, rollouts=ROLLOUTS, **cfg):
    return agent_class(
        models=models,
        memory=RandomMemory(memory_size=rollouts, num_envs=NUM_ENVS),
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        cfg={"rollouts": rollouts, "mini_batches": 1, "experiment": NO_WRITING, **cfg},
    )


def drive(agent, states, actions, rewards, terminated, truncated, last_states):
    """The trainer's loop on hand-made arrays ``(steps, num_envs, ...)``: act (advancing the hidden states; the
    stored actions are the given ones), record, post-interaction."""
    steps = len(states)
    for t in range(steps):
        agent.act(states[t], t, steps)
        next_states = states[t + 1] if t + 1 < steps else last_states
        agent.record_transition(
            states[t], actions[t], rewards[t], next_states, terminated[t], truncated[t], {}, t, steps
        )
        agent.post_interaction(t, steps)


def test_hidden_states_are_zeroed_at_episode_ends_and_carried_across_rollouts():
    policy = built(RecurrentGaussianPolicy, "policy")
    agent = make_agent({"policy": policy, "value": built(LinearValue, "value")}, learning_starts=100)
    agent.init({"timesteps": 8})
    states, actions, rewards, terminated, truncated, last_states = rollout_data(8)
    terminated[5, 1] = True  # the second rollout's step 1: env 1's state entering step 6 is zero
    drive(agent, states, actions, rewards, terminated, truncated, last_states)

    # the flax SimpleCell by hand: h' = tanh(x W_i + b_i + h W_h)
    cell = jax.device_get(policy.state_dict.params["params"]["rnn"]["layer_0"]["cell"])
    h, started = np.zeros((NUM_ENVS, 2), np.float32), []
    for t in range(8):
        started.append(h)
        h = np.tanh(states[t] @ cell["i"]["kernel"] + cell["i"]["bias"] + h @ cell["h"]["kernel"])
        h = h * ~(terminated[t] | truncated[t])
    stored = np.asarray(agent.memory.get_tensor_by_name("rnn_policy_0"))[:, :, 0]  # the second rollout
    np.testing.assert_allclose(stored, np.stack(started[4:]), atol=1e-6)
    assert np.abs(stored[0]).min() > 1e-3  # carried across the rollout boundary
    assert np.all(stored[2, 1] == 0) and np.abs(stored[2, 0]).min() > 1e-3  # zeroed after env 1's end only
    np.testing.assert_allclose(np.asarray(agent.hidden_states.current["policy"][0][0]), h, atol=1e-6)


def test_a_recurrent_value_model_and_lstm_states_are_carried_stored_and_restored():
    models = {"policy": built(GruPolicy, "policy"), "value": built(RecurrentValue, "value")}
    agent = make_agent(models, learning_starts=100)  # no update: this test is about the carried states
    agent.init({"timesteps": 6})
    states, actions, rewards, terminated, truncated, _ = rollout_data(6, seed=4)
    terminated[1, 0] = True
    drive(agent, states[:5], actions, rewards, terminated, truncated, states[5])
    assert set(agent.memory.tensors) >= {"rnn_policy_0", "rnn_value_0", "rnn_value_1"}

    restored = make_agent(models, learning_starts=100)
    restored.init({"timesteps": 6})
    restored.load_run_state(agent.run_state())
    for role in ("policy", "value"):
        for mine, theirs in zip(agent.hidden_states.current[role], restored.hidden_states.current[role]):
            assert np.abs(np.asarray(mine)).sum() > 0
            np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))
    _, _, outputs = agent.act(states[5], 5, 6)
    _, _, restored_outputs = restored.act(states[5], 5, 6)
    np.testing.assert_array_equal(np.asarray(outputs["mean_actions"]), np.asarray(restored_outputs["mean_actions"]))


def test_the_checks_of_the_shared_half_apply():
    """The checks are written once (core/agents/recurrent.py, tested in tests/core); the JAX agents run them."""
    recurrent = {"policy": built(RecurrentGaussianPolicy, "policy"), "value": built(LinearValue, "value")}
    with pytest.raises(ValueError, match=r"use PPO_RNN"):
        make_agent(recurrent, agent_class=PPO)
    with pytest.raises(ValueError, match=r"cfg\['rollouts'\] = 3 is not a multiple of the models' sequence_length 2"):
        make_agent(recurrent, rollouts=3).init({"timesteps": 8})


@pytest.mark.slow  # each compiles an update with recurrent models (seconds on 2 busy cores)
@pytest.mark.parametrize("agent_class", [PPO_RNN, A2C_RNN, RPO_RNN, TRPO_RNN])
def test_short_training_on_velocity_masked_pendulum(agent_class):
    class Policy(RecurrentGaussianPolicy):
        kind, hidden, sequence_length = "GRU", 8, 4

    env = wrap_env(masked_pendulum(NUM_ENVS))
    policy = built(Policy, "policy", env.observation_space, env.action_space)
    value = built(LinearValue, "value", env.observation_space, env.action_space)
    agent = agent_class(
        models={"policy": policy, "value": value},
        memory=RandomMemory(memory_size=8, num_envs=NUM_ENVS),
        observation_space=env.observation_space,
        action_space=env.action_space,
        cfg={"rollouts": 8, "mini_batches": 2, "experiment": NO_WRITING},
    )
    before = jax.device_get(policy.state_dict.params)
    trainer_cfg = {"timesteps": 16, "headless": True, "disable_progressbar": True}
    SequentialTrainer(env=env, agents=agent, cfg=trainer_cfg).train()
    after = jax.device_get(policy.state_dict.params)
    leaves = zip(jax.tree_util.tree_leaves(before), jax.tree_util.tree_leaves(after))
    assert any(not np.array_equal(a, b) for a, b in leaves)
    assert all(np.isfinite(leaf).all() for leaf in jax.tree_util.tree_leaves(after))
