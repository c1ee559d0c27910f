"""The collection loop stays on the device (JAX): PPO, A2C, SAC and DQN on the Isaac Lab stand-in through the JAX
"isaaclab" wrapper (torch tensors crossing by DLPack), with the progress bar on and writing every few steps, run
their env steps under ``jax.transfer_guard("disallow")``: no implicit transfer either way (a constant made per step
from a Python number is one). Excluded as in tests/torch/test_loop_on_device.py: the write and checkpoint steps (and
the run's last one), the trainer's checkpoints, and an on-policy update (once per rollout). SAC and DQN update at every
step: their updates are guarded."""

import contextlib
import os
import subprocess
import sys

import jax
import pytest

from skrl_like import config
from skrl_like.jax import memories
from skrl_like.jax.agents.a2c import A2C
from skrl_like.jax.agents.dqn import DQN
from skrl_like.jax.agents.ppo import PPO
from skrl_like.jax.agents.sac import SAC
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.trainers import SequentialTrainer
from tests.loop_on_device import TIMESTEPS, TRAINER, WRITE_INTERVAL, make_agent, reads_the_host, standin

LOSS_TAGS = {
    PPO: "Loss / Policy loss",
    A2C: "Loss / Policy loss",
    SAC: "Loss / Policy loss",
    DQN: "Loss / Q-network loss",
}

# set by the test below: JAX's default device is another than the env's (and so the agent's), as on a GPU machine
# where the env runs on the CPU
if os.environ.get("SKRL_LIKE_TEST_OTHER_DEFAULT_DEVICE"):
    jax.config.update("jax_default_device", jax.devices("cpu")[1])


@pytest.fixture(autouse=True)
def jax_backend(monkeypatch):
    monkeypatch.setattr(config.jax, "backend", "jax")


@pytest.mark.parametrize(
    "algorithm, on_device",
    [(PPO, False), (A2C, False), (SAC, False), (DQN, False), (PPO, True), (SAC, True), (DQN, True)],
)
def test_the_env_steps_between_writes_run_under_a_disallowing_transfer_guard(
    algorithm, on_device, tmp_path, monkeypatch
):
    # on_device: the memory's device storage (the automatic choice on a GPU) is forced here, on a CPU
    monkeypatch.setattr(memories.base, "device_storage_by_default", lambda device: on_device)
    env = standin(algorithm is DQN, max_episode_length=5, seed=0)
    env = wrap_env(env, wrapper="isaaclab", verbose=False)
    agent = make_agent("jax", algorithm, env, str(tmp_path))
    rows = []
    agent.add_result_listener(rows.append)
    trainer = SequentialTrainer(env, agent, cfg={**TRAINER, "environment_info": "log"})
    guarded, host_reads = [], []

    @contextlib.contextmanager
    def guard(value):
        previous, guard.on = guard.on, value
        try:
            with jax.transfer_guard("disallow" if value else "allow"):
                yield
        finally:
            guard.on = previous

    guard.on = False
    # on the CPU backend the guard does not see a CPU array read on the host (NumPy takes its buffer without a copy):
    # the reads of an array's host value (float(), item(), tolist()) are counted apart, and NumPy's reads of the
    # episode rows are ruled out below by the rows being JAX arrays
    array_type = type(jax.numpy.zeros(()))
    host_value = array_type._value
    counted = property(lambda array: (guard.on and host_reads.append(array.shape), host_value.fget(array))[1])
    monkeypatch.setattr(array_type, "_value", counted)

    def step(states, timestep, *args, _step=trainer._step):
        if reads_the_host(timestep):
            return _step(states, timestep, *args)
        guarded.append(timestep)
        with guard(True):
            return _step(states, timestep, *args)

    trainer._step = step
    if algorithm in (PPO, A2C):
        update = agent._update

        def allowed_update(*args):
            with guard(False):
                return update(*args)

        agent._update = allowed_update
    assert agent.memory.on_device is on_device
    if not on_device:
        # the host storage (jax/memories/base.py) copies a stored transition to the host by an explicit device_get
        # (which the guard allows); its reads are not counted here. The device storage needs no such exception.
        add_samples = agent.memory.add_samples

        def uncounted_add_samples(**samples):
            with guard(False):
                return add_samples(**samples)

        agent.memory.add_samples = uncounted_add_samples
    trainer.train()
    assert host_reads == [] and isinstance(agent._tracker._rewards, jax.Array)
    assert guarded == [0, 1, 2, 4, 6, 8, 9, 10, 12]  # not 3, 7, 11 (write), 5 (checkpoint), 13 (the last)
    assert len(rows) == TIMESTEPS // WRITE_INTERVAL
    assert LOSS_TAGS[algorithm] in rows[-1] and rows[-1]["Episode / Total timesteps (max)"] == 5


def test_the_guard_would_see_a_constant_made_per_step():
    with pytest.raises(Exception, match="Disallowed host-to-device transfer"), jax.transfer_guard("disallow"):
        jax.numpy.ones(2) * jax.numpy.asarray(0.5)


@pytest.mark.parametrize("algorithm, loss_tag", [(SAC, "Loss / Critic loss"), (DQN, "Loss / Q-network loss")])
def test_an_update_at_every_step_names_a_non_finite_quantity_at_the_next_write_with_its_timestep(
    algorithm, loss_tag, tmp_path
):
    env = wrap_env(standin(algorithm is DQN), wrapper="isaaclab", verbose=False)
    agent = make_agent("jax", algorithm, env, str(tmp_path), rewards_shaper=lambda rewards, *_: rewards * float("nan"))
    steps = []
    post_interaction = agent.post_interaction
    agent.post_interaction = lambda timestep, timesteps: (steps.append(timestep), post_interaction(timestep, timesteps))
    message = rf"{algorithm.__name__} update at timestep 2: the sampled rewards of gradient step 0"
    with pytest.raises(FloatingPointError, match=message):
        SequentialTrainer(env, agent, cfg={**TRAINER, "disable_progressbar": True}).train()
    # the first update (timestep 2, after learning_starts) went non-finite; read at the first write step (3)
    assert steps == [0, 1, 2, 3]
    assert agent.tracking_data.get(loss_tag, []) == []  # raised before the reports were tracked


def test_an_agent_off_jaxs_default_device_keeps_its_keys_and_statistics_on_its_own():
    """On a GPU machine with the env on the CPU, the agent's random key and its preprocessor's statistics were made on
    JAX's default device (the GPU) and crossed between devices at every step. Two CPU devices stand for the two."""
    environment = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=2 --xla_cpu_multi_thread_eigen=false",
        "SKRL_LIKE_TEST_OTHER_DEFAULT_DEVICE": "1",
    }
    command = [sys.executable, "-m", "pytest", "-o", "addopts=--import-mode=importlib", "-p", "no:cacheprovider"]
    command += ["-n", "0", __file__]
    # PPO with the host storage (its preprocessor, the episode rows), SAC with the device storage (its key, its
    # update's inputs, the memory's writes)
    command += ["-k", "disallowing_transfer_guard and ((PPO and False) or (SAC and True))"]
    result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "2 passed" in result.stdout
