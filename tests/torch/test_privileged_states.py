"""Privileged states (asymmetric actor-critic) in the torch agents, on the Isaac Lab stand-in with a critic group:
the value model / critics read ``env.state()`` (stored beside the transition) in every call, the policy the
observations; nothing is read or stored when no model asks; the clear errors; the Runner's skrl 2.x ``STATES``; the
privileged states' own preprocessor (skrl 2.x's ``state_preprocessor``)."""

import copy
import logging

import pytest
import torch

from skrl_like.core.runner import RunnerConfigError
from skrl_like.envs import IsaacLabStandInEnv
from skrl_like.torch.agents.a2c import A2C, A2C_DEFAULT_CONFIG
from skrl_like.torch.agents.ddpg import DDPG, DDPG_DEFAULT_CONFIG
from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.torch.agents.rpo import RPO, RPO_DEFAULT_CONFIG
from skrl_like.torch.agents.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.torch.agents.td3 import TD3, TD3_DEFAULT_CONFIG
from skrl_like.torch.agents.trpo import TRPO, TRPO_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.torch.utils.model_instantiators import deterministic_model, gaussian_model
from skrl_like.torch.utils.runner import Runner
from tests.host_syncs import HostSyncs
from tests.privileged_helpers import (
    ACTIONS,
    NETWORK,
    NUM_ENVS,
    OBSERVATIONS,
    Q_NETWORK,
    QUIET,
    STATES,
    config,
    drawn_from,
    recorded_env_states,
    rows,
)
from tests.torch.test_runner_isaaclab3 import ISAAC_LAB_3_PPO_CFG


def stand_in(state_size=STATES):
    return wrap_env(
        IsaacLabStandInEnv(NUM_ENVS, OBSERVATIONS, ACTIONS, state_size=state_size, seed=0), wrapper="isaaclab"
    )


def recorded(model, calls):
    """``model.act`` keeps a copy of every ``inputs["states"]`` it gets in ``calls``."""
    act = model.act

    def spy(inputs, role=""):
        calls.append(inputs["states"].detach().clone())
        return act(inputs, role=role)

    model.act = spy
    return model


def value_model(env, state_space="env", network=NETWORK):
    return deterministic_model(
        observation_space=env.observation_space,
        action_space=env.action_space,
        network=network,
        output="ONE",
        state_space=env.state_space if state_space == "env" else state_space,
    )


def on_policy_agent(env, agent_class, defaults, value, rollouts=4, **keys):
    policy = gaussian_model(
        observation_space=env.observation_space, action_space=env.action_space, network=NETWORK, output="ACTIONS"
    )
    cfg = config(defaults, rollouts=rollouts, mini_batches=2, **keys)
    return agent_class(
        models={"policy": policy, "value": value},
        memory=RandomMemory(rollouts, num_envs=NUM_ENVS),
        observation_space=env.observation_space,
        action_space=env.action_space,
        cfg=cfg,
    )


ON_POLICY = [
    (PPO, PPO_DEFAULT_CONFIG),
    (RPO, RPO_DEFAULT_CONFIG),
    (A2C, A2C_DEFAULT_CONFIG),
    (TRPO, TRPO_DEFAULT_CONFIG),
]


@pytest.mark.parametrize("agent_class, defaults", ON_POLICY, ids=[c.__name__ for c, _ in ON_POLICY])
def test_the_value_model_reads_the_envs_states_in_every_call_of_the_update(agent_class, defaults):
    env_states, value_inputs = [], []
    env = recorded_env_states(stand_in(), env_states, lambda states: states.clone())
    epochs = {"learning_epochs": 1} if "learning_epochs" in defaults else {}  # A2C: one pass
    agent = on_policy_agent(env, agent_class, defaults, recorded(value_model(env), value_inputs), **epochs)
    SequentialTrainer(env, agent, cfg={"timesteps": 4, **QUIET}).train()  # one rollout of 4 steps, one update

    # env.state() before and after each step, stored beside the transition
    assert len(env_states) == 8
    memory = agent.memory
    assert torch.equal(memory.get_tensor_by_name("privileged_states"), torch.stack(env_states[0::2]))
    assert torch.equal(memory.get_tensor_by_name("next_privileged_states"), torch.stack(env_states[1::2]))
    # the update: V of the rollout's states and of the last next states, then the mini-batches' states
    stored = rows(torch.stack(env_states[0::2]))
    assert torch.equal(value_inputs[0], torch.cat([stored, env_states[-1]]))
    assert all(inputs.shape[-1] == STATES for inputs in value_inputs)
    assert torch.equal(torch.cat(value_inputs[1:3]), stored)  # 2 mini-batches, contiguous (one epoch)


