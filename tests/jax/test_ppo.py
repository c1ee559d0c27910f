"""PPO (JAX): compilation, save/load, determinism, bad input, the agent's own cadence and guards, and one short
learning run."""

import math
import re

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.resources.optimizers import adam as adam_module
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.jax.models import CategoricalMlp, ValueMlp, vector_cartpole

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


class Policy(CategoricalMlp):
    """This file's categorical policy: 32 hidden units."""

    hidden = 32


class Value(ValueMlp):
    """This file's value model: 32 hidden units."""

    hidden = 32


def make_ppo(env, rollouts=16, policy_class=None, **cfg):
    models = {
        "policy": (policy_class or Policy)(env.observation_space, env.action_space),
        "value": Value(env.observation_space, env.action_space),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {**PPO_DEFAULT_CONFIG, "rollouts": rollouts, "experiment": NO_FILES, **cfg}
    return PPO(
        models=models,
        memory=RandomMemory(memory_size=rollouts, num_envs=env.num_envs),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
    )


def test_act_and_update_compile_once_across_updates():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=8, learning_epochs=2, mini_batches=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 24}).train()  # three updates
    assert len(agent.tracking_data["Loss / Policy loss"]) == 3
    assert agent._update_fn._cache_size() == 1
    assert agent._act_fn._cache_size() == 1


def test_kl_adaptive_learning_rate_changes_without_recompiling():
    from skrl_like.jax.resources.schedulers import KLAdaptiveLR

    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(
        env, rollouts=8, learning_rate_scheduler=KLAdaptiveLR, learning_rate_scheduler_kwargs={"kl_threshold": 1e-20}
    )  # KL always "too high": lr shrinks
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 16}).train()
    rates = [float(r) for r in agent.tracking_data["Learning / Learning rate"]]
    assert rates[0] == pytest.approx(1e-3 / 1.5**8, rel=1e-5)  # divided by 1.5 once per epoch (8 epochs)
    assert rates[1] == pytest.approx(1e-3 / 1.5**16, rel=1e-5)
    assert agent._update_fn._cache_size() == 1


def test_save_load_round_trip_restores_params_optimizer_and_statistics(tmp_path):
    from skrl_like.jax.resources.preprocessors import RunningStandardScaler

    set_seed(0)
    env = vector_cartpole()
    scaler = {"state_preprocessor": RunningStandardScaler, "state_preprocessor_kwargs": {"size": 4}}
    first = make_ppo(env, rollouts=8, **scaler)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 16}).train()
    path = str(tmp_path / "agent.pickle")
    first.save(path)

    second = make_ppo(env, rollouts=8, **scaler)
    second.init(trainer_cfg={"timesteps": 1})
    second.load(path)
    states = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    first_logits = first.act(states, 0, 1)[2]["net_output"]
    second_logits = second.act(states, 0, 1)[2]["net_output"]
    np.testing.assert_array_equal(first_logits, second_logits)
    for a, b in zip(
        jax.tree_util.tree_leaves(first.policy_optimizer.state),
        jax.tree_util.tree_leaves(second.policy_optimizer.state),
    ):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first._state_preprocessor.running_mean, second._state_preprocessor.running_mean)


def test_loading_a_corrupt_checkpoint_names_the_file(tmp_path):
    path = tmp_path / "agent.pickle"
    path.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="could not be read"):
        make_ppo(vector_cartpole()).load(str(path))


def _short_run_losses(seed):
    set_seed(seed)
    env = vector_cartpole()
    env._env.reset(seed=seed)
    agent = make_ppo(env, learning_epochs=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 48}).train()
    return [float(v) for v in agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]]


def test_a_fixed_seed_gives_identical_losses():
    first, second = _short_run_losses(5), _short_run_losses(5)
    assert len(first) == 6 and first == second
    assert _short_run_losses(6) != first


def test_unknown_cfg_key_suggests_the_close_match():
    with pytest.raises(ValueError, match="Did you mean 'learning_epochs'"):
        make_ppo(vector_cartpole(), learning_epoch=4)


def test_models_without_parameters_are_rejected_with_the_fix():
    env = vector_cartpole()
    with pytest.raises(ValueError, match=r"call policy.init_state_dict\('policy'\)"):
        PPO(
            models={
                "policy": Policy(env.observation_space, env.action_space),
                "value": Value(env.observation_space, env.action_space),
            },
            observation_space=env.observation_space,
            action_space=env.action_space,
        )


