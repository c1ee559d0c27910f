"""CompiledTrainer with the off-policy agents: the same parameters, keys, replay memory and environment as
SequentialTrainer after a run with updates (SAC, DQN, TD3, DDPG; the same rows, and the same noise, drawn on both
sides), one compilation for a chunked run with learning_starts and random_timesteps, vmapped seeds with a swept
discount factor equal to a run made alone, the replay ring, the compiled Gaussian noise, and the clear errors."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.flatten_util import ravel_pytree

gymnax = pytest.importorskip("gymnax")

from skrl_like.core.agents.transition import TRANSITION_NAMES, Transition  # noqa: E402
from skrl_like.jax.agents import base as jax_agent_base  # noqa: E402
from skrl_like.jax.agents import off_policy  # noqa: E402
from skrl_like.jax.agents.cem import CEM  # noqa: E402
from skrl_like.jax.agents.ddpg import DDPG, DDPG_DEFAULT_CONFIG  # noqa: E402
from skrl_like.jax.agents.dqn import DQN, DQN_DEFAULT_CONFIG  # noqa: E402
from skrl_like.jax.agents.dqn import dqn as dqn_module  # noqa: E402
from skrl_like.jax.agents.sac import SAC, SAC_DEFAULT_CONFIG  # noqa: E402
from skrl_like.jax.agents.td3 import TD3, TD3_DEFAULT_CONFIG  # noqa: E402
from skrl_like.jax.agents.td3 import td3 as td3_module  # noqa: E402
from skrl_like.jax.envs.wrappers import wrap_env  # noqa: E402
from skrl_like.jax.memories import RandomMemory  # noqa: E402
from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model  # noqa: E402
from skrl_like.jax.resources.noises import GaussianNoise, OrnsteinUhlenbeckNoise  # noqa: E402
from skrl_like.jax.resources.preprocessors import RunningStandardScaler  # noqa: E402
from skrl_like.jax.trainers import CompiledTrainer, SequentialTrainer  # noqa: E402
from skrl_like.utils import set_seed  # noqa: E402
from tests.jax.models import LinearCategoricalPolicy  # noqa: E402

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"disable_progressbar": True, "close_environment_at_exit": False}
NUM_ENVS = 2
ROLES = ("policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")


class Policy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        GaussianMixin.__init__(self, clip_actions=True, clip_log_std=True, min_log_std=-5, max_log_std=2)

    @nn.compact
    def __call__(self, inputs, role):
        log_std = self.param("log_std", lambda _: jnp.zeros(self.num_actions))
        return 2 * nn.tanh(nn.Dense(self.num_actions)(nn.relu(nn.Dense(16)(inputs["states"])))), log_std, {}


class Critic(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        x = jnp.concatenate([inputs["states"], inputs["taken_actions"]], -1)
        return nn.Dense(1)(nn.relu(nn.Dense(16)(x))), {}


class DeterministicPolicy(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return 2 * nn.tanh(nn.Dense(self.num_actions)(inputs["states"])), {}


TD3_ROLES = ("policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")


def pendulum(max_steps=5):
    env, params = gymnax.make("Pendulum-v1")
    return wrap_env(env, verbose=False, num_envs=NUM_ENVS, env_params=params.replace(max_steps_in_episode=max_steps))


def make_sac(env, seed=0, memory_size=4, replacement=True, **cfg):
    set_seed(seed)
    models = {role: (Policy if role == "policy" else Critic)(env.observation_space, env.action_space) for role in ROLES}
    for role, model in models.items():
        model.init_state_dict(role)
    return SAC(
        models=models,
        memory=RandomMemory(memory_size=memory_size, num_envs=NUM_ENVS, replacement=replacement),
        cfg={**SAC_DEFAULT_CONFIG, "batch_size": 4, "experiment": NO_FILES, **cfg},
        observation_space=env.observation_space,
        action_space=env.action_space,
    )


class QNetwork(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return nn.Dense(self.num_actions)(nn.relu(nn.Dense(16)(inputs["states"]))), {}


def cartpole(max_steps=5):
    env, params = gymnax.make("CartPole-v1")
    return wrap_env(env, verbose=False, num_envs=NUM_ENVS, env_params=params.replace(max_steps_in_episode=max_steps))


def make_dqn(env, seed=0, memory_size=4, **cfg):
    set_seed(seed)
    models = {role: QNetwork(env.observation_space, env.action_space) for role in ("q_network", "target_q_network")}
    for role, model in models.items():
        model.init_state_dict(role)
    return DQN(
        models=models,
        memory=RandomMemory(memory_size=memory_size, num_envs=NUM_ENVS),
        cfg={**DQN_DEFAULT_CONFIG, "batch_size": 4, "experiment": NO_FILES, **cfg},
        observation_space=env.observation_space,
        action_space=env.action_space,
    )


def learner_leaves(agent):
    return jax.tree_util.tree_leaves((agent.gather_learner(), agent._key))


def assert_same_agents(first, second, atol=1e-5):
    for a, b in zip(learner_leaves(first), learner_leaves(second), strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), atol=atol, rtol=1e-5)
    for name in TRANSITION_NAMES:
        np.testing.assert_allclose(first.memory.tensors[name], second.memory.tensors[name], atol=1e-6)
    assert (first.memory.memory_index, first.memory.filled) == (second.memory.memory_index, second.memory.filled)


# both trainers draw the same rows, a fixed function of the write position and of how many rows are written,
# instead of NumPy's generator (SequentialTrainer) and the run's key (CompiledTrainer)
def fixed_rows(position, written, batch_size, gradient_steps):
    return (jnp.arange(gradient_steps * batch_size).reshape(gradient_steps, batch_size) * 5 + position * 3) % written


def sequential_batches(memory, names, batch_size, gradient_steps):
    rows = np.asarray(fixed_rows(memory.memory_index, len(memory), batch_size, gradient_steps))
    drawn = memory.sample_by_index(names, rows.reshape(-1))[0]
    return tuple(np.asarray(array).reshape(gradient_steps, batch_size, -1) for array in drawn)


def compiled_rows(self, key, replay, batch_size, gradient_steps):
    memory_size = replay.data.states.shape[0]
    written = jnp.where(replay.full, memory_size, replay.position) * NUM_ENVS
    return fixed_rows(replay.position, written, batch_size, gradient_steps)


# the compilable options: a state preprocessor, a reward shaper, several gradient steps, the entropy coefficient
SAC_OPTIONS = {
    "state_preprocessor": RunningStandardScaler,
    "state_preprocessor_kwargs": {"size": 3},
    "rewards_shaper": lambda rewards, timestep, timesteps: rewards * 0.1,
    "gradient_steps": 2,
    "learning_starts": 3,
    "actor_learning_rate": 3e-3,
    "critic_learning_rate": 3e-3,
}


# the compilable DQN options: epsilon-greedy exploration, an update every other step, the target blended every other
# update step, a state preprocessor, several gradient steps
DQN_OPTIONS = {
    "state_preprocessor": RunningStandardScaler,
    "state_preprocessor_kwargs": {"size": 4},
    "gradient_steps": 2,
    "learning_starts": 2,
    "update_interval": 2,
    "target_update_interval": 4,
    "polyak": 0.5,
    "learning_rate": 3e-2,
    "exploration": {"initial_epsilon": 1.0, "final_epsilon": 0.05, "timesteps": 4},
}


@pytest.mark.parametrize(
    "build, env_fn, module",
    [
        (lambda env: make_sac(env, **SAC_OPTIONS), pendulum, jax_agent_base),
        (lambda env: make_dqn(env, **DQN_OPTIONS), cartpole, dqn_module),
    ],
    ids=["SAC", "DQN"],  # DDQN is DQN with another TD target
)
def test_the_compiled_run_gives_the_sequential_trainers_parameters_replay_and_episodes(
    build, env_fn, module, monkeypatch
):
    monkeypatch.setattr(module, "sample_batches", sequential_batches)
    monkeypatch.setattr(CompiledTrainer, "_replay_indices", compiled_rows)
    runs = []
    for trainer_class in (SequentialTrainer, CompiledTrainer):
        env = env_fn()
        agent = build(env)
        # 7 steps: several updates of 2 gradient steps; the 4-step memory wraps; episodes of 5 steps are truncated
        trainer_cfg = {**QUIET, "timesteps": 7}
        if trainer_class is SequentialTrainer:
            trainer_cfg["headless"] = True
        trainer_class(env=env, agents=agent, cfg=trainer_cfg).train()
        runs.append((agent, env))
    (sequential, sequential_env), (compiled, compiled_env) = runs
    first = lambda agent: jax.tree_util.tree_leaves(next(iter(agent.models.values())).state_dict.params)[0]  # noqa: E731
    assert not np.allclose(first(build(env_fn())), first(compiled))  # it learned (the policy or the Q-network)
    assert compiled.memory.filled and compiled.memory.memory_index == 3
    assert_same_agents(sequential, compiled)
    np.testing.assert_allclose(sequential_env.carry[1], compiled_env.carry[1], atol=1e-5)


def test_a_chunked_sac_run_compiles_once_masks_the_steps_before_learning_starts_and_goes_on_from_its_replay(tmp_path):
    env = pendulum(max_steps=10)
    experiment = {"directory": str(tmp_path), "experiment_name": "run", "write_interval": 4, "checkpoint_interval": 0}
    agent = make_sac(env, memory_size=16, learning_starts=6, random_timesteps=4, experiment=experiment)
    trainer = CompiledTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 12, "updates_per_chunk": 4})
    metrics = trainer.train()
    assert trainer.compilations == 1  # three chunks, one compiled function
    np.testing.assert_array_equal(metrics["timestep"], np.arange(1, 13))
    losses = metrics["Loss / Critic loss"]
    assert losses.shape == (12,) and np.isnan(losses[:6]).all() and np.isfinite(losses[6:]).all()
    assert np.isfinite(metrics["Coefficient / Entropy coefficient"][6:]).all()
    np.testing.assert_array_equal(metrics["Episode / Episodes"], [0] * 9 + [NUM_ENVS] + [0] * 2)
    np.testing.assert_allclose(metrics["Episode / Total timesteps (mean)"][9], 10)
    assert agent.memory.memory_index == 12 and not agent.memory.filled  # the replay went back into the memory
    # the first 4 steps acted at random within the bounds; every stored action is within them
    assert np.abs(agent.memory.tensors["actions"][:12]).max() <= 2
    events = sorted((tmp_path / "run").glob("events.out.tfevents.*"))
    assert events
    # a second train() goes on from the agent's state and replay with the same compiled function
    trainer.train()
    assert trainer.compilations == 1 and agent.memory.filled and agent.memory.memory_index == 8


def test_vmapped_seeds_and_a_swept_discount_equal_runs_made_alone_with_their_replays():
    # DQN: the machinery is the off-policy agents' (SAC's fresh learner runs in the benchmark's vmapped runs)
    def train(seeds, discount, sweep=None):
        env = cartpole()
        agent = make_dqn(env, discount_factor=discount, **DQN_OPTIONS)
        trainer = CompiledTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 6, "seeds": seeds, "sweep": sweep})
        return trainer, agent, trainer.train()

    both, both_agent, both_metrics = train([3, 4], 0.99, sweep={"discount_factor": [0.99, 0.5]})
    assert both_metrics["Loss / Q-network loss"].shape == (2, 6)
    assert np.isnan(both_metrics["Loss / Q-network loss"][:, 1::2]).all()  # an update every other step
    run_zero = learner_leaves(both_agent)
    alone, alone_agent, alone_metrics = train([4], 0.5)
    both.load_run(1)
    assert_same_agents(both_agent, alone_agent)
    np.testing.assert_allclose(
        both_metrics["Loss / Q-network loss"][1], alone_metrics["Loss / Q-network loss"][0], rtol=1e-5
    )
    assert not np.allclose(run_zero[0], learner_leaves(both_agent)[0])  # the runs drew their own parameters


# a multiplicative schedule (skrl's JAX rule: the rate times schedule(timestep) after every update)
HALVING = {"learning_rate_scheduler": optax.constant_schedule, "learning_rate_scheduler_kwargs": {"value": 0.5}}


@pytest.mark.parametrize(
    "build, env_fn, key, tag, schedule",
    [
        (lambda env, **cfg: make_sac(env, **{**SAC_OPTIONS, **cfg}), pendulum, "actor_learning_rate", "Policy", {}),
        (lambda env, **cfg: make_dqn(env, **{**DQN_OPTIONS, **cfg}), cartpole, "learning_rate", "", HALVING),
    ],  # TD3's rates land in their fields (below) and its swept runs are compiled in the policy-delay test
    ids=["SAC", "DQN-scheduled"],
)
def test_a_swept_learning_rate_gives_each_run_its_own_rate_as_runs_made_alone(build, env_fn, key, tag, schedule):
    rates = [3e-3, 3e-2]  # the agent is built with the first

    def train(rate, sweep=None):
        env = env_fn()
        agent = build(env, **{key: rate}, **schedule)
        trainer = CompiledTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 6, "sweep": sweep})
        return trainer, agent, trainer.train()

    both, both_agent, both_metrics = train(rates[0], sweep={key: rates})  # both runs from the agent's own state
    assert both.compilations == 1
    run_zero = learner_leaves(both_agent)
    # each run reports its own rate (tracked without a schedule too), scheduled from it: DQN's is halved after each
    # of its 2 gradient steps per update
    tracked = both_metrics[f"Learning / {tag + ' l' if tag else 'L'}earning rate"]
    updated = np.isfinite(tracked[0])
    factor = 0.25 ** np.arange(1, updated.sum() + 1) if schedule else np.ones(updated.sum())
    np.testing.assert_allclose(tracked[:, updated], np.outer(rates, factor), rtol=1e-6)
    # run 1 equals an agent built with the second rate trained alone (run 0 is the unswept run)
    alone, alone_agent, alone_metrics = train(rates[1])
    both.load_run(1)
    assert_same_agents(both_agent, alone_agent)
    loss = "Loss / Critic loss" if "Loss / Critic loss" in both_metrics else "Loss / Q-network loss"
    np.testing.assert_allclose(both_metrics[loss][1], alone_metrics[loss], rtol=1e-5)
    # the rate reached the update: from the same start, the two runs learned different parameters
    assert not np.allclose(run_zero[0], learner_leaves(both_agent)[0])


ACTOR_CRITIC_RATES = {"actor_learning_rate": 2e-3, "critic_learning_rate": 3e-3}


@pytest.mark.parametrize(
    "build, env_fn, rates",
    [
        (lambda env, **cfg: make_sac(env, **cfg), pendulum, {**ACTOR_CRITIC_RATES, "entropy_learning_rate": 4e-3}),
        (lambda env, **cfg: make_deterministic(TD3, env, **cfg), pendulum, ACTOR_CRITIC_RATES),
        (lambda env, **cfg: make_deterministic(DDPG, env, **cfg), pendulum, ACTOR_CRITIC_RATES),
        (lambda env, **cfg: make_dqn(env, **cfg), cartpole, {"learning_rate": 1e-3}),
    ],
    ids=["SAC", "TD3", "DDPG", "DQN"],
)
def test_every_learning_rate_can_be_swept_and_each_run_starts_with_its_own_in_its_learner_state(build, env_fn, rates):
    # the runs' initial states only (nothing compiles): each swept key lands in its own field, the others stay
    agent = build(env_fn(), **rates)
    assert agent.learning_rate_keys() == tuple(rates)
    for key in rates:
        trainer = CompiledTrainer(env=env_fn(), agents=agent, cfg={**QUIET, "timesteps": 2, "sweep": {key: [5.0, 6.0]}})
        learner = trainer._initial_runs().learner
        for other, rate in rates.items():
            expected = [5.0, 6.0] if other == key else [rate] * 2
            np.testing.assert_allclose(getattr(learner, agent.learning_rate_fields[other]), expected, rtol=1e-6)


def test_the_replay_ring_writes_wraps_and_samples_only_written_rows():
    memory = RandomMemory(memory_size=3, num_envs=2)
    for name in TRANSITION_NAMES:
        memory.create_tensor(name, 1, np.float32)
    replay = off_policy.replay_from_memory(memory, jax.random.PRNGKey(0))
    row = lambda value: Transition(*(jnp.full((2, 1), value, jnp.float32) for _ in TRANSITION_NAMES))  # noqa: E731
    replay = off_policy.replay_add(replay, row(1.0))
    indices = off_policy.replay_indices(jax.random.PRNGKey(0), replay, 50, 2)
    assert indices.shape == (2, 50) and set(np.unique(indices)) == {0, 1}  # one timestep of 2 envs written
    batches = off_policy.replay_batches(replay, indices)
    assert batches.rewards.shape == (2, 50, 1) and (batches.rewards == 1).all()
    for value in (2.0, 3.0, 4.0):
        replay = off_policy.replay_add(replay, row(value))
    assert int(replay.position) == 1 and bool(replay.full)  # the fourth write wrapped onto row 0
    assert set(np.unique(off_policy.replay_indices(jax.random.PRNGKey(1), replay, 200, 1))) == set(range(6))
    off_policy.replay_to_memory(replay, memory)
    np.testing.assert_array_equal(memory.tensors["rewards"][:, :, 0], [[4, 4], [2, 2], [3, 3]])
    assert memory.memory_index == 1 and memory.filled and len(memory) == 6


def test_clear_errors():
    env = pendulum()
    with pytest.raises(ValueError, match="without replacement: the compiled replay draws rows with replacement"):
        CompiledTrainer(env=env, agents=make_sac(env, replacement=False), cfg=QUIET)
    with pytest.raises(ValueError, match=r"'grad_norm_clip' \(0\) is not a number the update reads as a value"):
        CompiledTrainer(env=env, agents=make_sac(env), cfg={**QUIET, "sweep": {"grad_norm_clip": [0.5, 1.0]}})
    with pytest.raises(
        ValueError,
        match="sweep e.g. actor_learning_rate, critic_learning_rate, entropy_learning_rate, discount_factor or polyak",
    ):
        CompiledTrainer(env=env, agents=make_sac(env), cfg={**QUIET, "sweep": {"batch_size": [4, 8]}})
    with pytest.raises(
        ValueError,
        match="SAC does not use 'entropy_learning_rate' with this cfg .* its learning rates: actor_learning_rate, "
        "critic_learning_rate$",
    ):
        agent = make_sac(env, learn_entropy=False)
        CompiledTrainer(env=env, agents=agent, cfg={**QUIET, "sweep": {"entropy_learning_rate": [1e-3, 1e-2]}})
    memory = RandomMemory(memory_size=4, num_envs=3)
    with pytest.raises(ValueError, match="was created with num_envs=3, but the agent steps 2"):
        agent = make_sac(env)
        agent.memory = memory
        CompiledTrainer(env=env, agents=agent, cfg=QUIET)
    set_seed(0)
    env = cartpole()
    policy = LinearCategoricalPolicy(env.observation_space, env.action_space)
    policy.init_state_dict("policy")
    cem = CEM(
        models={"policy": policy},
        memory=RandomMemory(memory_size=16, num_envs=NUM_ENVS),
        cfg={"experiment": NO_FILES},
        observation_space=env.observation_space,
        action_space=env.action_space,
    )
    with pytest.raises(TypeError, match="CEM has no compiled form yet: train it with SequentialTrainer"):
        CompiledTrainer(env=env, agents=cem, cfg=QUIET)


def test_a_seeded_sac_run_draws_fresh_models_with_targets_equal_to_their_critics():
    env = pendulum()
    agent = make_sac(env, initial_entropy_value=0.5)
    agent.init()
    learner = agent.gather_learner()
    fresh = agent.fresh_learner(learner, jax.random.PRNGKey(7))
    for role in ("critic_1", "critic_2"):
        jax.tree_util.tree_map(np.testing.assert_array_equal, getattr(fresh, role), getattr(fresh, "target_" + role))
    flat = lambda params: ravel_pytree(params)[0]  # noqa: E731
    assert not np.allclose(flat(fresh.policy), flat(learner.policy))
    assert not np.allclose(flat(fresh.critic_1), flat(learner.critic_1))
    assert not np.allclose(flat(fresh.critic_1), flat(fresh.critic_2))
    np.testing.assert_allclose(fresh.log_entropy_coefficient["params"], [np.log(0.5)], rtol=1e-6)
    assert not np.array_equal(fresh.key, learner.key)
    # the same key draws the same run
    again = agent.fresh_learner(learner, jax.random.PRNGKey(7))
    jax.tree_util.tree_map(
        np.testing.assert_array_equal, jax.tree_util.tree_leaves(fresh), jax.tree_util.tree_leaves(again)
    )


# -- DDPG and TD3: the noise drawn from the run's keys -------------------------------------------------------------

DDPG_ROLES = ("policy", "target_policy", "critic", "target_critic")


def make_deterministic(agent_class, env, seed=0, memory_size=4, **cfg):
    """A DDPG or TD3 agent with tiny networks (``cfg`` on top of the agent's defaults)."""
    set_seed(seed)
    roles, defaults = (TD3_ROLES, TD3_DEFAULT_CONFIG) if agent_class is TD3 else (DDPG_ROLES, DDPG_DEFAULT_CONFIG)
    models = {
        role: (DeterministicPolicy if "policy" in role else Critic)(env.observation_space, env.action_space)
        for role in roles
    }
    for role, model in models.items():
        model.init_state_dict(role)
    return agent_class(
        models=models,
        memory=RandomMemory(memory_size=memory_size, num_envs=NUM_ENVS),
        cfg={**defaults, "batch_size": 4, "experiment": NO_FILES, **cfg},
        observation_space=env.observation_space,
        action_space=env.action_space,
    )


class PatternNoise(GaussianNoise):
    """Both trainers draw the same noise: a fixed pattern over a sample's last two axes (an action per env, or a
    batch's smoothing noise), ``mean + 3 std sin(1 + 2i)``, the same at every draw; the compiled draw
    (``gaussian_noise``) is replaced by it too."""

    def sample(self, size):
        rows, columns = size[-2:]
        pattern = jnp.sin(1.0 + 2.0 * jnp.arange(rows * columns, dtype=jnp.float32)).reshape(rows, columns)
        return jnp.broadcast_to(self.mean + 3 * self.std * pattern, tuple(size))


def pattern_draw(key, shape, noise):
    return noise.sample(shape)


# the compilable options: exploration noise whose scale decays over the first 4 of 7 steps (then none, as act), clipped
# to the bounds while it is large; TD3: smoothing noise beyond its clip, a policy step every third critic step
DETERMINISTIC_OPTIONS = {
    "state_preprocessor": RunningStandardScaler,
    "state_preprocessor_kwargs": {"size": 3},
    "rewards_shaper": lambda rewards, timestep, timesteps: rewards * 0.1,
    "gradient_steps": 2,
    "learning_starts": 3,
    "actor_learning_rate": 3e-3,
    "critic_learning_rate": 3e-3,
    "exploration": {"noise": PatternNoise(0.1, 0.3), "initial_scale": 1.0, "final_scale": 0.2, "timesteps": 4},
}
TD3_OPTIONS = {"smooth_regularization_noise": PatternNoise(0.0, 0.2), "smooth_regularization_clip": 0.3}


@pytest.mark.parametrize("agent_class", [TD3, DDPG])
def test_compiled_ddpg_and_td3_give_the_sequential_trainers_parameters_replay_and_environment(agent_class, monkeypatch):
    monkeypatch.setattr(jax_agent_base, "sample_batches", sequential_batches)  # DDPG's update is TD3's
    monkeypatch.setattr(CompiledTrainer, "_replay_indices", compiled_rows)
    monkeypatch.setattr(off_policy, "gaussian_noise", pattern_draw)
    monkeypatch.setattr(td3_module, "gaussian_noise", pattern_draw)
    options = {**DETERMINISTIC_OPTIONS, **(TD3_OPTIONS if agent_class is TD3 else {}), "policy_delay": 3}
    if agent_class is DDPG:
        del options["policy_delay"]
    agents = []
    for trainer_class, trainer_cfg in ((SequentialTrainer, {"headless": True}), (CompiledTrainer, {})):
        env = pendulum()
        agent = make_deterministic(agent_class, env, **options)
        trainer_class(env=env, agents=agent, cfg={**QUIET, "timesteps": 7, **trainer_cfg}).train()
        agents.append((agent, env))
    (sequential, sequential_env), (compiled, compiled_env) = agents
    fresh = make_deterministic(agent_class, pendulum(), **options)
    assert not np.allclose(
        fresh.policy.state_dict.params["params"]["Dense_0"]["kernel"],
        compiled.policy.state_dict.params["params"]["Dense_0"]["kernel"],
    )
    leaves = lambda agent: jax.tree_util.tree_leaves(agent.gather_learner())  # noqa: E731
    for a, b in zip(leaves(sequential), leaves(compiled), strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), atol=1e-5, rtol=1e-5)
    for name in TRANSITION_NAMES:
        np.testing.assert_allclose(sequential.memory.tensors[name], compiled.memory.tensors[name], atol=1e-6)
    assert compiled.memory.filled and compiled.memory.memory_index == 3
    np.testing.assert_allclose(sequential_env.carry[1], compiled_env.carry[1], atol=1e-5)
    if agent_class is TD3:
        assert int(compiled._critic_updates) == 8  # 4 updates of 2 critic steps: policy steps at 3 and 6


