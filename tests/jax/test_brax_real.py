"""The Brax wrapper on the real brax (skipped without the ``brax`` extra): a tiny inverted pendulum through
wrap_env's detection, its episode length and autoreset, and the CompiledTrainer running PPO on it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytestmark = pytest.mark.brax
envs = pytest.importorskip("brax.envs")

from skrl_like import config  # noqa: E402
from skrl_like.jax.envs.wrappers import BraxWrapper, wrap_env  # noqa: E402
from skrl_like.jax.trainers import CompiledTrainer  # noqa: E402
from tests.jax.test_brax_wrapper import make_ppo  # noqa: E402


def pendulum(num_envs=2, episode_length=4):
    env = envs.get_environment("inverted_pendulum", backend="positional")
    return wrap_env(env, verbose=False, num_envs=num_envs, episode_length=episode_length, seed=0)


def test_a_brax_env_is_detected_and_steps_through_its_episode_length(monkeypatch):
    monkeypatch.setattr(config.jax, "backend", "jax")
    env = pendulum()
    assert isinstance(env, BraxWrapper) and env.observation_space.shape == (4,) and env.action_space.shape == (1,)
    first, _ = env.reset()
    assert first.shape == (2, 4)
    for step in range(1, 5):
        next_states, rewards, terminated, truncated, info = env.step(jnp.zeros((2, 1)))
        assert rewards.shape == (2, 1) and not terminated.any()  # at rest near upright: no fall in 4 steps
        assert bool(truncated.all()) == (step == 4)
    np.testing.assert_array_equal(next_states, first)  # restarted from the first state
    assert not np.array_equal(info["final_states"], first)


def test_the_compiled_trainer_runs_ppo_on_a_brax_env():
    env = pendulum(episode_length=6)
    trainer = CompiledTrainer(
        env=env,
        agents=make_ppo(env),
        cfg={"timesteps": 16, "disable_progressbar": True, "close_environment_at_exit": False, "seeds": [0, 1]},
    )
    metrics = trainer.train()
    assert metrics["Loss / Value loss"].shape == (2, 2) and np.isfinite(metrics["Loss / Value loss"]).all()
    assert jax.tree_util.tree_leaves(trainer.runs.env)[0].shape[:2] == (2, 2)  # (runs, num_envs)


def test_a_playground_task_loads_by_name_and_steps(monkeypatch):
    pytest.importorskip("mujoco_playground")
    from skrl_like.envs import load_playground_env
    from skrl_like.jax.envs.wrappers import PlaygroundWrapper

    monkeypatch.setattr(config.jax, "backend", "jax")
    monkeypatch.setattr("sys.argv", ["train.py"])
    # playground 0.2.0's default implementation is MuJoCo Warp (warp-lang); MJX's JAX one runs everywhere
    env = load_playground_env(
        task_name="CartpoleBalance", num_envs=2, episode_length=3, show_cfg=False, cfg_overrides={"impl": "jax"}
    )
    env = wrap_env(env, verbose=False)
    assert isinstance(env, PlaygroundWrapper) and env.observation_space.shape == (5,)
    states, _ = env.reset()
    for step in range(1, 4):
        _, rewards, terminated, truncated, _ = env.step(jnp.zeros((2, 1)))
        assert rewards.shape == (2, 1) and not terminated.any() and bool(truncated.all()) == (step == 3)
