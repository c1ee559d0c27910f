"""The Isaac Lab wrappers (torch): wrap_env's tags and "auto" detection, skrl 1.4.3's behaviour (one reset, the
"policy" group, (num_envs, 1) columns, actions in the action space's structure, render a no-op, the env's tensors
handed over as they are), the "critic" group as state(), the multi-agent wrapper, a step without host syncs, and
PPO trained end to end on the stand-in env, by hand and through the Runner with an Isaac Lab 2.3 skrl config."""

import copy
import json
import pathlib
import subprocess
import sys

import gymnasium
import pytest
import torch

from skrl_like.envs import IsaacLabStandInEnv
from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.envs.wrappers.isaaclab_envs import IsaacLabMultiAgentWrapper, IsaacLabWrapper
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.resources.schedulers import KLAdaptiveLR
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.torch.utils.model_instantiators import deterministic_model, gaussian_model
from skrl_like.torch.utils.runner import Runner
from tests.host_syncs import HostSyncs
from tests.isaaclab_helpers import CompositeEnv, MultiAgentEnv, task_in_module

DEVICES = ["cpu"] + (["cuda:0"] if torch.cuda.is_available() else [])


class CountingEnv(IsaacLabStandInEnv):
    def reset(self, seed=None, options=None):
        self.resets = getattr(self, "resets", 0) + 1
        return super().reset(seed, options)


# -- wrap_env --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "module", ["isaaclab.envs.direct_rl_env", "isaaclab.envs.manager_based_rl_env", "omni.isaac.lab.envs.direct_rl_env"]
)
def test_auto_detects_envs_whose_base_class_lives_in_isaac_lab(module):
    env = task_in_module(module)(num_envs=2)
    assert type(wrap_env(env, verbose=False)) is IsaacLabWrapper


def test_auto_detects_the_stand_in_itself_and_through_gymnasium_make():
    assert type(wrap_env(IsaacLabStandInEnv(num_envs=2), verbose=False)) is IsaacLabWrapper
    made = gymnasium.make("skrl_like.envs:IsaacLabStandIn-v0", num_envs=2)  # OrderEnforcing around the env
    assert type(wrap_env(made, verbose=False)) is IsaacLabWrapper


def test_isaaclab_tags_pick_single_or_multi_agent_as_skrl_does():
    single, multi = IsaacLabStandInEnv(num_envs=2), MultiAgentEnv()
    assert type(wrap_env(single, wrapper="isaaclab", verbose=False)) is IsaacLabWrapper
    assert type(wrap_env(single, wrapper="isaaclab-single-agent", verbose=False)) is IsaacLabWrapper
    assert type(wrap_env(multi, wrapper="isaaclab", verbose=False)) is IsaacLabMultiAgentWrapper
    assert type(wrap_env(multi, wrapper="isaaclab-multi-agent", verbose=False)) is IsaacLabMultiAgentWrapper
    marl = type("DirectMARLEnv", (MultiAgentEnv,), {"__module__": "isaaclab.envs.direct_marl_env"})
    assert type(wrap_env(type("Task", (marl,), {})(), verbose=False)) is IsaacLabMultiAgentWrapper


@pytest.mark.parametrize("tag", ["isaacgym-preview2", "isaacgym-preview3", "isaacgym-preview4", "omniverse-isaacgym"])
def test_isaac_gym_and_omniverse_isaac_gym_are_refused_as_deprecated(tag):
    with pytest.raises(ValueError, match=f"'{tag}' is not supported in skrl_like: NVIDIA deprecated .* skrl 2.x"):
        wrap_env(IsaacLabStandInEnv(num_envs=1), wrapper=tag, verbose=False)
    omniverse = type("VecEnvBase", (gymnasium.Env,), {"__module__": "omni.isaac.gym.vec_env.vec_env_base"})
    with pytest.raises(ValueError, match="'omniverse-isaacgym' is not supported in skrl_like: NVIDIA deprecated"):
        wrap_env(type("Task", (omniverse,), {})(), verbose=False)


