"""A2C (torch): config, one update against an independent reference, the KL scheduler, save/load, determinism,
bad input and one short learning run."""

import numpy as np
import pytest
import torch

from skrl_like.torch.agents.a2c import A2C, A2C_DEFAULT_CONFIG
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.resources.schedulers import KLAdaptiveLR
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.torch.models import CategoricalMlp, SharedCategoricalValue, ValueMlp, record_rollout, vector_cartpole

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}

# the keys and defaults of the spec's table (agents.md, 4.1)
SPEC_DEFAULTS = {
    "rollouts": 16,
    "mini_batches": 1,
    "discount_factor": 0.99,
    "lambda": 0.95,
    "learning_rate": 1e-3,
    "learning_rate_scheduler": None,
    "learning_rate_scheduler_kwargs": {},
    "state_preprocessor": None,
    "state_preprocessor_kwargs": {},
    "value_preprocessor": None,
    "value_preprocessor_kwargs": {},
    "random_timesteps": 0,
    "learning_starts": 0,
    "grad_norm_clip": 0.5,
    "entropy_loss_scale": 0.0,
    "rewards_shaper": None,
    "time_limit_bootstrap": False,
    "mixed_precision": False,
}


def make_a2c(env, rollouts=16, memory_size=None, **cfg):
    cfg = {**A2C_DEFAULT_CONFIG, "rollouts": rollouts, "experiment": NO_FILES, **cfg}
    models = {
        "policy": CategoricalMlp(env.observation_space, env.action_space),
        "value": ValueMlp(env.observation_space, env.action_space),
    }
    memory = RandomMemory(memory_size=memory_size or rollouts, num_envs=env.num_envs, device="cpu")
    return A2C(
        models=models,
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
    )


def test_the_default_config_has_the_spec_keys_and_defaults():
    assert {key: A2C_DEFAULT_CONFIG[key] for key in SPEC_DEFAULTS} == SPEC_DEFAULTS
    # beside skrl 1.4's keys, the privileged states' preprocessor (skrl 2.x's state_preprocessor)
    privileged = {"privileged_state_preprocessor", "privileged_state_preprocessor_kwargs"}
    assert set(A2C_DEFAULT_CONFIG) == set(SPEC_DEFAULTS) | {"experiment"} | privileged


# -- one update against an independent reference --------------------------------------------------------------


def _fill_rollout(agent, rng, rollouts, num_envs):
    """Record a hand-made rollout (random states, actions, rewards and episode ends); returns its arrays."""
    data = {
        "states": rng.normal(size=(rollouts + 1, num_envs, 4)).astype(np.float32),
        "actions": rng.integers(0, 2, size=(rollouts, num_envs, 1)).astype(np.float32),
        "rewards": rng.normal(size=(rollouts, num_envs, 1)).astype(np.float32),
        "terminated": rng.random((rollouts, num_envs, 1)) < 0.2,
    }
    record_rollout(agent, data)
    return data


def _reference_gae(rewards, values, last_values, dones, gamma, lam):
    """GAE in NumPy, written from the equations (spec 3.2)."""
    advantages = np.zeros_like(rewards)
    running = np.zeros_like(last_values)
    for t in reversed(range(len(rewards))):
        next_values = values[t + 1] if t + 1 < len(rewards) else last_values
        running = rewards[t] - values[t] + gamma * (1 - dones[t]) * (next_values + lam * running)
        advantages[t] = running
    returns = advantages + values
    advantages = (advantages - advantages.mean()) / (advantages.std(ddof=1) + 1e-8)
    return returns, advantages


