"""PPO_RNN and SAC_RNN (JAX) properties over drawn environment counts, sequence lengths, recurrent kinds and episode
ends (the torch mirror: tests/torch/test_recurrent_properties.py; the same strategy, tests/strategies.py). Whatever
was drawn: the stored hidden states are float32, one ``(num_layers, hidden)`` row per step and environment, zero
exactly where the previous step ended an episode and carried otherwise (across rollouts too); every sequence the
compiled update trains on is ``sequence_length`` consecutive steps of one environment, starting from the state stored
with its first step and marked with that environment's episode ends; the update changes the parameters and leaves
them finite; a rollout, mini-batch count or memory that does not cut into whole sequences is refused with the fix.

JAX compiles acting and the update once per drawn shape: few examples, tiny models. The update is one XLA program, so
its models' inputs are handed back by ``jax.debug.callback`` when it runs (torch records Python calls instead)."""

import collections

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from strategies import RecurrentSetup, recurrent_setups

from skrl_like.jax.agents.ppo import PPO_RNN
from skrl_like.jax.agents.sac import SAC_RNN
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, Model
from tests.jax.recurrent_models import ACTIONS, OBSERVATIONS, LinearValue, RecurrentGaussianPolicy, RecurrentValue
from tests.recurrent_rollouts import check_sequences, check_stored_states, drawn_rollout

# two drawn examples (the first is the smallest setup), and one given: each compiles its own update, and the few drawn
# ones have no episode end or one mini-batch only, so the given one has both, several sequences and an LSTM
PROPERTY_SETTINGS = settings(
    derandomize=True, max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
RICH = {"sequences": 2, "mini_batches": 2, "hidden": 2, "seed": 3, "end_probability": 0.5}
NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
CRITIC_ROLES = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
REPLAY_OBSERVATIONS = gymnasium.spaces.Box(-1.0, 1.0, (3,))

#: by role, the inputs of each training-layout call (those with ``inputs["terminated"]``: the update's), in order
CALLS = collections.defaultdict(list)


def record(inputs, role):
    """Have the compiled program hand back a training-layout call's inputs when it runs."""
    if "terminated" not in inputs:
        return

    def keep(states, rnn, terminated):
        CALLS[role].append(
            {"states": np.asarray(states), "rnn": [np.asarray(s) for s in rnn], "terminated": terminated}
        )

    jax.debug.callback(keep, inputs["states"], inputs["rnn"], inputs["terminated"], ordered=True)


class RecordingPolicy(RecurrentGaussianPolicy):
    def __call__(self, inputs, role=""):
        record(inputs, role)
        return super().__call__(inputs, role)


class RecordingCritic(DeterministicMixin, Model):
    """Q(s, a) = dense([s, a]), recording the sequence inputs the update gives every model of SAC_RNN (feedforward:
    a recurrent critic would only add compilation time, the policy's recurrent layer is what the sampling serves)."""

    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role=""):
        record(inputs, role)
        return nn.Dense(1)(jnp.concatenate([inputs["states"], inputs["taken_actions"]], -1)), {}


def built(model_class, role, setup, observation_space=OBSERVATIONS):
    """A model of ``model_class`` with the drawn sizes (they are class attributes: a subclass binds them)."""
    sizes = {name: getattr(setup, name) for name in ("num_envs", "sequence_length", "kind", "hidden")}
    model = type(model_class.__name__, (model_class,), sizes)(observation_space, ACTIONS)  # (extra ones unused)
    model.init_state_dict(role, key=jax.random.PRNGKey(setup.seed))
    return model


def drive(agent, setup, steps, size):
    """The trainer's loop for ``steps`` steps on random observations; returns them ``(steps, num_envs, size)`` and
    the episode ends ``(steps, num_envs)`` (terminated or truncated), after every recorded call has arrived."""
    agent.init({"timesteps": steps})
    observations, rewards, terminated, truncated = drawn_rollout(setup, steps, size)
    for t in range(steps):
        actions, _, _ = agent.act(observations[t], t, steps)
        agent.record_transition(
            observations[t], actions, rewards[t], observations[t + 1], terminated[t], truncated[t], {}, t, steps
        )
        agent.post_interaction(t, steps)
    jax.effects_barrier()
    return observations[:steps], (terminated | truncated)[..., 0]


def ppo_agent(models, setup, rollouts, mini_batches):
    memory = RandomMemory(memory_size=rollouts, num_envs=setup.num_envs)
    cfg = {"rollouts": rollouts, "mini_batches": mini_batches, "learning_epochs": 1, "experiment": NO_FILES}
    return PPO_RNN(models=models, memory=memory, observation_space=OBSERVATIONS, action_space=ACTIONS, cfg=cfg)


def changed_and_finite(before, after):
    pairs = list(zip(jax.tree_util.tree_leaves(before), jax.tree_util.tree_leaves(after)))
    return any(not np.array_equal(a, b) for a, b in pairs) and all(np.isfinite(b).all() for _, b in pairs)