def test_an_env_without_isaac_labs_groups_is_refused_with_the_fix():
    with pytest.raises(ValueError, match=r"CartPoleEnv\) spaces have no 'policy' observation group.*wrapper='auto'"):
        wrap_env(gymnasium.make("CartPole-v1"), wrapper="isaaclab", verbose=False)

    class FlatObservations(IsaacLabStandInEnv):
        def reset(self, seed=None, options=None):
            return super().reset(seed, options)[0]["policy"], {}

    with pytest.raises(ValueError, match=r"observations \(Tensor\) have no 'policy' group.*\{'policy': tensor\}"):
        wrap_env(FlatObservations(num_envs=2), verbose=False).reset()


# -- skrl 1.4.3's behaviour ----------------------------------------------------------------------------------------


def test_the_env_is_reset_once_then_the_last_observations_are_returned():
    env = CountingEnv(num_envs=3, seed=0)
    wrapped = wrap_env(env, verbose=False)
    observations, extras = wrapped.reset()
    assert env.resets == 1 and observations.shape == (3, 60) and extras is env.extras
    assert wrapped.reset()[0] is observations and env.resets == 1
    stepped, *_ = wrapped.step(torch.zeros(3, 8))
    assert wrapped.reset()[0] is stepped and env.resets == 1


def test_step_hands_over_the_envs_tensors_as_num_envs_columns_without_copies():
    env = IsaacLabStandInEnv(num_envs=4, seed=1)
    wrapped = wrap_env(env, verbose=False)
    assert wrapped.device == torch.device("cpu") and wrapped.num_envs == 4 and wrapped.num_agents == 1
    assert wrapped.observation_space == env.single_observation_space["policy"]
    assert wrapped.action_space == env.single_action_space and wrapped.state_space is None
    wrapped.reset()
    observations, rewards, terminated, truncated, extras = wrapped.step(torch.ones(4, 8))
    assert observations.shape == (4, 60) and rewards.shape == terminated.shape == truncated.shape == (4, 1)
    assert rewards.dtype == torch.float32 and terminated.dtype == truncated.dtype == torch.bool
    # views of the env's own tensors: nothing is copied
    assert rewards.data_ptr() == env.reward_buf.data_ptr()
    assert terminated.data_ptr() == env.reset_terminated.data_ptr()
    assert truncated.data_ptr() == env.reset_time_outs.data_ptr()
    assert extras is env.extras and "distance_to_target" in extras["log"]
    torch.testing.assert_close(observations[:, 8:16], torch.full((4, 8), 0.2))  # the positions moved by the actions
    assert wrapped.render() is None
    wrapped.close()
    assert env._is_closed


def test_composite_groups_are_flattened_and_actions_unflattened_to_the_action_space():
    env = CompositeEnv(num_envs=2)
    wrapped = wrap_env(env, wrapper="isaaclab", verbose=False)
    observations, extras = wrapped.reset()
    assert extras == {"reset": True}
    torch.testing.assert_close(observations, torch.zeros(2, 3))
    actions = torch.tensor([[2.0, 0.5, -0.5], [1.0, 0.25, 0.25]])  # Discrete part, then the Box part
    observations, rewards, *_ = wrapped.step(actions)
    discrete, box = env.received[-1]
    torch.testing.assert_close(discrete, torch.tensor([[2.0], [1.0]]))
    torch.testing.assert_close(box, torch.tensor([[0.5, -0.5], [0.25, 0.25]]))
    # dict keys sorted: position (2), velocity (1)
    torch.testing.assert_close(observations, torch.tensor([[1.0, 1.0, -1.0], [1.0, 1.0, -1.0]]))
    torch.testing.assert_close(rewards, torch.tensor([[0.0], [0.5]]))


def test_state_is_the_critic_group():
    env = IsaacLabStandInEnv(num_envs=3, state_size=40, seed=2)
    wrapped = wrap_env(env, verbose=False)
    assert wrapped.state_space == env.single_observation_space["critic"]
    assert wrapped.state() is None  # nothing observed yet
    observations, _ = wrapped.reset()
    torch.testing.assert_close(wrapped.state()[:, :32], observations[:, :32])
    wrapped.step(torch.zeros(3, 8))
    torch.testing.assert_close(wrapped.state()[:, 32], torch.full((3,), 0.01))  # the episode's progress, 1 of 100
    composite = wrap_env(CompositeEnv(), wrapper="isaaclab", verbose=False)
    composite.reset()
    torch.testing.assert_close(composite.state(), torch.full((2, 3), 10.0))


