"""What the torch agents check at construction (issue 30): value models' and critics' output sizes, critics built by
the model instantiators (lazy layers), critics that ignore the action, a missing replay memory, memory and noise
arguments."""

import gymnasium
import numpy as np
import pytest
import torch
from resume_driver import build
from resume_driver import parameters as run_parameters

from skrl_like.cli import tuned_files
from skrl_like.core.runner import RunnerConfigError, read_yaml
from skrl_like.torch.agents.a2c import A2C
from skrl_like.torch.agents.ddpg import DDPG
from skrl_like.torch.agents.dqn import DQN
from skrl_like.torch.agents.ppo import PPO
from skrl_like.torch.agents.sac import SAC
from skrl_like.torch.agents.td3 import TD3
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.resources.noises import GaussianNoise, OrnsteinUhlenbeckNoise
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.torch.utils.model_instantiators import categorical_model, deterministic_model, gaussian_model
from skrl_like.torch.utils.runner import Runner
from skrl_like.utils import set_seed

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
OBSERVATIONS = gymnasium.spaces.Box(-1, 1, (3,), np.float32)
ACTIONS = gymnasium.spaces.Box(-2, 2, (2,), np.float32)
STATES_ACTIONS = "concatenate([STATES, ACTIONS])"

SAC_CRITICS = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
DDPG_CRITICS = ("critic", "target_critic")


def critic(critic_input=STATES_ACTIONS, output="ONE", observation_space=OBSERVATIONS, action_space=ACTIONS):
    """A Q-function from the model instantiators: lazy layers, materialised by the first forward pass."""
    network = [{"name": "net", "input": critic_input, "layers": [8], "activations": "relu"}]
    return deterministic_model(observation_space, action_space, "cpu", network=network, output=output)


def deterministic_policy(observation_space=OBSERVATIONS, action_space=ACTIONS):
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]
    return deterministic_model(observation_space, action_space, "cpu", network=network, output="tanh(ACTIONS)")


def gaussian_policy(observation_space=OBSERVATIONS, action_space=ACTIONS):
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]
    return gaussian_model(observation_space, action_space, "cpu", network=network, output="ACTIONS")


def sac_models(observation_space=OBSERVATIONS, action_space=ACTIONS, **critic_options):
    models = {"policy": gaussian_policy(observation_space, action_space)}
    for role in SAC_CRITICS:
        models[role] = critic(observation_space=observation_space, action_space=action_space, **critic_options)
    return models


def td3_models(observation_space=OBSERVATIONS, action_space=ACTIONS, **critic_options):
    models = {role: deterministic_policy(observation_space, action_space) for role in ("policy", "target_policy")}
    for role in SAC_CRITICS:
        models[role] = critic(observation_space=observation_space, action_space=action_space, **critic_options)
    return models


def ddpg_models(observation_space=OBSERVATIONS, action_space=ACTIONS, **critic_options):
    models = {role: deterministic_policy(observation_space, action_space) for role in ("policy", "target_policy")}
    for role in DDPG_CRITICS:
        models[role] = critic(observation_space=observation_space, action_space=action_space, **critic_options)
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
        memory = RandomMemory(memory_size=64, num_envs=1, device="cpu")
    cfg = {"batch_size": 8, "experiment": NO_FILES, **cfg}
    return agent_class(
        models=models,
        memory=memory,
        observation_space=observation_space,
        action_space=action_space,
        device="cpu",
        cfg=cfg,
    )


def _initialise(model, role, observation_space):
    """Materialise a model's lazy layers (the agents' construction probe does it too; here before the agent)."""
    model.compute({"states": torch.zeros(1, observation_space.shape[0])}, role)


def pendulum():
    return wrap_env(gymnasium.make("Pendulum-v1"), verbose=False)


def train(agent, env, timesteps=30):
    SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, **QUIET}).train()
    return agent


# -- output sizes -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_critic_with_two_outputs_is_refused_naming_the_model_and_the_role(name):
    _, build_models, critic_roles = AGENTS[name]
    for role in critic_roles:
        models = build_models()
        models[role] = critic(output="ACTIONS")  # one output per action dimension: 2
        with pytest.raises(
            ValueError,
            match=rf"{name}: the '{role}' model \(DeterministicModel\) is a critic .* "
            r"produces 2 outputs per sample and needs 1: give its last layer 1 output",
        ):
            make(name, models=models)


def test_a_ppo_value_model_with_two_outputs_is_refused():
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]
    models = {
        "policy": gaussian_policy(),
        "value": deterministic_model(OBSERVATIONS, ACTIONS, "cpu", network=network, output="ACTIONS"),
    }
    memory = RandomMemory(memory_size=16, num_envs=1, device="cpu")
    cfg = {"rollouts": 16, "mini_batches": 1, "experiment": NO_FILES}
    with pytest.raises(
        ValueError, match=r"PPO: the 'value' model .* is a value model .* produces 2 outputs per sample"
    ):
        PPO(models=models, memory=memory, observation_space=OBSERVATIONS, action_space=ACTIONS, device="cpu", cfg=cfg)


