"""The JAX learner state and the compiled-agent protocol: the learner gathered and committed by field name, the
schedule's rules traced, the Transition a compiled run stores, the trainer's independence from private agent
attributes, DDPG as a configuration of TD3, and a swept cfg restored after tracing."""

import inspect
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("gymnax")

from skrl_like.core.agents.schedule import OffPolicySchedule, RolloutSchedule  # noqa: E402
from skrl_like.core.agents.transition import TRANSITION_NAMES, Transition  # noqa: E402
from skrl_like.jax.agents.ddpg import DDPG  # noqa: E402
from skrl_like.jax.agents.td3 import TD3  # noqa: E402
from skrl_like.jax.trainers import compiled  # noqa: E402
from tests.jax.test_compiled_off_policy import (  # noqa: E402
    cartpole,
    make_deterministic,
    make_dqn,
    make_sac,
    pendulum,
)


def test_the_compiled_trainer_reads_no_private_attribute_of_the_agent():
    source = inspect.getsource(compiled)
    assert re.findall(r"agent\._[a-z_]+", source) == []


@pytest.mark.parametrize(
    "schedule",
    [OffPolicySchedule(learning_starts=3, random_timesteps=2, update_interval=2), OffPolicySchedule()],
    ids=["gated", "default"],
)
def test_the_off_policy_rules_give_the_same_answers_traced_as_on_the_host(schedule):
    timesteps = np.arange(10)
    traced = jax.jit(jax.vmap(lambda t: jnp.stack([schedule.acts_randomly(t), schedule.updates(t)])))(timesteps)
    host = [[schedule.acts_randomly(int(t)), schedule.updates(int(t))] for t in timesteps]
    assert all(isinstance(value, bool) for row in host for value in row)
    np.testing.assert_array_equal(np.asarray(traced), np.array(host))


def test_the_rollout_schedule_holds_the_warm_up_of_on_policy_agents():
    schedule = RolloutSchedule(rollouts=4, random_timesteps=3)
    assert [schedule.acts_randomly(t) for t in range(5)] == [True, True, True, False, False]
    assert RolloutSchedule(rollouts=4).random_timesteps == 0


def test_sac_gathers_and_commits_each_learner_field_where_its_name_says():
    agent = make_sac(pendulum(), actor_learning_rate=1)  # an int rate: gathered as a float32 scalar all the same
    agent.init()
    learner = agent.gather_learner()
    assert learner.actor_learning_rate.dtype == jnp.float32 and float(learner.actor_learning_rate) == 1.0
    assert learner.policy is agent.policy.state_dict.params
    assert learner.critic_2_optimizer is agent.critic_2_optimizer
    assert learner.state_preprocessor is agent._state_functional.state
    np.testing.assert_array_equal(learner.key, agent._key)
    np.testing.assert_array_equal(learner.log_entropy_coefficient["params"], agent.log_entropy_coefficient.value)

    changed = learner._replace(
        critic_1=jax.tree_util.tree_map(lambda x: x + 1, learner.critic_1),
        log_entropy_coefficient={"params": jnp.array([0.25], jnp.float32)},
        critic_learning_rate=jnp.float32(7.0),
        key=jax.random.PRNGKey(3),
    )
    agent.commit_learner(changed)
    jax.tree_util.tree_map(np.testing.assert_array_equal, agent.critic_1.state_dict.params, changed.critic_1)
    np.testing.assert_array_equal(agent.log_entropy_coefficient.value, [0.25])
    assert float(agent._critic_learning_rate) == 7.0
    np.testing.assert_array_equal(agent._key, jax.random.PRNGKey(3))
    again = agent.gather_learner()
    for a, b in zip(jax.tree_util.tree_leaves(again), jax.tree_util.tree_leaves(changed), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_fresh_dqn_learner_draws_a_new_network_with_its_target_a_copy_and_keeps_the_rate():
    agent = make_dqn(cartpole())
    agent.init()
    learner = agent.gather_learner()
    fresh = agent.fresh_learner(learner, jax.random.PRNGKey(1))
    flat = lambda params: np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(params)])  # noqa: E731
    assert not np.allclose(flat(fresh.q_network), flat(learner.q_network))
    np.testing.assert_array_equal(flat(fresh.q_network), flat(fresh.target_q_network))
    assert float(fresh.learning_rate) == float(learner.learning_rate)
    np.testing.assert_array_equal(
        flat(fresh.optimizer.state), flat(agent.fresh_learner(learner, jax.random.PRNGKey(2)).optimizer.state)
    )  # a fresh Adam state: zero moments whatever the parameters


def test_the_compiled_transition_is_the_stored_transition_in_the_memory_dtypes():
    env = pendulum()
    agent = make_sac(env, rewards_shaper=lambda rewards, timestep, timesteps: rewards * 2)
    agent.init()
    states = jnp.ones((2, 3))
    final = jnp.full((2, 3), 5.0)
    transition = agent.compiled_transition(
        states,
        jnp.zeros((2, 1)),
        jnp.ones((2, 1)),
        jnp.zeros((2, 3)),
        jnp.array([[True], [False]]),
        jnp.array([[False], [True]]),
        {"final_states": final},
        0,
        10,
    )
    assert isinstance(transition, Transition) and transition.extras == {}
    for name in TRANSITION_NAMES:
        assert transition.fields()[name].dtype == agent.memory.tensors[name].dtype, name
    np.testing.assert_array_equal(transition.rewards, [[2.0], [2.0]])  # shaped
    np.testing.assert_array_equal(transition.next_states, final)  # both sub-environments finished
    np.testing.assert_array_equal(transition.terminated, [[1], [0]])


def test_ddpg_is_td3_with_one_critic_no_delay_and_skrls_names():
    env = pendulum()
    ddpg = make_deterministic(DDPG, env)
    assert isinstance(ddpg, TD3) and ddpg.critic_roles == ("critic",) and not ddpg.delayed_policy
    assert "policy_delay" not in ddpg.cfg and "smooth_regularization_noise" not in ddpg.cfg
    assert set(ddpg.checkpoint_modules) == {
        "policy",
        "target_policy",
        "critic",
        "target_critic",
        "policy_optimizer",
        "critic_optimizer",
    }
    ddpg.init()
    assert set(ddpg.gather_learner()._fields) >= {"critic", "target_critic", "critic_optimizer"}


def test_a_swept_value_is_read_while_tracing_and_the_agents_cfg_is_restored_even_after_an_error():
    agent = make_sac(pendulum())
    cfg = agent.cfg
    with pytest.raises(RuntimeError, match="inside"):
        with agent.compiled_config({"discount_factor": 0.5}):
            assert agent.cfg["discount_factor"] == 0.5 and cfg["discount_factor"] == 0.99
            raise RuntimeError("inside")
    assert agent.cfg is cfg and cfg["discount_factor"] == 0.99
