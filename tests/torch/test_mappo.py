"""MAPPO (torch): config, the centralised critic's update on a hand batch against NumPy (the value model reads the
shared states), the shared-state preprocessor, save/load, errors, and a trainer run on the tiny parallel env."""

import numpy as np
import pytest
import torch

from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.multi_agents.mappo import MAPPO, MAPPO_DEFAULT_CONFIG
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.trainers import SequentialTrainer
from tests.multi_agent_helpers import (
    ACTION,
    AGENTS,
    OBSERVATION,
    POLICY,
    SHARED_VALUE,
    STATE,
    TinyParallelEnv,
    feed_hand_batch,
    reference_update,
    update_cfg,
)
from tests.torch.test_ippo import SPEC_KEYS, LinearPolicy, LinearValue


def make_mappo(cfg=None, hand=False, shared_spaces=True):
    models = {
        uid: {
            "policy": LinearPolicy(weights=POLICY[uid] if hand else None),
            "value": LinearValue(STATE, weights=SHARED_VALUE[uid] if hand else None),
        }
        for uid in AGENTS
    }
    rollouts = (cfg or {}).get("rollouts", MAPPO_DEFAULT_CONFIG["rollouts"])
    return MAPPO(
        possible_agents=AGENTS,
        models=models,
        memories={uid: RandomMemory(memory_size=rollouts, num_envs=1) for uid in AGENTS},
        observation_spaces={uid: OBSERVATION for uid in AGENTS},
        action_spaces={uid: ACTION for uid in AGENTS},
        device="cpu",
        cfg=cfg,
        shared_observation_spaces={uid: STATE for uid in AGENTS} if shared_spaces else None,
    )


def test_default_config_adds_the_shared_state_preprocessor_keys():
    expected = list(SPEC_KEYS)
    expected[expected.index("state_preprocessor_kwargs") + 1 : expected.index("state_preprocessor_kwargs") + 1] = [
        "shared_state_preprocessor",
        "shared_state_preprocessor_kwargs",
    ]
    assert list(MAPPO_DEFAULT_CONFIG) == expected
    assert MAPPO_DEFAULT_CONFIG["shared_state_preprocessor"] is None
    assert MAPPO_DEFAULT_CONFIG["shared_state_preprocessor_kwargs"] == {}


def test_update_on_a_hand_batch_the_critic_reads_the_shared_states():
    agent = make_mappo(update_cfg(MAPPO_DEFAULT_CONFIG, 1e-2), hand=True)
    agent.init()
    tracked = {}
    agent.track_data = lambda tag, value: tracked.setdefault(tag, float(value))
    feed_hand_batch(agent, torch.as_tensor, shared=True)
    for uid in AGENTS:
        value_loss, (W, b), (w, c) = reference_update(uid, 1e-2, shared=True)
        assert tracked[f"Loss / Value loss ({uid})"] == pytest.approx(value_loss, rel=1e-5)
        np.testing.assert_allclose(agent.models[uid]["policy"].net.weight.detach().numpy(), W, atol=1e-6)
        np.testing.assert_allclose(agent.models[uid]["value"].net.weight.detach().numpy().reshape(-1), w, atol=1e-6)
        np.testing.assert_allclose(agent.models[uid]["value"].net.bias.detach().numpy(), [c], atol=1e-6)
    stored = agent.learners["a0"].memory.get_tensor_by_name("shared_states")
    assert stored.shape == (2, 1, 3)


def test_shared_state_preprocessor_is_per_agent_and_checkpointed(tmp_path):
    cfg = update_cfg(MAPPO_DEFAULT_CONFIG, 1e-2)
    cfg["shared_state_preprocessor"] = {"a0": RunningStandardScaler, "a1": None}
    cfg["shared_state_preprocessor_kwargs"] = {"size": STATE}
    agent = make_mappo(cfg, hand=True)
    agent.init()
    feed_hand_batch(agent, torch.as_tensor, shared=True)
    scaler = agent.learners["a0"].checkpoint_modules["shared_state_preprocessor"]
    # statistics of the two stored shared states (epoch 0's single mini-batch), from mean 0, variance 1, count 1
    rows = np.array([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]])
    mean = rows.mean(0) * 2 / 3
    np.testing.assert_allclose(scaler.running_mean.numpy(), mean, atol=1e-6)
    assert "shared_state_preprocessor" not in agent.learners["a1"].checkpoint_modules
    path = str(tmp_path / "mappo.pt")
    agent.save(path)
    assert "shared_state_preprocessor" in torch.load(path, weights_only=False)["a0"]
    scaler.running_mean.zero_()
    agent.load(path)
    np.testing.assert_allclose(scaler.running_mean.numpy(), mean, atol=1e-6)


def test_errors_name_the_shared_spaces_and_the_missing_infos():
    with pytest.raises(TypeError, match="shared_observation_spaces must be a dict keyed by agent name"):
        make_mappo(shared_spaces=False)
    agent = make_mappo(update_cfg(MAPPO_DEFAULT_CONFIG, 1e-2))
    agent.init()
    with pytest.raises(KeyError, match="infos has no 'shared_states'"):
        feed_hand_batch(agent, torch.as_tensor, shared=False)
    models = {uid: {"policy": LinearPolicy(), "value": LinearValue()} for uid in AGENTS}  # value on observations
    with pytest.raises(ValueError, match=r"MAPPO\[a0\]: the 'value' model .* size 2, but the shared \(state\) space"):
        MAPPO(AGENTS, models, observation_spaces={u: OBSERVATION for u in AGENTS},
              action_spaces={u: ACTION for u in AGENTS}, shared_observation_spaces={u: STATE for u in AGENTS})  # fmt: skip


def test_trainer_run_stores_env_state_as_shared_states():
    env = wrap_env(TinyParallelEnv(), "pettingzoo")
    agent = make_mappo(update_cfg(MAPPO_DEFAULT_CONFIG, 1e-2, rollouts=5))
    cfg = {"timesteps": 4, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
    SequentialTrainer(env=env, agents=agent, cfg=cfg).train()
    memory = agent.learners["a1"].memory
    # env.state() is [step, 1, -1]: steps 0, 1, 2 then a reset (3-step episodes)
    np.testing.assert_array_equal(memory.get_tensor_by_name("shared_states")[:4, 0, 0].numpy(), [0, 1, 2, 0])
    np.testing.assert_array_equal(memory.get_tensor_by_name("shared_next_states")[:4, 0, 0].numpy(), [1, 2, 3, 1])
