"""The command line on an env that steps its own sub-environments (Isaac Lab's contract, the stand-in env): made
once with the env section's ``num_envs`` (not several by ``gymnasium.make_vec``), wrapped with the Isaac Lab wrapper,
and an Isaac Lab 3.0-style YAML file trained by ``skrl_like train -f`` in a subprocess."""

import os
import subprocess
import sys
import textwrap

import gymnasium
import pytest

from skrl_like.core.runner import RunnerConfigError
from skrl_like.run_description import make_env, steps_its_own_envs

STAND_IN = "skrl_like.envs:IsaacLabStandIn-v0"


# a task whose base class lives in isaaclab.*, as Isaac Lab's do; it takes a cfg (with the scene's num_envs)
_IsaacLabBase = type("DirectRLEnv", (), {"__module__": "isaaclab.envs.direct_rl_env"})
_Task = type("Task", (_IsaacLabBase,), {"__init__": lambda self, cfg=None: None})


def test_an_env_taking_num_envs_or_from_isaac_lab_steps_its_own_envs():
    assert steps_its_own_envs(STAND_IN) and steps_its_own_envs("IsaacLabStandIn-v0")
    assert not steps_its_own_envs("CartPole-v1") and not steps_its_own_envs("Pendulum-v1")
    if "SkrlLikeTestIsaacLabTask-v0" not in gymnasium.registry:
        gymnasium.register("SkrlLikeTestIsaacLabTask-v0", entry_point=_Task, disable_env_checker=True)
    assert steps_its_own_envs("SkrlLikeTestIsaacLabTask-v0")


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_make_env_makes_the_stand_in_once_with_its_num_envs_and_the_isaac_lab_wrapper(backend):
    pytest.importorskip("torch")
    pytest.importorskip(backend)
    env_cfg = {"id": STAND_IN, "num_envs": 3, "kwargs": {"observation_size": 12, "action_size": 2}}
    env = make_env(env_cfg, backend)
    assert type(env).__name__ == "IsaacLabWrapper" and type(env).__module__.startswith(f"skrl_like.{backend}.")
    assert env.num_envs == 3 and env.observation_space.shape == (12,) and env.action_space.shape == (2,)
    assert make_env(env_cfg, backend, num_envs=5).num_envs == 5  # the command's --num-envs / eval's single env


def test_num_envs_in_the_env_kwargs_of_a_batched_env_is_refused():
    pytest.importorskip("torch")
    with pytest.raises(RunnerConfigError, match=r"env.kwargs.num_envs and env.num_envs .* keep env.num_envs"):
        make_env({"id": STAND_IN, "num_envs": 2, "kwargs": {"num_envs": 4}}, "torch")


# an Isaac Lab 3.0 skrl config (skrl 2.x key names) plus the command line's env section
ISAAC_LAB_3_YAML = """\
seed: 42
env:
  id: skrl_like.envs:IsaacLabStandIn-v0
  num_envs: 4
  kwargs: {observation_size: 16, action_size: 3, max_episode_length: 8}
models:
  separate: False
  policy:
    class: GaussianMixin
    clip_actions: False
    clip_log_std: True
    min_log_std: -20.0
    max_log_std: 2.0
    initial_log_std: 0.0
    network:
      - name: net
        input: OBSERVATIONS
        layers: [16, 16]
        activations: elu
    output: ACTIONS
  value:
    class: DeterministicMixin
    clip_actions: False
    network:
      - name: net
        input: OBSERVATIONS
        layers: [16, 16]
        activations: elu
    output: ONE
memory:
  class: RandomMemory
  memory_size: -1
agent:
  class: PPO
  rollouts: 8
  learning_epochs: 2
  mini_batches: 2
  discount_factor: 0.99
  gae_lambda: 0.95
  learning_rate: 5.0e-04
  learning_rate_scheduler: KLAdaptiveLR
  learning_rate_scheduler_kwargs:
    kl_threshold: 0.008
  observation_preprocessor: RunningStandardScaler
  observation_preprocessor_kwargs: null
  value_preprocessor: RunningStandardScaler
  value_preprocessor_kwargs: null
  grad_norm_clip: 1.0
  ratio_clip: 0.2
  value_clip: 0.2
  entropy_loss_scale: 0.0
  value_loss_scale: 2.0
  rewards_shaper_scale: 0.1
  time_limit_bootstrap: False
  mixed_precision: False
  experiment:
    directory: ""
    experiment_name: ""
    write_interval: 16
    checkpoint_interval: 0
trainer:
  class: SequentialTrainer
  timesteps: 32
  environment_info: log
"""


def test_skrl_like_train_runs_an_isaac_lab_3_file_on_the_stand_in(tmp_path):
    pytest.importorskip("torch")
    config = tmp_path / "skrl_ppo_cfg.yaml"
    config.write_text(textwrap.dedent(ISAAC_LAB_3_YAML))
    command = [sys.executable, "-m", "skrl_like", "train", "-f", str(config), "--experiment-dir", str(tmp_path)]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    *_, summary, run_dir = result.stdout.strip().splitlines()
    assert summary.startswith("trained 32 timesteps") and os.path.isdir(run_dir)
    rows = open(os.path.join(run_dir, "results.jsonl")).read().splitlines()
    assert len(rows) == 2 and all('"Info / distance_to_target"' in row for row in rows)  # extras["log"], 2 writes


def test_rendering_a_batched_env_that_draws_nothing_is_refused_with_the_fix():
    pytest.importorskip("torch")
    with pytest.raises(RunnerConfigError, match="IsaacLabStandIn-v0 draws nothing .* run without --render"):
        make_env({"id": STAND_IN, "num_envs": 2}, "torch", render=True)
