"""What the JAX agents check at construction (issue 30): value models' and critics' output sizes, critics that ignore
the action, a missing replay memory, memory and noise arguments."""

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from resume_driver import build
from resume_driver import parameters as run_parameters

from skrl_like.jax.agents.a2c import A2C
from skrl_like.jax.agents.ddpg import DDPG
from skrl_like.jax.agents.dqn import DQN
from skrl_like.jax.agents.ppo import PPO
from skrl_like.jax.agents.sac import SAC
from skrl_like.jax.agents.td3 import TD3
from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.resources.noises import GaussianNoise, OrnsteinUhlenbeckNoise
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.jax.utils.model_instantiators import categorical_model, deterministic_model, gaussian_model
from skrl_like.utils import set_seed

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-1, 1, (3,), np.float32)
ACTIONS = gymnasium.spaces.Box(-2, 2, (2,), np.float32)
STATES_ACTIONS = "concatenate([STATES, ACTIONS])"

SAC_CRITICS = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
DDPG_CRITICS = ("critic", "target_critic")


def _initialised(model, role):
    model.init_state_dict(role)
    return model


def critic(role, critic_input=STATES_ACTIONS, output="ONE", observation_space=OBSERVATIONS, action_space=ACTIONS):
    network = [{"name": "net", "input": critic_input, "layers": [8], "activations": "relu"}]
    return _initialised(deterministic_model(observation_space, action_space, network=network, output=output), role)


def deterministic_policy(role, observation_space=OBSERVATIONS, action_space=ACTIONS):
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]
    model = deterministic_model(observation_space, action_space, network=network, output="tanh(ACTIONS)")
    return _initialised(model, role)


def gaussian_policy(observation_space=OBSERVATIONS, action_space=ACTIONS):
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]
    return _initialised(gaussian_model(observation_space, action_space, network=network, output="ACTIONS"), "policy")


def sac_models(observation_space=OBSERVATIONS, action_space=ACTIONS, **critic_options):
    models = {"policy": gaussian_policy(observation_space, action_space)}
    for role in SAC_CRITICS:
        models[role] = critic(role, observation_space=observation_space, action_space=action_space, **critic_options)
    return models


def td3_models(observation_space=OBSERVATIONS, action_space=ACTIONS, **critic_options):
    models = {role: deterministic_policy(role, observation_space, action_space) for role in ("policy", "target_policy")}
    for role in SAC_CRITICS:
        models[role] = critic(role, observation_space=observation_space, action_space=action_space, **critic_options)
    return models


def ddpg_models(observation_space=OBSERVATIONS, action_space=ACTIONS, **critic_options):
    models = {role: deterministic_policy(role, observation_space, action_space) for role in ("policy", "target_policy")}
    for role in DDPG_CRITICS:
        models[role] = critic(role, observation_space=observation_space, action_space=action_space, **critic_options)
    return models


AGENTS = {
    "SAC": (SAC, sac_models, SAC_CRITICS),
    "TD3": (TD3, td3_models, SAC_CRITICS),
    "DDPG": (DDPG, ddpg_models, DDPG_CRITICS),
}


def make(name, models=None, memory="default", observation_space=OBSERVATIONS, action_space=ACTIONS, **cfg):
    agent_class, build_models, _ = AGENTS[name]
    if models is None:
        models = build_models(observation_space, action_space)
    if isinstance(memory, str):
        memory = RandomMemory(memory_size=64, num_envs=1)
    cfg = {"batch_size": 8, "experiment": NO_FILES, **cfg}
    return agent_class(
        models=models, memory=memory, observation_space=observation_space, action_space=action_space, cfg=cfg
    )


def _initialise(model, role, observation_space):
    model.init_state_dict(role)


def pendulum():
    return wrap_env(gymnasium.make("Pendulum-v1"), verbose=False)


def train(agent, env, timesteps=30):
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, **QUIET}).train()
    return agent


def leaves(model):
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(model.state_dict.params)]


# -- output sizes -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_critic_with_two_outputs_is_refused_naming_the_model_and_the_role(name):
    _, build_models, critic_roles = AGENTS[name]
    for role in critic_roles:
        models = build_models()
        models[role] = critic(role, output="ACTIONS")  # one output per action dimension: 2
        with pytest.raises(
            ValueError,
            match=rf"{name}: the '{role}' model \(DeterministicModel\) is a critic .* produces 2 outputs per sample and needs 1: "
            r"give its last layer 1 output",
        ):
            make(name, models=models)