def test_nan_rewards_stop_the_update_with_a_clear_error():
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4, rewards_shaper=lambda rewards, timestep, timesteps: rewards * math.nan)
    with pytest.raises(
        FloatingPointError,
        match="rollout's rewards contain NaN/inf .the environment or cfg.'rewards_shaper'. produced them",
    ):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4}).train()


def test_nan_value_estimates_stop_the_update_before_any_weight_changes():
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4)
    value = agent.value
    value.state_dict = value.state_dict.replace(
        params=jax.tree_util.tree_map(lambda x: x * jnp.nan, value.state_dict.params)
    )
    policy_before = jax.tree_util.tree_leaves(agent.policy.state_dict.params)
    with pytest.raises(FloatingPointError, match="rollout's values contain NaN/inf .the value model"):
        SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4}).train()
    for before, after in zip(policy_before, jax.tree_util.tree_leaves(agent.policy.state_dict.params)):
        np.testing.assert_array_equal(before, after)


def test_the_default_config_is_never_mutated():
    before = {k: v for k, v in PPO_DEFAULT_CONFIG.items() if k != "experiment"}
    make_ppo(vector_cartpole(), rollouts=32, learning_rate=0.5)
    assert {k: v for k, v in PPO_DEFAULT_CONFIG.items() if k != "experiment"} == before


@pytest.mark.slow
def test_ppo_learns_cartpole_within_20k_steps():
    from examples import load_example

    make_agent = load_example("jax", "ppo_cartpole").make_agent
    set_seed(42)
    env = vector_cartpole(num_envs=8)
    env._env.reset(seed=42)
    trainer = SequentialTrainer(env=env, agents=make_agent(env, experiment=NO_FILES), cfg={**QUIET, "timesteps": 2500})
    trainer.train()
    returns = trainer.evaluate_episodes(num_episodes=10)
    assert np.mean(returns) >= 150, returns


def test_random_timesteps_give_the_log_probability_of_the_random_action_taken():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4, random_timesteps=4)
    agent.init(trainer_cfg={"timesteps": 8})
    states = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    actions, log_prob, _ = agent.act(states, timestep=0, timesteps=8)
    logits = np.asarray(agent.policy.apply(agent.policy.state_dict.params, {"states": states}, "policy")[0], np.float64)
    log_softmax = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    taken = np.asarray(actions).astype(int)
    np.testing.assert_allclose(np.asarray(log_prob), np.take_along_axis(log_softmax, taken, axis=-1), rtol=1e-5)
    # random actions: with 64 samples from a near-uniform policy both classes occur
    assert set(taken.reshape(-1).tolist()) == {0, 1}


def test_evaluation_plays_the_most_likely_action():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env)
    agent.init(trainer_cfg={"timesteps": 1})
    states = np.random.default_rng(1).normal(size=(4, 4)).astype(np.float32)
    outputs = agent.act(states, 0, 1)[2]
    np.testing.assert_array_equal(np.asarray(outputs["mean_actions"])[:, 0], np.argmax(outputs["net_output"], axis=-1))


def test_a_loaded_optimizer_state_is_what_the_next_update_continues_from(tmp_path):
    set_seed(0)
    env = vector_cartpole()
    first = make_ppo(env, rollouts=8, learning_epochs=1, mini_batches=2)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 16}).train()  # two updates: 4 Adam steps
    path = str(tmp_path / "agent.pickle")
    first.save(path)

    second = make_ppo(env, rollouts=8, learning_epochs=1, mini_batches=2)
    second.load(path)
    # the checkpoint entry reads through to the optimizer the agent owns
    assert second.checkpoint_modules["policy_optimizer"].state is second.policy_optimizer.state
    SequentialTrainer(env=env, agents=second, cfg={**QUIET, "timesteps": 8}).train()  # one more update: 2 steps
    for optimizer in (second.policy_optimizer, second.value_optimizer):
        adam_state = optimizer.state[1][0]  # (clip_by_global_norm, adam) -> adam's ScaleByAdamState
        assert int(adam_state.count) == 4 + 2
    assert math.isfinite(float(second.tracking_data["Loss / Policy loss"][-1]))


# -- the agent's own cadence and guards ---------------------------------------------------------------------------


