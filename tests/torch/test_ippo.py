"""IPPO (torch): config, per-agent values, the update on a hand batch against NumPy, value clipping by the agent's own
flag, tracking, checkpoints, determinism and errors; the PettingZoo wrapper's dicts; the trainers' multi-agent loop."""

import os

import numpy as np
import pytest
import torch
import torch.nn as nn

from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import CategoricalMixin, DeterministicMixin, Model
from skrl_like.torch.multi_agents import MultiAgent
from skrl_like.torch.multi_agents.ippo import IPPO, IPPO_DEFAULT_CONFIG
from skrl_like.torch.trainers import SequentialTrainer, StepTrainer
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

SPEC_KEYS = [
    "rollouts", "learning_epochs", "mini_batches", "discount_factor", "lambda", "learning_rate",
    "learning_rate_scheduler", "learning_rate_scheduler_kwargs", "state_preprocessor", "state_preprocessor_kwargs",
    "value_preprocessor", "value_preprocessor_kwargs", "random_timesteps", "learning_starts", "grad_norm_clip",
    "ratio_clip", "value_clip", "clip_predicted_values", "entropy_loss_scale", "value_loss_scale", "kl_threshold",
    "rewards_shaper", "time_limit_bootstrap", "mixed_precision", "experiment",
]  # fmt: skip


class LinearPolicy(CategoricalMixin, Model):
    def __init__(self, observation_space=OBSERVATION, weights=None):
        Model.__init__(self, observation_space, ACTION, "cpu")
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)
        self.net = nn.Linear(self.num_observations, 2)
        if weights is not None:
            with torch.no_grad():
                self.net.weight.copy_(torch.tensor(weights[0]))
                self.net.bias.copy_(torch.tensor(weights[1]))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


class LinearValue(DeterministicMixin, Model):
    def __init__(self, observation_space=OBSERVATION, weights=None):
        Model.__init__(self, observation_space, ACTION, "cpu")
        DeterministicMixin.__init__(self)
        self.net = nn.Linear(self.num_observations, 1)
        if weights is not None:
            with torch.no_grad():
                self.net.weight.copy_(torch.tensor(weights[0]).reshape(1, -1))
                self.net.bias.fill_(weights[1])

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def make_ippo(cfg=None, hand=False, memories=True, agents=AGENTS, spaces=None):
    models = {
        uid: {
            "policy": LinearPolicy(weights=POLICY[uid] if hand else None),
            "value": LinearValue(weights=VALUE[uid] if hand else None),
        }
        for uid in agents
    }
    rollouts = (cfg or {}).get("rollouts", IPPO_DEFAULT_CONFIG["rollouts"])
    return IPPO(
        possible_agents=agents,
        models=models,
        memories={uid: RandomMemory(memory_size=rollouts, num_envs=1) for uid in agents} if memories else None,
        observation_spaces=spaces or {uid: OBSERVATION for uid in agents},
        action_spaces={uid: ACTION for uid in agents},
        device="cpu",
        cfg=cfg,
    )


def to_tensor(array):
    return torch.as_tensor(array)


def test_default_config_has_the_spec_keys_and_values():
    assert list(IPPO_DEFAULT_CONFIG) == SPEC_KEYS
    assert IPPO_DEFAULT_CONFIG["rollouts"] == 16 and IPPO_DEFAULT_CONFIG["learning_epochs"] == 8
    assert IPPO_DEFAULT_CONFIG["mini_batches"] == 2 and IPPO_DEFAULT_CONFIG["learning_rate"] == 1e-3
    assert IPPO_DEFAULT_CONFIG["clip_predicted_values"] is False and IPPO_DEFAULT_CONFIG["value_clip"] == 0.2
    assert IPPO_DEFAULT_CONFIG["mixed_precision"] is False
    assert isinstance(make_ippo(), MultiAgent)


def test_as_dict_per_agent_global_and_partial_values():
    agent = make_ippo()
    assert agent._as_dict(3e-4) == {"a0": 3e-4, "a1": 3e-4}
    per_agent = {"a0": 1e-3, "a1": 2e-3}
    assert agent._as_dict(per_agent) == per_agent
    kwargs = {"size": 4}
    copied = agent._as_dict(kwargs)
    assert copied == {"a0": kwargs, "a1": kwargs} and copied["a0"] is not kwargs and copied["a0"] is not copied["a1"]
    with pytest.raises(ValueError, match=r"does not match possible agents.*\['a1'\]"):
        agent._as_dict({"a0": 1e-3})