def make_td3(env, **cfg):
    return make_deterministic(TD3, env, **{**DETERMINISTIC_OPTIONS, **TD3_OPTIONS, "policy_delay": 3, **cfg})


def test_vmapped_td3_runs_share_their_critic_step_count_so_the_policy_delay_stays_a_branch(monkeypatch):
    # under vmap a lax.cond on a batched predicate becomes a select computing both branches (the policy step at every
    # critic step); the count, equal in every run, goes in unbatched: the update's and the policy delay's conds stay
    def conds():
        env = pendulum()
        trainer = CompiledTrainer(env=env, agents=make_td3(env), cfg={**QUIET, "timesteps": 4, "seeds": [0, 1]})
        runs, swept = trainer._initial_runs(), trainer._swept_array()
        return str(jax.make_jaxpr(trainer._vmapped_chunk)(runs, jnp.int32(0), swept)).count(" cond[")

    assert conds() == 2
    monkeypatch.setattr(TD3, "compiled_shared_fields", ())
    assert conds() == 1  # the policy delay's cond became a select


def test_a_chunked_td3_run_compiles_once_and_explores_with_fresh_gaussian_noise():
    # TD3: DDPG's compiled acting is the same function (compiled_exploration), and it has no smoothing noise
    agent_class = TD3
    env = pendulum(max_steps=10)
    noises = {"smooth_regularization_noise": GaussianNoise(0, 0.2)}
    exploration = {"noise": GaussianNoise(0, 0.5), "initial_scale": 1.0, "final_scale": 0.5, "timesteps": None}
    agent = make_deterministic(
        agent_class, env, memory_size=16, learning_starts=4, random_timesteps=2, exploration=exploration, **noises
    )
    trainer = CompiledTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 12, "updates_per_chunk": 4})
    metrics = trainer.train()
    assert trainer.compilations == 1  # three chunks, one compiled function
    losses = metrics["Loss / Critic loss"]
    assert np.isnan(losses[:4]).all() and np.isfinite(losses[4:]).all()
    policy_losses = metrics["Loss / Policy loss"]  # one gradient step per update, a policy step every second
    assert np.isnan(policy_losses[4::2]).all() and np.isfinite(policy_losses[5::2]).all()
    # the stored actions after the warm-up are the policy's plus noise drawn afresh at every step, within the bounds
    actions = agent.memory.tensors["actions"][:12, :, 0]
    assert np.abs(actions).max() <= 2 and len(np.unique(np.round(actions[2:], 5))) == actions[2:].size
    trainer.train()  # a second call goes on with the same compiled function and the agent's acting stream
    assert trainer.compilations == 1 and agent.memory.filled


