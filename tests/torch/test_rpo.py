"""RPO (torch): config, alpha in every model call, one update against an independent reference with the
perturbations the policy drew, save/load, determinism and bad input."""

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn

from skrl_like.torch.agents.ppo import PPO_DEFAULT_CONFIG
from skrl_like.torch.agents.rpo import RPO, RPO_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.torch.models import record_rollout

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (3,))
ACTIONS = gymnasium.spaces.Box(-2.0, 2.0, (1,))  # Pendulum's


class Policy(GaussianMixin, Model):
    """The spec's RPO policy: the mean action perturbed by U(-alpha, alpha); every draw is recorded."""

    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 16), nn.Tanh(), nn.Linear(16, self.num_actions))
        self.log_std_parameter = nn.Parameter(torch.full((self.num_actions,), -0.5))
        self.draws = []  # (unperturbed mean, perturbation) of every call

    def compute(self, inputs, role):
        mean = self.net(inputs["states"])
        alpha = inputs.get("alpha", 0.0)
        perturbation = torch.empty_like(mean).uniform_(-alpha, alpha)
        self.draws.append((mean.detach().clone(), perturbation.clone()))
        return mean + perturbation, self.log_std_parameter, {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space=OBSERVATIONS, action_space=ACTIONS, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 16), nn.Tanh(), nn.Linear(16, 1))
        self.alphas = []  # inputs["alpha"] of every call

    def compute(self, inputs, role):
        self.alphas.append(inputs.get("alpha"))
        return self.net(inputs["states"]), {}


def make_rpo(rollouts=8, num_envs=2, memory_size=None, action_space=ACTIONS, **cfg):
    cfg = {**RPO_DEFAULT_CONFIG, "rollouts": rollouts, "experiment": NO_FILES, **cfg}
    models = {"policy": Policy(), "value": Value()}
    agent = RPO(
        models=models,
        memory=RandomMemory(memory_size=memory_size or rollouts, num_envs=num_envs, device="cpu"),
        cfg=cfg,
        observation_space=OBSERVATIONS,
        action_space=action_space,
        device="cpu",
    )
    models["policy"].draws.clear()  # the construction's output-size check called the models once
    models["value"].alphas.clear()
    return agent


def pendulum(num_envs=2):
    return wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def test_the_default_config_is_ppos_plus_alpha():
    assert RPO_DEFAULT_CONFIG["alpha"] == 0.5
    assert {key: value for key, value in RPO_DEFAULT_CONFIG.items() if key != "alpha"} == PPO_DEFAULT_CONFIG
    assert list(RPO_DEFAULT_CONFIG)[:4] == ["rollouts", "learning_epochs", "mini_batches", "alpha"]


def _record_rollout(agent, rng, rollouts, num_envs):
    data = {
        "states": rng.normal(size=(rollouts + 1, num_envs, 3)).astype(np.float32),
        "actions": rng.uniform(-2, 2, size=(rollouts, num_envs, 1)).astype(np.float32),
        "rewards": rng.normal(size=(rollouts, num_envs, 1)).astype(np.float32),
        "terminated": rng.random((rollouts, num_envs, 1)) < 0.2,
    }
    record_rollout(agent, data)
    return data