def test_a_ppo_value_model_with_two_outputs_is_refused():
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]
    value = _initialised(deterministic_model(OBSERVATIONS, ACTIONS, network=network, output="ACTIONS"), "value")
    models = {"policy": gaussian_policy(), "value": value}
    memory = RandomMemory(memory_size=16, num_envs=1)
    cfg = {"rollouts": 16, "mini_batches": 1, "experiment": NO_FILES}
    with pytest.raises(
        ValueError, match=r"PPO: the 'value' model .* is a value model .* produces 2 outputs per sample"
    ):
        PPO(models=models, memory=memory, observation_space=OBSERVATIONS, action_space=ACTIONS, cfg=cfg)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_instantiator_made_critics_build_an_agent_that_trains(name, caplog):
    set_seed(0)
    env = pendulum()
    with caplog.at_level("WARNING", logger="skrl_like"):
        agent = make(name, observation_space=env.observation_space, action_space=env.action_space, learning_starts=10)
    assert "whatever the taken action" not in caplog.text  # these critics take the actions
    role = AGENTS[name][2][0]
    before = leaves(agent.models[role])
    train(agent, env)
    env.close()
    assert any(not np.array_equal(old, new) for old, new in zip(before, leaves(agent.models[role])))


# -- memory=None --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_an_agent_without_memory_evaluates_but_refuses_to_train_naming_the_fix(name):
    env = pendulum()
    agent = make(name, memory=None, observation_space=env.observation_space, action_space=env.action_space)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 3, **QUIET})
    trainer.eval()  # evaluation needs no memory, as in skrl
    with pytest.raises(ValueError, match=rf"{name} was created with memory=None: .* memory=RandomMemory\("):
        trainer.train()
    env.close()


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_hand_written_loop_without_memory_fails_at_the_first_update_with_the_fix(name):
    agent = make(name, memory=None, learning_starts=0)
    agent.init()
    with pytest.raises(ValueError, match=r"created with memory=None: .* memory=RandomMemory\("):
        agent.post_interaction(timestep=0, timesteps=10)


# -- exploration noises -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "noise_class, arguments, message",
    [
        (GaussianNoise, {"mean": 0.0, "std": -0.1}, r"GaussianNoise: std must be >= 0, got -0\.1; it is a standard"),
        (GaussianNoise, {"mean": 0.0, "std": "0.1"}, r"GaussianNoise: std must be a finite number, got '0\.1' \(str\)"),
        (GaussianNoise, {"mean": float("nan"), "std": 0.1}, r"GaussianNoise: mean must be a finite number, got nan"),
        (OrnsteinUhlenbeckNoise, {"theta": 0.15, "sigma": -0.1, "base_scale": 1.0}, r"sigma must be >= 0, got -0\.1"),
        (OrnsteinUhlenbeckNoise, {"theta": -0.15, "sigma": 0.1, "base_scale": 1.0}, r"theta must be >= 0, got -0\.15"),
        (OrnsteinUhlenbeckNoise, {"theta": 0.15, "sigma": 0.1, "base_scale": 1.0, "std": -1}, r"std must be >= 0"),
    ],
)
def test_a_noise_refuses_a_parameter_out_of_its_range_naming_it(noise_class, arguments, message):
    with pytest.raises(ValueError, match=message):
        noise_class(**arguments)


def test_a_gaussian_noise_of_zero_std_samples_its_mean():
    noise = GaussianNoise(0.25, 0.0)
    np.testing.assert_array_equal(np.asarray(noise.sample((2, 3))), np.full((2, 3), 0.25, np.float32))


# -- Model.load of an agent file ----------------------------------------------------------------------------------


