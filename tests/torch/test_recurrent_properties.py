"""PPO_RNN and SAC_RNN (torch) properties over drawn environment counts, sequence lengths, recurrent kinds and
episode ends (strategies in tests/strategies.py). Whatever was drawn: the stored hidden states have one
``(num_layers, hidden)`` row per step and environment, zero exactly where the previous step ended an episode; every
sequence a model trains on is ``sequence_length`` consecutive steps of one environment, starting from the state
stored with its first step and marked with that environment's episode ends; the update leaves finite parameters."""

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import recurrent_setups

from skrl_like.torch.agents.ppo import PPO_RNN
from skrl_like.torch.agents.sac import SAC_RNN
from skrl_like.torch.memories import RandomMemory
from tests.torch.recurrent_models import ACTIONS, OBSERVATIONS, LinearValue, RecurrentGaussianPolicy, RecurrentValue
from tests.torch.test_recurrent_offpolicy import Critic, GaussianPolicy

PROPERTY_SETTINGS = settings(
    derandomize=True, max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}


class RecordingPolicy(RecurrentGaussianPolicy):
    """Records the inputs of its training-layout calls (those with ``inputs["terminated"]``: the update's)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = []

    def compute(self, inputs, role=""):
        if "terminated" in inputs:
            self.calls.append({key: inputs[key] for key in ("states", "rnn", "terminated")})
        return super().compute(inputs, role)


def drive(agent, setup, steps, size):
    """The trainer's loop for ``steps`` steps on random observations; returns them ``(steps, num_envs, size)`` and
    the episode ends ``(steps, num_envs)`` (terminated or truncated)."""
    agent.init({"timesteps": steps})
    rng = np.random.default_rng(setup.seed)
    observations = torch.from_numpy(rng.normal(size=(steps + 1, setup.num_envs, size)).astype(np.float32))
    rewards = torch.from_numpy(rng.normal(size=(steps, setup.num_envs, 1)).astype(np.float32))
    terminated, truncated = (torch.from_numpy(ends).unsqueeze(-1) for ends in setup.episode_ends(steps))
    for t in range(steps):
        with torch.no_grad():
            actions, _, _ = agent.act(observations[t], t, steps)
        agent.record_transition(
            observations[t], actions, rewards[t], observations[t + 1], terminated[t], truncated[t], {}, t, steps
        )
        agent.post_interaction(t, steps)
    return observations[:steps], (terminated | truncated)[..., 0]


def check_stored_states(memory, names, setup, ended, first_step):
    """The memory's stored states (its first ``setup.steps`` rows are steps ``first_step`` onwards): shapes, and zero
    exactly where the step before ended an episode (nothing before the first step: zeros)."""
    for name in names:
        stored = memory.get_tensor_by_name(name)
        assert stored.shape == (memory.memory_size, setup.num_envs, 1, setup.hidden)
        stored = stored[: setup.steps]
        zero = (stored == 0).flatten(2).all(-1)
        previous = torch.cat([torch.ones(1, setup.num_envs, dtype=torch.bool), ended[:-1]])[first_step:]
        assert torch.equal(zero, previous[: setup.steps])


def check_sequences(call, setup, observations, ended, stored_states):
    """Each ``sequence_length`` rows of a training-layout call are consecutive steps of one environment (found by
    its observation), with its episode ends, starting from the state stored with the first. Returns the starts."""
    states, length = call["states"], setup.sequence_length
    assert states.shape[0] % length == 0
    starts = []
    for first in range(0, states.shape[0], length):
        (t0, env), *others = (observations == states[first]).all(-1).nonzero().tolist()
        assert not others
        assert torch.equal(states[first : first + length], observations[t0 : t0 + length, env])
        assert torch.equal(call["terminated"][first : first + length, 0], ended[t0 : t0 + length, env])
        for started, stored in zip(call["rnn"], stored_states):
            assert torch.equal(started[:, first], stored[t0, env])
        starts.append((t0, env))
    return starts


@PROPERTY_SETTINGS
@given(setup=recurrent_setups())
def test_ppo_rnn_stores_cuts_and_trains_on_whole_sequences(setup):
    torch.manual_seed(setup.seed)
    sizes = (setup.num_envs, setup.sequence_length, setup.kind, setup.hidden)
    policy = RecordingPolicy(OBSERVATIONS, ACTIONS, *sizes)
    value = (
        RecurrentValue(OBSERVATIONS, ACTIONS, *sizes) if setup.recurrent_value else LinearValue(OBSERVATIONS, ACTIONS)
    )
    rollouts = setup.steps
    agent = PPO_RNN(
        models={"policy": policy, "value": value},
        memory=RandomMemory(memory_size=rollouts, num_envs=setup.num_envs),
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        device="cpu",
        cfg={"rollouts": rollouts, "mini_batches": setup.mini_batches, "learning_epochs": 1, "experiment": NO_FILES},
    )
    observations, ended = drive(agent, setup, 2 * rollouts, 1)  # two updates: states carried across rollouts

    tensors = 2 if setup.kind == "LSTM" else 1
    names = {role: [f"rnn_{role}_{i}" for i in range(tensors)] for role in ("policy", "value")}
    assert {name for name in agent.memory.tensors if name.startswith("rnn_")} == {
        *names["policy"],
        *(names["value"] if setup.recurrent_value else []),
    }
    check_stored_states(agent.memory, names["policy"], setup, ended, rollouts)
    # the last update (its rollout is the memory's): every sequence of every environment, once
    stored = [agent.memory.get_tensor_by_name(name) for name in names["policy"]]
    calls = policy.calls[-setup.mini_batches :]
    starts = [
        start
        for call in calls
        for start in check_sequences(call, setup, observations[rollouts:], ended[rollouts:], stored)
    ]
    expected = {(t, env) for t in range(0, rollouts, setup.sequence_length) for env in range(setup.num_envs)}
    assert sorted(starts) == sorted(expected)
    assert all(torch.isfinite(p).all() for model in (policy, value) for p in model.parameters())
    assert np.isfinite(float(agent.tracking_data["Loss / Policy loss"][-1]))


@PROPERTY_SETTINGS
@given(setup=recurrent_setups(), batch_fraction=st.floats(0, 1))
def test_sac_rnn_samples_whole_sequences_from_their_stored_states(setup, batch_fraction):
    torch.manual_seed(setup.seed)
    sizes = (setup.num_envs, setup.sequence_length, setup.kind, setup.hidden)
    roles = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
    models = {"policy": GaussianPolicy(*sizes), **{role: Critic(*sizes) for role in roles}}
    starts_held = setup.num_envs * (setup.steps - setup.sequence_length + 1)
    batch_size = 1 + round(batch_fraction * (starts_held - 1))
    agent = SAC_RNN(
        models=models,
        # one row more than the steps: the memory never wraps, so no sampled sequence runs across its write position
        memory=RandomMemory(memory_size=setup.steps + 1, num_envs=setup.num_envs, device="cpu"),
        observation_space=models["policy"].observation_space,
        action_space=models["policy"].action_space,
        cfg={"batch_size": batch_size, "experiment": NO_FILES},
    )
    observations, ended = drive(agent, setup, setup.steps, 3)

    names = [f"rnn_policy_{i}" for i in range(2 if setup.kind == "LSTM" else 1)]
    check_stored_states(agent.memory, names, setup, ended, 0)
    stored = [agent.memory.get_tensor_by_name(name) for name in names]
    calls = [call for call in models["critic_1"].calls if call["terminated"] is not None]
    assert calls, "the memory held batch_size sequences by the last step: an update ran"
    for call in calls:
        starts = check_sequences(call, setup, observations, ended, stored)
        assert len(starts) == batch_size
    assert all(torch.isfinite(p).all() for model in models.values() for p in model.parameters())
