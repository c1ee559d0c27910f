"""Recurrent agents outside the training loop, both backends: ``compute_action`` taking and returning the policy's
hidden states (equal to the agent's acting in eval mode, step by step with resets), and evaluation on an env with
another number of environments than training's, which leaves the training run as it was."""

import importlib
from types import SimpleNamespace

import numpy as np
import pytest

from skrl_like.utils import set_seed
from tests.recurrent_rollouts import short_masked_pendulum

NUM_ENVS, HIDDEN = 2, 3
NO_WRITING = {"write_interval": 0, "checkpoint_interval": 0}
LATE = 10**6  # a timestep past any random warm-up


@pytest.fixture(params=["torch", "jax"])
def backend(request):
    """One backend's agents, env wrapper, trainer, test models and array conversions."""
    name = request.param
    package = f"skrl_like.{name}"
    models = importlib.import_module(f"tests.{name}.recurrent_models")
    parts = SimpleNamespace(
        name=name,
        PPO_RNN=importlib.import_module(f"{package}.agents.ppo").PPO_RNN,
        SAC_RNN=importlib.import_module(f"{package}.agents.sac").SAC_RNN,
        RandomMemory=importlib.import_module(f"{package}.memories").RandomMemory,
        wrap_env=importlib.import_module(f"{package}.envs.wrappers").wrap_env,
        SequentialTrainer=importlib.import_module(f"{package}.trainers").SequentialTrainer,
        models=models,
        replay_agent=importlib.import_module(f"tests.{name}.test_recurrent_offpolicy").make_agent,
    )
    if name == "torch":
        import torch

        parts.array = torch.from_numpy
        parts.numpy = lambda tensor: tensor.detach().cpu().numpy()
        parts.policy = lambda spaces, kind: models.RecurrentGaussianPolicy(*spaces, kind=kind, hidden=HIDDEN)
        parts.parameters = lambda agent: [p.detach().numpy().copy() for p in agent.policy.parameters()]
    else:
        import jax

        parts.array = parts.numpy = np.asarray

        def policy(spaces, kind):
            bound = type("Policy", (models.RecurrentGaussianPolicy,), {"kind": kind, "hidden": HIDDEN})
            return bound(*spaces)

        parts.policy = policy
        parts.parameters = lambda agent: [
            np.asarray(p) for p in jax.tree_util.tree_leaves(agent.policy.state_dict.params)
        ]
    set_seed(0)
    return parts


def ppo_rnn(backend, kind="GRU", spaces=None, rollouts=4, experiment=None, value="RecurrentValue", memory=True):
    """A recurrent policy and a separate value model (a recurrent one's states are not needed to act); without a
    memory, an agent built to deploy a checkpoint."""
    spaces = spaces or (backend.models.OBSERVATIONS, backend.models.ACTIONS)
    models = {"policy": backend.policy(spaces, kind), "value": getattr(backend.models, value)(*spaces)}
    for role, model in models.items():
        model.init_state_dict(role)
    return backend.PPO_RNN(
        models=models,
        memory=backend.RandomMemory(memory_size=rollouts, num_envs=NUM_ENVS) if memory else None,
        observation_space=spaces[0],
        action_space=spaces[1],
        cfg={"rollouts": rollouts, "mini_batches": 1, "experiment": experiment or NO_WRITING},
    )


def sac_rnn(backend):
    return backend.replay_agent(backend.SAC_RNN)


def acted_in_eval_mode(backend, agent, observations, dones):
    """The trainer's evaluation path: the agent's deterministic actions from its carried states, reset after dones."""
    agent.set_running_mode("eval")
    actions = []
    for t in range(len(observations)):
        _, _, outputs = agent.act(backend.array(observations[t]), LATE, LATE)
        actions.append(backend.numpy(outputs["mean_actions"]))
        ended = backend.array(dones[t].reshape(-1, 1))
        agent._advance_carried_state(ended, backend.array(np.zeros_like(dones[t].reshape(-1, 1))))
    agent.set_running_mode("train")
    return np.stack(actions)


@pytest.mark.parametrize("make", [ppo_rnn, sac_rnn], ids=["PPO_RNN", "SAC_RNN"])
def test_a_compute_action_loop_with_carried_state_plays_the_agents_evaluation_actions(backend, make):
    agent = make(backend)
    agent.init()
    size = agent.observation_space.shape[0]
    observations = np.random.default_rng(0).normal(size=(6, NUM_ENVS, size)).astype(np.float32)
    dones = np.zeros((6, NUM_ENVS), dtype=bool)
    dones[2, 1] = True  # env 1 starts a new episode at step 3
    expected = acted_in_eval_mode(backend, agent, observations, dones)
    training_states = [backend.numpy(state).copy() for state in agent.hidden_states.current["policy"]]

    hidden_states, episode_start, actions = None, np.ones(NUM_ENVS, dtype=bool), []
    for t in range(6):
        action, hidden_states = agent.compute_action(
            observations[t], hidden_states=hidden_states, episode_start=episode_start
        )
        actions.append(action)
        episode_start = dones[t]
    np.testing.assert_allclose(np.stack(actions), expected, rtol=1e-5, atol=1e-6)
    # the states are in the model's layout, and the training run's carried states are untouched
    assert [state.shape for state in hidden_states] == [(1, NUM_ENVS, agent.hidden_states.shapes["policy"][0][2])]
    for before, after in zip(training_states, agent.hidden_states.current["policy"]):
        np.testing.assert_array_equal(before, backend.numpy(after))

    # without the reset at step 3, env 1 plays other actions from there on: the reset is applied
    hidden_states, unreset = None, []
    for t in range(6):
        action, hidden_states = agent.compute_action(observations[t], hidden_states=hidden_states)
        unreset.append(action)
    np.testing.assert_allclose(np.stack(unreset)[:, 0], expected[:, 0], rtol=1e-5, atol=1e-6)
    assert not np.allclose(np.stack(unreset)[3:, 1], expected[3:, 1])


