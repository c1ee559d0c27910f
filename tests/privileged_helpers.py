"""The set-up the privileged-state tests of both backends share: the Isaac Lab stand-in's sizes (observations,
actions and a critic group of different sizes, so that a model fed the wrong one fails), the networks, quiet runs, and
a recorder of what ``env.state()`` returned."""

import copy

NUM_ENVS, OBSERVATIONS, ACTIONS, STATES = 4, 6, 2, 9
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
NETWORK = [{"name": "net", "input": "STATES", "layers": [16], "activations": "elu"}]
Q_NETWORK = [{"name": "net", "input": "concatenate([STATES, ACTIONS])", "layers": [16], "activations": "elu"}]


def config(defaults, **keys):
    """``defaults`` with ``keys``, writing nothing."""
    cfg = copy.deepcopy(defaults)
    cfg.update(keys)
    cfg["experiment"] = {**cfg["experiment"], "write_interval": 0, "checkpoint_interval": 0}
    return cfg


def recorded_env_states(env, calls, keep):
    """``env`` whose ``state()`` appends ``keep(states)`` (a copy) of what it returns to ``calls``."""
    state = env.state

    def spy():
        states = state()
        calls.append(keep(states))
        return states

    env.state = spy
    return env


def rows(array):
    """One row per sample: ``(rollouts, num_envs, size)`` -> ``(rollouts * num_envs, size)``."""
    return array.reshape(-1, array.shape[-1])


def drawn_from(inputs, stored):
    """Whether every row of ``inputs`` is one of the rows of ``stored`` (a memory tensor)."""
    stored = rows(stored)
    return bool((inputs[:, None, :] == stored[None]).all(-1).any(-1).all())
