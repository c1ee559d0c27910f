"""``learning_rate_scheduler: ExponentialLR`` names the same decay in both backends: after ``n`` scheduler steps the
rate is ``learning_rate * gamma ** n`` (torch's own scheduler; in JAX a constant factor under skrl's multiplicative
rule), one step per gradient step of DQN, as a configuration file gives it."""

import importlib
import os

import numpy as np
import pytest

from skrl_like.cli import make_env
from skrl_like.core.runner import read_yaml

TUNED = os.path.join(os.path.dirname(__file__), "..", "skrl_like", "tuned")
BACKENDS = ["torch", pytest.param("jax", marks=pytest.mark.skipif(not importlib.util.find_spec("flax"), reason="jax"))]


def dqn_runner(backend, **agent_cfg):
    cfg = read_yaml(os.path.join(TUNED, "dqn_cartpole.yaml"))
    cfg["memory"]["memory_size"] = 64
    cfg["agent"].update(batch_size=8, learning_starts=4, gradient_steps=2, **agent_cfg)
    cfg["agent"]["experiment"] = {"write_interval": 0, "checkpoint_interval": 0}
    # no evaluation during training (the DQN file evaluates on a second env)
    cfg["trainer"].update(timesteps=7, disable_progressbar=True, close_environment_at_exit=False, evaluation_interval=0)
    env = make_env(cfg.pop("env"), backend)
    return importlib.import_module(f"skrl_like.{backend}.utils.runner").Runner(env, cfg)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_rate_decays_by_gamma_per_gradient_step(backend):
    decay = {"learning_rate_scheduler": "ExponentialLR", "learning_rate_scheduler_kwargs": {"gamma": 0.5}}
    run = dqn_runner(backend, learning_rate=1e-3, **decay)
    run.agent.tracking_data.clear()
    run.trainer.train()
    # updates at timesteps 4, 5 and 6, two gradient steps each: the rate tracked after each update
    tracked = [float(value) for value in run.agent.tracking_data["Learning / Learning rate"]]
    np.testing.assert_allclose(tracked, [1e-3 * 0.5**2, 1e-3 * 0.5**4, 1e-3 * 0.5**6], rtol=1e-6)


def test_the_jax_schedule_is_the_factor_and_a_bad_gamma_is_named():
    pytest.importorskip("flax")
    from skrl_like.jax.resources.schedulers import ExponentialLR

    assert ExponentialLR(gamma=0.25)(123) == 0.25
    with pytest.raises(ValueError, match=r"ExponentialLR: gamma must be a positive number .* got -0.5"):
        ExponentialLR(gamma=-0.5)
