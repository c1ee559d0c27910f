"""CompiledTrainer: the same update as SequentialTrainer from the same weights, keys and data (PPO with its compilable
options, A2C, RPO), one compilation for a whole chunked run, vmapped seeds with a swept learning rate equal to a run
made alone, the trained agent afterwards (save/load/act/evaluation, TensorBoard), and the clear errors."""

import glob
import os

import gymnasium
import jax
import numpy as np
import pytest

gymnax = pytest.importorskip("gymnax")

from skrl_like.jax.agents.a2c import A2C, A2C_DEFAULT_CONFIG  # noqa: E402
from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG  # noqa: E402
from skrl_like.jax.agents.rpo import RPO, RPO_DEFAULT_CONFIG  # noqa: E402
from skrl_like.jax.agents.trpo import TRPO, TRPO_DEFAULT_CONFIG  # noqa: E402
from skrl_like.jax.envs.wrappers import wrap_env  # noqa: E402
from skrl_like.jax.memories import RandomMemory  # noqa: E402
from skrl_like.jax.resources.preprocessors import RunningStandardScaler  # noqa: E402
from skrl_like.jax.resources.schedulers import KLAdaptiveLR, LinearLR  # noqa: E402
from skrl_like.jax.trainers import CompiledTrainer, SequentialTrainer  # noqa: E402
from skrl_like.utils import set_seed  # noqa: E402
from tests.jax.models import CategoricalMlp, PerturbedGaussianPolicy, ValueMlp  # noqa: E402

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"disable_progressbar": True, "close_environment_at_exit": False}
ROLLOUTS, NUM_ENVS = 8, 2


def gymnax_env(name="CartPole-v1", max_steps=6, num_envs=NUM_ENVS):
    env, params = gymnax.make(name)
    return wrap_env(env, verbose=False, num_envs=num_envs, env_params=params.replace(max_steps_in_episode=max_steps))


# every PPO option that compiles: both preprocessors, the KL-adaptive schedule, value clipping, the time-limit
# bootstrap (max_steps=6: truncations in every rollout), the entropy bonus and several mini-batches and epochs
PPO_OPTIONS = {
    "state_preprocessor": RunningStandardScaler,
    "state_preprocessor_kwargs": {"size": 4},
    "value_preprocessor": RunningStandardScaler,
    "value_preprocessor_kwargs": {"size": 1},
    "learning_rate_scheduler": KLAdaptiveLR,
    "learning_rate_scheduler_kwargs": {"kl_threshold": 1e-4},
    "clip_predicted_values": True,
    "time_limit_bootstrap": True,
    "entropy_loss_scale": 0.01,
    "learning_epochs": 2,
    "mini_batches": 2,
    "learning_rate": 3e-3,
}


def linear_decay(start_factor, end_factor, total_iters):
    kwargs = {"start_factor": start_factor, "end_factor": end_factor, "total_iters": total_iters}
    return {"learning_rate_scheduler": LinearLR, "learning_rate_scheduler_kwargs": kwargs}


def make_agent(env, algorithm="PPO", seed=0, memory_size=ROLLOUTS, memory_envs=None, **cfg):
    set_seed(seed)
    algorithm_class, defaults, policy_class = {
        "PPO": (PPO, PPO_DEFAULT_CONFIG, CategoricalMlp),
        "A2C": (A2C, A2C_DEFAULT_CONFIG, CategoricalMlp),
        "RPO": (RPO, RPO_DEFAULT_CONFIG, PerturbedGaussianPolicy),
        "TRPO": (TRPO, TRPO_DEFAULT_CONFIG, PerturbedGaussianPolicy),
    }[algorithm]
    models = {
        "policy": policy_class(env.observation_space, env.action_space),
        "value": ValueMlp(env.observation_space, env.action_space),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    return algorithm_class(
        models=models,
        memory=RandomMemory(memory_size=memory_size, num_envs=memory_envs or env.num_envs),
        cfg={**defaults, "rollouts": ROLLOUTS, "experiment": NO_FILES, **cfg},
        observation_space=env.observation_space,
        action_space=env.action_space,
    )


def learner_leaves(agent):
    return jax.tree_util.tree_leaves((agent.gather_learner(), agent._key))


def assert_same_learners(first, second, atol=1e-5):
    for a, b in zip(learner_leaves(first), learner_leaves(second), strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), atol=atol, rtol=1e-5)


