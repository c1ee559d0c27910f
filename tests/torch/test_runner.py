"""The YAML Runner (torch): skrl's own file layout builds and trains (a shared model included), every tuned file
shipped with the package builds, names become classes without evaluation, and mistakes fail before training."""

import importlib
import textwrap

import gymnasium
import numpy as np
import pytest
import torch

from skrl_like.cli import _build, tuned_files
from skrl_like.core.runner import AGENTS, RunnerConfigError, ScaledRewards, component_key, read_yaml
from skrl_like.envs.amp_pendulum import reference_motions
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.resources.noises import OrnsteinUhlenbeckNoise
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.resources.schedulers import KLAdaptiveLR
from skrl_like.torch.utils.runner import Runner

# the layout of skrl 1.4's published PPO files (skrl/examples/.../ppo_*.yaml), one shared model
SKRL_PPO_YAML = """
seed: 42

# Models are instantiated using skrl's model instantiator utility
models:
  separate: False
  policy:  # see gaussian_model parameters
    class: GaussianMixin
    clip_actions: False
    clip_log_std: True
    min_log_std: -20.0
    max_log_std: 2.0
    initial_log_std: 0.0
    network:
      - name: net
        input: STATES
        layers: [32, 32]
        activations: elu
    output: ACTIONS
  value:  # see deterministic_model parameters
    class: DeterministicMixin
    clip_actions: False
    network:
      - name: net
        input: STATES
        layers: [32, 32]
        activations: elu
    output: ONE

# Rollout memory
memory:
  class: RandomMemory
  memory_size: -1  # automatically determined (same as agent:rollouts)

# PPO agent configuration (field names are from PPO_DEFAULT_CONFIG)
agent:
  class: PPO
  rollouts: 16
  learning_epochs: 2
  mini_batches: 2
  discount_factor: 0.99
  lambda: 0.95
  learning_rate: 3.0e-04
  learning_rate_scheduler: KLAdaptiveLR
  learning_rate_scheduler_kwargs:
    kl_threshold: 0.008
  state_preprocessor: RunningStandardScaler
  state_preprocessor_kwargs: null
  value_preprocessor: RunningStandardScaler
  value_preprocessor_kwargs: null
  random_timesteps: 0
  learning_starts: 0
  grad_norm_clip: 1.0
  ratio_clip: 0.2
  value_clip: 0.2
  clip_predicted_values: True
  entropy_loss_scale: 0.0
  value_loss_scale: 2.0
  kl_threshold: 0.0
  rewards_shaper_scale: 0.1
  time_limit_bootstrap: False
  # logging and checkpoint
  experiment:
    directory: "pendulum"
    experiment_name: ""
    write_interval: 0
    checkpoint_interval: 0

# Sequential trainer
trainer:
  class: SequentialTrainer
  timesteps: 32
  environment_info: log
  headless: True
  disable_progressbar: True
  close_environment_at_exit: False
"""


def pendulum(num_envs=2):
    return wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def test_skrl_published_layout_builds_and_trains(tmp_path):
    path = tmp_path / "ppo_pendulum.yaml"
    path.write_text(textwrap.dedent(SKRL_PPO_YAML))
    cfg = Runner.load_cfg_from_yaml(str(path))
    runner = Runner(pendulum(), cfg)
    agent = runner.agent
    assert type(agent).__name__ == "PPO"
    assert agent.models["policy"] is agent.models["value"]  # separate: False -> one shared model
    assert agent.cfg["learning_rate_scheduler"] is KLAdaptiveLR
    assert agent.cfg["learning_rate_scheduler_kwargs"] == {"kl_threshold": 0.008}
    assert isinstance(agent._state_preprocessor, RunningStandardScaler)
    assert isinstance(agent.cfg["rewards_shaper"], ScaledRewards)
    assert agent.cfg["rewards_shaper"](torch.tensor([2.0]), 0, 1).item() == pytest.approx(0.2)
    assert isinstance(agent.memory, RandomMemory) and agent.memory.memory_size == 16
    assert runner.trainer.timesteps == 32
    before = [p.detach().clone() for p in agent.models["policy"].parameters()]
    runner.run("train")  # two updates: the shared trunk's rollout values (regression: a stale cached trunk)
    after = list(agent.models["policy"].parameters())
    assert all(torch.isfinite(p).all() for p in after)
    assert any(not torch.equal(b, a) for b, a in zip(before, after))
    with pytest.raises(ValueError, match="Unknown running mode 'test'"):
        runner.run("test")


def test_the_runner_leaves_its_cfg_unchanged_and_replaces_nested_defaults():
    cfg = read_yaml(next(path for path in tuned_files() if path.endswith("ddpg_pendulum.yaml")))
    snapshot = repr(cfg)
    cfg.pop("env")
    cfg["agent"]["experiment"] = {"write_interval": 0, "checkpoint_interval": 0}
    cfg["trainer"]["close_environment_at_exit"] = False
    runner = Runner(pendulum(1), cfg)
    noise = runner.agent.cfg["exploration"]["noise"]
    assert isinstance(noise, OrnsteinUhlenbeckNoise) and noise.theta == 0.15 and noise.sigma == 0.1
    assert isinstance(cfg["agent"]["exploration"]["noise"], str)  # the caller's dict is untouched
    assert "noise_kwargs" in snapshot


