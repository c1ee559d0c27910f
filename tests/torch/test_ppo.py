"""PPO (torch): update math, save/load, determinism, bad input, and one short learning run."""

import math
import os
import re

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn

from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.torch.models import CategoricalMlp, SharedCategoricalValue, ValueMlp, vector_cartpole

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


class Policy(CategoricalMlp):
    """This file's categorical policy: 32 hidden units."""

    hidden = 32


class Value(ValueMlp):
    """This file's value model: 32 hidden units."""

    hidden = 32


def make_ppo(env, rollouts=16, policy_class=Policy, **cfg):
    cfg = {**PPO_DEFAULT_CONFIG, "rollouts": rollouts, "experiment": NO_FILES, **cfg}
    models = {
        "policy": policy_class(env.observation_space, env.action_space),
        "value": Value(env.observation_space, env.action_space),
    }
    memory = RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device="cpu")
    return PPO(
        models=models,
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
    )


# -- one update against an independent reference --------------------------------------------------------------


def test_one_update_matches_a_reference_loss_computed_with_torch_distributions():
    set_seed(3)
    env = vector_cartpole(num_envs=2)
    agent = make_ppo(
        env,
        rollouts=8,
        learning_epochs=1,
        mini_batches=1,
        grad_norm_clip=0.0,
        value_loss_scale=0.5,
        discount_factor=0.9,
        **{"lambda": 0.8},
    )
    agent.init(trainer_cfg={"timesteps": 8})
    policy, value = agent.policy, agent.value
    initial_policy = {k: v.clone() for k, v in policy.state_dict().items()}
    initial_value = {k: v.clone() for k, v in value.state_dict().items()}

    states, _ = env.reset()
    acted_log_prob = []
    for timestep in range(8):
        with torch.no_grad():
            actions, log_prob, _ = agent.act(states, timestep, 8)
            acted_log_prob.append(log_prob)
            next_states, rewards, terminated, truncated, infos = env.step(actions)
            agent.record_transition(
                states=states,
                actions=actions,
                rewards=rewards,
                next_states=next_states,
                terminated=terminated,
                truncated=truncated,
                infos=infos,
                timestep=timestep,
                timesteps=8,
            )
        if timestep < 7:
            agent.post_interaction(timestep, 8)  # no update before the rollout is complete
            states = next_states
    memory = agent.memory
    observations = memory.get_tensor_by_name("states").clone()
    taken = memory.get_tensor_by_name("actions").clone()
    # the update recomputes log pi_old(a|s) for the whole rollout: it must equal what act returned
    old_log_prob = torch.stack(acted_log_prob)
    rewards_memory = memory.get_tensor_by_name("rewards").clone()
    dones = memory.get_tensor_by_name("terminated") | memory.get_tensor_by_name("truncated")
    agent.post_interaction(7, 8)  # runs the update

    # reference: recompute everything with fresh copies of the initial networks and torch.distributions
    policy.load_state_dict(initial_policy)
    value.load_state_dict(initial_value)
    with torch.no_grad():
        old_values = value.net(observations)
        last_value = value.net(next_states)
    advantages = torch.zeros_like(rewards_memory)
    running = torch.zeros(2, 1)
    for t in reversed(range(8)):
        next_v = old_values[t + 1] if t < 7 else last_value
        running = rewards_memory[t] - old_values[t] + 0.9 * (~dones[t]) * (next_v + 0.8 * running)
        advantages[t] = running
    returns = (advantages + old_values).view(-1, 1)
    advantages = ((advantages - advantages.mean()) / (advantages.std() + 1e-8)).view(-1, 1)
    logits = policy.net(observations.view(-1, 4))
    new_log_prob = torch.distributions.Categorical(logits=logits).log_prob(taken.view(-1).long()).view(-1, 1)
    ratio = torch.exp(new_log_prob - old_log_prob.view(-1, 1))
    expected_policy_loss = -torch.min(advantages * ratio, advantages * ratio.clamp(0.8, 1.2)).mean()
    expected_value_loss = 0.5 * ((returns - value.net(observations.view(-1, 4))) ** 2).mean()

    assert float(agent.tracking_data["Loss / Policy loss"][0]) == pytest.approx(expected_policy_loss.item(), abs=1e-6)
    assert float(agent.tracking_data["Loss / Value loss"][0]) == pytest.approx(expected_value_loss.item(), abs=1e-6)


