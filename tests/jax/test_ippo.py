"""IPPO (JAX): config, the update on a hand batch against NumPy (one compiled PPO update per agent), the entropy bonus
in the gradient (quirk 18), per-agent dicts, save/load by uid, determinism, errors and a trainer run."""

import flax.linen as fnn
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, Model
from skrl_like.jax.multi_agents import MultiAgent
from skrl_like.jax.multi_agents.ippo import IPPO, IPPO_DEFAULT_CONFIG
from skrl_like.jax.trainers import SequentialTrainer
from tests.multi_agent_helpers import (
    ACTION,
    AGENTS,
    OBSERVATION,
    POLICY,
    VALUE,
    TinyParallelEnv,
    check_leaving_agent_rollouts,
    feed_hand_batch,
    reference_update,
    spy_on_updates,
    update_cfg,
)

TRAINER_CFG = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


class LinearPolicy(CategoricalMixin, Model):
    def __init__(self, observation_space=OBSERVATION, action_space=ACTION, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)

    @fnn.compact
    def __call__(self, inputs, role):
        return fnn.Dense(2, name="output")(inputs["states"]), {}


class LinearValue(DeterministicMixin, Model):
    def __init__(self, observation_space=OBSERVATION, action_space=ACTION, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @fnn.compact
    def __call__(self, inputs, role):
        return fnn.Dense(1, name="output")(inputs["states"]), {}


def dense(kernel, bias):
    return {"params": {"output": {"kernel": jnp.asarray(kernel, jnp.float32), "bias": jnp.asarray(bias, jnp.float32)}}}


def linear_models(uid, hand, value_space=OBSERVATION, value_weights=VALUE):
    policy, value = LinearPolicy(), LinearValue(value_space)
    policy.init_state_dict("policy")
    value.init_state_dict("value")
    if hand:
        W, b = POLICY[uid]
        w, c = value_weights[uid]
        policy.state_dict = policy.state_dict.replace(params=dense(W.T, b))
        value.state_dict = value.state_dict.replace(params=dense(np.reshape(w, (-1, 1)), [c]))
    return {"policy": policy, "value": value}


def weights(model):
    layer = model.state_dict.params["params"]["output"]
    return np.asarray(layer["kernel"]), np.asarray(layer["bias"])


def make_ippo(cfg=None, hand=False, agents=AGENTS):
    rollouts = (cfg or {}).get("rollouts", IPPO_DEFAULT_CONFIG["rollouts"])
    return IPPO(
        possible_agents=agents,
        models={uid: linear_models(uid, hand) for uid in agents},
        memories={uid: RandomMemory(memory_size=rollouts, num_envs=1) for uid in agents},
        observation_spaces={uid: OBSERVATION for uid in agents},
        action_spaces={uid: ACTION for uid in agents},
        cfg=cfg,
    )


def test_default_config_is_ppos_keys_without_mixed_precision():
    from tests.torch.test_ippo import SPEC_KEYS

    assert list(IPPO_DEFAULT_CONFIG) == [key for key in SPEC_KEYS if key != "mixed_precision"]
    assert isinstance(make_ippo(), MultiAgent)


def test_update_on_a_hand_batch_matches_numpy():
    lrs = {"a0": 1e-2, "a1": 3e-3}
    agent = make_ippo(update_cfg(IPPO_DEFAULT_CONFIG, lrs), hand=True)
    agent.init()
    tracked = {}
    agent.track_data = lambda tag, value: tracked.setdefault(tag, float(value))
    feed_hand_batch(agent, np.asarray)
    for uid in AGENTS:
        value_loss, (W, b), (w, c) = reference_update(uid, lrs[uid])
        assert tracked[f"Loss / Value loss ({uid})"] == pytest.approx(value_loss, rel=1e-5)
        kernel, bias = weights(agent.models[uid]["policy"])
        np.testing.assert_allclose(kernel.T, W, atol=1e-6)
        np.testing.assert_allclose(bias, b, atol=1e-6)
        kernel, bias = weights(agent.models[uid]["value"])
        np.testing.assert_allclose(kernel.reshape(-1), w, atol=1e-6)
        np.testing.assert_allclose(bias, [c], atol=1e-6)


def test_the_entropy_bonus_is_in_the_gradient():
    """skrl 1.4.3's JAX IPPO computes the entropy loss but leaves it out of the optimised loss (quirk 18). Adam's
    first step is lr * sign(gradient), so the policy is set where the bonus flips signs: a0 prefers action 1
    strongly and its bonus (scale 100) pulls towards uniform harder than the advantages pull."""
    policy = (np.zeros((2, 2)), np.array([-3.0, 3.0]))
    cfg = update_cfg(IPPO_DEFAULT_CONFIG, 1e-2, entropy_loss_scale={"a0": 100.0, "a1": 0.0})
    agent = make_ippo(cfg, hand=True)
    model = agent.models["a0"]["policy"]
    model.state_dict = model.state_dict.replace(params=dense(policy[0].T, policy[1]))
    agent.init()
    tracked = {}
    agent.track_data = lambda tag, value: tracked.setdefault(tag, float(value))
    feed_hand_batch(agent, np.asarray)
    _, (W, b), _ = reference_update("a0", 1e-2, entropy_scale=100.0, policy=policy)
    _, (W_without, _), _ = reference_update("a0", 1e-2, policy=policy)
    assert not np.allclose(W, W_without)
    kernel, bias = weights(agent.models["a0"]["policy"])
    np.testing.assert_allclose(kernel.T, W, atol=1e-6)
    np.testing.assert_allclose(bias, b, atol=1e-6)
    _, (W1, _), _ = reference_update("a1", 1e-2)
    np.testing.assert_allclose(weights(agent.models["a1"]["policy"])[0].T, W1, atol=1e-6)
    assert "Loss / Entropy loss (a0)" in tracked and "Loss / Entropy loss (a1)" not in tracked


def test_act_save_load_and_errors(tmp_path):
    agent = make_ippo()
    agent.init()
    actions, log_prob, outputs = agent.act({uid: np.zeros((3, 2), np.float32) for uid in AGENTS}, 0, 1)
    assert set(actions) == set(AGENTS) and np.asarray(actions["a1"]).shape == (3, 1)
    path = str(tmp_path / "ippo.pickle")
    agent.save(path)
    kernel = weights(agent.models["a0"]["policy"])[0]
    model = agent.models["a0"]["policy"]
    model.state_dict = model.state_dict.replace(params=dense(kernel + 1, np.zeros(2)))
    agent.load(path)
    np.testing.assert_array_equal(weights(agent.models["a0"]["policy"])[0], kernel)
    with pytest.raises(ValueError, match="not a multi-agent checkpoint"):
        from skrl_like.jax.agents.ppo import PPO

        single = PPO(models=linear_models("a0", False), observation_space=OBSERVATION, action_space=ACTION)
        single.save(str(tmp_path / "ppo.pickle"))
        agent.load(str(tmp_path / "ppo.pickle"))
    with pytest.raises(ValueError, match=r"models has no entry for agent\(s\) \['a1'\]"):
        IPPO(AGENTS, {"a0": linear_models("a0", False)}, observation_spaces={u: OBSERVATION for u in AGENTS},
             action_spaces={u: ACTION for u in AGENTS})  # fmt: skip


def test_trainer_run_is_deterministic_under_a_seed():
    from skrl_like.utils import set_seed

    runs = []
    for _ in range(2):
        set_seed(3)
        env = wrap_env(TinyParallelEnv(), "pettingzoo")
        agent = make_ippo(update_cfg(IPPO_DEFAULT_CONFIG, 1e-2, rollouts=4))
        SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 8, **TRAINER_CFG}).train()
        runs.append([weights(agent.models[uid]["policy"])[0] for uid in AGENTS])
    for first, second in zip(*runs):
        np.testing.assert_array_equal(first, second)
    assert not np.allclose(runs[0][0], runs[0][1])  # the agents learn independently


def test_trainer_rejects_a_single_agent_env():
    import gymnasium

    env = wrap_env(gymnasium.make("CartPole-v1"), "gymnasium")
    with pytest.raises(ValueError, match="IPPO is a multi-agent algorithm, but the environment"):
        SequentialTrainer(env=env, agents=make_ippo(), cfg={"timesteps": 1, **TRAINER_CFG})


@pytest.mark.parametrize("drop_leaver", [False, True], ids=["reported", "dropped-from-the-outputs"])
def test_an_agent_leaving_early_stores_its_done_once_and_learns_from_its_own_rows_only(drop_leaver):
    env = wrap_env(TinyParallelEnv(leave_at=2, drop_leaver=drop_leaver), "pettingzoo")
    agent = make_ippo(update_cfg(IPPO_DEFAULT_CONFIG, 1e-2, rollouts=4))
    updates = spy_on_updates(agent)
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 6, **TRAINER_CFG}).train()
    check_leaving_agent_rollouts(updates, agent._tracker.collect(), drop_leaver)