def test_loading_a_dqn_file_into_a_q_network_suggests_the_module_that_fits(tmp_path):
    space = gymnasium.spaces.Discrete(3)
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]

    def q_network(actions=space):
        return _initialised(deterministic_model(OBSERVATIONS, actions, network=network, output="ACTIONS"), "q_network")

    models = {"q_network": q_network(), "target_q_network": q_network()}
    memory = RandomMemory(memory_size=16, num_envs=1)
    cfg = {"batch_size": 8, "experiment": NO_FILES}
    agent = DQN(models=models, memory=memory, observation_space=OBSERVATIONS, action_space=space, cfg=cfg)
    path = str(tmp_path / "agent.pickle")
    agent.save(path)
    with pytest.raises(ValueError) as raised:
        q_network().load(path)
    message = str(raised.value)
    assert "model.load(path, module='q_network') (also fitting: ['target_q_network'])" in message
    assert "module='optimizer'" not in message
    model = q_network()
    model.load(path, module="q_network")  # the advice works
    expected = jax.tree_util.tree_leaves(agent.q_network.state_dict.params)
    for loaded, saved in zip(jax.tree_util.tree_leaves(model.state_dict.params), expected):
        np.testing.assert_array_equal(np.asarray(loaded), np.asarray(saved))
    with pytest.raises(
        ValueError, match=r"none of them fits this model's parameters .* models are \['q_network', 'target_q_network'\]"
    ):
        q_network(gymnasium.spaces.Discrete(5)).load(path)


# -- critics that ignore the action -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["DDPG", "TD3"])
def test_critics_of_the_states_only_train_with_an_unchanged_policy_and_a_warning(name, caplog):
    set_seed(0)
    env = pendulum()
    models = AGENTS[name][1](env.observation_space, env.action_space, critic_input="STATES")
    with caplog.at_level("WARNING", logger="skrl_like"):
        agent = make(
            name,
            models=models,
            observation_space=env.observation_space,
            action_space=env.action_space,
            learning_starts=10,
        )
    assert f"{name}: the critic(s) {list(AGENTS[name][2])} give the same value whatever the taken action" in caplog.text
    before = {role: leaves(agent.models[role]) for role in ("policy", AGENTS[name][2][0])}
    train(agent, env)  # skrl trains: the policy's gradient is zero
    env.close()
    policy_role, critic_role = "policy", AGENTS[name][2][0]
    after = {role: leaves(agent.models[role]) for role in before}
    assert all(np.array_equal(old, new) for old, new in zip(before[policy_role], after[policy_role]))
    assert any(not np.array_equal(old, new) for old, new in zip(before[critic_role], after[critic_role]))


# -- the tracked standard deviation -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["PPO", "A2C"])
@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_only_a_policy_with_a_standard_deviation_tracks_it(name, env_id):
    agent_class = {"PPO": PPO, "A2C": A2C}[name]
    env = wrap_env(gymnasium.make(env_id), verbose=False)
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]
    if env_id == "CartPole-v1":
        policy = categorical_model(env.observation_space, env.action_space, network=network, output="ACTIONS")
    else:
        policy = gaussian_model(env.observation_space, env.action_space, network=network, output="ACTIONS")
    value = deterministic_model(env.observation_space, env.action_space, network=network, output="ONE")
    models = {"policy": policy, "value": value}
    for role, model in models.items():
        _initialise(model, role, env.observation_space)
    cfg = {"rollouts": 16, "mini_batches": 2, "experiment": {"write_interval": 1000, "checkpoint_interval": 0}}
    agent = agent_class(
        models=models,
        memory=RandomMemory(memory_size=16, num_envs=env.num_envs),
        observation_space=env.observation_space,
        action_space=env.action_space,
        cfg=cfg,
    )
    train(agent, env, timesteps=32)  # two updates, no write: everything tracked is still held
    env.close()
    assert len(agent.tracking_data["Loss / Policy loss"]) == 2
    if env_id == "CartPole-v1":  # categorical: no standard deviation (was NaN at every write)
        assert "Policy / Standard deviation" not in agent.tracking_data
    else:
        values = [float(value) for value in agent.tracking_data["Policy / Standard deviation"]]
        assert len(values) == 2 and all(value > 0 for value in values)


# -- a memory without replacement holding fewer rows than a batch -------------------------------------------------