def _act_and_record(agent, states, actions=None):
    """One step: act on ``states``, then store ``actions`` (those act sampled when ``None``)."""
    acted, log_prob, _ = agent.act(states, 0, 1)
    stored = acted if actions is None else actions
    agent.record_transition(
        states=states,
        actions=stored,
        rewards=torch.zeros(len(states), 1),
        next_states=states,
        terminated=torch.zeros(len(states), 1, dtype=torch.bool),
        truncated=torch.zeros(len(states), 1, dtype=torch.bool),
        infos={},
        timestep=0,
        timesteps=1,
    )
    return stored, log_prob


def _ppo_on_three_envs():
    set_seed(0)
    agent = make_ppo(vector_cartpole(num_envs=3), rollouts=2)
    agent.init(trainer_cfg={"timesteps": 2})
    return agent, torch.randn(3, 4)


def test_the_acting_pass_log_prob_is_stored_with_its_step_and_separate_values_are_left_to_the_update():
    agent, states = _ppo_on_three_envs()
    calls = []
    agent.value.register_forward_hook(lambda *args: calls.append(1))
    with torch.no_grad():
        _, log_prob = _act_and_record(agent, states)
    torch.testing.assert_close(agent.memory.get_tensor_by_name("log_prob")[0], log_prob, rtol=0, atol=0)
    # a separate value model is not called per step: the update evaluates the rollout's values in one batch
    assert calls == []
    assert "values" not in agent.memory.get_tensor_names()


def test_a_step_stored_with_other_actions_than_act_sampled_gets_their_log_prob():
    agent, states = _ppo_on_three_envs()
    with torch.no_grad():
        acted, _, _ = agent.act(states, 0, 1)
        other = 1 - acted  # CartPole's two actions, swapped
        _act_and_record(agent, states, other)
        logits = agent.policy.net(states)
    expected = torch.distributions.Categorical(logits=logits).log_prob(other.view(-1).long()).view(-1, 1)
    torch.testing.assert_close(agent.memory.get_tensor_by_name("log_prob")[0], expected)


def test_a_shared_model_runs_its_trunk_once_per_acting_step():
    from skrl_like.torch.utils.model_instantiators import shared_model

    set_seed(0)
    env = vector_cartpole(num_envs=3)
    model = shared_model(
        observation_space=env.observation_space,
        action_space=env.action_space,
        structure=["CategoricalMixin", "DeterministicMixin"],
        roles=["policy", "value"],
        parameters=[
            {"network": [{"name": "net", "input": "STATES", "layers": [8], "activations": "elu"}], "output": "ACTIONS"},
            {"output": "ONE"},
        ],
    )
    memory = RandomMemory(memory_size=2, num_envs=3, device="cpu")
    cfg = {**PPO_DEFAULT_CONFIG, "rollouts": 2, "experiment": NO_FILES}
    agent = PPO({"policy": model, "value": model}, memory, env.observation_space, env.action_space, "cpu", cfg)
    agent.init(trainer_cfg={"timesteps": 2})
    calls = []
    model.net_container.register_forward_hook(lambda *args: calls.append(1))
    with torch.no_grad():
        _act_and_record(agent, torch.randn(3, 4))
    assert len(calls) == 1  # the policy's trunk output gave the stored value too
    assert torch.isfinite(agent.memory.get_tensor_by_name("values")[0]).all()