def test_the_policy_reads_the_observations_and_the_critics_of_sac_the_sampled_states():
    env = stand_in()
    policy_inputs, critic_inputs, target_inputs = [], [], []
    policy = gaussian_model(
        observation_space=env.observation_space, action_space=env.action_space, network=NETWORK, output="ACTIONS"
    )
    models = {"policy": recorded(policy, policy_inputs)}
    for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
        models[role] = value_model(env, network=Q_NETWORK)
    recorded(models["critic_1"], critic_inputs)
    recorded(models["target_critic_1"], target_inputs)
    cfg = config(SAC_DEFAULT_CONFIG, batch_size=8, learning_starts=4)
    memory = RandomMemory(64, num_envs=NUM_ENVS)
    agent = SAC(models, memory, env.observation_space, env.action_space, cfg=cfg)
    SequentialTrainer(env, agent, cfg={"timesteps": 6, **QUIET}).train()

    assert critic_inputs and target_inputs and all(inputs.shape[-1] == OBSERVATIONS for inputs in policy_inputs)
    assert all(drawn_from(inputs, memory.get_tensor_by_name("privileged_states")) for inputs in critic_inputs)
    assert all(drawn_from(inputs, memory.get_tensor_by_name("next_privileged_states")) for inputs in target_inputs)


@pytest.mark.parametrize("agent_class, defaults", [(TD3, TD3_DEFAULT_CONFIG), (DDPG, DDPG_DEFAULT_CONFIG)])
def test_td3_and_ddpg_critics_read_the_privileged_states(agent_class, defaults):
    env = stand_in()
    critics = ("critic_1", "critic_2") if agent_class is TD3 else ("critic",)
    models = {
        role: deterministic_model(
            observation_space=env.observation_space, action_space=env.action_space, network=NETWORK, output="ACTIONS"
        )
        for role in ("policy", "target_policy")
    }
    for role in (*critics, *(f"target_{role}" for role in critics)):
        models[role] = value_model(env, network=Q_NETWORK)
    critic_inputs = []
    recorded(models[critics[0]], critic_inputs)
    agent = agent_class(
        models, RandomMemory(64, num_envs=NUM_ENVS), env.observation_space, env.action_space,
        cfg=config(defaults, batch_size=8, learning_starts=4),
    )  # fmt: skip
    SequentialTrainer(env, agent, cfg={"timesteps": 6, **QUIET}).train()
    stored = agent.memory.get_tensor_by_name("privileged_states")
    assert critic_inputs and all(drawn_from(inputs, stored) for inputs in critic_inputs)


# -- the privileged states' own preprocessor ------------------------------------------------------------------------

PRIVILEGED_SCALER = {"privileged_state_preprocessor": RunningStandardScaler}


