"""Privileged states (asymmetric actor-critic) in the JAX agents, on the Isaac Lab stand-in with a critic group (its
torch tensors cross by DLPack): the value model / critics read ``env.state()`` inside the compiled updates, the
policy the observations; nothing is read or stored when no model asks; the CompiledTrainer refuses them; the privileged
states' own preprocessor learns from them and is checkpointed. (The Runner's skrl 2.x ``STATES`` is backend-neutral:
tests/torch/test_privileged_states.py.)"""

import jax
import numpy as np
import pytest

from skrl_like.envs import IsaacLabStandInEnv
from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.jax.agents.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.jax.agents.trpo import TRPO, TRPO_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.jax.utils.model_instantiators import deterministic_model, gaussian_model
from tests import privileged_helpers as shared


def stand_in(state_size=shared.STATES):
    return wrap_env(
        IsaacLabStandInEnv(shared.NUM_ENVS, shared.OBSERVATIONS, shared.ACTIONS, state_size=state_size, seed=0),
        wrapper="isaaclab",
    )


def recorded(model, calls):
    """``model.act`` hands every ``inputs["states"]`` it gets (inside jitted updates too) to ``calls``."""
    act = model.act

    def spy(inputs, role="", params=None):
        jax.debug.callback(lambda states: calls.append(np.asarray(states)), inputs["states"])
        return act(inputs, role=role, params=params)

    model.act = spy
    return model


def model(instantiator, env, role, network=shared.NETWORK, output="ONE", state_space=None):
    built = instantiator(
        observation_space=env.observation_space,
        action_space=env.action_space,
        network=network,
        output=output,
        **({} if state_space is None else {"state_space": state_space}),
    )
    built.init_state_dict(role)
    return built


def on_policy_agent(env, agent_class, defaults, value, rollouts=4, **keys):
    policy = model(gaussian_model, env, "policy", output="ACTIONS")
    cfg = shared.config(defaults, rollouts=rollouts, mini_batches=2, learning_epochs=1, **keys)
    memory = RandomMemory(rollouts, num_envs=shared.NUM_ENVS)
    return agent_class({"policy": policy, "value": value}, memory, env.observation_space, env.action_space, cfg=cfg)


@pytest.mark.parametrize("agent_class, defaults", [(PPO, PPO_DEFAULT_CONFIG), (TRPO, TRPO_DEFAULT_CONFIG)])
def test_the_value_model_reads_the_envs_states_in_every_call_of_the_update(agent_class, defaults):
    env_states, value_inputs = [], []
    env = shared.recorded_env_states(stand_in(), env_states, np.asarray)
    value = recorded(model(deterministic_model, env, "value", state_space=env.state_space), value_inputs)
    agent = on_policy_agent(env, agent_class, defaults, value)
    SequentialTrainer(env, agent, cfg={"timesteps": 4, **shared.QUIET}).train()  # one rollout of 4 steps, one update
    jax.effects_barrier()

    assert len(env_states) == 8  # env.state() before and after each step, stored beside the transition
    np.testing.assert_array_equal(agent.memory.get_tensor_by_name("privileged_states"), np.stack(env_states[0::2]))
    np.testing.assert_array_equal(agent.memory.get_tensor_by_name("next_privileged_states"), np.stack(env_states[1::2]))
    stored = shared.rows(np.stack(env_states[0::2]))
    # V of the rollout's states and of the last next states, then the two mini-batches' states
    np.testing.assert_array_equal(value_inputs[0], np.concatenate([stored, env_states[-1]]))
    np.testing.assert_array_equal(np.concatenate(value_inputs[1:3]), stored)
    assert all(inputs.shape[-1] == shared.STATES for inputs in value_inputs)


def test_sacs_critics_read_the_sampled_states_and_its_policy_the_observations():
    env = stand_in()
    policy_inputs, critic_inputs, target_inputs = [], [], []
    models = {"policy": recorded(model(gaussian_model, env, "policy", output="ACTIONS"), policy_inputs)}
    for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
        models[role] = model(deterministic_model, env, role, network=shared.Q_NETWORK, state_space=env.state_space)
    recorded(models["critic_1"], critic_inputs)
    recorded(models["target_critic_1"], target_inputs)
    memory = RandomMemory(64, num_envs=shared.NUM_ENVS)
    agent = SAC(
        models, memory, env.observation_space, env.action_space, cfg=shared.config(SAC_DEFAULT_CONFIG, batch_size=8)
    )
    SequentialTrainer(env, agent, cfg={"timesteps": 6, **shared.QUIET}).train()
    jax.effects_barrier()

    assert critic_inputs and target_inputs and all(inputs.shape[-1] == shared.OBSERVATIONS for inputs in policy_inputs)
    assert all(shared.drawn_from(inputs, memory.get_tensor_by_name("privileged_states")) for inputs in critic_inputs)
    assert all(
        shared.drawn_from(inputs, memory.get_tensor_by_name("next_privileged_states")) for inputs in target_inputs
    )