def test_one_update_matches_the_a2c_loss_and_one_adam_step_computed_by_hand():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    rollouts, num_envs, lr = 6, 3, 1e-2
    env = vector_cartpole(num_envs)
    agent = make_a2c(
        env,
        rollouts=rollouts,
        learning_rate=lr,
        grad_norm_clip=0.0,
        entropy_loss_scale=0.05,
        discount_factor=0.9,
        **{"lambda": 0.7},
    )
    agent.init(trainer_cfg={"timesteps": rollouts})
    policy_net = [p.detach().clone().requires_grad_() for p in agent.policy.net.parameters()]
    value_net = [p.detach().clone().requires_grad_() for p in agent.value.net.parameters()]
    data = _fill_rollout(agent, rng, rollouts, num_envs)
    agent._update(timestep=rollouts - 1, timesteps=rollouts)

    def forward(params, x):
        return torch.tanh(x @ params[0].T + params[1]) @ params[2].T + params[3]

    states = torch.from_numpy(data["states"])
    with torch.no_grad():
        values = forward(value_net, states[:-1]).numpy()
        last_values = forward(value_net, states[-1]).numpy()
    returns, advantages = _reference_gae(
        data["rewards"], values, last_values, data["terminated"].astype(np.float32), 0.9, 0.7
    )
    flat_states = states[:-1].reshape(-1, 4)
    distribution = torch.distributions.Categorical(logits=forward(policy_net, flat_states))
    log_prob = distribution.log_prob(torch.from_numpy(data["actions"]).reshape(-1).long()).reshape(-1, 1)
    policy_loss = -(torch.from_numpy(advantages.reshape(-1, 1)) * log_prob).mean()
    entropy_loss = -0.05 * distribution.entropy().mean()
    value_loss = ((torch.from_numpy(returns.reshape(-1, 1)) - forward(value_net, flat_states)) ** 2).mean()

    tracked = agent.tracking_data
    assert float(tracked["Loss / Policy loss"][0]) == pytest.approx(policy_loss.item(), abs=1e-6)
    assert float(tracked["Loss / Value loss"][0]) == pytest.approx(value_loss.item(), abs=1e-6)
    assert float(tracked["Loss / Entropy loss"][0]) == pytest.approx(entropy_loss.item(), abs=1e-6)

    # one joint Adam step on the sum of the three terms: the first step moves each weight by lr * g / (|g| + eps)
    (policy_loss + entropy_loss + value_loss).backward()
    for before, after in zip(policy_net + value_net, [*agent.policy.net.parameters(), *agent.value.net.parameters()]):
        expected = before - lr * before.grad / (before.grad.abs() + 1e-8)
        torch.testing.assert_close(after.detach(), expected.detach(), atol=1e-6, rtol=0)


def test_the_state_statistics_are_updated_on_every_mini_batch_of_the_single_pass():
    set_seed(0)
    env = vector_cartpole(num_envs=2)
    agent = make_a2c(
        env,
        rollouts=8,
        mini_batches=4,
        state_preprocessor=RunningStandardScaler,
        state_preprocessor_kwargs={"size": 4},
    )
    agent.init(trainer_cfg={"timesteps": 8})
    data = _fill_rollout(agent, np.random.default_rng(1), 8, 2)
    agent._update(timestep=7, timesteps=8)
    scaler = agent._state_preprocessor
    # one pass over 4 mini-batches of 4 rows: every stored state counted once, none twice
    assert float(scaler.current_count) == pytest.approx(1 + 16)  # the count starts at 1 (skrl)
    # the running mean starts at 0 with that count of 1
    expected_mean = data["states"][:-1].reshape(-1, 4).sum(0) / 17
    np.testing.assert_allclose(scaler.running_mean.numpy(), expected_mean, atol=1e-5)
    assert len(agent.tracking_data["Loss / Policy loss"]) == 1


def test_kl_adaptive_lr_steps_once_per_update_with_the_mean_kl():
    set_seed(0)
    env = vector_cartpole(num_envs=2)
    # a KL threshold of ~0 makes every KL "too high": the rate shrinks by 1.5 once per scheduler step
    agent = make_a2c(
        env,
        rollouts=8,
        mini_batches=4,
        learning_rate_scheduler=KLAdaptiveLR,
        learning_rate_scheduler_kwargs={"kl_threshold": 1e-20},
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 16}).train()
    rates = [float(rate) for rate in agent.tracking_data["Learning / Learning rate"]]
    assert rates == pytest.approx([1e-3 / 1.5, 1e-3 / 1.5**2], rel=1e-6)