# -- critics from the model instantiators (lazy layers) -----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_instantiator_made_critics_build_an_agent_that_trains(name, caplog):
    set_seed(0)
    env = pendulum()
    with caplog.at_level("WARNING", logger="skrl_like"):
        agent = make(name, observation_space=env.observation_space, action_space=env.action_space, learning_starts=10)
    assert "whatever the taken action" not in caplog.text  # these critics take the actions
    before = {role: [p.detach().clone() for p in agent.models[role].parameters()] for role in AGENTS[name][2][:1]}
    train(agent, env)
    env.close()
    for role, parameters in before.items():
        after = list(agent.models[role].parameters())
        assert any(not torch.equal(old, new) for old, new in zip(parameters, after)), f"{role} did not train"


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


# -- memory arguments ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments, name, shown",
    [
        ({"memory_size": 200.7}, "memory_size", r"200\.7 \(float\)"),
        ({"memory_size": "200"}, "memory_size", r"'200' \(str\)"),
        ({"memory_size": True}, "memory_size", r"True \(bool\)"),
        ({"memory_size": 10, "num_envs": 2.5}, "num_envs", r"2\.5 \(float\)"),
        ({"memory_size": 10, "num_envs": "4"}, "num_envs", r"'4' \(str\)"),
    ],
)
def test_a_memory_refuses_counts_that_are_not_whole_numbers_naming_the_argument(arguments, name, shown):
    with pytest.raises(ValueError, match=rf"Memory: {name} must be a whole number, got {shown}: .* as an int"):
        RandomMemory(**arguments, device="cpu")


def test_a_memory_takes_whole_floats_and_numpy_integers_as_ints():
    memory = RandomMemory(memory_size=200.0, num_envs=np.int64(3), device="cpu")
    assert (memory.memory_size, memory.num_envs) == (200, 3)
    assert type(memory.memory_size) is int and type(memory.num_envs) is int


@pytest.mark.parametrize(
    "arguments, name", [({"memory_size": 0}, "memory_size"), ({"memory_size": 4, "num_envs": -1}, "num_envs")]
)
def test_a_memory_refuses_counts_below_one_naming_the_argument(arguments, name):
    with pytest.raises(ValueError, match=rf"Memory: {name} \(-?\d+\) must be at least 1"):
        RandomMemory(**arguments, device="cpu")


def _tuned(name):
    cfg = read_yaml(next(path for path in tuned_files() if path.endswith(name)))
    cfg.pop("env")
    cfg["agent"]["experiment"] = NO_FILES
    cfg["trainer"]["close_environment_at_exit"] = False
    return cfg


def test_a_runner_config_without_memory_section_for_a_replay_agent_asks_for_one():
    cfg = _tuned("sac_pendulum.yaml")
    del cfg["memory"]
    with pytest.raises(RunnerConfigError, match=r"no 'memory' section, and SAC has no rollouts .* memory_size: 100000"):
        Runner(pendulum(), cfg)


@pytest.mark.parametrize("size, shown", [("200", r"'200' \(str\)"), (200.7, r"200\.7 \(float\)")])
def test_a_runner_memory_size_that_is_not_a_whole_number_is_named(size, shown):
    cfg = _tuned("sac_pendulum.yaml")
    cfg["memory"]["memory_size"] = size
    with pytest.raises(RunnerConfigError, match=rf"memory: Memory: memory_size must be a whole number, got {shown}"):
        Runner(pendulum(), cfg)


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
        noise_class(**arguments, device="cpu")


def test_a_gaussian_noise_of_zero_std_samples_its_mean():
    noise = GaussianNoise(0.25, 0.0, device="cpu")
    np.testing.assert_array_equal(np.asarray(noise.sample((2, 3))), np.full((2, 3), 0.25, np.float32))


# -- Model.load of an agent file ----------------------------------------------------------------------------------


