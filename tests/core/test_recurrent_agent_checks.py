"""The recurrent agents' checks, written once for both backends (skrl_like/core/agents/recurrent.py): specifications
read and checked, model kinds, roles sharing one model, sequences that fit the rollout, and the hidden states'
bookkeeping (stored rows, reset where an episode ended), on NumPy arrays."""

import numpy as np
import pytest

from skrl_like.core.agents.recurrent import (
    HiddenStatesCore,
    carried_environments,
    check_model_kinds,
    check_sequences,
    recurrent_roles,
    recurrent_specification,
)


class Spec:
    """A model that only declares its specification."""

    def __init__(self, rnn=None):
        self.rnn = rnn

    def get_specification(self):
        return {"rnn": self.rnn} if self.rnn else {}


class NumpyHiddenStates(HiddenStatesCore):
    def _zeros(self, shape):
        return np.zeros(shape, np.float32)

    def _keep_where_running(self, state, ended):
        return state * ~np.asarray(ended, bool).reshape(1, -1, 1)

    def _rows_first(self, state):
        return state.swapaxes(0, 1)


GRU = {"sequence_length": 4, "sizes": [(1, 3, 5)]}
LSTM = {"sequence_length": 4, "sizes": [(2, 3, 6), (2, 3, 6)]}


def test_specifications_are_read_and_checked():
    assert recurrent_specification(Spec(), "policy", "PPO_RNN") is None
    assert recurrent_specification(Spec(LSTM), "policy", "PPO_RNN").sizes == ((2, 3, 6), (2, 3, 6))
    with pytest.raises(ValueError, match=r"'policy' model's get_specification\(\)\['rnn'\]\['sequence_length'\]"):
        recurrent_specification(Spec({"sequence_length": 0, "sizes": [(1, 3, 5)]}), "policy", "PPO_RNN")
    with pytest.raises(ValueError, match=r"\['sizes'\] must list the hidden-state shapes"):
        recurrent_specification(Spec({"sequence_length": 4, "sizes": [(1, 5)]}), "policy", "PPO_RNN")


def test_model_kinds_name_the_agent_to_use():
    with pytest.raises(ValueError, match=r"SAC: the \['critic_1'\] model\(s\) are recurrent .* use SAC_RNN"):
        check_model_kinds("SAC", {"policy": Spec(), "critic_1": Spec(GRU)}, False)
    with pytest.raises(ValueError, match=r"TRPO_RNN: none of the models \['policy', 'value'\] .* use TRPO for"):
        check_model_kinds("TRPO_RNN", {"policy": Spec(), "value": Spec()}, True)
    check_model_kinds("PPO_RNN", {"policy": Spec(GRU), "value": Spec()}, True)
    check_model_kinds("PPO", {"policy": Spec(), "value": Spec()}, False)


def test_a_model_in_two_roles_has_one_set_of_states_and_lengths_must_agree():
    shared = Spec(GRU)
    roles = recurrent_roles("PPO_RNN", {"policy": shared, "value": shared}, ("policy", "value"))
    assert roles.owners == {"policy": "policy", "value": "policy"} and roles.sequence_length == 4
    with pytest.raises(ValueError, match=r"sequences of different lengths \{'policy': 4, 'value': 8\}"):
        recurrent_roles(
            "PPO_RNN", {"policy": Spec(GRU), "value": Spec({**GRU, "sequence_length": 8})}, ("policy", "value")
        )


@pytest.mark.parametrize(
    "length, rollouts, num_envs, mini_batches, memory_size, message",
    [
        (4, 2, 2, 1, 2, r"holds 2 steps per environment, fewer than one sequence of 4 steps"),
        (4, 6, 2, 1, 6, r"cfg\['rollouts'\] = 6 is not a multiple of the models' sequence_length 4: .* rollouts = 8"),
        (4, 8, 3, 4, 8, r"cfg\['mini_batches'\] = 4 does not split the 6 sequences .* divides 6"),
        (4, 8, 3, 3, 8, None),
    ],
)
def test_sequences_must_fit_the_rollout_and_the_mini_batches(
    length, rollouts, num_envs, mini_batches, memory_size, message
):
    if message is None:
        check_sequences("PPO_RNN", length, rollouts, num_envs, mini_batches, memory_size)
        return
    with pytest.raises(ValueError, match=message):
        check_sequences("PPO_RNN", length, rollouts, num_envs, mini_batches, memory_size)


def test_hidden_states_are_stored_as_the_step_began_and_reset_where_an_episode_ended():
    class Memory:
        num_envs, memory_size = 3, 4

    roles = recurrent_roles("PPO_RNN", {"policy": Spec(GRU), "value": Spec(LSTM)}, ("policy", "value"))
    num_envs = carried_environments("PPO_RNN", roles, Memory(), {"rollouts": 4, "mini_batches": 1})
    hidden = NumpyHiddenStates(roles, num_envs)
    assert hidden.memory_tensors() == {"rnn_policy_0": (1, 5), "rnn_value_0": (2, 6), "rnn_value_1": (2, 6)}
    after = np.arange(15, dtype=np.float32).reshape(1, 3, 5) + 1
    hidden.set_after_step("policy", [after], "PPO_RNN")
    hidden.set_after_step("value", [np.ones((2, 3, 6))] * 2, "PPO_RNN")
    assert not hidden.stored()["rnn_policy_0"].any()  # the step began from zeros
    hidden.end_step(np.array([[False], [True], [False]]))
    np.testing.assert_array_equal(hidden.inputs("policy")[0][:, [0, 2]], after[:, [0, 2]])
    assert not hidden.inputs("policy")[0][:, 1].any() and not hidden.inputs("value")[1][:, 1].any()
    np.testing.assert_array_equal(hidden.stored()["rnn_policy_0"], after.swapaxes(0, 1) * [[[1]], [[0]], [[1]]])
    with pytest.raises(
        ValueError, match=r"returned hidden states of shapes \[\(1, 2, 5\)\] .* declares \[\(1, 3, 5\)\]"
    ):
        hidden.set_after_step("policy", [np.zeros((1, 2, 5))], "PPO_RNN")
    with pytest.raises(ValueError, match="acts on 2 observations but carries hidden states for 3 environments"):
        hidden.check_batch(2, "PPO_RNN")
