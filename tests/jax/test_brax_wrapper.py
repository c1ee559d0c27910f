"""BraxWrapper and PlaygroundWrapper on stand-ins with brax's Env/State contract: spaces and dtypes, the episode
length and termination with the reached observation kept, the two autoresets, the action repeat, a Playground
env's privileged observations, wrap_env's detection and clear errors, and the CompiledTrainer running PPO on one
(its compiled run equal to the sequential trainer's) and SAC."""

import flax.linen as nn
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from skrl_like import config
from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.jax.agents.sac import SAC, SAC_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import BraxWrapper, PlaygroundWrapper, wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.jax.trainers import CompiledTrainer, SequentialTrainer
from skrl_like.utils import set_seed
from tests.brax_standin import PlaygroundPointMass, PointMass
from tests.jax.models import PerturbedGaussianPolicy, ValueMlp


@pytest.fixture(autouse=True)
def jax_arrays():
    backend = config.jax.backend
    config.jax.backend = "jax"
    yield
    config.jax.backend = backend


def point_mass(**kwargs):
    return wrap_env(PointMass(), verbose=False, **{"num_envs": 3, "seed": 0, **kwargs})


def test_spaces_and_shapes_follow_the_wrapper_contract():
    env = point_mass()
    assert isinstance(env, BraxWrapper) and env.num_envs == 3
    assert env.observation_space == gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
    assert env.action_space == gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)
    assert env.state_space is None and env.state() is None
    states, info = env.reset()
    assert isinstance(states, jax.Array) and states.shape == (3, 2) and states.dtype == jnp.float32 and info == {}
    assert np.all(np.abs(states[:, 0]) <= 0.5) and np.all(states[:, 1] == 0)
    next_states, rewards, terminated, truncated, info = env.step(jnp.zeros((3, 1)))
    assert rewards.shape == (3, 1) and rewards.dtype == jnp.float32
    assert terminated.dtype == jnp.int8 and truncated.dtype == jnp.int8
    np.testing.assert_allclose(rewards[:, 0], 1 - np.asarray(states[:, 0]) ** 2, rtol=1e-6)
    np.testing.assert_array_equal(info["final_states"], next_states)  # nobody done: the same observations


def test_the_episode_length_truncates_and_restarts_from_the_first_state_keeping_the_reached_observation():
    env = point_mass(episode_length=3)
    first, _ = env.reset()
    actions = jnp.array([[0.0], [1.0], [-1.0]])
    for _ in range(2):  # within 3 steps nobody leaves [-1, 1]: |x| <= 0.5 + 0.1 + 0.2 + 0.3
        states, _, terminated, truncated, _ = env.step(actions)
        assert not terminated.any() and not truncated.any()
    next_states, _, terminated, truncated, info = env.step(actions)
    np.testing.assert_array_equal(truncated[:, 0], [1, 1, 1])
    np.testing.assert_array_equal(terminated[:, 0], [0, 0, 0])
    # the reached observation is one push on from the previous one; the next one is the first state again
    velocity = np.asarray(states[:, 1]) + 0.1 * np.asarray(actions[:, 0])
    np.testing.assert_allclose(info["final_states"], np.stack([states[:, 0] + velocity, velocity], 1), atol=1e-6)
    np.testing.assert_array_equal(next_states, first)
    for _ in range(2):  # the step count restarted
        _, _, _, truncated, _ = env.step(actions)
        assert not truncated.any()


def test_leaving_the_line_is_a_termination_and_a_full_reset_draws_a_new_start():
    for full_reset in (False, True):
        env = point_mass(num_envs=1, full_reset=full_reset)
        first, _ = env.reset()
        steps, terminated = 0, jnp.zeros((1, 1))
        while not terminated.any() and steps < 20:  # always pushed right: it leaves within 20 steps
            next_states, _, terminated, truncated, info = env.step(jnp.ones((1, 1)))
            steps += 1
        assert terminated[0, 0] == 1 and truncated[0, 0] == 0 and 1 < steps < 20
        assert info["final_states"][0, 0] > 1.0 and next_states[0, 1] == 0
        if full_reset:
            assert next_states[0, 0] != first[0, 0]
        else:
            np.testing.assert_array_equal(next_states, first)