def test_update_on_a_hand_batch_matches_numpy_with_per_agent_learning_rates():
    lrs = {"a0": 1e-2, "a1": 3e-3}
    agent = make_ippo(update_cfg(IPPO_DEFAULT_CONFIG, lrs), hand=True)
    agent.init()
    tracked = []
    agent.track_data = lambda tag, value: tracked.append((tag, float(value)))
    feed_hand_batch(agent, to_tensor)
    for uid in AGENTS:
        value_loss, (W, b), (w, c) = reference_update(uid, lrs[uid])
        assert dict(tracked)[f"Loss / Value loss ({uid})"] == pytest.approx(value_loss, rel=1e-5)
        policy, value = agent.models[uid]["policy"].net, agent.models[uid]["value"].net
        np.testing.assert_allclose(policy.weight.detach().numpy(), W, atol=1e-6)
        np.testing.assert_allclose(policy.bias.detach().numpy(), b, atol=1e-6)
        np.testing.assert_allclose(value.weight.detach().numpy().reshape(-1), w, atol=1e-6)
        np.testing.assert_allclose(value.bias.detach().numpy(), [c], atol=1e-6)
    assert {tag for tag, _ in tracked} >= {"Loss / Policy loss (a0)", "Loss / Policy loss (a1)"}
    assert not any(tag.startswith("Policy / Standard deviation") for tag, _ in tracked)  # categorical: none (was NaN)
    assert "Loss / Entropy loss (a0)" not in dict(tracked)  # entropy disabled: not logged (quirk 20's tag fixed)


def test_value_clipping_follows_each_agents_own_flag():
    """skrl 1.4.3 tests the per-agent dict's truthiness, so it always clips. With a 1e-12 clip range the second
    epoch's clipped predictions are the rollout's values again: a1 (clipping on) reports the first epoch's value loss
    twice, a0 (clipping off) a lower one after its first step."""
    cfg = update_cfg(IPPO_DEFAULT_CONFIG, 1e-2, learning_epochs=2, value_clip=1e-12)
    cfg["clip_predicted_values"] = {"a0": False, "a1": True}
    agent = make_ippo(cfg, hand=True)
    agent.init()
    tracked = {}
    agent.track_data = lambda tag, value: tracked.setdefault(tag, float(value))
    feed_hand_batch(agent, to_tensor)
    clipped_loss, _, _ = reference_update("a1", 1e-2)
    assert tracked["Loss / Value loss (a1)"] == pytest.approx(clipped_loss, rel=1e-5)
    unclipped_first_epoch, _, _ = reference_update("a0", 1e-2)
    assert tracked["Loss / Value loss (a0)"] < unclipped_first_epoch * (1 - 1e-3)


def test_act_returns_per_agent_dicts():
    agent = make_ippo()
    agent.init()
    states = {uid: torch.zeros(3, 2) for uid in AGENTS}
    actions, log_prob, outputs = agent.act(states, timestep=0, timesteps=1)
    assert set(actions) == set(log_prob) == set(outputs) == set(AGENTS)
    assert actions["a0"].shape == (3, 1) and log_prob["a1"].shape == (3, 1) and "mean_actions" in outputs["a0"]
    only_a1, _, _ = agent.act({"a1": torch.zeros(1, 2)}, timestep=0, timesteps=1)  # a0 left the episode
    assert list(only_a1) == ["a1"]


def test_save_load_roundtrip_by_uid(tmp_path):
    agent = make_ippo()
    path = str(tmp_path / "ippo.pt")
    agent.save(path)
    saved = torch.load(path, weights_only=False)
    assert set(saved) == set(AGENTS) and set(saved["a0"]) == {"policy", "value", "optimizer"}
    original = agent.models["a1"]["policy"].net.weight.detach().clone()
    with torch.no_grad():
        agent.models["a1"]["policy"].net.weight.add_(1.0)
    agent.load(path)
    torch.testing.assert_close(agent.models["a1"]["policy"].net.weight, original)
    with pytest.raises(ValueError, match="none of which this IPPO has"):
        make_ippo(agents=["x", "y"]).load(path)