def drive(agent, env, steps, timesteps=None):
    """The README's third way: act, step, record, post_interaction by hand."""
    timesteps = timesteps or steps
    states, _ = env.reset()
    for timestep in range(steps):
        agent.pre_interaction(timestep, timesteps)
        actions = agent.act(states, timestep, timesteps)[0]
        next_states, rewards, terminated, truncated, infos = env.step(actions)
        agent.record_transition(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        )
        agent.post_interaction(timestep, timesteps)
        states = next_states


def leaves(params):
    return [np.asarray(leaf).copy() for leaf in jax.tree_util.tree_leaves(params)]


def test_an_agent_in_eval_mode_never_updates_in_a_manual_loop():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4)
    agent.init(trainer_cfg={"timesteps": 12})
    before = leaves(agent.policy.state_dict.params)
    agent.set_running_mode("eval")
    drive(agent, env, 12)
    assert "Loss / Policy loss" not in agent.tracking_data
    for old, new in zip(before, leaves(agent.policy.state_dict.params)):
        np.testing.assert_array_equal(old, new)
    agent.set_running_mode("train")
    drive(agent, env, 4)
    assert len(agent.tracking_data["Loss / Policy loss"]) == 1


def count_optimizer_steps(monkeypatch):
    """Count the Adam steps actually executed (run the update with jax.disable_jit so each one is a call): every step
    goes through ``Optimizer.apply`` (``update`` averages the gradients, then calls it)."""
    calls = []
    original = adam_module.Optimizer.apply

    def apply(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(adam_module.Optimizer, "apply", apply)
    return calls


def test_kl_threshold_stops_each_epoch_at_the_first_mini_batch_over_it(monkeypatch):
    set_seed(0)
    env = vector_cartpole()
    calls = count_optimizer_steps(monkeypatch)
    # the first mini-batch has ratio 1 (KL 0) and steps; every later one has KL > 1e-12 and stops its epoch
    agent = make_ppo(env, rollouts=8, learning_epochs=4, mini_batches=4, kl_threshold=1e-12)
    agent.init(trainer_cfg={"timesteps": 8})
    with jax.disable_jit():
        drive(agent, env, 8)
    assert len(calls) == 2  # one step: the policy's and the value's optimizer
    calls.clear()
    unlimited = make_ppo(env, rollouts=8, learning_epochs=4, mini_batches=4)
    unlimited.init(trainer_cfg={"timesteps": 8})
    with jax.disable_jit():
        drive(unlimited, env, 8)
    assert len(calls) == 2 * 16


def test_kl_threshold_early_stopping_changes_the_update_compiled():
    # compiled (no spy): a tiny threshold leaves the weights much closer to the start than no threshold does
    def distance(**cfg):
        set_seed(0)
        env = vector_cartpole()
        env._env.reset(seed=0)
        agent = make_ppo(env, rollouts=8, learning_epochs=4, mini_batches=4, **cfg)
        agent.init(trainer_cfg={"timesteps": 8})
        before = leaves(agent.policy.state_dict.params)
        drive(agent, env, 8)
        assert agent._update_fn._cache_size() == 1
        return sum(np.abs(a - b).sum() for a, b in zip(before, leaves(agent.policy.state_dict.params)))

    # stopped: one Adam step per epoch (4), unlimited: every mini-batch (16); Adam steps are all about lr long, so
    # the ratio is near 1/4 whatever the initial weights: well under 1/2
    stopped, unlimited = distance(kl_threshold=1e-12), distance()
    assert 0 < stopped < unlimited / 2


def test_learning_starts_delays_the_first_update():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4, learning_starts=6)
    agent.init(trainer_cfg={"timesteps": 12})
    drive(agent, env, 12)
    # rollouts complete at timesteps 3, 7 and 11; the one at 3 comes before learning_starts
    assert len(agent.tracking_data["Loss / Policy loss"]) == 2


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


def test_a_one_sample_rollout_at_the_edges_of_every_range_trains():
    set_seed(0)
    env = vector_cartpole(num_envs=1)
    agent = make_ppo(env, **{**EDGE_CFG, "experiment": NO_FILES})
    agent.init(trainer_cfg={"timesteps": 6})
    drive(agent, env, 6)
    losses = agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]
    assert len(losses) == 12 and all(math.isfinite(float(loss)) for loss in losses)