def test_without_a_critic_group_state_is_the_envs_state_or_none():
    plain = wrap_env(IsaacLabStandInEnv(num_envs=2), verbose=False)
    plain.reset()
    assert plain.state_space is None and plain.state() is None

    class WithState(IsaacLabStandInEnv):
        def __init__(self):
            super().__init__(num_envs=2)
            self.state_space = gymnasium.spaces.Box(-1, 1, (2, 3))

        def state(self):
            return torch.arange(6.0).reshape(2, 3)

    wrapped = wrap_env(WithState(), verbose=False)
    assert wrapped.state_space == gymnasium.spaces.Box(-1, 1, (2, 3))
    torch.testing.assert_close(wrapped.state(), torch.arange(6.0).reshape(2, 3))


def test_a_run_state_resumes_the_stand_in_without_a_reset():
    wrapped = wrap_env(CountingEnv(num_envs=3, state_size=33, seed=4), verbose=False)
    wrapped.reset()
    observations, *_ = wrapped.step(torch.ones(3, 8))
    saved = wrapped.run_state()
    resumed_env = CountingEnv(num_envs=3, state_size=33, seed=9)
    resumed = wrap_env(resumed_env, verbose=False)
    resumed.load_run_state(saved)
    assert torch.equal(resumed.reset()[0], observations) and resumed_env.resets == 1  # the saved count: no reset
    torch.testing.assert_close(resumed.state(), wrapped.state())
    expected, *_ = wrapped.step(torch.ones(3, 8))
    torch.testing.assert_close(resumed.step(torch.ones(3, 8))[0], expected)


@pytest.mark.parametrize("device", DEVICES)
def test_a_step_through_the_wrapper_never_syncs_with_the_host(device):
    """With thousands of sub-environments on a GPU a host sync costs more than the step: none in reset, step or
    state (the counter is checked in tests/envs/test_isaaclab_standin.py)."""
    env = IsaacLabStandInEnv(num_envs=8, state_size=10, max_episode_length=3, device=device, seed=3)
    wrapped = wrap_env(env, verbose=False)
    assert wrapped.device == torch.device(device)
    actions = torch.ones(8, 8, device=device)
    with HostSyncs() as syncs:
        wrapped.reset()
        for _ in range(7):  # episodes end at steps 3 and 6
            observations, rewards, terminated, truncated, _ = wrapped.step(actions)
            wrapped.state()
    assert syncs.calls == []
    assert observations.device == rewards.device == terminated.device == torch.device(device)


# -- multi-agent ---------------------------------------------------------------------------------------------------


def test_multi_agent_reset_step_and_state():
    env = MultiAgentEnv(num_envs=3)
    wrapped = wrap_env(env, wrapper="isaaclab", verbose=False)
    assert wrapped.possible_agents == ["a", "b"] and wrapped.num_agents == 2 and wrapped.max_num_agents == 2
    assert wrapped.observation_space("b") == env.observation_spaces["b"]
    assert wrapped.action_space("b") == gymnasium.spaces.Discrete(4)
    assert wrapped.state_space("a") == env.state_space
    observations, _ = wrapped.reset()
    assert wrapped.reset()[0] is observations and env.resets == 1
    torch.testing.assert_close(observations["a"], torch.zeros(3, 3))
    actions = {"a": torch.full((3, 2), 0.5), "b": torch.tensor([[1], [2], [3]])}
    observations, rewards, terminated, truncated, _ = wrapped.step(actions)
    assert env.received[-1]["b"].shape == (3, 1)
    torch.testing.assert_close(observations["b"], torch.full((3, 2), -1.0))
    torch.testing.assert_close(rewards["a"], torch.ones(3, 1))
    torch.testing.assert_close(rewards["b"], torch.tensor([[1.0], [2.0], [3.0]]))
    assert terminated["b"].shape == truncated["a"].shape == (3, 1) and not terminated["b"].any()
    assert wrapped.step(actions)[2]["b"].all()
    torch.testing.assert_close(wrapped.state(), torch.full((3, 5), 102.0))
    assert wrapped.render() is None