@pytest.mark.parametrize("path", tuned_files(), ids=lambda path: path.rsplit("/", 1)[-1])
def test_every_tuned_file_builds_and_deploys(path):
    """Each tuned file builds its agent and trainer; a single agent's compute_action is the action of the trainer's
    evaluation (act's ``mean_actions``: greedy Q-values, noiseless actors, Gaussian means, modes, greedy tables)."""
    cfg = read_yaml(path)
    module, name = AGENTS[component_key(cfg["agent"]["class"])]
    cfg["agent"]["experiment"] = {"write_interval": 0, "checkpoint_interval": 0}
    runner = _build(cfg, "torch")
    agent, env = runner.agent, runner.trainer.env
    assert isinstance(agent, getattr(importlib.import_module(f"skrl_like.torch.{module}"), name))
    assert runner.trainer.timesteps == cfg["trainer"]["timesteps"]
    if not hasattr(env, "possible_agents"):
        observations = np.stack([np.asarray(env.observation_space.sample()) for _ in range(3)])
        actions = agent.compute_action(observations)
        agent.set_running_mode("eval")
        states = torch.as_tensor(observations).reshape(3, -1)
        if isinstance(env.observation_space, gymnasium.spaces.Box):
            states = states.float()
        with torch.no_grad():
            outputs = agent.act(states, timestep=0, timesteps=runner.trainer.timesteps)
        expected = (outputs[-1] or {}).get("mean_actions", outputs[0]).numpy()
        np.testing.assert_array_equal(actions, expected.reshape(actions.shape))
    env.close()


def test_build_errors_name_the_entry():
    cfg = read_yaml(next(path for path in tuned_files() if path.endswith("ppo_cartpole.yaml")))
    cfg.pop("env")
    env = wrap_env(gymnasium.make("CartPole-v1"), verbose=False)
    bad_model = {**cfg, "models": {**cfg["models"], "policy": {**cfg["models"]["policy"], "clip_log_std": True}}}
    with pytest.raises(RunnerConfigError, match=r"models.policy: categorical_model\(\) got unexpected keyword"):
        Runner(env, bad_model)
    with pytest.raises(ValueError, match="Unknown key 'learning_rat' in PPO cfg. Did you mean 'learning_rate'?"):
        Runner(env, {**cfg, "agent": {**cfg["agent"], "learning_rat": 0.1}})
    with pytest.raises(RunnerConfigError, match="IPPO is a multi-agent algorithm, but the env is single-agent"):
        Runner(env, {**cfg, "agent": {**cfg["agent"], "class": "IPPO"}})


def test_amp_from_its_tuned_file_takes_the_amp_attributes_of_a_vector_envs_sub_env_and_trains():
    """The command line's env for amp_pendulum.yaml with two sub-envs (a SyncVectorEnv, which forwards none of its
    sub-envs' attributes): the discriminator and the AMP preprocessor are built on the sub-envs' amp_observation_space,
    the reference motions come from the first sub-env, and four updates run on the infos' AMP observations."""
    cfg = read_yaml(next(path for path in tuned_files() if path.endswith("amp_pendulum.yaml")))
    cfg["env"] = {**cfg["env"], "num_envs": 2, "kwargs": {"reference_episodes": 2}}
    cfg["motion_dataset"]["memory_size"] = 400
    cfg["agent"].update(rollouts=16, amp_batch_size=64, experiment={"write_interval": 0, "checkpoint_interval": 0})
    cfg["trainer"]["timesteps"] = 64
    runner = _build(cfg, "torch")
    agent, env = runner.agent, runner.trainer.env
    first = env.unwrapped.envs[0].unwrapped
    assert agent.amp_observation_space is first.amp_observation_space
    assert agent.discriminator.observation_space is first.amp_observation_space
    assert agent._amp_state_preprocessor.running_mean.shape == (6,)
    assert agent.collect_reference_motions == first.collect_reference_motions
    before = [parameter.detach().clone() for parameter in agent.discriminator.parameters()]
    runner.run("train")
    motions = torch.as_tensor(reference_motions(episodes=2))
    dataset = agent.motion_dataset.get_tensor_by_name("states").reshape(-1, 6)
    assert len(agent.motion_dataset) == 400 and (dataset[:, None] == motions[None]).all(-1).any(-1).all()
    assert len(agent.reply_buffer) == 4 * 16 * 2  # each update appends its rollout's AMP observations
    replayed = agent.reply_buffer.get_tensor_by_name("states").reshape(-1, 6)[:128]
    for half in (replayed[:, :3], replayed[:, 3:]):  # Pendulum observations (cos, sin, speed)
        torch.testing.assert_close(half[:, 0] ** 2 + half[:, 1] ** 2, torch.ones(128), rtol=0, atol=1e-5)
    style = agent.tracking_data["Reward / Style reward (mean)"]
    assert len(style) == 4 and all(np.isfinite(style))
    assert any(not torch.equal(b, a) for b, a in zip(before, agent.discriminator.parameters()))
    env.close()