def test_one_update_matches_the_clipped_surrogate_with_the_perturbed_means_the_policy_drew():
    set_seed(0)
    rollouts, num_envs, alpha = 6, 2, 0.3
    agent = make_rpo(
        rollouts, num_envs, alpha=alpha, learning_epochs=1, mini_batches=1, grad_norm_clip=0.0, value_loss_scale=0.5
    )
    agent.init(trainer_cfg={"timesteps": rollouts})
    value_params = [p.detach().clone() for p in agent.value.net.parameters()]
    data = _record_rollout(agent, np.random.default_rng(1), rollouts, num_envs)
    agent._update(timestep=rollouts - 1, timesteps=rollouts)

    # the policy was called once per stored step (log pi_old of actions act did not give: computed when stored),
    # then once for the update's mini-batch, each with its own draw
    assert len(agent.policy.draws) == rollouts + 1
    old_mean, old_noise = (torch.cat(parts) for parts in zip(*agent.policy.draws[:rollouts]))
    new_mean, new_noise = agent.policy.draws[rollouts]
    for noise in (old_noise, new_noise):
        assert noise.abs().max() <= alpha  # the perturbed mean stays within alpha of the network's mean
        assert noise.abs().max() > alpha / 2 and noise.std() > alpha / 4  # and is really perturbed
    assert not torch.equal(old_noise, new_noise)
    torch.testing.assert_close(old_mean, new_mean)  # same weights: only the perturbation differs

    std = np.exp(-0.5)
    actions = torch.from_numpy(data["actions"].reshape(-1, 1))
    old_log_prob = torch.distributions.Normal(old_mean + old_noise, std).log_prob(actions).sum(-1, keepdim=True)
    new_log_prob = torch.distributions.Normal(new_mean + new_noise, std).log_prob(actions).sum(-1, keepdim=True)

    def value(x):
        return torch.tanh(x @ value_params[0].T + value_params[1]) @ value_params[2].T + value_params[3]

    states = torch.from_numpy(data["states"])
    values, last_values = value(states[:-1]).numpy(), value(states[-1]).numpy()
    rewards, dones = data["rewards"], data["terminated"].astype(np.float32)
    advantages, running = np.zeros_like(rewards), np.zeros_like(last_values)
    for t in reversed(range(rollouts)):
        next_values = values[t + 1] if t + 1 < rollouts else last_values
        running = rewards[t] - values[t] + 0.99 * (1 - dones[t]) * (next_values + 0.95 * running)
        advantages[t] = running
    returns = torch.from_numpy((advantages + values).reshape(-1, 1))
    advantages = torch.from_numpy(((advantages - advantages.mean()) / (advantages.std(ddof=1) + 1e-8)).reshape(-1, 1))
    ratio = torch.exp(new_log_prob - old_log_prob)
    expected_policy_loss = -torch.min(advantages * ratio, advantages * ratio.clamp(0.8, 1.2)).mean()
    expected_value_loss = 0.5 * ((returns - value(states[:-1].reshape(-1, 3))) ** 2).mean()

    assert float(agent.tracking_data["Loss / Policy loss"][0]) == pytest.approx(expected_policy_loss.item(), abs=1e-5)
    assert float(agent.tracking_data["Loss / Value loss"][0]) == pytest.approx(expected_value_loss.item(), abs=1e-5)


def test_alpha_reaches_every_policy_and_value_call_while_acting_and_learning():
    set_seed(0)
    env = pendulum()
    agent = make_rpo(rollouts=4, alpha=0.25, learning_epochs=2, mini_batches=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 8}).train()
    # 8 acting calls (their log pi_old is kept for the update) + per update: 2 epochs x 2 mini-batches
    assert len(agent.policy.draws) == 8 + 2 * 4
    assert all(noise.abs().max() <= 0.25 and noise.abs().max() > 0 for _, noise in agent.policy.draws)
    # per update (a separate value model is not called while acting): the rollout's and the last next states' values
    # in one batch + 4 mini-batches
    assert agent.value.alphas == [0.25] * (2 * (1 + 4))


def test_save_load_round_trip_gives_identical_means(tmp_path):
    set_seed(0)
    env = pendulum()
    first = make_rpo(rollouts=4)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 8}).train()
    path = str(tmp_path / "agent.pt")
    first.save(path)
    assert set(torch.load(path, weights_only=False)) == {"policy", "value", "optimizer"}

    second = make_rpo(rollouts=4)
    second.init(trainer_cfg={"timesteps": 1})
    second.load(path)
    states = torch.randn(5, 3)
    torch.testing.assert_close(first.policy.net(states), second.policy.net(states), rtol=0, atol=0)
    torch.testing.assert_close(first.policy.log_std_parameter, second.policy.log_std_parameter, rtol=0, atol=0)


def _short_run_losses(seed):
    set_seed(seed)
    env = pendulum()
    env._env.reset(seed=seed)
    agent = make_rpo(rollouts=4, learning_epochs=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 12}).train()
    return [float(v) for v in agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]]


def test_a_fixed_seed_gives_identical_losses_perturbations_included():
    first, second = _short_run_losses(5), _short_run_losses(5)
    assert len(first) == 6 and first == second
    assert _short_run_losses(6) != first


# -- bad input --------------------------------------------------------------------------------------------------


def test_memory_size_must_equal_rollouts_and_the_error_names_rpo():
    agent = make_rpo(rollouts=8, memory_size=16)
    with pytest.raises(ValueError, match=r"RPO: the memory holds 16 steps but cfg\['rollouts'\] is 8"):
        agent.init(trainer_cfg={"timesteps": 10})


def test_a_discrete_action_space_is_rejected_with_the_fix():
    with pytest.raises(ValueError, match=r"RPO: the action space Discrete\(3\) is not a Box.*use PPO"):
        make_rpo(action_space=gymnasium.spaces.Discrete(3))


def test_unknown_cfg_key_names_rpo_and_the_close_match():
    with pytest.raises(ValueError, match="Unknown key 'alfa' in RPO cfg. Did you mean 'alpha'"):
        make_rpo(alfa=0.1)
    with pytest.raises(ValueError, match="alpha"):
        make_rpo(alpha=-0.1)
