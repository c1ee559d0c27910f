"""Runner models on Box observations with more than one dimension: the network language flattens them to
``(batch, num_observations)`` before a linear layer or a concatenation with flat parts, as skrl's models see them,
so the tuned files train on them in both backends."""

import importlib

import gymnasium
import numpy as np
import pytest
from gymnasium.wrappers import ReshapeObservation

from skrl_like.cli import tuned_files
from skrl_like.core.runner import read_yaml

QUICK = {"learning_starts": 2, "random_timesteps": 0, "batch_size": 4}


def tuned(name):
    (path,) = [path for path in tuned_files() if path.endswith(f"/{name}.yaml")]
    return read_yaml(path)


@pytest.mark.parametrize("backend", ["torch", "jax"])
@pytest.mark.parametrize(
    "name, env_id, shape",
    [
        ("sac_pendulum", "Pendulum-v1", (3, 1)),
        ("td3_pendulum", "Pendulum-v1", (1, 3)),
        ("dqn_cartpole", "CartPole-v1", (2, 2)),
    ],
)
def test_tuned_files_train_on_two_dimensional_observations(backend, name, env_id, shape, tmp_path):
    wrappers = importlib.import_module(f"skrl_like.{backend}.envs.wrappers")
    Runner = importlib.import_module(f"skrl_like.{backend}.utils.runner").Runner
    env = wrappers.wrap_env(ReshapeObservation(gymnasium.make(env_id), shape), verbose=False)
    assert env.observation_space.shape == shape
    cfg = tuned(name)
    cfg.pop("env", None)
    cfg["agent"].update(
        QUICK, experiment={"directory": str(tmp_path), "write_interval": 1000, "checkpoint_interval": 0}
    )
    cfg["trainer"].update(timesteps=6, headless=True, disable_progressbar=True, close_environment_at_exit=False)
    cfg["trainer"]["evaluation_interval"] = 0  # the DQN file evaluates during training (on an env this test has not)
    runner = Runner(env, cfg)
    runner.run()  # four updates on (batch, 3) flattened observations
    agent = runner.agent
    losses = [values for tag, values in agent.tracking_data.items() if tag.startswith("Loss")]
    assert losses and all(np.isfinite(values).all() for values in losses)
    states = np.zeros((5, int(np.prod(shape))), np.float32)
    if backend == "torch":
        import torch

        states = torch.as_tensor(states)
    role = "q_network" if name.startswith("dqn") else "critic_1"
    inputs = {"states": states, "taken_actions": states[:, :1]}
    model = agent.models[role]
    outputs = model.act(inputs, role)[0] if backend == "torch" else model.act(inputs, role, model.state_dict.params)[0]
    assert tuple(outputs.shape) == ((5, 2) if role == "q_network" else (5, 1))