def _parameters_after_updates(compile_update, updates=3):
    """A shared Gaussian/value model (ELU trunk), scalers, entropy, value clipping and KLAdaptiveLR: the policy's
    parameters after ``updates`` updates on one rollout filled by hand."""
    from skrl_like.torch.resources.preprocessors import RunningStandardScaler
    from skrl_like.torch.resources.schedulers import KLAdaptiveLR
    from skrl_like.torch.utils.model_instantiators import shared_model

    set_seed(0)
    observations = gymnasium.spaces.Box(-np.inf, np.inf, (4,))
    actions = gymnasium.spaces.Box(-1.0, 1.0, (2,))
    network = [{"name": "net", "input": "STATES", "layers": [16, 16], "activations": "elu"}]
    model = shared_model(
        observation_space=observations,
        action_space=actions,
        structure=["GaussianMixin", "DeterministicMixin"],
        roles=["policy", "value"],
        parameters=[{"network": network, "output": "ACTIONS"}, {"output": "ONE"}],
    )
    cfg = {
        **PPO_DEFAULT_CONFIG,
        **{"rollouts": 4, "learning_epochs": 2, "mini_batches": 2, "experiment": NO_FILES},
        **{"compile_update": compile_update, "entropy_loss_scale": 0.01, "clip_predicted_values": True},
        **{"state_preprocessor": RunningStandardScaler, "state_preprocessor_kwargs": {"size": observations}},
        **{"value_preprocessor": RunningStandardScaler, "value_preprocessor_kwargs": {"size": 1}},
        **{"learning_rate_scheduler": KLAdaptiveLR, "learning_rate_scheduler_kwargs": {"kl_threshold": 0.008}},
    }
    memory = RandomMemory(memory_size=4, num_envs=8, device="cpu")
    agent = PPO({"policy": model, "value": model}, memory, observations, actions, "cpu", cfg)
    agent.init(trainer_cfg={"timesteps": 4})
    generator = torch.Generator().manual_seed(1)
    for timestep in range(4):
        agent.record_transition(
            states=torch.randn(8, 4, generator=generator),
            actions=torch.rand(8, 2, generator=generator) * 2 - 1,
            rewards=torch.randn(8, 1, generator=generator),
            next_states=torch.randn(8, 4, generator=generator),
            terminated=torch.rand(8, 1, generator=generator) < 0.2,
            truncated=torch.zeros(8, 1, dtype=torch.bool),
            infos={},
            timestep=timestep,
            timesteps=4,
        )
    agent.set_mode("train")
    for _ in range(updates):
        agent._update(3, 4)
    return [parameter.detach().clone() for parameter in model.parameters()]


def test_the_compiled_update_graph_gives_the_eager_updates_parameters():
    # aot_eager: torch.compile's graph capture and compiled autograd without inductor's code generation (fast)
    eager = _parameters_after_updates(False)
    compiled = _parameters_after_updates({"backend": "aot_eager"})
    assert any(not torch.equal(a, b) for a, b in zip(eager, _parameters_after_updates(False, updates=0)))
    for a, b in zip(eager, compiled):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


@pytest.mark.slow
def test_the_inductor_compiled_update_gives_the_eager_updates_parameters():
    eager = _parameters_after_updates(False)
    for a, b in zip(eager, _parameters_after_updates(True)):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)


def test_compile_update_rejects_a_value_that_is_neither_a_flag_nor_compile_options():
    env = vector_cartpole(num_envs=2)
    with pytest.raises(ValueError, match="compile_update.*torch.compile keyword arguments"):
        make_ppo(env, compile_update="max-autotune")


# -- checkpoints ------------------------------------------------------------------------------------------------


def test_save_load_round_trip_gives_identical_actions(tmp_path):
    set_seed(0)
    env = vector_cartpole()
    first = make_ppo(env)
    first.init(trainer_cfg={"timesteps": 100})
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 40}).train()
    path = str(tmp_path / "agent.pt")
    first.save(path)

    second = make_ppo(env)
    second.init(trainer_cfg={"timesteps": 100})
    second.load(path)
    states = torch.randn(16, 4)
    first_logits = first.act(states, 0, 1)[2]["net_output"]
    second_logits = second.act(states, 0, 1)[2]["net_output"]
    torch.testing.assert_close(first_logits, second_logits, rtol=0, atol=0)
    for a, b in zip(first.optimizer.state_dict()["state"].values(), second.optimizer.state_dict()["state"].values()):
        torch.testing.assert_close(a["exp_avg"], b["exp_avg"])