# -- training ------------------------------------------------------------------------------------------------------

QUIET_TRAINER = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


def test_ppo_trains_on_the_wrapped_stand_in_with_the_sequential_trainer(tmp_path):
    torch.manual_seed(0)
    env = wrap_env(IsaacLabStandInEnv(num_envs=16, observation_size=24, action_size=4, seed=0), verbose=False)
    network = [{"name": "net", "input": "STATES", "layers": [32, 32], "activations": "elu"}]
    models = {
        "policy": gaussian_model(
            env.observation_space, env.action_space, env.device, network=network, output="ACTIONS"
        ),
        "value": deterministic_model(
            env.observation_space, env.action_space, env.device, network=network, output="ONE"
        ),
    }
    cfg = copy.deepcopy(PPO_DEFAULT_CONFIG)
    cfg.update(
        rollouts=16,
        learning_epochs=2,
        mini_batches=2,
        learning_rate_scheduler=KLAdaptiveLR,
        learning_rate_scheduler_kwargs={"kl_threshold": 0.008},
        state_preprocessor=RunningStandardScaler,
        state_preprocessor_kwargs={"size": env.observation_space, "device": env.device},
        experiment={"directory": str(tmp_path), "write_interval": 64, "checkpoint_interval": 0},
    )
    memory = RandomMemory(memory_size=16, num_envs=env.num_envs, device=env.device)
    agent = PPO(models, memory, env.observation_space, env.action_space, env.device, cfg)
    rows = []
    agent.result_listeners.append(rows.append)
    before = [parameter.detach().clone() for parameter in models["policy"].parameters()]
    SequentialTrainer(env, agent, cfg={"timesteps": 320, "environment_info": "log", **QUIET_TRAINER}).train()
    after = list(models["policy"].parameters())
    assert all(torch.isfinite(parameter).all() for parameter in after)
    assert any(not torch.equal(b, a) for b, a in zip(before, after))  # 20 updates ran
    assert len(rows) == 5 and all("Info / distance_to_target" in row for row in rows)  # extras["log"] is logged
    assert "Reward / Total reward (mean)" in rows[-1]  # episodes ended (truncated at 100 steps) and were counted


# the layout of Isaac Lab 2.3's skrl configs (isaaclab_tasks/.../agents/skrl_ppo_cfg.yaml), small sizes
ISAAC_LAB_PPO_CFG = {
    "seed": 42,
    "models": {
        "separate": False,
        "policy": {
            "class": "GaussianMixin",
            "clip_actions": False,
            "clip_log_std": True,
            "min_log_std": -20.0,
            "max_log_std": 2.0,
            "initial_log_std": 0.0,
            "network": [{"name": "net", "input": "OBSERVATIONS", "layers": [32, 32], "activations": "elu"}],
            "output": "ACTIONS",
        },
        "value": {
            "class": "DeterministicMixin",
            "clip_actions": False,
            "network": [{"name": "net", "input": "STATES", "layers": [32, 32], "activations": "elu"}],
            "output": "ONE",
        },
    },
    "memory": {"class": "RandomMemory", "memory_size": -1},
    "agent": {
        "class": "PPO",
        "rollouts": 16,
        "learning_epochs": 2,
        "mini_batches": 2,
        "discount_factor": 0.99,
        "lambda": 0.95,
        "learning_rate": 3.0e-04,
        "learning_rate_scheduler": "KLAdaptiveLR",
        "learning_rate_scheduler_kwargs": {"kl_threshold": 0.008},
        "state_preprocessor": "RunningStandardScaler",
        "state_preprocessor_kwargs": None,
        "value_preprocessor": "RunningStandardScaler",
        "value_preprocessor_kwargs": None,
        "random_timesteps": 0,
        "learning_starts": 0,
        "grad_norm_clip": 1.0,
        "ratio_clip": 0.2,
        "value_clip": 0.2,
        "clip_predicted_values": True,
        "entropy_loss_scale": 0.0,
        "value_loss_scale": 1.0,
        "kl_threshold": 0.0,
        "rewards_shaper_scale": 0.6,
        "time_limit_bootstrap": False,
        "experiment": {"directory": "", "experiment_name": "", "write_interval": "auto", "checkpoint_interval": 0},
    },
    "trainer": {"class": "SequentialTrainer", "timesteps": 64, "environment_info": "log"},
}


