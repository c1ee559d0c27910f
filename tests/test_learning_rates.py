"""``Agent.set_learning_rate``: the next optimizer step is taken at the new rate (its parameter step is the old
step times new/old), with and without a learning-rate scheduler, on both backends, without recompiling (JAX)."""

import importlib
import os

import numpy as np
import pytest

from skrl_like.cli import make_env
from skrl_like.core.runner import read_yaml

TUNED = os.path.join(os.path.dirname(__file__), "..", "skrl_like", "tuned")
BACKENDS = ["torch", pytest.param("jax", marks=pytest.mark.skipif(not importlib.util.find_spec("flax"), reason="jax"))]


def runner(backend, name="ppo_cartpole", **agent_cfg):
    cfg = read_yaml(os.path.join(TUNED, f"{name}.yaml"))
    cfg["env"]["num_envs"] = 2
    cfg["agent"].update(agent_cfg)
    cfg["agent"]["experiment"] = {"write_interval": 0, "checkpoint_interval": 0}
    cfg["trainer"].update(timesteps=1, disable_progressbar=True, close_environment_at_exit=False)
    env = make_env(cfg.pop("env"), backend)
    return importlib.import_module(f"skrl_like.{backend}.utils.runner").Runner(env, cfg)


def train(run, timesteps):
    run.trainer.timesteps = run.trainer.initial_timestep + timesteps
    run.trainer.train()


def parameters(agent, roles):
    found = {}
    for role in roles:
        model = agent.models[role]
        if hasattr(model, "named_parameters"):
            found.update({f"{role}.{name}": value.detach().numpy().copy() for name, value in model.named_parameters()})
        else:
            import jax

            leaves = jax.tree_util.tree_leaves_with_path(model.state_dict.params)
            found.update({f"{role}{jax.tree_util.keystr(path)}": np.array(value) for path, value in leaves})
    return found


def steps_after(run, timesteps, roles):
    before = parameters(run.agent, roles)
    train(run, timesteps)
    after = parameters(run.agent, roles)
    return {name: after[name] - before[name] for name in before}


def assert_scaled(steps, reference, factor):
    assert steps.keys() == reference.keys()
    assert max(np.abs(step).max() for step in reference.values()) > 1e-5  # the reference run did move
    for name in steps:
        # the parameters' float32 rounding bounds the error of a difference of parameters (~1e-7 near 1)
        np.testing.assert_allclose(steps[name], factor * reference[name], rtol=1e-3, atol=3e-7, err_msg=name)


def step_twice(run, timesteps, roles, tmp_path, change):
    """The parameter steps of the next ``timesteps`` from the same point (the run's full-state checkpoint): as the run
    goes, then after ``change(agent)``, as a PBT exploit does after restoring a donor's checkpoint."""
    checkpoint = run.trainer.save(str(tmp_path / "run.ckpt"))
    as_it_goes = steps_after(run, timesteps, roles)
    run.trainer.restore(checkpoint)
    change(run.agent)
    return steps_after(run, timesteps, roles), as_it_goes


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("scheduler", [None, "KLAdaptiveLR"])
def test_the_next_ppo_step_is_taken_at_the_new_rate(backend, scheduler, tmp_path):
    # one update = one optimizer step (one epoch of one mini-batch): at 2.5 times the rate, 2.5 times the step
    cfg = dict(rollouts=16, learning_epochs=1, mini_batches=1, learning_rate=3e-4, learning_rate_scheduler=scheduler)
    run = runner(backend, **cfg)
    train(run, 16)
    assert run.agent.learning_rate_keys() == ("learning_rate",)
    # KLAdaptiveLR: the one mini-batch is evaluated before its step, a KL of 0: the rate * 1.5 after each update
    current = 3e-4 * 1.5 if scheduler else 3e-4
    if scheduler:
        assert float(run.agent.tracking_data["Learning / Learning rate"][-1]) == pytest.approx(current)
    changed, reference = step_twice(
        run, 16, ("policy", "value"), tmp_path, lambda agent: agent.set_learning_rate(2.5 * current)
    )
    assert_scaled(changed, reference, 2.5)
    assert run.agent.cfg["learning_rate"] == 2.5 * current
    if scheduler:  # the schedule continued from the new rate
        tracked = run.agent.tracking_data["Learning / Learning rate"]
        assert float(tracked[-1]) == pytest.approx(2.5 * current * 1.5, rel=1e-6)
    if backend == "jax":
        assert run.agent._update_fn._cache_size() == 1  # the rate is a traced argument: no recompilation


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_rate_of_a_two_optimizer_agent(backend, tmp_path):
    # TD3 (policy_delay 1): only the critics' steps scale with a new critic_learning_rate
    run = runner(backend, "td3_pendulum", learning_starts=8, random_timesteps=8, batch_size=16, policy_delay=1)
    train(run, 10)
    assert run.agent.learning_rate_keys() == ("actor_learning_rate", "critic_learning_rate")
    rate = run.agent.cfg["critic_learning_rate"]
    changed, reference = step_twice(
        run,
        1,
        ("critic_1", "critic_2"),
        tmp_path,
        lambda agent: agent.set_learning_rate(4 * rate, "critic_learning_rate"),
    )
    assert_scaled(changed, reference, 4)
    assert run.agent.cfg["actor_learning_rate"] == rate  # the other rate is left as it was
    if backend == "jax":
        assert run.agent._update_fn._cache_size() == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_rates_and_keys_fail_with_their_names(backend):
    agent = runner(backend).agent
    with pytest.raises(ValueError, match=r"PPO has no learning rate 'learning_rat'. Did you mean 'learning_rate'\?"):
        agent.set_learning_rate(1e-3, "learning_rat")
    with pytest.raises(ValueError, match=r"PPO.set_learning_rate: the rate must be >= 0, got -0.1"):
        agent.set_learning_rate(-0.1)
    with pytest.raises(ValueError, match=r"the rate must be a finite number, got nan"):
        agent.set_learning_rate(float("nan"))
    assert agent.cfg["learning_rate"] == 1e-3  # unchanged