def test_checkpoints_are_written_at_intervals_with_a_best_agent(tmp_path):
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(
        env,
        experiment={
            "directory": str(tmp_path),
            "experiment_name": "run",
            "write_interval": 10,
            "checkpoint_interval": 20,
        },
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 60}).train()
    files = sorted(os.listdir(tmp_path / "run" / "checkpoints"))
    # skrl's per-agent files, beside the full-state run checkpoints (the last checkpoint_keep=3 and the best)
    assert files == [
        "agent_20.pt",
        "agent_40.pt",
        "agent_60.pt",
        "best_agent.pt",
        "run_20.ckpt",
        "run_40.ckpt",
        "run_60.ckpt",
        "run_best.ckpt",
    ]
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(tmp_path / "run"))
    state = torch.load(tmp_path / "run" / "checkpoints" / "agent_60.pt", weights_only=False)
    assert set(state) == {"policy", "value", "optimizer"}


def test_loading_a_corrupt_checkpoint_names_the_file(tmp_path):
    agent = make_ppo(vector_cartpole())
    path = tmp_path / "agent.pt"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="could not be read.*corrupt"):
        agent.load(str(path))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        agent.load(str(tmp_path / "missing.pt"))


def test_loading_a_checkpoint_of_another_architecture_names_the_module(tmp_path):
    env = vector_cartpole()
    path = str(tmp_path / "agent.pt")
    make_ppo(env).save(path)

    class WidePolicy(Policy):
        def __init__(self, observation_space, action_space, device="cpu"):
            super().__init__(observation_space, action_space, device)
            self.net = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 2))

    with pytest.raises(ValueError, match="does not match this agent's 'policy' module"):
        make_ppo(env, policy_class=WidePolicy).load(path)


# -- determinism ------------------------------------------------------------------------------------------------


def _short_run_losses(seed):
    set_seed(seed)
    env = vector_cartpole()
    env._env.reset(seed=seed)  # the wrapper never seeds the env (skrl behaviour): seed it once here
    agent = make_ppo(env, learning_epochs=2)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 48})
    trainer.train()
    return [float(v) for v in agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]]


def test_a_fixed_seed_gives_identical_losses():
    first, second = _short_run_losses(5), _short_run_losses(5)
    assert len(first) == 6 and first == second
    assert _short_run_losses(6) != first


# -- bad input --------------------------------------------------------------------------------------------------


def test_unknown_cfg_key_suggests_the_close_match():
    with pytest.raises(ValueError, match="Unknown key 'mini_batch' in PPO cfg. Did you mean 'mini_batches'"):
        make_ppo(vector_cartpole(), mini_batch=4)


def test_missing_value_model_is_named():
    env = vector_cartpole()
    with pytest.raises(ValueError, match=r"PPO needs a model for role\(s\) \['value'\]; got models for \['policy'\]"):
        PPO(
            models={"policy": Policy(env.observation_space, env.action_space)},
            memory=None,
            observation_space=env.observation_space,
            action_space=env.action_space,
            device="cpu",
        )


def test_model_built_for_another_observation_space_is_rejected():
    env = vector_cartpole()
    with pytest.raises(ValueError, match="'value' model was built for an observation space of size 3"):
        PPO(
            models={
                "policy": Policy(env.observation_space, env.action_space),
                "value": Value(gymnasium.spaces.Box(-1, 1, (3,)), env.action_space),
            },
            observation_space=env.observation_space,
            action_space=env.action_space,
            device="cpu",
        )


def test_memory_size_must_equal_rollouts():
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=16)
    agent.memory = RandomMemory(memory_size=32, num_envs=4, device="cpu")
    with pytest.raises(ValueError, match="memory holds 32 steps but cfg\\['rollouts'\\] is 16"):
        agent.init(trainer_cfg={"timesteps": 10})


def test_nan_rewards_stop_the_update_with_a_clear_error():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4, rewards_shaper=lambda rewards, timestep, timesteps: rewards * math.nan)
    with pytest.raises(
        FloatingPointError,
        match="rollout's rewards contain NaN/inf .the environment or cfg.'rewards_shaper'. produced them",
    ):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4}).train()


def test_nan_value_estimates_stop_the_update_before_any_weight_changes():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4)
    with torch.no_grad():
        for parameter in agent.value.parameters():
            parameter.fill_(math.nan)
    policy_before = [p.detach().clone() for p in agent.policy.parameters()]
    with pytest.raises(FloatingPointError, match="rollout's values contain NaN/inf .the value model"):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4}).train()
    for before, after in zip(policy_before, agent.policy.parameters()):
        torch.testing.assert_close(before, after, rtol=0, atol=0)