def privileged_scaler(env):
    return {
        "privileged_state_preprocessor": RunningStandardScaler,
        "privileged_state_preprocessor_kwargs": {"size": env.state_space},
    }


def statistics(preprocessor):
    """``(running mean, running variance, count)`` as NumPy arrays."""
    return [np.asarray(getattr(preprocessor, name)) for name in ("running_mean", "running_variance", "current_count")]


def test_the_privileged_preprocessor_learns_from_the_envs_states_and_survives_a_checkpoint(tmp_path):
    env = stand_in()
    value = model(deterministic_model, env, "value", state_space=env.state_space)
    agent = on_policy_agent(env, PPO, PPO_DEFAULT_CONFIG, value, **privileged_scaler(env))
    SequentialTrainer(env, agent, cfg={"timesteps": 4, **shared.QUIET}).train()  # one rollout, one update

    preprocessor = agent.checkpoint_modules["privileged_state_preprocessor"]
    stored = shared.rows(np.asarray(agent.memory.get_tensor_by_name("privileged_states"), np.float64))
    # the initial statistics (mean 0, count 1) merged with the rollout's env.state() rows, not the observations
    saved = statistics(preprocessor)
    mean, _, count = saved
    assert count.item() == 1 + len(stored)
    np.testing.assert_allclose(mean, stored.sum(0) / (1 + len(stored)), rtol=1e-5, atol=1e-6)

    agent.save(str(tmp_path / "agent.pickle"))
    loaded = on_policy_agent(
        env, PPO, PPO_DEFAULT_CONFIG, model(deterministic_model, env, "value", state_space=env.state_space),
        **privileged_scaler(env),
    )  # fmt: skip
    loaded.load(str(tmp_path / "agent.pickle"))
    for restored, kept in zip(statistics(loaded.checkpoint_modules["privileged_state_preprocessor"]), saved):
        np.testing.assert_array_equal(restored, kept)


def test_sacs_privileged_preprocessor_learns_from_the_sampled_states_and_next_states():
    env = stand_in()
    models = {"policy": model(gaussian_model, env, "policy", output="ACTIONS")}
    for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
        models[role] = model(deterministic_model, env, role, network=shared.Q_NETWORK, state_space=env.state_space)
    cfg = shared.config(SAC_DEFAULT_CONFIG, batch_size=8, learning_starts=4, **privileged_scaler(env))
    agent = SAC(models, RandomMemory(64, num_envs=shared.NUM_ENVS), env.observation_space, env.action_space, cfg=cfg)
    SequentialTrainer(env, agent, cfg={"timesteps": 6, **shared.QUIET}).train()  # updates at timesteps 4 and 5
    mean, _, count = statistics(agent.checkpoint_modules["privileged_state_preprocessor"])
    assert count.item() == 1 + 2 * 2 * 8 and mean.shape == (shared.STATES,)


def test_nothing_is_read_or_stored_when_no_model_asks_for_the_states():
    env_states = []
    env = shared.recorded_env_states(stand_in(), env_states, np.asarray)  # the env has a critic group
    agent = on_policy_agent(env, PPO, PPO_DEFAULT_CONFIG, model(deterministic_model, env, "value"))
    SequentialTrainer(
        env, agent, cfg={"timesteps": 3, **shared.QUIET}
    ).train()  # steps only (the update is torch-tested)
    assert agent.privileged_roles == () and env_states == []
    assert "privileged_states" not in agent.memory.get_tensor_names()


def test_the_compiled_trainer_cannot_feed_them():
    env = stand_in()
    value = model(deterministic_model, env, "value", state_space=env.state_space)
    agent = on_policy_agent(env, PPO, PPO_DEFAULT_CONFIG, value)
    agent.init()
    assert any("privileged_states" in obstacle for obstacle in agent.compiled_obstacles())
