"""``learning_rate_scheduler: LinearLR`` names the same ramp in both backends, as a configuration file gives it:
the rate starts at ``learning_rate * start_factor`` and after ``n`` scheduler steps (PPO: one per epoch) is
``learning_rate * (start + (end - start) * min(n, total_iters) / total_iters)`` (torch's own scheduler; in JAX
torch's factors with the steps counted in the learner state), and a run restored from a full-state checkpoint goes
on along it."""

import collections
import importlib
import os

import numpy as np
import pytest

from skrl_like.cli import make_env
from skrl_like.core.runner import read_yaml

TUNED = os.path.join(os.path.dirname(__file__), "..", "skrl_like", "tuned")
BACKENDS = ["torch", pytest.param("jax", marks=pytest.mark.skipif(not importlib.util.find_spec("flax"), reason="jax"))]
RATE, START, END, TOTAL = 1e-3, 0.5, 0.1, 7


def ramp(steps):
    """The hand-computed rate after ``steps`` scheduler steps."""
    return RATE * (START + (END - START) * min(steps, TOTAL) / TOTAL)


def ppo_runner(backend):
    cfg = read_yaml(os.path.join(TUNED, "ppo_cartpole.yaml"))
    cfg["env"]["num_envs"] = 2
    cfg["agent"].update(rollouts=4, learning_epochs=2, mini_batches=1, learning_rate=RATE)
    cfg["agent"]["learning_rate_scheduler"] = "LinearLR"  # by name, as in a YAML file
    cfg["agent"]["learning_rate_scheduler_kwargs"] = {"start_factor": START, "end_factor": END, "total_iters": TOTAL}
    cfg["agent"]["experiment"] = {"write_interval": 0, "checkpoint_interval": 0}
    cfg["trainer"].update(timesteps=1, disable_progressbar=True, close_environment_at_exit=False)
    env = make_env(cfg.pop("env"), backend)
    return importlib.import_module(f"skrl_like.{backend}.utils.runner").Runner(env, cfg)


def tracked_rates(run, updates):
    run.agent.tracking_data.clear()
    run.trainer.timesteps = run.trainer.initial_timestep + 4 * updates
    run.trainer.train()
    return [float(value) for value in run.agent.tracking_data["Learning / Learning rate"]]


def current_rate(agent):
    optimizer = getattr(agent, "optimizer", None)
    return optimizer.param_groups[0]["lr"] if optimizer is not None else float(agent._learning_rate)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_rate_follows_the_ramp_and_a_restored_run_goes_on_along_it(backend, tmp_path):
    run = ppo_runner(backend)
    assert current_rate(run.agent) == pytest.approx(RATE * START, rel=1e-6)  # scaled when built, before any update
    # two epochs per update: 2 scheduler steps each; from total_iters on the rate stays at end_factor
    np.testing.assert_allclose(tracked_rates(run, 2), [ramp(2), ramp(4)], rtol=1e-6)
    checkpoint = run.trainer.save(str(tmp_path / "run.ckpt"))
    np.testing.assert_allclose(tracked_rates(run, 2), [ramp(6), ramp(8)], rtol=1e-6)
    # back to 4 steps: the schedule's own state (torch's step count, the JAX learner's) comes from the checkpoint
    run.trainer.restore(checkpoint)
    np.testing.assert_allclose(tracked_rates(run, 2), [ramp(6), ramp(8)], rtol=1e-6)


def off_policy_runner(backend, name, directory, **agent_cfg):
    cfg = read_yaml(os.path.join(TUNED, f"{name}.yaml"))
    cfg["memory"]["memory_size"] = 64
    cfg["agent"].update(batch_size=8, learning_starts=4, gradient_steps=2, **agent_cfg)
    cfg["agent"]["learning_rate_scheduler"] = "LinearLR"
    cfg["agent"]["learning_rate_scheduler_kwargs"] = {"start_factor": START, "end_factor": END, "total_iters": TOTAL}
    # tracked (torch's SAC tracks only with a write interval), never written in these 7 steps
    cfg["agent"]["experiment"] = {"directory": str(directory), "write_interval": 1000, "checkpoint_interval": 0}
    # no evaluation during training (the DQN file evaluates on a second env)
    cfg["trainer"].update(timesteps=7, disable_progressbar=True, close_environment_at_exit=False, evaluation_interval=0)
    env = make_env(cfg.pop("env"), backend)
    return importlib.import_module(f"skrl_like.{backend}.utils.runner").Runner(env, cfg)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "name, rates, tags",
    [
        ("dqn_cartpole", {"learning_rate": RATE}, ["Learning / Learning rate"]),
        # SAC schedules the policy's and the critics' rates (one step per gradient step), not the entropy's
        (
            "sac_pendulum",
            {"actor_learning_rate": RATE, "critic_learning_rate": RATE, "learn_entropy": False},
            ["Learning / Policy learning rate", "Learning / Critic learning rate"],
        ),
    ],
)
def test_the_off_policy_rates_follow_the_ramp_per_gradient_step(backend, name, rates, tags, tmp_path):
    run = off_policy_runner(backend, name, tmp_path, **rates)
    run.agent.tracking_data.clear()
    run.trainer.train()
    # updates at timesteps 4, 5 and 6, two gradient steps each: the rates after the last one, 6 steps
    for tag in tags:
        assert float(run.agent.tracking_data[tag][-1]) == pytest.approx(ramp(6), rel=1e-6), tag


def test_the_jax_factors_are_torchs_and_bad_arguments_are_named():
    pytest.importorskip("flax")
    import jax.numpy as jnp

    from skrl_like.jax.agents.mechanics import make_scheduler
    from skrl_like.jax.resources.schedulers import LinearLR

    NoCount = collections.namedtuple("NoCount", ["policy", "learning_rate"])  # a learner without a step count
    # factors 1 -> 0 over 4 steps: 1, 3/4, 2/3, 1/2, 0 (the rate reaches exactly 0), then 1
    schedule = LinearLR(start_factor=1.0, end_factor=0.0, total_iters=4)
    np.testing.assert_allclose([float(schedule(jnp.int32(n))) for n in range(7)], [1, 0.75, 2 / 3, 0.5, 0, 1, 1])
    with pytest.raises(ValueError, match=r"LinearLR: start_factor must be a number in \(0, 1\] .* got 0"):
        LinearLR(start_factor=0)
    with pytest.raises(ValueError, match=r"LinearLR: end_factor must be a number in \[0, 1\] .* got 1.5"):
        LinearLR(end_factor=1.5)
    with pytest.raises(ValueError, match=r"LinearLR: total_iters must be a positive integer .* got 2.5"):
        LinearLR(total_iters=2.5)
    with pytest.raises(
        ValueError, match=r"LinearLR needs an agent that counts its scheduler steps.*'NoCount' has no 'scheduler_steps'"
    ):
        make_scheduler(LinearLR, {}, NoCount)