def test_the_action_repeat_sums_the_rewards_and_counts_env_steps_against_the_episode_length():
    env = point_mass(action_repeat=2, episode_length=4)
    states, _ = env.reset()
    _, rewards, _, truncated, _ = env.step(jnp.zeros((3, 1)))  # at rest: each env step pays 1 - x**2
    np.testing.assert_allclose(rewards[:, 0], 2 * (1 - np.asarray(states[:, 0]) ** 2), rtol=1e-6)
    assert not truncated.any()
    _, _, _, truncated, _ = env.step(jnp.zeros((3, 1)))
    assert truncated.all()  # 2 agent steps = 4 env steps


def test_a_playground_env_gives_its_state_entry_to_the_agent_and_its_privileged_state_to_state():
    env = wrap_env(PlaygroundPointMass(), verbose=False, num_envs=2, seed=1)
    assert isinstance(env, PlaygroundWrapper)
    assert env.observation_space.shape == (2,) and env.state_space.shape == (3,)
    states, _ = env.reset()
    privileged = env.state()
    np.testing.assert_allclose(privileged[:, :2], states)
    np.testing.assert_allclose(privileged[:, 2], states[:, 0] * states[:, 1])
    next_states, *_ = env.step(jnp.ones((2, 1)))
    np.testing.assert_allclose(env.state()[:, :2], next_states)


def test_a_step_moves_nothing_between_the_host_and_the_device():
    env = point_mass()
    env.reset()
    actions = jnp.zeros((3, 1))
    env.step(actions)  # compiled outside the guard
    with jax.transfer_guard("disallow"):
        next_states, rewards, terminated, truncated, info = env.step(actions)
    assert all(isinstance(x, jax.Array) for x in (next_states, rewards, terminated, truncated, info["final_states"]))


def test_the_numpy_backend_gets_numpy_arrays():
    config.jax.backend = "numpy"
    env = point_mass()
    states, _ = env.reset()
    next_states, rewards, terminated, _, info = env.step(np.zeros((3, 1), np.float32))
    assert all(isinstance(x, np.ndarray) for x in (states, next_states, rewards, terminated, info["final_states"]))


def test_wrap_env_tags_and_clear_errors():
    assert isinstance(wrap_env(PointMass(), wrapper="brax", verbose=False), BraxWrapper)
    assert wrap_env(PointMass(), verbose=False).num_envs == 1
    loaded = PointMass()
    loaded.num_envs, loaded.episode_length = 4, 7  # as load_playground_env records them
    env = wrap_env(loaded, verbose=False)
    assert env.num_envs == 4 and env.episode_length == 7
    with pytest.raises(ValueError, match="BraxWrapper: num_envs must be an int >= 1, got 0"):
        wrap_env(PointMass(), verbose=False, num_envs=0)
    with pytest.raises(TypeError, match="has no 'observation_size'"):
        wrap_env(gymnasium.make("Pendulum-v1"), wrapper="brax", verbose=False)

    class TrainingWrapper(PointMass):
        pass

    TrainingWrapper.__module__ = "brax.envs.wrappers.training"
    with pytest.raises(TypeError, match="a batched training wrapper of Brax: pass the environment before"):
        wrap_env(TrainingWrapper(), wrapper="brax", verbose=False)


ROLLOUTS = 8


