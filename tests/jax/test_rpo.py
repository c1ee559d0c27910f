"""RPO (JAX): config, the perturbation drawn with fresh keys (every mini-batch of every update draws new noise,
within alpha), compilation, save/load, determinism and bad input (the update's numbers are checked against torch
in tests/test_rpo_backends_agree.py)."""

import gymnasium
import jax
import numpy as np
import pytest

from skrl_like.jax.agents.ppo import PPO_DEFAULT_CONFIG
from skrl_like.jax.agents.rpo import RPO, RPO_DEFAULT_CONFIG
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.torch.agents.rpo import RPO_DEFAULT_CONFIG as TORCH_RPO_DEFAULT_CONFIG
from skrl_like.utils import set_seed
from tests.jax.models import PerturbedGaussianPolicy, ValueMlp

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
DRAWS = []  # every perturbation the policy drew, as it ran (also inside the compiled update)


class Policy(PerturbedGaussianPolicy):
    """The spec's RPO policy, every perturbation it draws recorded in ``DRAWS``."""

    draws = DRAWS


def pendulum(num_envs=2):
    return wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def make_rpo(env, rollouts=8, memory_size=None, action_space=None, **cfg):
    models = {
        "policy": Policy(env.observation_space, env.action_space),
        "value": ValueMlp(env.observation_space, env.action_space),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {**RPO_DEFAULT_CONFIG, "rollouts": rollouts, "experiment": NO_FILES, **cfg}
    return RPO(
        models=models,
        memory=RandomMemory(memory_size=memory_size or rollouts, num_envs=env.num_envs),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=action_space or env.action_space,
    )


def test_the_default_config_is_torchs_without_mixed_precision_and_ppos_plus_alpha():
    assert RPO_DEFAULT_CONFIG == {
        k: v for k, v in TORCH_RPO_DEFAULT_CONFIG.items() if k not in ("mixed_precision", "compile_update")
    }
    assert {k: v for k, v in RPO_DEFAULT_CONFIG.items() if k != "alpha"} == PPO_DEFAULT_CONFIG


def test_every_mini_batch_of_every_update_draws_a_new_perturbation_within_alpha():
    set_seed(0)
    env = pendulum(num_envs=2)
    agent = make_rpo(env, rollouts=8, alpha=0.3, learning_epochs=2, mini_batches=2)
    DRAWS.clear()
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 16}).train()  # two updates
    jax.effects_barrier()
    by_rows = {rows: [d for d in DRAWS if d.shape[0] == rows] for rows in (2, 16, 8)}
    # acting: 16 steps of 2 envs; per update: log pi_old of 16 samples, then 2 epochs x 2 mini-batches of 8
    assert [len(by_rows[rows]) for rows in (2, 16, 8)] == [16, 2, 8]
    assert len(DRAWS) == 16 + 2 + 8
    for draw in DRAWS:
        assert np.abs(draw).max() <= 0.3  # the perturbed mean stays within alpha of the network's mean
    update_draws = np.stack(by_rows[8])
    assert np.abs(update_draws).max() > 0.25 and update_draws.std() > 0.1  # really spread over (-0.3, 0.3)
    # no two mini-batches (same epoch, other epoch, other update) drew the same noise
    for i in range(len(update_draws)):
        for j in range(i):
            assert not np.allclose(update_draws[i], update_draws[j])
    assert not np.allclose(by_rows[16][0], by_rows[16][1])
    assert agent._update_fn._cache_size() == 1 and agent._act_fn._cache_size() == 1


def test_save_load_round_trip_restores_params(tmp_path):
    set_seed(0)
    env = pendulum()
    first = make_rpo(env, rollouts=4)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 8}).train()
    path = str(tmp_path / "agent.pickle")
    first.save(path)
    second = make_rpo(env, rollouts=4)
    second.init(trainer_cfg={"timesteps": 1})
    second.load(path)
    for a, b in zip(
        jax.tree_util.tree_leaves(first.policy.state_dict.params),
        jax.tree_util.tree_leaves(second.policy.state_dict.params),
    ):
        np.testing.assert_array_equal(a, b)


def _short_run_losses(seed):
    set_seed(seed)
    env = pendulum()
    env._env.reset(seed=seed)
    agent = make_rpo(env, rollouts=4, learning_epochs=2)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 12}).train()
    return [float(v) for v in agent.tracking_data["Loss / Policy loss"] + agent.tracking_data["Loss / Value loss"]]


def test_a_fixed_seed_gives_identical_losses_perturbations_included():
    first, second = _short_run_losses(5), _short_run_losses(5)
    assert len(first) == 6 and first == second
    assert _short_run_losses(6) != first


def test_memory_size_must_equal_rollouts_and_the_error_names_rpo():
    agent = make_rpo(pendulum(), rollouts=8, memory_size=16)
    with pytest.raises(ValueError, match=r"RPO: the memory holds 16 steps but cfg\['rollouts'\] is 8"):
        agent.init(trainer_cfg={"timesteps": 10})


def test_a_discrete_action_space_is_rejected_with_the_fix():
    with pytest.raises(ValueError, match=r"RPO: the action space Discrete\(3\) is not a Box.*use PPO"):
        make_rpo(pendulum(), action_space=gymnasium.spaces.Discrete(3))


def test_unknown_cfg_key_names_rpo():
    with pytest.raises(ValueError, match="Unknown key 'alfa' in RPO cfg. Did you mean 'alpha'"):
        make_rpo(pendulum(), alfa=0.1)