@pytest.mark.parametrize(
    "algorithm, env_name, cfg",
    [
        ("PPO", "CartPole-v1", PPO_OPTIONS),
        # a scheduler that counts its steps in the learner state (one per A2C update)
        ("A2C", "CartPole-v1", {"mini_batches": 2, "learning_rate": 3e-3, **linear_decay(0.5, 0.1, 3)}),
        ("RPO", "Pendulum-v1", {"alpha": 0.3, "learning_rate": 3e-3, "mini_batches": 2, "time_limit_bootstrap": True}),
    ],
)
def test_the_compiled_run_gives_the_sequential_trainers_updates(algorithm, env_name, cfg):
    runs = []
    for trainer_class in (SequentialTrainer, CompiledTrainer):
        env = gymnax_env(env_name)
        agent = make_agent(env, algorithm, **cfg)
        trainer_cfg = {**QUIET, "timesteps": 2 * ROLLOUTS}  # two updates: the second acts with the first's policy
        if trainer_class is SequentialTrainer:
            trainer_cfg["headless"] = True
        trainer_class(env=env, agents=agent, cfg=trainer_cfg).train()
        runs.append((agent, env))
    (sequential, sequential_env), (compiled, compiled_env) = runs
    assert not np.allclose(
        jax.tree_util.tree_leaves(make_agent(gymnax_env(env_name), algorithm, **cfg).policy.state_dict.params)[0],
        jax.tree_util.tree_leaves(compiled.policy.state_dict.params)[0],
    )  # it learned
    assert_same_learners(sequential, compiled)
    # the environments went through the same steps
    np.testing.assert_allclose(sequential_env.carry[1], compiled_env.carry[1], atol=1e-6)


def test_a_chunked_run_compiles_once_and_returns_metrics_per_update(tmp_path):
    env = gymnax_env(max_steps=500)
    experiment = {"directory": str(tmp_path), "experiment_name": "run", "write_interval": 1}
    # the rate decayed linearly to 0 over the run, as PureJaxRL anneals it: one scheduler step per epoch
    anneal = linear_decay(1.0, 0.0, 6 * PPO_DEFAULT_CONFIG["learning_epochs"])
    agent = make_agent(env, experiment=experiment, learning_rate=1e-3, **anneal)
    trainer = CompiledTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 6 * ROLLOUTS, "updates_per_chunk": 2})
    metrics = trainer.train()
    assert trainer.compilations == 1  # three chunks, one compiled function
    np.testing.assert_allclose(metrics["Learning / Learning rate"], 1e-3 * (1 - np.arange(1, 7) / 6), atol=1e-10)
    np.testing.assert_array_equal(metrics["timestep"], np.arange(1, 7) * ROLLOUTS)
    assert metrics["Loss / Policy loss"].shape == (6,) and np.isfinite(metrics["Loss / Value loss"]).all()
    assert set(metrics["Episode / Episodes"]) <= set(range(2 * ROLLOUTS))
    # episodes that ended: CartPole pays 1 per step, so the mean return equals the mean length
    ended = metrics["Episode / Episodes"] > 0
    np.testing.assert_allclose(
        metrics["Reward / Total reward (mean)"][ended], metrics["Episode / Total timesteps (mean)"][ended]
    )
    assert glob.glob(os.path.join(str(tmp_path), "run", "events.out.tfevents.*"))
    # a second train() goes on from the trained state with the same compiled function (the rate stays at 0)
    np.testing.assert_array_equal(trainer.train()["Learning / Learning rate"], np.zeros(6))
    assert trainer.compilations == 1


def test_vmapped_seeds_and_a_swept_rate_equal_runs_made_alone_and_any_run_loads_into_the_agent(tmp_path):
    rates = [3e-3, 1e-2]  # the agent is built with the first

    def train(seeds, rate, sweep=None):
        env = gymnax_env()
        agent = make_agent(env, **{**PPO_OPTIONS, "learning_rate": rate})
        cfg = {**QUIET, "timesteps": 2 * ROLLOUTS, "seeds": seeds, "sweep": sweep}
        trainer = CompiledTrainer(env=env, agents=agent, cfg=cfg)
        return trainer, agent, trainer.train()

    both, both_agent, both_metrics = train([3, 4], rates[0], sweep={"learning_rate": rates})
    assert both_metrics["Loss / Policy loss"].shape == (2, 2)
    run_zero = learner_leaves(both_agent)  # the agent holds run 0 after a vmapped train()
    first = jax.tree_util.tree_leaves(jax.tree_util.tree_map(lambda x: x[0], (both.runs.learner, both.runs.act_key)))
    for a, b in zip(run_zero, first, strict=True):
        np.testing.assert_array_equal(a, b)
    # run 1 (seed 4, the second rate) equals seed 4 trained alone by an agent built with that rate
    alone, alone_agent, alone_metrics = train([4], rates[1])
    both.load_run(1)
    assert_same_learners(both_agent, alone_agent)
    np.testing.assert_allclose(both_metrics["Loss / Value loss"][1], alone_metrics["Loss / Value loss"][0], rtol=1e-5)
    assert not np.allclose(run_zero[0], learner_leaves(both_agent)[0])  # the runs drew their own parameters

    # the loaded run is an ordinary trained agent: save, load, act, the ordinary evaluation
    path = str(tmp_path / "agent.pickle")
    both_agent.save(path)
    env = gymnax_env()
    fresh = make_agent(env, **PPO_OPTIONS)
    fresh.init()
    fresh.load(path)
    states = np.zeros((NUM_ENVS, 4), np.float32)
    fresh.set_running_mode("eval")
    np.testing.assert_allclose(
        fresh.act(states, 0, 1)[2]["net_output"], both_agent.act(states, 0, 1)[2]["net_output"], atol=1e-6
    )
    returns = both.evaluate_episodes(num_episodes=2, max_timesteps=2000)
    assert len(returns) == 2 and all(1 <= r <= 6 for r in returns)  # episodes of at most max_steps=6
    with pytest.raises(IndexError, match="made runs 0..1"):
        both.load_run(2)