def test_loading_a_dqn_file_into_a_q_network_suggests_the_module_that_fits(tmp_path):
    space = gymnasium.spaces.Discrete(3)
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]

    def q_network():
        model = deterministic_model(OBSERVATIONS, space, "cpu", network=network, output="ACTIONS")
        model.compute({"states": torch.zeros(1, 3)}, "q_network")  # materialise the lazy layers
        return model

    models = {"q_network": q_network(), "target_q_network": q_network()}
    memory = RandomMemory(memory_size=16, num_envs=1, device="cpu")
    agent = DQN(
        models=models,
        memory=memory,
        observation_space=OBSERVATIONS,
        action_space=space,
        device="cpu",
        cfg={"batch_size": 8, "experiment": NO_FILES},
    )
    path = str(tmp_path / "agent.pt")
    agent.save(path)
    with pytest.raises(ValueError) as raised:
        q_network().load(path)
    message = str(raised.value)
    assert "model.load(path, module='q_network') (also fitting: ['target_q_network'])" in message
    assert "module='optimizer'" not in message
    model = q_network()
    model.load(path, module="q_network")  # the advice works
    for name, tensor in agent.q_network.state_dict().items():
        assert torch.equal(model.state_dict()[name], tensor)
    other = deterministic_model(OBSERVATIONS, gymnasium.spaces.Discrete(5), "cpu", network=network, output="ACTIONS")
    other.compute({"states": torch.zeros(1, 3)}, "q_network")
    with pytest.raises(
        ValueError,
        match=r"none of them fits this model's parameters .* models are \['q_network', "
        r"'target_q_network'\]",
    ):
        other.load(path)


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
    before = {
        role: [p.detach().clone() for p in agent.models[role].parameters()] for role in ("policy", AGENTS[name][2][0])
    }
    train(agent, env)  # skrl trains: the policy's gradient is zero
    env.close()
    policy_role, critic_role = "policy", AGENTS[name][2][0]
    after = {role: [p.detach() for p in agent.models[role].parameters()] for role in before}
    assert all(torch.equal(old, new) for old, new in zip(before[policy_role], after[policy_role]))
    assert any(not torch.equal(old, new) for old, new in zip(before[critic_role], after[critic_role]))
    assert all(np.isfinite(float(loss)) for loss in agent.tracking_data["Loss / Critic loss"])


# -- the tracked standard deviation -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["PPO", "A2C"])
@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_only_a_policy_with_a_standard_deviation_tracks_it(name, env_id):
    agent_class = {"PPO": PPO, "A2C": A2C}[name]
    env = wrap_env(gymnasium.make(env_id), verbose=False)
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]
    if env_id == "CartPole-v1":
        policy = categorical_model(env.observation_space, env.action_space, "cpu", network=network, output="ACTIONS")
    else:
        policy = gaussian_model(env.observation_space, env.action_space, "cpu", network=network, output="ACTIONS")
    value = deterministic_model(env.observation_space, env.action_space, "cpu", network=network, output="ONE")
    models = {"policy": policy, "value": value}
    for role, model in models.items():
        _initialise(model, role, env.observation_space)
    cfg = {"rollouts": 16, "mini_batches": 2, "experiment": {"write_interval": 1000, "checkpoint_interval": 0}}
    agent = agent_class(
        models=models,
        memory=RandomMemory(memory_size=16, num_envs=env.num_envs, device="cpu"),
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
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


# -- the exploration noise's decay over a resumed run -------------------------------------------------------------


def test_a_run_resumed_with_more_timesteps_keeps_the_noise_decay_of_its_first_start(tmp_path):
    """tests/resume_driver.py's TD3 (exploration timesteps None): 12 steps saved, then resumed for 24 in total. The
    decay stays the first start's 12 steps (it followed the new total: the noise came back after the resume)."""
    first = build("torch", "td3", 12, str(tmp_path / "first"))
    first.train()
    assert first.agents._noise_decay_timesteps == 12
    first.save(str(tmp_path / "half.ckpt"))
    resumed = build("torch", "td3", 24, str(tmp_path / "resumed"))
    assert resumed.agents._noise_decay_timesteps == 24  # a new run: the decay follows its own total
    resumed.agents.set_running_mode("eval")  # no warm-up random actions (train() sets 'train' again)
    states = torch.zeros(2, 3)
    actions, _, outputs = resumed.agents.act(states, timestep=16, timesteps=24)
    assert not torch.equal(actions, outputs["mean_actions"])  # noise at step 16 of a 24-step decay
    resumed.restore(str(tmp_path / "half.ckpt"))
    assert resumed.agents._noise_decay_timesteps == 12
    resumed.train()
    continued = build("torch", "td3", 12, str(tmp_path / "continued"))  # the same run continued in its process
    continued.train()
    continued.timesteps = 24
    continued.train()
    expected, found = run_parameters(continued), run_parameters(resumed)
    assert sorted(expected) == sorted(found)
    differing = [name for name in expected if not np.array_equal(expected[name], found[name])]
    assert not differing, f"{len(differing)} of {len(expected)} arrays differ, e.g. {differing[:3]}"
    resumed.agents.set_running_mode("eval")
    actions, _, outputs = resumed.agents.act(states, timestep=16, timesteps=24)
    assert torch.equal(actions, outputs["mean_actions"])  # the decay ended at 12: no noise


def test_a_dqn_without_memory_refuses_to_train_naming_the_fix():
    env = wrap_env(gymnasium.make("CartPole-v1"), verbose=False)
    network = [{"name": "net", "input": "STATES", "layers": [8], "activations": "relu"}]
    models = {
        role: deterministic_model(env.observation_space, env.action_space, "cpu", network=network, output="ACTIONS")
        for role in ("q_network", "target_q_network")
    }
    for role, model in models.items():
        _initialise(model, role, env.observation_space)
    agent = DQN(
        models=models,
        memory=None,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
        cfg={"experiment": NO_FILES},
    )
    with pytest.raises(ValueError, match=r"DQN was created with memory=None: .* memory=RandomMemory\("):
        SequentialTrainer(env=env, agents=agent, cfg={"timesteps": 3, **QUIET}).train()
    env.close()