def make_ppo(env):
    set_seed(0)
    models = {
        "policy": PerturbedGaussianPolicy(env.observation_space, env.action_space),
        "value": ValueMlp(env.observation_space, env.action_space),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": ROLLOUTS,
        "mini_batches": 2,
        "learning_rate": 3e-3,
        "time_limit_bootstrap": True,
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    memory = RandomMemory(memory_size=ROLLOUTS, num_envs=env.num_envs)
    return PPO(
        models=models, memory=memory, cfg=cfg, observation_space=env.observation_space, action_space=env.action_space
    )


def test_the_compiled_trainer_runs_ppo_on_it_as_the_sequential_trainer_does_and_vmaps_seeds():
    quiet = {"disable_progressbar": True, "close_environment_at_exit": False, "timesteps": 2 * ROLLOUTS}
    runs = []
    for trainer_class in (SequentialTrainer, CompiledTrainer):
        env = point_mass(num_envs=2, episode_length=5)  # truncations in every rollout
        agent = make_ppo(env)
        cfg = {**quiet, "headless": True} if trainer_class is SequentialTrainer else quiet
        trainer_class(env=env, agents=agent, cfg=cfg).train()
        runs.append((agent, env))
    (sequential, sequential_env), (compiled, compiled_env) = runs
    initial = jax.tree_util.tree_leaves(make_ppo(point_mass(num_envs=2)).policy.state_dict.params)[0]
    assert not np.allclose(initial, jax.tree_util.tree_leaves(compiled.policy.state_dict.params)[0])  # it learned
    leaves = [jax.tree_util.tree_leaves(agent.gather_learner()) for agent in (sequential, compiled)]
    for a, b in zip(*leaves, strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(sequential_env.carry[1], compiled_env.carry[1], atol=1e-6)

    env = point_mass(num_envs=2, episode_length=5)
    trainer = CompiledTrainer(env=env, agents=make_ppo(env), cfg={**quiet, "seeds": [1, 2]})
    metrics = trainer.train()
    assert metrics["Loss / Value loss"].shape == (2, 2) and np.isfinite(metrics["Loss / Value loss"]).all()
    assert not np.allclose(metrics["Loss / Value loss"][0], metrics["Loss / Value loss"][1])  # their own episodes


class SacPolicy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self, clip_actions=True)

    @nn.compact
    def __call__(self, inputs, role):
        log_std = self.param("log_std", lambda _: jnp.zeros(self.num_actions))
        return nn.tanh(nn.Dense(self.num_actions)(nn.relu(nn.Dense(16)(inputs["states"])))), log_std, {}


class SacCritic(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        x = jnp.concatenate([inputs["states"], inputs["taken_actions"]], -1)
        return nn.Dense(1)(nn.relu(nn.Dense(16)(x))), {}


def test_the_compiled_trainer_runs_sac_on_it_vmapped_over_seeds():
    env = point_mass(num_envs=2, episode_length=5)
    set_seed(0)
    roles = ("policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")
    models = {
        role: (SacPolicy if role == "policy" else SacCritic)(env.observation_space, env.action_space) for role in roles
    }
    for role, model in models.items():
        model.init_state_dict(role)
    agent = SAC(
        models=models,
        memory=RandomMemory(memory_size=8, num_envs=2),
        cfg={
            **SAC_DEFAULT_CONFIG,
            "batch_size": 4,
            "learning_starts": 3,
            "experiment": {"write_interval": 0, "checkpoint_interval": 0},
        },
        observation_space=env.observation_space,
        action_space=env.action_space,
    )
    initial = np.asarray(jax.tree_util.tree_leaves(agent.policy.state_dict.params)[0])
    cfg = {"timesteps": 12, "disable_progressbar": True, "close_environment_at_exit": False, "seeds": [0, 1]}
    trainer = CompiledTrainer(env=env, agents=agent, cfg=cfg)
    metrics = trainer.train()
    losses = np.asarray(metrics["Loss / Critic loss"])
    assert losses.shape == (2, 12) and np.isfinite(losses[:, 3:]).all()  # NaN: no update before learning_starts
    assert not np.allclose(initial, jax.tree_util.tree_leaves(agent.policy.state_dict.params)[0])  # run 0 learned