@pytest.mark.parametrize("name", ["SAC", "TD3"])
def test_a_memory_without_replacement_keeps_the_update_compiled_once_while_it_fills(name, tmp_path):
    env = pendulum()
    memory = RandomMemory(memory_size=64, num_envs=1, replacement=False)
    experiment = {"write_interval": 1000, "checkpoint_interval": 0, "directory": str(tmp_path)}
    spaces = {"observation_space": env.observation_space, "action_space": env.action_space}
    agent = make(name, memory=memory, batch_size=16, experiment=experiment, **spaces)
    train(agent, env, timesteps=24)  # updates from the first step: 1 to 16 rows, then 17 to 24
    env.close()
    assert agent._update_fn._cache_size() == 1  # skrl's shorter batches: one compilation per row count (16 more)
    assert len(agent.tracking_data["Loss / Critic loss"]) == 24


def test_a_batch_without_replacement_holds_every_stored_row_then_repeats():
    memory = RandomMemory(memory_size=10, num_envs=1, replacement=False)
    memory.create_tensor(name="states", size=1, dtype=np.float32)
    memory.add_samples(states=np.arange(3, dtype=np.float32).reshape(3, 1))
    from skrl_like.jax.agents.off_policy import sample_batches

    (states,) = sample_batches(memory, ("states",), batch_size=8, gradient_steps=2)
    assert states.shape == (2, 8, 1)
    for batch in np.asarray(states)[..., 0]:
        assert sorted(batch[:3].tolist()) == [0.0, 1.0, 2.0]  # every stored row once
        assert set(batch[3:].tolist()) <= {0.0, 1.0, 2.0}
    memory.add_samples(states=np.arange(3, 10, dtype=np.float32).reshape(7, 1))
    (states,) = sample_batches(memory, ("states",), batch_size=8, gradient_steps=1)
    assert len(set(np.asarray(states).ravel().tolist())) == 8  # enough rows: no row twice


# -- the exploration noise's decay over a resumed run -------------------------------------------------------------


def test_a_run_resumed_with_more_timesteps_keeps_the_noise_decay_of_its_first_start(tmp_path):
    """tests/resume_driver.py's TD3 (exploration timesteps None): 12 steps saved, then resumed for 24 in total. The
    decay stays the first start's 12 steps (it followed the new total: the noise came back after the resume)."""
    first = build("jax", "td3", 12, str(tmp_path / "first"))
    first.train()
    assert first.agents._noise_decay_timesteps == 12
    first.save(str(tmp_path / "half.ckpt"))
    resumed = build("jax", "td3", 24, str(tmp_path / "resumed"))
    assert resumed.agents._noise_decay_timesteps == 24  # a new run: the decay follows its own total
    resumed.agents.set_running_mode("eval")  # no warm-up random actions (train() sets 'train' again)
    states = jnp.zeros((2, 3), jnp.float32)
    actions, _, outputs = resumed.agents.act(states, timestep=16, timesteps=24)
    assert not np.array_equal(
        np.asarray(actions), np.asarray(outputs["mean_actions"])
    )  # noise at step 16 of a 24-step decay
    resumed.restore(str(tmp_path / "half.ckpt"))
    assert resumed.agents._noise_decay_timesteps == 12
    resumed.train()
    continued = build("jax", "td3", 12, str(tmp_path / "continued"))  # the same run continued in its process
    continued.train()
    continued.timesteps = 24
    continued.train()
    expected, found = run_parameters(continued), run_parameters(resumed)
    assert sorted(expected) == sorted(found)
    differing = [name for name in expected if not np.array_equal(expected[name], found[name])]
    assert not differing, f"{len(differing)} of {len(expected)} arrays differ, e.g. {differing[:3]}"
    resumed.agents.set_running_mode("eval")
    actions, _, outputs = resumed.agents.act(states, timestep=16, timesteps=24)
    assert np.array_equal(np.asarray(actions), np.asarray(outputs["mean_actions"]))  # the decay ended at 12: no noise


def test_a_dqn_without_memory_refuses_to_train_naming_the_fix():
    env = wrap_env(gymnasium.make("CartPole-v1"), verbose=False)
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]
    models = {
        role: _initialised(
            deterministic_model(env.observation_space, env.action_space, network=network, output="ACTIONS"), role
        )
        for role in ("q_network", "target_q_network")
    }
    agent = DQN(
        models=models,
        memory=None,
        observation_space=env.observation_space,
        action_space=env.action_space,
        cfg={"experiment": NO_FILES},
    )
    with pytest.raises(ValueError, match=r"DQN was created with memory=None: .* memory=RandomMemory\("):
        SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 3, **QUIET}).train()
    env.close()
