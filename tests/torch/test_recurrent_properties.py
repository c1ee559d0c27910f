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
from tests.recurrent_rollouts import check_sequences, check_stored_states, drawn_rollout
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
    observations, rewards, terminated, truncated = map(torch.from_numpy, drawn_rollout(setup, steps, size))
    for t in range(steps):
        with torch.no_grad():
            actions, _, _ = agent.act(observations[t], t, steps)
        agent.record_transition(
            observations[t], actions, rewards[t], observations[t + 1], terminated[t], truncated[t], {}, t, steps
        )
        agent.post_interaction(t, steps)
    return observations[:steps].numpy(), (terminated | truncated)[..., 0].numpy()


def as_numpy(call):
    """A recorded call's tensors as NumPy arrays (the shared checks are NumPy)."""
    return {
        "states": call["states"].detach().numpy(),
        "rnn": [s.detach().numpy() for s in call["rnn"]],
        "terminated": call["terminated"].detach().numpy(),
    }


def stored_states(memory, names):
    return [memory.get_tensor_by_name(name).numpy() for name in names]


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
    stored = stored_states(agent.memory, names["policy"])
    for states in stored:
        assert states.shape[0] == rollouts
        check_stored_states(states, setup, ended, rollouts)
    # the last update (its rollout is the memory's): every sequence of every environment, once
    calls = policy.calls[-setup.mini_batches :]
    starts = [
        start
        for call in calls
        for start in check_sequences(as_numpy(call), setup, observations[rollouts:], ended[rollouts:], stored)
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
    stored = stored_states(agent.memory, names)
    for states in stored:
        assert states.shape[0] == setup.steps + 1
        check_stored_states(states, setup, ended, 0)
    calls = [call for call in models["critic_1"].calls if call["terminated"] is not None]
    assert calls, "the memory held batch_size sequences by the last step: an update ran"
    for call in calls:
        starts = check_sequences(as_numpy(call), setup, observations, ended, stored)
        assert len(starts) == batch_size
    assert all(torch.isfinite(p).all() for model in models.values() for p in model.parameters())