def test_the_runner_builds_and_trains_an_isaac_lab_skrl_config_on_the_stand_in(tmp_path):
    cfg = copy.deepcopy(ISAAC_LAB_PPO_CFG)
    cfg["agent"]["experiment"]["directory"] = str(tmp_path)
    cfg["trainer"].update(QUIET_TRAINER)
    env = wrap_env(IsaacLabStandInEnv(num_envs=8, state_size=64), verbose=False)
    runner = Runner(env, cfg)
    agent = runner.agent
    assert isinstance(agent, PPO) and agent.models["policy"] is agent.models["value"]
    assert agent.memory.memory_size == 16 and agent.memory.num_envs == 8
    assert agent._state_preprocessor.running_mean.shape == (60,)  # the policy group, not the critic group
    assert agent.cfg["rewards_shaper"](torch.tensor([1.0]), 0, 1).item() == pytest.approx(0.6)
    before = [parameter.detach().clone() for parameter in agent.models["policy"].parameters()]
    runner.run("train")
    after = list(agent.models["policy"].parameters())
    assert all(torch.isfinite(parameter).all() for parameter in after)
    assert any(not torch.equal(b, a) for b, a in zip(before, after))


def test_the_example_trains_through_the_runner(tmp_path):
    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / "torch" / "ppo_isaaclab_standin.py"
    result = subprocess.run(
        [sys.executable, str(example), "--timesteps", "160", "--num-envs", "4"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Mean step reward: first write" in result.stdout
    assert (tmp_path / "runs" / "torch" / "isaaclab_standin").is_dir()


def test_mappo_trains_on_a_wrapped_multi_agent_env_through_the_runner(tmp_path):
    """The multi-agent trainer loop on the wrapper: reset once, state() as MAPPO's shared value input."""

    class BoxActions(MultiAgentEnv):
        def __init__(self):
            super().__init__(num_envs=4)
            self.action_spaces = {"a": gymnasium.spaces.Box(-1, 1, (2,)), "b": gymnasium.spaces.Box(-1, 1, (1,))}

    network = [{"name": "net", "input": "STATES", "layers": [16], "activations": "elu"}]
    cfg = {
        "seed": 1,
        "models": {
            "separate": True,
            "policy": {"class": "GaussianMixin", "network": network, "output": "ACTIONS"},
            "value": {"class": "DeterministicMixin", "network": network, "output": "ONE"},
        },
        "memory": {"class": "RandomMemory", "memory_size": -1},
        "agent": {
            "class": "MAPPO",
            "rollouts": 8,
            "learning_epochs": 1,
            "mini_batches": 1,
            "experiment": {"directory": str(tmp_path), "write_interval": 0, "checkpoint_interval": 0},
        },
        "trainer": {"class": "SequentialTrainer", "timesteps": 16, **QUIET_TRAINER},
    }
    env = BoxActions()
    runner = Runner(wrap_env(env, wrapper="isaaclab", verbose=False), cfg)
    value = runner.agent.models["a"]["value"]
    assert value.observation_space == env.state_space  # MAPPO's value reads the env's state()
    before = [parameter.detach().clone() for parameter in value.parameters()]
    runner.run("train")
    assert env.resets == 1 and len(env.received) == 16
    assert any(not torch.equal(b, a) for b, a in zip(before, value.parameters()))  # two updates ran


def test_the_isaac_lab_shaped_benchmark_prints_its_json_line():
    script = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "isaaclab_standin_ppo.py"
    result = subprocess.run(
        [sys.executable, str(script), "--num-envs", "8", "--timesteps", "16"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    line = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["benchmark"] == "isaaclab_standin_ppo" and line["num_envs"] == 8 and line["env_steps_per_second"] > 0
    assert line["last_mean_step_reward"] is not None  # one write at timestep 16
