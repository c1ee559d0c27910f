"""Ctrl-C during training with an AsyncVectorEnv ends the run within seconds, with the env's workers gone (both
backends: the close that the trainer registers at exit is the shared ``ArrayEnvWrapperCore.close``)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

# a driver that steps an AsyncVectorEnv through the wrapper and closes it at exit, as the trainer does. Sub-env 0
# answers at once, sub-env 1 after 0.3 s: an interrupt lands in step_wait after sub-env 0's reply was read, the
# case where a polite close waits forever for a reply that already came
_DRIVER = textwrap.dedent(
    """
    import atexit, sys, time
    import gymnasium, numpy as np
    from gymnasium import spaces

    class SlowEnv(gymnasium.Env):
        observation_space = spaces.Box(-1, 1, (1,), np.float32)
        action_space = spaces.Discrete(2)

        def __init__(self, delay):
            self.delay = delay

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(1, np.float32), {}

        def step(self, action):
            time.sleep(self.delay)
            return np.zeros(1, np.float32), 0.0, False, False, {}

    if sys.argv[1] == "torch":
        import torch
        from skrl_like.torch.envs.wrappers import wrap_env
        actions = torch.zeros((2, 1), dtype=torch.int64)
    else:
        from skrl_like.jax.envs.wrappers import wrap_env
        actions = np.zeros((2, 1), dtype=np.int64)

    vector = gymnasium.vector.AsyncVectorEnv(
        [lambda: SlowEnv(0.0), lambda: SlowEnv(0.3)], autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP
    )
    env = wrap_env(vector, verbose=False)
    atexit.register(env.close)
    env.reset()
    env.step(actions)
    print(" ".join(str(process.pid) for process in vector.processes), flush=True)
    while True:
        env.step(actions)
    """
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][0] != "Z"  # a zombie has ended, only its exit status is left
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads worker states from /proc")
# SIGINT to the main process only (`kill -INT pid`) hung before the fix; the whole group (Ctrl-C) once in a while
@pytest.mark.parametrize("backend, target", [("torch", "process"), ("jax", "process"), ("torch", "process group")])
def test_sigint_mid_step_ends_the_run_within_seconds_and_leaves_no_worker(backend, target):
    driver = subprocess.Popen(
        [sys.executable, "-c", _DRIVER, backend],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: `kill -INT -pgid` is what Ctrl-C in a terminal sends
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )
    workers = []
    try:
        workers = [int(pid) for pid in driver.stdout.readline().split()]
        assert len(workers) == 2, driver.stderr.read()
        time.sleep(0.5)  # well inside a 0.3 s step: the driver waits on sub-env 1 in step_wait
        if target == "process":
            os.kill(driver.pid, signal.SIGINT)
        else:
            os.killpg(driver.pid, signal.SIGINT)
        try:
            driver.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the {backend} run was still closing its AsyncVectorEnv 5 s after SIGINT")
        assert "KeyboardInterrupt" in driver.stderr.read()
        deadline = time.monotonic() + 2
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in workers if _alive(pid)], "worker processes outlived the run"
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