# -- agents_scope with real agents -------------------------------------------------------------------------------


def test_two_ppo_agents_share_one_vector_env():
    set_seed(0)
    env = vector_cartpole(num_envs=6)

    def models():
        return {
            "policy": Policy(env.observation_space, env.action_space),
            "value": Value(env.observation_space, env.action_space),
        }

    agents = [
        PPO(
            models=models(),
            memory=RandomMemory(memory_size=8, num_envs=n, device="cpu"),
            cfg={"rollouts": 8, "experiment": NO_FILES},
            observation_space=env.observation_space,
            action_space=env.action_space,
            device="cpu",
        )
        for n in (2, 4)
    ]
    SequentialTrainer(env=env, agents=agents, agents_scope=[2, 4], cfg={**QUIET, "timesteps": 16}).train()
    assert agents[0].memory.get_tensor_by_name("states").shape == (8, 2, 4)
    assert agents[1].memory.get_tensor_by_name("states").shape == (8, 4, 4)
    for agent in agents:  # both learned (two updates each)
        assert len(agent.tracking_data["Loss / Policy loss"]) == 2
        assert all(math.isfinite(float(loss)) for loss in agent.tracking_data["Loss / Value loss"])


# -- learning ---------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ppo_learns_cartpole_within_20k_steps():
    """A silent break of the algorithm fails the suite: mean return >= 150 within 20k env steps."""
    from examples import load_example

    make_agent = load_example("torch", "ppo_cartpole").make_agent
    torch.set_num_threads(1)
    set_seed(42)
    env = vector_cartpole(num_envs=8)
    env._env.reset(seed=42)
    agent = make_agent(env, experiment=NO_FILES)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 20_000 // 8})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=10)
    assert np.mean(returns) >= 150, returns


def test_a_tuple_of_memories_feeds_every_secondary_memory():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4)
    primary, secondary = agent.memory, RandomMemory(memory_size=8, num_envs=4, device="cpu")
    secondary.create_tensor("rewards", 1)
    agent = PPO(
        models=agent.models,
        memory=(primary, secondary),
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
        cfg={"rollouts": 4, "experiment": NO_FILES},
    )
    assert agent.memory is primary and agent.secondary_memories == [secondary]
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 3}).train()
    assert len(secondary) == 3 * 4 and torch.equal(secondary.get_tensor_by_name("rewards")[:3], torch.ones(3, 4, 1))


def test_random_timesteps_give_the_log_probability_of_the_random_action_taken():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4, random_timesteps=4)
    agent.init(trainer_cfg={"timesteps": 8})
    states = torch.randn(64, 4)
    actions, log_prob, _ = agent.act(states, timestep=0, timesteps=8)
    with torch.no_grad():
        reference = torch.log_softmax(agent.policy.net(states), dim=-1).gather(-1, actions.long())
    torch.testing.assert_close(log_prob, reference)
    # random actions: with 64 samples from a near-uniform policy both classes occur
    assert set(actions.view(-1).tolist()) == {0, 1}


# -- the agent's own cadence and guards ---------------------------------------------------------------------------


def drive(agent, env, steps, timesteps=None):
    """The README's third way: act, step, record, post_interaction by hand."""
    timesteps = timesteps or steps
    states, _ = env.reset()
    for timestep in range(steps):
        agent.pre_interaction(timestep, timesteps)
        with torch.no_grad():
            actions = agent.act(states, timestep, timesteps)[0]
        next_states, rewards, terminated, truncated, infos = env.step(actions)
        agent.record_transition(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        )
        agent.post_interaction(timestep, timesteps)
        states = next_states


def count_steps(agent):
    steps = []
    original = agent.optimizer.step

    def step(*args, **kwargs):
        steps.append(1)
        return original(*args, **kwargs)

    agent.optimizer.step = step
    return steps