def test_checkpoints_are_written_per_uid(tmp_path):
    cfg = update_cfg(IPPO_DEFAULT_CONFIG, 1e-3)
    cfg["experiment"] = {**cfg["experiment"], "directory": str(tmp_path), "experiment_name": "run",
                         "checkpoint_interval": 2, "store_separately": True}  # fmt: skip
    agent = make_ippo(cfg)
    agent.init()
    feed_hand_batch(agent, to_tensor)
    files = set(os.listdir(tmp_path / "run" / "checkpoints"))
    assert {"a0_policy_2.pt", "a1_value_2.pt", "a1_optimizer_2.pt"} <= files


def test_missing_agent_and_mismatched_model_errors():
    models = {"a0": {"policy": LinearPolicy(), "value": LinearValue()}}
    with pytest.raises(ValueError, match=r"models has no entry for agent\(s\) \['a1'\]"):
        IPPO(AGENTS, models, observation_spaces={u: OBSERVATION for u in AGENTS},
             action_spaces={u: ACTION for u in AGENTS})  # fmt: skip
    wrong = {uid: {"policy": LinearPolicy(), "value": LinearValue()} for uid in AGENTS}
    wrong["a1"]["policy"] = LinearPolicy(observation_space=5)
    with pytest.raises(
        ValueError, match=r"IPPO\[a1\]: the 'policy' model was built for an observation space of size 5"
    ):
        IPPO(AGENTS, wrong, observation_spaces={u: OBSERVATION for u in AGENTS},
             action_spaces={u: ACTION for u in AGENTS})  # fmt: skip
    with pytest.raises(ValueError, match=r"IPPO agent 'a0': .*ratio_clip"):
        make_ippo({"ratio_clip": {"a0": -1.0, "a1": 0.2}})


def test_pettingzoo_wrapper_dict_shapes_and_dtypes():
    from mpe2 import simple_spread_v3

    env = wrap_env(simple_spread_v3.parallel_env(N=3, max_cycles=5), "pettingzoo")
    observations, infos = env.reset()
    assert list(observations) == env.possible_agents == ["agent_0", "agent_1", "agent_2"]
    assert observations["agent_0"].shape == (1, 18) and observations["agent_0"].dtype == torch.float32
    assert env.state().shape == (1, 54) and env.state_spaces["agent_1"].shape == (54,)
    actions = {uid: torch.tensor([[1]]) for uid in env.possible_agents}
    observations, rewards, terminated, truncated, infos = env.step(actions)
    assert rewards["agent_2"].shape == (1, 1) and rewards["agent_2"].dtype == torch.float32
    assert terminated["agent_0"].dtype == torch.bool and truncated["agent_0"].shape == (1, 1)
    env.close()


def make_env_and_agent(cfg=None):
    env = wrap_env(TinyParallelEnv(), "pettingzoo")
    agent = make_ippo(cfg or update_cfg(IPPO_DEFAULT_CONFIG, 1e-2, rollouts=4))
    return env, agent


def test_trainer_runs_the_multi_agent_loop_and_resets_after_every_agent_is_done():
    env, agent = make_env_and_agent()
    seen = []
    record = agent.record_transition
    agent.record_transition = lambda **kwargs: (seen.append(kwargs), record(**kwargs))
    SequentialTrainer(
        env=env,
        agents=agent,
        cfg={"timesteps": 8, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False},
    ).train()
    assert len(seen) == 8
    # 3-step episodes: steps 0-2, then a reset, 3-5, reset, 6-7
    assert [float(step["infos"]["shared_states"][0, 0]) for step in seen] == [0, 1, 2, 0, 1, 2, 0, 1]
    assert [bool(step["truncated"]["a0"]) for step in seen] == [False, False, True] * 2 + [False, False]
    assert agent.learners["a0"].memory.get_tensor_by_name("rewards").shape == (4, 1, 1)