def test_each_run_of_a_swept_trpo_value_rate_steps_with_its_own_and_tracks_it_without_a_schedule():
    # TRPO's rate has its own key (value_learning_rate) and tag; the learner state carries it as learning_rate
    rates = [3e-3, 3e-2]
    env = gymnax_env("Pendulum-v1")
    agent = make_agent(env, "TRPO", value_learning_rate=rates[0])
    cfg = {**QUIET, "timesteps": 2 * ROLLOUTS, "sweep": {"value_learning_rate": rates}}
    trainer = CompiledTrainer(env=env, agents=agent, cfg=cfg)
    metrics = trainer.train()
    assert trainer.compilations == 1
    np.testing.assert_allclose(metrics["Learning / Value learning rate"], [[rates[0]] * 2, [rates[1]] * 2], rtol=1e-6)
    np.testing.assert_allclose(trainer.runs.learner.learning_rate, rates, rtol=1e-6)
    # from the same start, the runs' value models learned differently: the rate reached the update
    value = jax.tree_util.tree_leaves(trainer.runs.learner.value)[0]
    assert not np.allclose(value[0], value[1])


def test_clear_errors():
    env = gymnax_env()
    gymnasium_env = wrap_env(
        gymnasium.make_vec("CartPole-v1", num_envs=NUM_ENVS, vectorization_mode="sync"), verbose=False
    )
    with pytest.raises(TypeError, match="needs an environment written in JAX.*train on it with SequentialTrainer"):
        CompiledTrainer(env=gymnasium_env, agents=make_agent(gymnasium_env), cfg=QUIET)
    with pytest.raises(ValueError, match=r"cfg\['random_timesteps'\] = 8: random actions are drawn by NumPy"):
        CompiledTrainer(env=env, agents=make_agent(env, random_timesteps=8), cfg=QUIET)
    with pytest.raises(ValueError, match=r"the memory holds 4 steps but cfg\['rollouts'\] is 8"):
        CompiledTrainer(env=env, agents=make_agent(env, memory_size=4), cfg=QUIET)
    with pytest.raises(ValueError, match="was created with num_envs=3, but the agent steps 2"):
        CompiledTrainer(env=env, agents=make_agent(env, memory_envs=3), cfg=QUIET)
    with pytest.raises(
        ValueError, match=r"\['timesteps'\] \(12\) is not a multiple of the agent's cfg\['rollouts'\] \(8\)"
    ):
        CompiledTrainer(env=env, agents=make_agent(env), cfg={**QUIET, "timesteps": 12})
    with pytest.raises(ValueError, match=r"\['updates_per_chunk'\] \(2\) does not divide the run's 3 updates"):
        CompiledTrainer(env=env, agents=make_agent(env), cfg={**QUIET, "timesteps": 24, "updates_per_chunk": 2})
    with pytest.raises(ValueError, match=r"\['seeds'\] must be None .* or a non-empty list of int seeds"):
        CompiledTrainer(env=env, agents=make_agent(env), cfg={**QUIET, "seeds": "0"})
    with pytest.raises(ValueError, match="Did you mean 'learning_rate'"):
        CompiledTrainer(env=env, agents=make_agent(env), cfg={**QUIET, "sweep": {"learning_rat": [1e-3]}})
    with pytest.raises(ValueError, match="'rollouts' .* shapes the compiled function"):
        CompiledTrainer(env=env, agents=make_agent(env), cfg={**QUIET, "sweep": {"rollouts": [8, 16]}})
    with pytest.raises(ValueError, match="has 2 seeds but cfg\\['sweep'\\] 3 values"):
        CompiledTrainer(
            env=env, agents=make_agent(env), cfg={**QUIET, "seeds": [0, 1], "sweep": {"ratio_clip": [0.1, 0.2, 0.3]}}
        )
    # PPO decides in Python whether it has an entropy term: that value cannot differ between runs of one call
    trainer = CompiledTrainer(
        env=env,
        agents=make_agent(env, entropy_loss_scale=0.01),
        cfg={**QUIET, "timesteps": 8, "sweep": {"entropy_loss_scale": [0.0, 0.01]}},
    )
    with pytest.raises(ValueError, match="makes a Python decision on it"):
        trainer.train()
