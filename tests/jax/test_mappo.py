"""MAPPO (JAX): config, the centralised critic's compiled update on a hand batch against NumPy (the value model
reads the shared states), the shared-state preprocessor's statistics carried through the update, save/load."""

import numpy as np
import pytest

from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.multi_agents.mappo import MAPPO, MAPPO_DEFAULT_CONFIG
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.trainers import SequentialTrainer
from tests.jax.test_ippo import TRAINER_CFG, linear_models, weights
from tests.multi_agent_helpers import (
    ACTION,
    AGENTS,
    OBSERVATION,
    SHARED_VALUE,
    STATE,
    TinyParallelEnv,
    feed_hand_batch,
    reference_update,
    update_cfg,
)


def make_mappo(cfg=None, hand=False):
    rollouts = (cfg or {}).get("rollouts", MAPPO_DEFAULT_CONFIG["rollouts"])
    return MAPPO(
        possible_agents=AGENTS,
        models={uid: linear_models(uid, hand, STATE, SHARED_VALUE) for uid in AGENTS},
        memories={uid: RandomMemory(memory_size=rollouts, num_envs=1) for uid in AGENTS},
        observation_spaces={uid: OBSERVATION for uid in AGENTS},
        action_spaces={uid: ACTION for uid in AGENTS},
        cfg=cfg,
        shared_observation_spaces={uid: STATE for uid in AGENTS},
    )


def test_default_config_keys():
    assert "shared_state_preprocessor" in MAPPO_DEFAULT_CONFIG and "mixed_precision" not in MAPPO_DEFAULT_CONFIG
    assert MAPPO_DEFAULT_CONFIG["shared_state_preprocessor_kwargs"] == {}


def test_update_on_a_hand_batch_the_critic_reads_the_shared_states():
    agent = make_mappo(update_cfg(MAPPO_DEFAULT_CONFIG, 1e-2), hand=True)
    agent.init()
    tracked = {}
    agent.track_data = lambda tag, value: tracked.setdefault(tag, float(value))
    feed_hand_batch(agent, np.asarray, shared=True)
    for uid in AGENTS:
        value_loss, (W, _), (w, c) = reference_update(uid, 1e-2, shared=True)
        assert tracked[f"Loss / Value loss ({uid})"] == pytest.approx(value_loss, rel=1e-5)
        np.testing.assert_allclose(weights(agent.models[uid]["policy"])[0].T, W, atol=1e-6)
        kernel, bias = weights(agent.models[uid]["value"])
        np.testing.assert_allclose(kernel.reshape(-1), w, atol=1e-6)
        np.testing.assert_allclose(bias, [c], atol=1e-6)


def test_shared_state_statistics_are_updated_in_the_update_and_saved(tmp_path):
    cfg = update_cfg(MAPPO_DEFAULT_CONFIG, 1e-2)
    cfg["shared_state_preprocessor"] = RunningStandardScaler
    cfg["shared_state_preprocessor_kwargs"] = {"size": STATE}
    agent = make_mappo(cfg, hand=True)
    agent.init()
    feed_hand_batch(agent, np.asarray, shared=True)
    scaler = agent.learners["a1"].checkpoint_modules["shared_state_preprocessor"]
    rows = np.array([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]])
    np.testing.assert_allclose(np.asarray(scaler.running_mean), rows.mean(0) * 2 / 3, atol=1e-6)
    path = str(tmp_path / "mappo.pickle")
    agent.save(path)
    fresh = make_mappo(cfg)
    fresh.load(path)
    fresh_scaler = fresh.learners["a1"].checkpoint_modules["shared_state_preprocessor"]
    np.testing.assert_allclose(np.asarray(fresh_scaler.running_mean), rows.mean(0) * 2 / 3, atol=1e-6)


def test_trainer_run_stores_env_state_as_shared_states():
    env = wrap_env(TinyParallelEnv(), "pettingzoo")
    agent = make_mappo(update_cfg(MAPPO_DEFAULT_CONFIG, 1e-2, rollouts=5))
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 4, **TRAINER_CFG}).train()
    memory = agent.learners["a0"].memory
    np.testing.assert_array_equal(np.asarray(memory.get_tensor_by_name("shared_states"))[:4, 0, 0], [0, 1, 2, 0])