@PROPERTY_SETTINGS
@given(setup=recurrent_setups())
@example(setup=RecurrentSetup(num_envs=2, sequence_length=3, kind="LSTM", recurrent_value=True, **RICH))
def test_ppo_rnn_stores_cuts_and_trains_on_whole_sequences(setup):
    CALLS.clear()
    policy = built(RecordingPolicy, "policy", setup)
    value = built(RecurrentValue, "value", setup) if setup.recurrent_value else built(LinearValue, "value", setup)
    rollouts = setup.steps
    agent = ppo_agent({"policy": policy, "value": value}, setup, rollouts, setup.mini_batches)
    before = {role: jax.device_get(model.state_dict.params) for role, model in agent.models.items()}
    observations, ended = drive(agent, setup, 2 * rollouts, 1)  # two updates: states carried across rollouts

    tensors = 2 if setup.kind == "LSTM" else 1
    names = {role: [f"rnn_{role}_{i}" for i in range(tensors)] for role in ("policy", "value")}
    assert {name for name in agent.memory.tensors if name.startswith("rnn_")} == {
        *names["policy"],
        *(names["value"] if setup.recurrent_value else []),
    }
    stored = [np.asarray(agent.memory.get_tensor_by_name(name)) for name in names["policy"]]
    for states in stored:
        assert states.shape[0] == rollouts
        check_stored_states(states, setup, ended, rollouts)
    # the last update (its rollout is the memory's): every sequence of every environment, once
    assert len(CALLS["policy"]) == 2 * setup.mini_batches
    starts = [
        start
        for call in CALLS["policy"][-setup.mini_batches :]
        for start in check_sequences(call, setup, observations[rollouts:], ended[rollouts:], stored)
    ]
    expected = {(t, env) for t in range(0, rollouts, setup.sequence_length) for env in range(setup.num_envs)}
    assert sorted(starts) == sorted(expected)
    # (a rollout of one row normalises its advantage to 0: the policy's gradient is 0, the value's is not)
    trained = ("policy", "value") if setup.num_envs * rollouts > 1 else ("value",)
    for role in trained:
        assert changed_and_finite(before[role], jax.device_get(agent.models[role].state_dict.params)), role
    assert np.isfinite(float(agent.tracking_data["Loss / Policy loss"][-1]))


@PROPERTY_SETTINGS
@given(setup=recurrent_setups(), batch_fraction=st.floats(0, 1))
@example(
    setup=RecurrentSetup(num_envs=2, sequence_length=3, kind="GRU", recurrent_value=False, **RICH), batch_fraction=0.5
)
def test_sac_rnn_samples_whole_sequences_from_their_stored_states(setup, batch_fraction):
    CALLS.clear()
    models = {
        "policy": built(RecurrentGaussianPolicy, "policy", setup, REPLAY_OBSERVATIONS),
        **{role: built(RecordingCritic, role, setup, REPLAY_OBSERVATIONS) for role in CRITIC_ROLES},
    }
    starts_held = setup.num_envs * (setup.steps - setup.sequence_length + 1)
    batch_size = 1 + round(batch_fraction * (starts_held - 1))
    agent = SAC_RNN(
        models=models,
        # one row more than the steps: the memory never wraps, so no sampled sequence runs across its write position
        memory=RandomMemory(memory_size=setup.steps + 1, num_envs=setup.num_envs),
        observation_space=REPLAY_OBSERVATIONS,
        action_space=ACTIONS,
        cfg={"batch_size": batch_size, "experiment": NO_FILES},
    )
    before = {role: jax.device_get(model.state_dict.params) for role, model in models.items()}
    observations, ended = drive(agent, setup, setup.steps, 3)

    names = [f"rnn_policy_{i}" for i in range(2 if setup.kind == "LSTM" else 1)]
    stored = [np.asarray(agent.memory.get_tensor_by_name(name)) for name in names]
    for states in stored:
        assert states.shape[0] == setup.steps + 1
        check_stored_states(states, setup, ended, 0)
    assert CALLS["critic_1"], "the memory held batch_size sequences by the last step: an update ran"
    for call in CALLS["critic_1"]:  # the critic step's and the policy step's
        assert len(check_sequences(call, setup, observations, ended, stored)) == batch_size
    for role in ("policy", "critic_1", "critic_2"):
        assert changed_and_finite(before[role], jax.device_get(models[role].state_dict.params)), role


@settings(derandomize=True, max_examples=3, deadline=None)
@given(setup=recurrent_setups(), data=st.data())
def test_rollouts_mini_batches_and_memories_that_do_not_hold_whole_sequences_are_refused(setup, data):
    length = setup.sequence_length
    policy = built(RecurrentGaussianPolicy, "policy", setup)
    value = built(LinearValue, "value", setup)

    def ppo(rollouts, mini_batches):
        ppo_agent({"policy": policy, "value": value}, setup, rollouts, mini_batches).init({"timesteps": rollouts})

    total, rows = setup.num_envs * setup.sequences, setup.num_envs * setup.steps
    uneven = [count for count in range(2, rows + 1) if total % count]  # (more than rows: refused for another reason)
    if uneven:
        mini_batches = data.draw(st.sampled_from(uneven), "mini_batches")
        with pytest.raises(ValueError, match=rf"mini_batches'\] = {mini_batches} does not split the {total} sequences"):
            ppo(setup.steps, mini_batches)
    if length == 1:
        return  # every rollout and memory holds whole sequences of one step
    rollouts = setup.steps + data.draw(st.integers(1, length - 1), "rollouts past whole sequences")
    with pytest.raises(
        ValueError,
        match=rf"rollouts'\] = {rollouts} is not a multiple .* use rollouts = "
        rf"{setup.steps + length} ",
    ):
        ppo(rollouts, 1)
    short = data.draw(st.integers(1, length - 1), "memory_size")
    with pytest.raises(ValueError, match=rf"holds {short} steps per environment, fewer than one sequence of {length}"):
        SAC_RNN(
            models={role: policy if role == "policy" else value for role in ("policy", *CRITIC_ROLES)},
            memory=RandomMemory(memory_size=short, num_envs=setup.num_envs),
            observation_space=OBSERVATIONS,
            action_space=ACTIONS,
            cfg={"batch_size": 1, "experiment": NO_FILES},
        )