def test_a_zero_learning_rate_leaves_the_weights_unchanged():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4, learning_rate=0)
    agent.init(trainer_cfg={"timesteps": 4})
    before = leaves(agent.policy.state_dict.params)
    drive(agent, env, 4)
    assert len(agent.tracking_data["Loss / Policy loss"]) == 1
    for old, new in zip(before, leaves(agent.policy.state_dict.params)):
        np.testing.assert_array_equal(old, new)


class NaNGradientPolicy(Policy):
    """Finite outputs, NaN gradients: ``sqrt`` at 0 has an infinite derivative, multiplied by 0."""

    @nn.compact
    def __call__(self, inputs, role):
        hidden = nn.tanh(nn.Dense(32)(inputs["states"]))
        return nn.Dense(self.num_actions)(hidden + jnp.sqrt(jnp.abs(hidden) - jnp.abs(hidden))), {}


def test_a_parameter_that_goes_non_finite_in_the_update_is_named_and_nothing_is_committed():
    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(env, rollouts=4, policy_class=NaNGradientPolicy, grad_norm_clip=0.0)
    agent.init(trainer_cfg={"timesteps": 4})
    policy_before, value_before = leaves(agent.policy.state_dict.params), leaves(agent.value.state_dict.params)
    optimizer_before = leaves(agent.policy_optimizer.state)
    with pytest.raises(
        FloatingPointError,
        match=(
            r"the parameters after the optimizer step of mini-batch 0 \(epoch 0\) \(non-finite now: "
            r"parameter 'params/Dense_0/bias' of the policy model.*the optimizer step produced them"
        ),
    ):
        drive(agent, env, 4)
    for before, after in (
        (policy_before, agent.policy.state_dict.params),
        (value_before, agent.value.state_dict.params),
        (optimizer_before, agent.policy_optimizer.state),
    ):
        for old, new in zip(before, leaves(after)):
            np.testing.assert_array_equal(old, new)


@pytest.mark.parametrize("outputs", [1, 3])
def test_a_categorical_policy_with_the_wrong_number_of_outputs_is_rejected(outputs):
    class Narrow(Policy):
        @nn.compact
        def __call__(self, inputs, role):
            return nn.Dense(outputs)(inputs["states"]), {}

    env = vector_cartpole()
    with pytest.raises(
        ValueError, match=f"'policy' model .Narrow, categorical outputs. produces {outputs} outputs.*needs 2"
    ):
        make_ppo(env, policy_class=Narrow)


def test_a_value_model_with_more_than_one_output_is_rejected():
    class Wide(Value):
        @nn.compact
        def __call__(self, inputs, role):
            return nn.Dense(2)(inputs["states"]), {}

    env = vector_cartpole()
    models = {
        "policy": Policy(env.observation_space, env.action_space),
        "value": Wide(env.observation_space, env.action_space),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    with pytest.raises(ValueError, match="'value' model .Wide.* produces 2 outputs.*needs 1"):
        PPO(models=models, observation_space=env.observation_space, action_space=env.action_space)


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


def test_no_recompilation_after_warm_up_with_a_schedule_and_early_stopping():
    from skrl_like.jax.resources.preprocessors import RunningStandardScaler
    from skrl_like.jax.resources.schedulers import KLAdaptiveLR

    set_seed(0)
    env = vector_cartpole()
    agent = make_ppo(
        env,
        rollouts=4,
        learning_epochs=2,
        kl_threshold=0.01,
        learning_rate_scheduler=KLAdaptiveLR,
        state_preprocessor=RunningStandardScaler,
        state_preprocessor_kwargs={"size": 4},
    )
    agent.init(trainer_cfg={"timesteps": 20})
    drive(agent, env, 20)  # five updates, the learning rate and the statistics change between them
    assert len(agent.tracking_data["Loss / Policy loss"]) == 5
    assert len({float(rate) for rate in agent.tracking_data["Learning / Learning rate"]}) > 1
    assert agent._update_fn._cache_size() == 1
    assert agent._act_fn._cache_size() == 1


def test_cpu_scalars_are_tracked_as_floats():
    # a kept CPU array holds its buffer (a DQN run with writing off grew by ~7 kB per update)
    agent = make_ppo(vector_cartpole())
    agent.track_data("Loss / x", jnp.float32(1.5))
    agent.track_data("Loss / x", jnp.array([2.5]))
    assert agent.tracking_data["Loss / x"] == [1.5, 2.5]
    assert all(type(value) is float for value in agent.tracking_data["Loss / x"])