def test_a_model_shared_by_policy_and_value_is_optimised_once_per_step():
    set_seed(0)
    env = vector_cartpole()
    model = SharedCategoricalValue(env.observation_space, env.action_space)
    agent = A2C(
        models={"policy": model, "value": model},
        memory=RandomMemory(memory_size=8, num_envs=env.num_envs, device="cpu"),
        cfg={"rollouts": 8, "mini_batches": 2, "experiment": NO_FILES},
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
    )
    assert len(agent.optimizer.param_groups[0]["params"]) == len(list(model.parameters())) == 6
    before = [p.detach().clone() for p in model.parameters()]
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 8}).train()
    assert np.isfinite(float(agent.tracking_data["Loss / Value loss"][0]))
    # both heads and the body moved: the policy and value losses reached the one optimizer
    assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters()))


# -- checkpoints and determinism --------------------------------------------------------------------------------


def test_save_load_round_trip_gives_identical_actions(tmp_path):
    set_seed(0)
    env = vector_cartpole()
    first = make_a2c(env, rollouts=8)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 24}).train()
    path = str(tmp_path / "agent.pt")
    first.save(path)
    assert set(torch.load(path, weights_only=False)) == {"policy", "value", "optimizer"}

    second = make_a2c(env, rollouts=8)
    second.init(trainer_cfg={"timesteps": 1})
    second.load(path)
    states = torch.randn(16, 4)
    torch.testing.assert_close(first.act(states, 0, 1)[2]["net_output"], second.act(states, 0, 1)[2]["net_output"])
    for a, b in zip(first.optimizer.state_dict()["state"].values(), second.optimizer.state_dict()["state"].values()):
        torch.testing.assert_close(a["exp_avg"], b["exp_avg"])


def _short_run_losses(seed):
    set_seed(seed)
    env = vector_cartpole()
    env._env.reset(seed=seed)
    agent = make_a2c(env, rollouts=8, mini_batches=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 32}).train()
    return [float(v) for v in agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]]


def test_a_fixed_seed_gives_identical_losses():
    first, second = _short_run_losses(5), _short_run_losses(5)
    assert len(first) == 8 and first == second
    assert _short_run_losses(6) != first


# -- bad input --------------------------------------------------------------------------------------------------


def test_memory_size_must_equal_rollouts_and_the_error_names_a2c():
    agent = make_a2c(vector_cartpole(), rollouts=16, memory_size=32)
    with pytest.raises(ValueError, match=r"A2C: the memory holds 32 steps but cfg\['rollouts'\] is 16"):
        agent.init(trainer_cfg={"timesteps": 10})


def test_unknown_cfg_key_names_a2c_and_the_close_match():
    with pytest.raises(ValueError, match="Unknown key 'mini_batch' in A2C cfg. Did you mean 'mini_batches'"):
        make_a2c(vector_cartpole(), mini_batch=4)
    with pytest.raises(ValueError, match="Unknown key 'learning_epochs' in A2C cfg"):
        make_a2c(vector_cartpole(), learning_epochs=4)


def test_a_nan_reward_is_named_before_anything_changes():
    set_seed(0)
    env = vector_cartpole()
    agent = make_a2c(env, rollouts=4, rewards_shaper=lambda rewards, timestep, timesteps: rewards * np.nan)
    before = [p.detach().clone() for p in agent.policy.parameters()]
    with pytest.raises(FloatingPointError, match="A2C.*rollout's rewards contain NaN/inf"):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4}).train()
    for a, b in zip(before, agent.policy.parameters()):
        torch.testing.assert_close(a, b.detach(), rtol=0, atol=0)


# -- learning ---------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a2c_learns_cartpole():
    """A silent break of the algorithm fails the suite: greedy mean return >= 120 within 30k env steps (seed 42 gives
    ~178, seeds 0 and 1 157 and 500; an untrained policy ~10-40)."""
    from examples import load_example

    make_agent = load_example("torch", "a2c_cartpole").make_agent
    torch.set_num_threads(1)
    set_seed(42)
    env = vector_cartpole(num_envs=8)
    env._env.reset(seed=42)
    agent = make_agent(env, experiment=NO_FILES)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 30_000 // 8})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=10)
    assert np.mean(returns) >= 120, returns