@pytest.mark.parametrize("agent_class", [TD3, DDPG])
def test_a_seeded_ddpg_or_td3_run_draws_fresh_models_with_targets_equal_to_their_sources(agent_class):
    agent = make_deterministic(agent_class, pendulum())
    agent.init()
    learner = agent.gather_learner()._replace(**({"critic_updates": jnp.int32(5)} if agent_class is TD3 else {}))
    fresh = agent.fresh_learner(learner, jax.random.PRNGKey(7))
    flat = lambda params: ravel_pytree(params)[0]  # noqa: E731
    for source in ("policy", "critic_1", "critic_2") if agent_class is TD3 else ("policy", "critic"):
        np.testing.assert_array_equal(flat(getattr(fresh, source)), flat(getattr(fresh, "target_" + source)))
        assert not np.allclose(flat(getattr(fresh, source)), flat(getattr(learner, source)))
    if agent_class is TD3:
        assert int(fresh.critic_updates) == 0  # the policy delay counts from the run's start
        assert not np.allclose(flat(fresh.critic_1), flat(fresh.critic_2))


def test_gaussian_noise_draws_its_mean_and_std_and_the_traced_decay_is_the_neutral_formula():
    samples = off_policy.gaussian_noise(jax.random.PRNGKey(0), (20_000,), GaussianNoise(0.5, 0.2))
    assert samples.dtype == jnp.float32
    np.testing.assert_allclose([samples.mean(), samples.std()], [0.5, 0.2], atol=0.01)
    exploration = {"noise": GaussianNoise(0.0, 1.0), "initial_scale": 1.0, "final_scale": 0.1, "timesteps": 10}
    actions = jnp.zeros((1, 1))
    high = jnp.full((1,), 100.0)
    key = jax.random.PRNGKey(1)
    sample = off_policy.gaussian_noise(key, (1, 1), exploration["noise"])
    explored = jax.jit(
        lambda timestep: off_policy.compiled_exploration(key, actions, exploration, timestep, 10, -high, high)
    )
    for timestep in (0, 5, 10):  # traced: one compilation
        np.testing.assert_allclose(explored(jnp.int32(timestep)), sample * (1 - timestep / 10 * 0.9), rtol=1e-6)
    after = off_policy.compiled_exploration(key, actions + 500, exploration, jnp.int32(11), 10, -high, high)
    np.testing.assert_array_equal(after, actions + 500)  # no noise, no clipping after the decay, as act


def test_ornstein_uhlenbeck_noise_is_refused_with_the_fix():
    env = pendulum()
    ou = OrnsteinUhlenbeckNoise(theta=0.15, sigma=0.1, base_scale=1.0)
    exploration = {**DDPG_DEFAULT_CONFIG["exploration"], "noise": ou}
    with pytest.raises(
        ValueError, match=r"cfg\['exploration'\]\['noise'\] = OrnsteinUhlenbeckNoise: .*use GaussianNoise"
    ):
        CompiledTrainer(env=env, agents=make_deterministic(DDPG, env, exploration=exploration), cfg=QUIET)
    agent = make_deterministic(TD3, env, smooth_regularization_noise=OrnsteinUhlenbeckNoise(0.15, 0.1, 1.0))
    with pytest.raises(ValueError, match=r"cannot compile TD3 with cfg\['smooth_regularization_noise'\] = Ornstein"):
        CompiledTrainer(env=env, agents=agent, cfg=QUIET)