def test_an_agent_in_eval_mode_never_updates_in_a_manual_loop():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4)
    agent.init(trainer_cfg={"timesteps": 12})
    before = [p.detach().clone() for p in agent.policy.parameters()]
    agent.set_running_mode("eval")
    drive(agent, env, 12)
    assert "Loss / Policy loss" not in agent.tracking_data
    for old, new in zip(before, agent.policy.parameters()):
        torch.testing.assert_close(old, new, rtol=0, atol=0)
    agent.set_running_mode("train")
    drive(agent, env, 4)
    assert len(agent.tracking_data["Loss / Policy loss"]) == 1


def test_kl_threshold_stops_each_epoch_at_the_first_mini_batch_over_it():
    set_seed(0)
    env = vector_cartpole()
    # the first mini-batch has ratio 1 (KL 0) and steps; every later one has KL > 1e-12 and stops its epoch
    agent = make_ppo(env, rollouts=8, learning_epochs=4, mini_batches=4, kl_threshold=1e-12)
    agent.init(trainer_cfg={"timesteps": 8})
    steps = count_steps(agent)
    drive(agent, env, 8)
    assert len(steps) == 1
    unlimited = make_ppo(env, rollouts=8, learning_epochs=4, mini_batches=4)
    unlimited.init(trainer_cfg={"timesteps": 8})
    steps = count_steps(unlimited)
    drive(unlimited, env, 8)
    assert len(steps) == 16


def test_learning_starts_delays_the_first_update():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4, learning_starts=6)
    agent.init(trainer_cfg={"timesteps": 12})
    drive(agent, env, 12)
    # rollouts complete at timesteps 3, 7 and 11; the one at 3 comes before learning_starts
    assert len(agent.tracking_data["Loss / Policy loss"]) == 2


def test_mixed_precision_runs_forward_passes_under_autocast_on_cpu():
    seen = []

    class SpyValue(Value):
        def compute(self, inputs, role):
            seen.append(torch.is_autocast_enabled("cpu"))
            return super().compute(inputs, role)

    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4, mixed_precision=True)
    agent.value = agent.models["value"] = agent.checkpoint_modules["value"] = SpyValue(
        env.observation_space, env.action_space
    )
    agent._trainable_parameters = list(agent.policy.parameters()) + list(agent.value.parameters())
    agent.optimizer = torch.optim.Adam(agent._trainable_parameters, lr=1e-3)
    agent.init(trainer_cfg={"timesteps": 4})
    before = [p.detach().clone() for p in agent.value.parameters()]
    seen.clear()
    drive(agent, env, 4)
    assert seen and all(seen)
    assert math.isfinite(float(agent.tracking_data["Loss / Value loss"][0]))
    assert any(not torch.equal(old, new) for old, new in zip(before, agent.value.parameters()))


EDGE_CFG = dict(
    rollouts=1,
    learning_epochs=1,
    mini_batches=1,
    discount_factor=0.0,
    learning_rate=1e-10,
    grad_norm_clip=0.0,
    ratio_clip=0.0,
    value_clip=0.0,
    entropy_loss_scale=0.0,
    value_loss_scale=0.0,
    kl_threshold=0.0,
    **{"lambda": 0.0},
)


@pytest.mark.parametrize("shared", [False, True])
def test_a_one_sample_rollout_at_the_edges_of_every_range_trains(shared):
    set_seed(0)
    env = vector_cartpole(num_envs=1)
    if shared:
        model = SharedCategoricalValue(env.observation_space, env.action_space)
        models = {"policy": model, "value": model}
    else:
        models = {
            "policy": Policy(env.observation_space, env.action_space),
            "value": Value(env.observation_space, env.action_space),
        }
    agent = PPO(
        models=models,
        memory=RandomMemory(memory_size=1, num_envs=1, device="cpu"),
        cfg={**EDGE_CFG, "experiment": NO_FILES},
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
    )
    agent.init(trainer_cfg={"timesteps": 6})
    drive(agent, env, 6)
    losses = agent.tracking_data["Loss / Policy loss"]
    assert len(losses) == 6 and all(math.isfinite(float(loss)) for loss in losses)