def test_step_trainer_and_eval_use_mean_actions():
    env, agent = make_env_and_agent()
    cfg = {"timesteps": 4, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
    trainer = StepTrainer(env=env, agents=agent, cfg=cfg)
    for _ in range(4):
        next_states, rewards, *_ = trainer.train()
        assert set(rewards) == set(AGENTS) and next_states["a0"].shape == (1, 2)
    # sampled actions 0, mean actions 1: evaluation steps the env with the mean actions (the rewards are the actions)
    zeros, ones = torch.zeros(1, 1), torch.ones(1, 1)
    agent.act = lambda states, timestep, timesteps: (
        {uid: zeros for uid in states},
        {uid: zeros for uid in states},
        {uid: {"mean_actions": ones} for uid in states},
    )
    _, rewards, *_ = trainer.eval()
    assert all(float(rewards[uid]) == 1.0 for uid in AGENTS)
    trainer.stochastic_evaluation = True
    _, rewards, *_ = trainer.eval()
    assert all(float(rewards[uid]) == 0.0 for uid in AGENTS)


def test_trainer_errors_for_mismatched_envs_and_agents():
    import gymnasium

    single_env = wrap_env(gymnasium.make("CartPole-v1"), "gymnasium")
    with pytest.raises(ValueError, match=r"IPPO is a multi-agent algorithm, but the environment .* not a multi-agent"):
        SequentialTrainer(env=single_env, agents=make_ippo(), cfg={"timesteps": 1, "close_environment_at_exit": False})
    env = wrap_env(TinyParallelEnv(), "pettingzoo")
    with pytest.raises(ValueError, match=r"has no agent \['a1'\] of the environment"):
        SequentialTrainer(
            env=env, agents=make_ippo(agents=["a0"]), cfg={"timesteps": 1, "close_environment_at_exit": False}
        )
    with pytest.raises(ValueError, match=r"agent 'a1' has an observation space of size 5, but the environment's"):
        spaces = {"a0": OBSERVATION, "a1": gymnasium.spaces.Box(-1, 1, (5,))}
        agent = IPPO(AGENTS, {u: {"policy": LinearPolicy(s), "value": LinearValue(s)} for u, s in spaces.items()},
                     observation_spaces=spaces, action_spaces={u: ACTION for u in AGENTS})  # fmt: skip
        SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 1, "close_environment_at_exit": False})


def test_same_seed_same_run():
    from skrl_like.utils import set_seed

    weights = []
    for _ in range(2):
        set_seed(7)
        env, agent = make_env_and_agent()
        SequentialTrainer(
            env=env,
            agents=agent,
            cfg={"timesteps": 8, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False},
        ).train()
        weights.append([p.detach().clone() for uid in AGENTS for p in agent.models[uid]["policy"].parameters()])
    for first, second in zip(*weights):
        torch.testing.assert_close(first, second, rtol=0, atol=0)


def test_parallel_trainer_with_one_multi_agent_runs_the_sequential_multi_agent_loop():
    from skrl_like.torch.trainers import ParallelTrainer

    env, agent = make_env_and_agent()
    cfg = {"timesteps": 5, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
    ParallelTrainer(env=env, agents=agent, cfg=cfg).train()
    stored = agent.learners["a1"].memory.get_tensor_by_name("states")[:, 0, 0]
    # the observation's first entry is (step in episode) * 0.5, 3-step episodes: steps 0-3 fill the 4 rows (a reset
    # after step 2), the update at step 3 empties the memory, step 4 (the second of its episode) overwrites row 0
    assert stored.tolist() == [0.5, 0.5, 1.0, 0.0]


@pytest.mark.parametrize("drop_leaver", [False, True], ids=["reported", "dropped-from-the-outputs"])
def test_an_agent_leaving_early_stores_its_done_once_and_learns_from_its_own_rows_only(drop_leaver):
    env = wrap_env(TinyParallelEnv(leave_at=2, drop_leaver=drop_leaver), "pettingzoo")
    agent = make_ippo(update_cfg(IPPO_DEFAULT_CONFIG, 1e-2, rollouts=4))
    updates = spy_on_updates(agent, to_numpy=lambda tensor: tensor.numpy())
    cfg = {"timesteps": 6, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
    SequentialTrainer(env=env, agents=agent, cfg=cfg).train()
    check_leaving_agent_rollouts(updates, agent._tracker.collect(), drop_leaver)


def test_set_learning_rate_sets_every_agents_rate_or_one_learners():
    agent = make_ippo(update_cfg(IPPO_DEFAULT_CONFIG, {"a0": 1e-2, "a1": 3e-3}))
    assert agent.learning_rate_keys() == ("learning_rate",)
    agent.set_learning_rate(5e-4)
    assert [learner.optimizer.param_groups[0]["lr"] for learner in agent.learners.values()] == [5e-4, 5e-4]
    agent.learners["a1"].set_learning_rate(1e-4)
    assert [learner.optimizer.param_groups[0]["lr"] for learner in agent.learners.values()] == [5e-4, 1e-4]