def test_the_privileged_preprocessor_learns_from_the_envs_states_and_the_value_model_reads_them_standardised():
    env_states, value_inputs = [], []
    env = recorded_env_states(stand_in(), env_states, lambda states: states.clone())
    scaler = {**PRIVILEGED_SCALER, "privileged_state_preprocessor_kwargs": {"size": env.state_space}}
    value = recorded(value_model(env), value_inputs)
    agent = on_policy_agent(env, PPO, PPO_DEFAULT_CONFIG, value, learning_epochs=1, **scaler)
    SequentialTrainer(env, agent, cfg={"timesteps": 4, **QUIET}).train()  # one rollout, one update

    preprocessor = agent.checkpoint_modules["privileged_state_preprocessor"]
    stored = rows(torch.stack(env_states[0::2])).double()  # env.state() before each step (not the observations)
    # the initial statistics (mean 0, count 1) merged with the rollout's privileged states, mini-batch by mini-batch
    assert float(preprocessor.current_count) == 1 + len(stored)
    torch.testing.assert_close(preprocessor.running_mean, stored.sum(0) / (1 + len(stored)))
    # the rollout's values read them with the statistics they were collected with (the initial ones: as they are);
    # the last mini-batch reads them standardised with the final statistics
    torch.testing.assert_close(value_inputs[0][: len(stored)].double(), stored)
    last = stored[len(stored) // 2 :].float()
    torch.testing.assert_close(value_inputs[2], preprocessor(last))
    assert not torch.allclose(value_inputs[2], last)


def test_the_critics_read_privileged_states_standardised_and_the_statistics_survive_a_checkpoint(tmp_path):
    env = stand_in()
    critic_inputs = []

    def sac():
        models = {"policy": gaussian_model(env.observation_space, env.action_space, network=NETWORK, output="ACTIONS")}
        for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
            models[role] = value_model(env, network=Q_NETWORK)
        recorded(models["critic_1"], critic_inputs)
        cfg = config(SAC_DEFAULT_CONFIG, batch_size=8, learning_starts=4, **PRIVILEGED_SCALER)
        cfg["privileged_state_preprocessor_kwargs"] = {"size": env.state_space}
        return SAC(models, RandomMemory(64, num_envs=NUM_ENVS), env.observation_space, env.action_space, cfg=cfg)

    agent = sac()
    SequentialTrainer(env, agent, cfg={"timesteps": 6, **QUIET}).train()  # updates at timesteps 4 and 5
    preprocessor = agent.checkpoint_modules["privileged_state_preprocessor"]
    # each update: the sampled privileged states and next ones (8 rows each) of env.state(), not the observations
    assert float(preprocessor.current_count) == 1 + 2 * 2 * 8 and preprocessor.running_mean.shape == (STATES,)
    stored = agent.memory.get_tensor_by_name("privileged_states")
    assert critic_inputs and not drawn_from(critic_inputs[-1], stored)  # standardised, not the raw rows

    agent.save(str(tmp_path / "agent.pt"))
    loaded = sac()
    loaded.load(str(tmp_path / "agent.pt"))
    restored = loaded.checkpoint_modules["privileged_state_preprocessor"]
    for name in ("running_mean", "running_variance", "current_count"):
        assert torch.equal(getattr(restored, name), getattr(preprocessor, name))


def test_a_privileged_preprocessor_without_a_model_reading_the_states_is_not_built_with_a_warning(caplog):
    env = stand_in()
    with caplog.at_level(logging.WARNING):
        agent = on_policy_agent(env, PPO, PPO_DEFAULT_CONFIG, value_model(env, state_space=None), **PRIVILEGED_SCALER)
    assert "privileged_state_preprocessor" not in agent.checkpoint_modules
    assert "no model reads them" in caplog.text and "state_space=env.state_space" in caplog.text


def test_nothing_is_read_or_stored_when_no_model_asks_for_the_states():
    env_states = []
    env = recorded_env_states(stand_in(), env_states, lambda states: states.clone())  # the env has a critic group
    agent = on_policy_agent(env, PPO, PPO_DEFAULT_CONFIG, value_model(env, state_space=None))
    SequentialTrainer(env, agent, cfg={"timesteps": 4, **QUIET}).train()
    assert agent.privileged_roles == ()
    assert env_states == []
    assert "privileged_states" not in agent.memory.get_tensor_names()
    assert agent.memory.get_tensor_names() == [  # the transition, and log pi kept from the acting pass
        "actions", "log_prob", "next_states", "rewards", "states", "terminated", "truncated"
    ]  # fmt: skip


def test_a_model_asking_for_states_of_an_env_without_them_is_refused():
    with_states, without_states = stand_in(), stand_in(state_size=0)
    agent = on_policy_agent(without_states, PPO, PPO_DEFAULT_CONFIG, value_model(with_states))
    with pytest.raises(ValueError, match="'value' model.*the environment has no state space"):
        SequentialTrainer(without_states, agent, cfg={"timesteps": 4, **QUIET})


def test_states_of_another_size_than_the_envs_are_refused():
    env, smaller = stand_in(), stand_in(state_size=5)
    agent = on_policy_agent(env, PPO, PPO_DEFAULT_CONFIG, value_model(smaller))
    with pytest.raises(ValueError, match="privileged states of size 5, but the environment's state space has size 9"):
        SequentialTrainer(env, agent, cfg={"timesteps": 4, **QUIET})


def test_a_policy_asking_for_the_states_is_refused():
    env = stand_in()
    policy = deterministic_model(
        observation_space=env.observation_space, action_space=env.action_space, network=NETWORK, output="ACTIONS"
    )
    policy.state_space = env.state_space
    with pytest.raises(ValueError, match="'policy' model.*feeds them only to its 'value' model"):
        PPO(
            models={"policy": policy, "value": value_model(env)},
            memory=RandomMemory(4, num_envs=NUM_ENVS),
            observation_space=env.observation_space,
            action_space=env.action_space,
            cfg=config(PPO_DEFAULT_CONFIG, rollouts=4),
        )


def test_a_loop_written_by_hand_must_pass_the_states_in_infos():
    env = stand_in()
    agent = on_policy_agent(env, PPO, PPO_DEFAULT_CONFIG, value_model(env))
    agent.init()
    states, _ = env.reset()
    actions = agent.act(states, 0, 4)[0]
    next_states, rewards, terminated, truncated, infos = env.step(actions)
    arguments = (states, actions, rewards, next_states, terminated, truncated)
    with pytest.raises(KeyError, match="infos has no 'privileged_states'/'next_privileged_states'"):
        agent.record_transition(*arguments, infos, 0, 4)
    infos = {"privileged_states": env.state(), "next_privileged_states": env.state()}
    agent.record_transition(*arguments, infos, 0, 4)
    assert torch.equal(agent.memory.get_tensor_by_name("privileged_states")[0], env.state())


def test_acting_and_storing_the_states_never_syncs_with_the_host():
    env = stand_in()
    agent = on_policy_agent(env, PPO, PPO_DEFAULT_CONFIG, value_model(env), rollouts=8)
    agent.init()
    states, _ = env.reset()
    with HostSyncs() as syncs, torch.no_grad():
        for timestep in range(5):  # the trainer's step: env.state() before and after env.step
            before = env.state()
            actions = agent.act(states, timestep, 8)[0]
            next_states, rewards, terminated, truncated, infos = env.step(actions)
            infos = {**infos, "privileged_states": before, "next_privileged_states": env.state()}
            step = (states, actions, rewards, next_states, terminated, truncated, infos, timestep, 8)
            agent.record_transition(*step)
            states = next_states
    assert syncs.calls == []


# -- the Runner: skrl 2.x's STATES are the privileged states, 1.4's the observations -------------------------------


def runner_config(value_input, separate=True, skrl2=True):
    cfg = copy.deepcopy(ISAAC_LAB_3_PPO_CFG)
    cfg["models"]["separate"] = separate
    cfg["models"]["value"]["network"][0]["input"] = value_input
    cfg["trainer"].update(timesteps=16, **QUIET)
    if not skrl2:  # the same file in skrl 1.4's names
        agent = cfg["agent"]
        agent["lambda"] = agent.pop("gae_lambda")
        agent["state_preprocessor"] = agent.pop("observation_preprocessor")
        agent["state_preprocessor_kwargs"] = agent.pop("observation_preprocessor_kwargs")
        agent["clip_predicted_values"] = True
        del agent["mixed_precision"]
    return cfg


def test_the_runner_builds_a_skrl2_value_model_on_states_as_an_asymmetric_critic():
    runner = Runner(stand_in(), runner_config("STATES"))
    assert runner.agent.privileged_roles == ("value",)
    assert runner.agent.models["policy"].num_observations == OBSERVATIONS
    runner.run()
    assert runner.agent.memory.get_tensor_by_name("privileged_states").shape == (16, NUM_ENVS, STATES)


def test_the_runner_gives_skrl2s_state_preprocessor_to_the_privileged_states():
    cfg = runner_config("STATES")
    cfg["agent"].update(state_preprocessor="RunningStandardScaler", state_preprocessor_kwargs=None)
    runner = Runner(stand_in(), cfg)
    observations = runner.agent.checkpoint_modules["state_preprocessor"]
    privileged = runner.agent.checkpoint_modules["privileged_state_preprocessor"]
    assert observations.running_mean.shape == (OBSERVATIONS,) and privileged.running_mean.shape == (STATES,)
    runner.run()
    assert float(privileged.current_count) > 1


def test_the_runner_keeps_skrl_1_4s_states_as_the_observations():
    runner = Runner(stand_in(), runner_config("STATES", skrl2=False))
    assert runner.agent.privileged_roles == ()
    assert runner.agent.models["value"].num_observations == OBSERVATIONS


@pytest.mark.parametrize(
    "value_input, separate, state_size, message",
    [
        ("STATES", True, 0, "models.value reads STATES.*the env has no state space"),
        ("concatenate([OBSERVATIONS, STATES])", True, STATES, "reads both OBSERVATIONS and STATES"),
        ("STATES", False, STATES, "set separate: True for an asymmetric actor-critic"),
    ],
)
def test_the_runner_refuses_skrl2_states_it_cannot_feed(value_input, separate, state_size, message):
    with pytest.raises(RunnerConfigError, match=message):
        Runner(stand_in(state_size), runner_config(value_input, separate))


def test_a_recurrent_agent_refuses_a_value_model_that_reads_the_envs_states():
    from skrl_like.torch.agents.ppo import PPO_RNN

    env = stand_in()
    recurrent = [{"name": "rnn", "input": "STATES", "type": "GRU", "layers": [8], "sequence_length": 2}]
    policy = gaussian_model(
        observation_space=env.observation_space, action_space=env.action_space, network=recurrent, output="ACTIONS"
    )
    with pytest.raises(ValueError, match="PPO_RNN: the recurrent agents do not feed the env's privileged states"):
        PPO_RNN(
            models={"policy": policy, "value": value_model(env)},
            memory=RandomMemory(4, num_envs=NUM_ENVS),
            observation_space=env.observation_space,
            action_space=env.action_space,
            cfg=config(PPO_DEFAULT_CONFIG, rollouts=4, mini_batches=2),
        )