def test_a_parameter_that_goes_non_finite_in_the_update_is_named():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4)
    agent.init(trainer_cfg={"timesteps": 8})
    original = agent.optimizer.step

    def corrupting_step(*args, **kwargs):
        result = original(*args, **kwargs)
        with torch.no_grad():
            agent.policy.net[2].bias[0] = math.nan
        return result

    agent.optimizer.step = corrupting_step
    with pytest.raises(
        FloatingPointError,
        match="the parameters after the optimizer step of mini-batch 0 .epoch 0. .non-finite now: parameter 'net.*' of the policy model.*the optimizer step produced them",
    ):
        drive(agent, env, 4)


@pytest.mark.parametrize("outputs", [1, 3])
def test_a_categorical_policy_with_the_wrong_number_of_outputs_is_rejected(outputs):
    class Narrow(Policy):
        def __init__(self, observation_space, action_space, device="cpu"):
            super().__init__(observation_space, action_space, device)
            self.net[2] = nn.Linear(32, outputs)

    env = vector_cartpole()
    with pytest.raises(
        ValueError, match=f"'policy' model .Narrow, categorical outputs. produces {outputs} outputs.*needs 2"
    ):
        make_ppo(env, policy_class=Narrow)


def test_a_value_model_with_more_than_one_output_is_rejected():
    class Wide(Value):
        def __init__(self, observation_space, action_space, device="cpu"):
            super().__init__(observation_space, action_space, device)
            self.net[2] = nn.Linear(32, 2)

    env = vector_cartpole()
    with pytest.raises(ValueError, match="'value' model .Wide.* produces 2 outputs.*needs 1"):
        PPO(
            models={
                "policy": Policy(env.observation_space, env.action_space),
                "value": Wide(env.observation_space, env.action_space),
            },
            memory=RandomMemory(memory_size=16, num_envs=4, device="cpu"),
            observation_space=env.observation_space,
            action_space=env.action_space,
            device="cpu",
        )


@pytest.mark.parametrize(
    "key, value, fix",
    [
        ("learning_rate", "1e-3", "pass the number 0.001, not the string '1e-3'"),
        ("learning_rate", -1, "set it to a number >= 0.0"),
        ("discount_factor", 1.5, "set it to a number >= 0.0 and <= 1.0"),
        ("rollouts", 3.0, "pass the int 3"),
        ("mini_batches", 0, "set it to an int >= 1"),
        ("clip_predicted_values", "yes", "set it to True or False"),
        ("experiment", {"write_interval": -5}, "set it to 'auto' or an int >= 0"),
    ],
)
def test_config_values_are_checked_with_the_fix_named(key, value, fix):
    env = vector_cartpole()
    with pytest.raises(ValueError, match=f"PPO cfg.*{key}.* must be .*{re.escape(fix)}"):
        make_ppo(env, **{key: value})


def test_kl_early_stopping_at_the_first_mini_batch_of_every_epoch_skips_the_update_without_error():
    # found by tests/torch/test_ppo_properties.py: with no optimizer step at all the update stacked an empty list.
    # The state statistics move in the first epoch, so the KL of the first mini-batch is > 0 > 1e-20: every epoch stops
    from skrl_like.torch.resources.preprocessors import RunningStandardScaler

    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(
        env,
        rollouts=4,
        kl_threshold=1e-20,
        state_preprocessor=RunningStandardScaler,
        state_preprocessor_kwargs={"size": 4},
    )
    agent.init(trainer_cfg={"timesteps": 4})
    steps = count_steps(agent)
    before = [p.detach().clone() for p in agent.policy.parameters()]
    drive(agent, env, 4)
    assert steps == []
    assert all(torch.equal(b, p) for b, p in zip(before, agent.policy.parameters()))
    assert [float(v) for v in agent.tracking_data["Loss / Policy loss"]] == [0.0]  # skrl: 0 over the planned batches
    assert [float(v) for v in agent.tracking_data["Loss / Value loss"]] == [0.0]


def test_cpu_scalars_are_tracked_as_floats():
    # a kept 0-d CPU tensor pins the memory freed around it (an off-policy run with writing off grew per step)
    agent = make_ppo(vector_cartpole())
    agent.track_data("Loss / x", torch.tensor(1.5))
    agent.track_data("Loss / x", torch.tensor([2.5]))
    assert agent.tracking_data["Loss / x"] == [1.5, 2.5]
    assert all(type(value) is float for value in agent.tracking_data["Loss / x"])