def test_one_observation_at_a_time_carries_a_batch_of_one(backend):
    agent = ppo_rnn(backend)
    observations = np.random.default_rng(1).normal(size=(4, NUM_ENVS, 1)).astype(np.float32)
    batched, hidden_states = [], None
    for t in range(4):
        action, hidden_states = agent.compute_action(observations[t], hidden_states=hidden_states)
        batched.append(action)
    hidden_states = None
    for t in range(4):
        action, hidden_states = agent.compute_action(observations[t, 1], hidden_states=hidden_states)
        assert action.shape == (1,) and hidden_states[0].shape == (1, 1, HIDDEN)
        np.testing.assert_allclose(action, batched[t][1], rtol=1e-5, atol=1e-6)


def test_lstm_policies_carry_two_arrays(backend):
    agent = ppo_rnn(backend, kind="LSTM")
    action, hidden_states = agent.compute_action(np.ones((3, 1), dtype=np.float32))
    assert action.shape == (3, 1) and [state.shape for state in hidden_states] == [(1, 3, HIDDEN)] * 2
    again, _ = agent.compute_action(np.ones((3, 1), dtype=np.float32), hidden_states=hidden_states)
    assert not np.allclose(again, action)  # the second step reads the first one's states


def test_hidden_states_of_the_wrong_shape_are_refused_naming_the_expected_ones(backend):
    agent = ppo_rnn(backend)
    observations = np.zeros((2, 1), dtype=np.float32)
    expected = r"PPO_RNN.compute_action: hidden_states has shapes \[\(1, 3, 3\)\], .* are \[\(1, 2, 3\)\]"
    with pytest.raises(ValueError, match=expected):
        agent.compute_action(observations, hidden_states=[np.zeros((1, 3, 3))])
    with pytest.raises(ValueError, match=r"shapes \[\(1, 2, 3\), \(1, 2, 3\)\]"):  # an LSTM's pair for a GRU
        agent.compute_action(observations, hidden_states=[np.zeros((1, 2, 3))] * 2)


def test_a_feedforward_agent_refuses_hidden_states(backend):
    compute_action_tests = importlib.import_module(f"tests.{backend.name}.test_compute_action")
    agent = compute_action_tests.make_ppo(compute_action_tests.BOX, compute_action_tests.ACTIONS)
    with pytest.raises(ValueError, match="PPO carries no hidden states: call compute_action"):
        agent.compute_action(np.zeros(3), hidden_states=[np.zeros((1, 1, 3))])


def test_an_agent_built_without_a_memory_deploys_a_checkpoint_with_carried_states(backend, tmp_path):
    saved = ppo_rnn(backend)
    path = str(tmp_path / ("agent.pt" if backend.name == "torch" else "agent.pickle"))
    saved.save(path)
    set_seed(1)  # other initial weights: the checkpoint must replace them
    deployed = ppo_rnn(backend, memory=False)
    observations = np.random.default_rng(3).normal(size=(3, 4, 1)).astype(np.float32)  # 4 robots, another count

    def play(agent):
        hidden_states, actions = None, []
        for step in observations:
            action, hidden_states = agent.compute_action(step, hidden_states=hidden_states)
            actions.append(action)
        return np.stack(actions)

    assert not np.allclose(play(deployed), play(saved))
    deployed.load(path)
    np.testing.assert_allclose(play(deployed), play(saved), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("evaluation_envs", [3, NUM_ENVS])
def test_evaluation_on_its_own_env_leaves_training_as_it_was(backend, tmp_path, evaluation_envs):
    """Evaluation acts with hidden states of its own, sized for its env (3 environments, or as many as training's:
    the training run's states are not overwritten either)."""
    if backend.name == "jax" and evaluation_envs == NUM_ENVS:
        pytest.skip("the mechanism is shared (core); one JAX case keeps the test fast")
    spaces = backend.wrap_env(short_masked_pendulum(1))
    spaces = (spaces.observation_space, spaces.action_space)
    cfg = {"timesteps": 16, "headless": True, "disable_progressbar": True}
    trained = {}
    for evaluated in (False, True):
        set_seed(3)
        raw = short_masked_pendulum(NUM_ENVS)
        raw.reset(seed=0)
        experiment = {"directory": str(tmp_path / str(evaluated)), "write_interval": 8, "checkpoint_interval": 0}
        agent = ppo_rnn(backend, spaces=spaces, rollouts=8, experiment=experiment, value="LinearValue")
        evaluation = {"evaluation_interval": 8, "evaluation_episodes": 3} if evaluated else {}
        evaluation_env = backend.wrap_env(short_masked_pendulum(evaluation_envs)) if evaluated else None
        trainer = backend.SequentialTrainer(
            env=backend.wrap_env(raw), agents=agent, cfg={**cfg, **evaluation}, evaluation_env=evaluation_env
        )
        trainer.train()
        trained[evaluated] = backend.parameters(agent) + [
            backend.numpy(s) for s in agent.hidden_states.current["policy"]
        ]
    assert trainer.last_evaluation["timestep"] == 16 and len(trainer.last_evaluation["returns"]) == 3
    assert agent.hidden_states.num_envs == NUM_ENVS
    for plain, evaluated in zip(trained[False], trained[True]):
        np.testing.assert_array_equal(plain, evaluated)
