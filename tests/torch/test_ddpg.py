"""DDPG (torch): the config, one update against a NumPy reference, terminal observations, exploration, save/load,
determinism, short runs, bad input and a learning check."""

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn
from ddpg_reference import ACTION_SIZE, OBSERVATION_SIZE, Bandit, Counter, Linear, Reference, random_linear, stacked
from ddpg_reference import transitions as random_transitions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skrl_like.torch.agents.ddpg import DDPG, DDPG_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, Model
from skrl_like.torch.resources.noises import GaussianNoise
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.torch.models import StateActionCritic

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
ROLES = ("policy", "target_policy", "critic", "target_critic")
OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (OBSERVATION_SIZE,), np.float32)
ACTIONS = gymnasium.spaces.Box(-1, 1, (ACTION_SIZE,), np.float32)


class Actor(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, hidden=0, clip_actions=False):
        Model.__init__(self, observation_space, action_space, "cpu")
        DeterministicMixin.__init__(self, clip_actions=clip_actions)
        if hidden:
            self.net = nn.Sequential(
                nn.Linear(self.num_observations, hidden), nn.Tanh(), nn.Linear(hidden, self.num_actions), nn.Tanh()
            )
        else:
            self.net = nn.Linear(self.num_observations, self.num_actions)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def make_models(observation_space=OBSERVATIONS, action_space=ACTIONS, hidden=0):
    return {
        role: Actor(observation_space, action_space, hidden)
        if "policy" in role
        else StateActionCritic(observation_space, action_space, hidden)
        for role in ROLES
    }


def make_ddpg(env=None, memory_size=64, num_envs=None, models=None, memory=None, hidden=0, action_space=None, **cfg):
    observation_space = env.observation_space if env is not None else OBSERVATIONS
    action_space = action_space or (env.action_space if env is not None else ACTIONS)
    num_envs = num_envs or (env.num_envs if env is not None else 1)
    memory = memory if memory is not None else RandomMemory(memory_size=memory_size, num_envs=num_envs, device="cpu")
    return DDPG(
        models=models or make_models(observation_space, action_space, hidden),
        memory=memory,
        cfg={"experiment": NO_FILES, **cfg},
        observation_space=observation_space,
        action_space=action_space,
        device="cpu",
    )


def set_linear(layer, params: Linear):
    with torch.no_grad():
        layer.weight.copy_(torch.as_tensor(params.weight))
        layer.bias.copy_(torch.as_tensor(params.bias))


def as_linear(layer) -> Linear:
    return Linear(layer.weight.detach().double().numpy(), layer.bias.detach().double().numpy())


def pendulum(num_envs=1):
    return wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=num_envs, vectorization_mode="sync"), verbose=False)


def tracked(agent, tag):
    return [float(value) for value in agent.tracking_data[tag]]


# -- config ------------------------------------------------------------------------------------------------------


def test_the_default_config_has_the_keys_and_defaults_of_the_spec():
    expected = {
        "gradient_steps": 1,
        "batch_size": 64,
        "discount_factor": 0.99,
        "polyak": 0.005,
        "actor_learning_rate": 1e-3,
        "critic_learning_rate": 1e-3,
        "learning_rate_scheduler": None,
        "learning_rate_scheduler_kwargs": {},
        "state_preprocessor": None,
        "state_preprocessor_kwargs": {},
        "privileged_state_preprocessor": None,  # not in skrl 1.4: the privileged states' own (skrl 2.x's)
        "privileged_state_preprocessor_kwargs": {},
        "random_timesteps": 0,
        "learning_starts": 0,
        "grad_norm_clip": 0,
        "exploration": {"noise": None, "initial_scale": 1.0, "final_scale": 1e-3, "timesteps": None},
        "rewards_shaper": None,
        "mixed_precision": False,
    }
    config = dict(DDPG_DEFAULT_CONFIG)
    experiment = config.pop("experiment")
    assert config == expected and list(config) == list(expected)
    assert set(experiment) == {
        "directory",
        "experiment_name",
        "write_interval",
        "checkpoint_interval",
        "store_separately",
        "checkpoint_memory",
        "wandb",
        "wandb_kwargs",
    }


# -- one update against the NumPy reference -----------------------------------------------------------------------


@pytest.mark.parametrize("grad_norm_clip", [0.0, 0.05])
def test_two_gradient_steps_match_the_numpy_reference(grad_norm_clip):
    cfg = {
        "gradient_steps": 2,
        "batch_size": 8,
        "discount_factor": 0.9,
        "polyak": 0.25,
        "actor_learning_rate": 0.01,
        "critic_learning_rate": 0.02,
        "grad_norm_clip": grad_norm_clip,
    }
    rng = np.random.default_rng(0)
    policy, critic = (
        random_linear(rng, OBSERVATION_SIZE, ACTION_SIZE),
        random_linear(rng, OBSERVATION_SIZE + ACTION_SIZE, 1),
    )
    models = make_models()
    for role in ROLES:
        set_linear(models[role].net, policy if "policy" in role else critic)
    # a batch of the whole memory without replacement: both steps see the 8 rows (in some order)
    agent = make_ddpg(
        models=models, memory=RandomMemory(memory_size=4, num_envs=2, device="cpu", replacement=False), **cfg
    )
    agent.init()
    steps = random_transitions(rng, 4, 2)
    for step in steps:
        agent.record_transition(**{k: torch.as_tensor(v) for k, v in step.items()}, infos={}, timestep=0, timesteps=10)
    agent.post_interaction(timestep=0, timesteps=10)

    reference = Reference(policy, critic, {**DDPG_DEFAULT_CONFIG, **cfg})
    batch = stacked(steps)
    for _ in range(2):
        reference.step(**batch)
    for role, expected in (
        ("policy", reference.policy),
        ("critic", reference.critic),
        ("target_policy", reference.target_policy),
        ("target_critic", reference.target_critic),
    ):
        found = as_linear(agent.models[role].net)
        np.testing.assert_allclose(found.weight, expected.weight, atol=1e-5, err_msg=role)
        np.testing.assert_allclose(found.bias, expected.bias, atol=1e-5, err_msg=role)
    records = reference.records
    np.testing.assert_allclose(tracked(agent, "Loss / Critic loss"), [r["critic_loss"] for r in records], rtol=1e-5)
    np.testing.assert_allclose(tracked(agent, "Loss / Policy loss"), [r["policy_loss"] for r in records], rtol=1e-5)
    for index, reduction in enumerate(("max", "min", "mean")):
        np.testing.assert_allclose(
            tracked(agent, f"Target / Target ({reduction})"), [r["targets"][index] for r in records], rtol=1e-5
        )
        np.testing.assert_allclose(
            tracked(agent, f"Q-network / Q1 ({reduction})"), [r["q"][index] for r in records], rtol=1e-5
        )


def test_an_update_moves_the_critic_toward_the_targets_the_actor_up_the_critic_and_the_targets_by_polyak():
    rng = np.random.default_rng(1)
    agent = make_ddpg(
        memory=RandomMemory(memory_size=4, num_envs=2, device="cpu", replacement=False), batch_size=8, polyak=0.1
    )
    agent.init()
    steps = random_transitions(rng, 4, 2)
    for step in steps:
        agent.record_transition(**{k: torch.as_tensor(v) for k, v in step.items()}, infos={}, timestep=0, timesteps=10)
    before = {role: as_linear(agent.models[role].net) for role in ROLES}
    agent.post_interaction(timestep=0, timesteps=10)
    after = {role: as_linear(agent.models[role].net) for role in ROLES}

    from ddpg_reference import actor, critic

    batch = stacked(steps)
    states = batch["states"]
    # the TD targets of the batch, from the targets before the update (the copies of the online models)
    not_done = 1.0 - batch["terminated"]  # a truncated row bootstraps
    targets = batch["rewards"] + 0.99 * not_done * critic(
        before["target_critic"], batch["next_states"], actor(before["target_policy"], batch["next_states"])
    )
    error = lambda params: np.mean((critic(params, states, batch["actions"]) - targets) ** 2)  # noqa: E731
    assert error(after["critic"]) < error(before["critic"])
    assert (
        critic(after["critic"], states, actor(after["policy"], states)).mean()
        > critic(after["critic"], states, actor(before["policy"], states)).mean()
    )
    for target, online in (("target_policy", "policy"), ("target_critic", "critic")):
        np.testing.assert_allclose(
            after[target].weight, 0.1 * after[online].weight + 0.9 * before[target].weight, atol=1e-6
        )


# -- transitions ---------------------------------------------------------------------------------------------------


def test_a_truncated_sub_env_stores_its_terminal_observation_as_next_state():
    vector = gymnasium.vector.SyncVectorEnv(
        [lambda: Counter(2, 10.0), lambda: Counter(5, 20.0)], autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP
    )
    env = wrap_env(vector, verbose=False)
    agent = make_ddpg(env, memory_size=8, batch_size=2, learning_starts=100)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 3}).train()
    states = agent.memory.get_tensor_by_name("states")[:3].numpy()
    next_states = agent.memory.get_tensor_by_name("next_states")[:3].numpy()
    truncated = agent.memory.get_tensor_by_name("truncated")[:3].numpy()
    # sub-env 0: 0 -> 1, 1 -> 2 (truncated: the state reached, not the reset one), then 0 -> 1 again
    np.testing.assert_array_equal(states[:, 0, 0], [0, 1, 0])
    np.testing.assert_array_equal(next_states[:, 0, 0], [1, 2, 1])
    np.testing.assert_array_equal(truncated[:, 0, 0], [False, True, False])
    np.testing.assert_array_equal(next_states[:, 1, 0], [1, 2, 3])


def test_evaluation_neither_stores_nor_updates():
    env = pendulum()
    agent = make_ddpg(env, batch_size=4)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 5}).eval()
    assert len(agent.memory) == 0 and not agent.tracking_data["Loss / Critic loss"]


# -- exploration ---------------------------------------------------------------------------------------------------


def test_act_adds_the_scaled_noise_clipped_to_the_bounds_and_none_after_the_decay():
    class Constant:
        def sample(self, size):
            return torch.full(size, 0.5)

    agent = make_ddpg(exploration={"noise": Constant(), "initial_scale": 3.0, "final_scale": 1.0, "timesteps": 4})
    agent.init()
    states = torch.zeros((2, OBSERVATION_SIZE))
    with torch.no_grad():
        clean = agent.policy.act({"states": states}, role="policy")[0]
    # timestep 2: scale (1 - 2/4) * (3 - 1) + 1 = 2, noise 1.0, then clipped to [-1, 1]
    actions, log_prob, outputs = agent.act(states, timestep=2, timesteps=10)
    assert log_prob is None
    np.testing.assert_allclose(actions.numpy(), np.clip(clean.numpy() + 1.0, -1, 1), atol=1e-6)
    np.testing.assert_allclose(outputs["mean_actions"].numpy(), clean.numpy())  # what deterministic evaluation plays
    assert tracked(agent, "Exploration / Exploration noise (mean)") == [1.0]
    actions, _, _ = agent.act(states, timestep=5, timesteps=10)  # after the decay: no noise at all
    np.testing.assert_allclose(actions.numpy(), clean.numpy(), atol=1e-6)
    assert tracked(agent, "Exploration / Exploration noise (max)") == [1.0, 0.0]


def test_a_multi_dimensional_box_is_acted_on_as_flat_rows_within_its_bounds():
    box = gymnasium.spaces.Box(np.full((2, 2), -1.0, np.float32), np.array([[1, 2], [3, 4]], np.float32))
    agent = make_ddpg(
        models=make_models(OBSERVATIONS, box),
        action_space=box,
        exploration={
            "noise": GaussianNoise(0, 100.0, device="cpu"),
            "initial_scale": 1.0,
            "final_scale": 1.0,
            "timesteps": None,
        },
    )
    agent.init()
    actions, _, _ = agent.act(torch.zeros((3, OBSERVATION_SIZE)), timestep=0, timesteps=10)
    assert actions.shape == (3, 4)
    assert (actions >= -1).all() and (actions <= torch.tensor([1.0, 2.0, 3.0, 4.0])).all()


def test_random_timesteps_act_uniformly_inside_the_bounds():
    set_seed(0)
    agent = make_ddpg(random_timesteps=3)
    agent.init()
    actions, _, _ = agent.act(torch.zeros((500, OBSERVATION_SIZE)), timestep=2, timesteps=10)
    assert actions.min() >= -1 and actions.max() <= 1 and abs(float(actions.mean())) < 0.1 and actions.std() > 0.5


def test_evaluation_plays_the_actor_without_random_actions_or_noise():
    agent = make_ddpg(
        random_timesteps=100,
        exploration={
            "noise": GaussianNoise(0, 1.0, device="cpu"),
            "initial_scale": 1.0,
            "final_scale": 1.0,
            "timesteps": None,
        },
    )
    agent.init()
    agent.set_running_mode("eval")
    states = torch.randn((4, OBSERVATION_SIZE))
    with torch.no_grad():
        clean = agent.policy.act({"states": states}, role="policy")[0]
    _, _, outputs = agent.act(states, timestep=0, timesteps=10)
    torch.testing.assert_close(outputs["mean_actions"], clean)


def test_ddpg_is_td3_with_one_critic_no_policy_delay_and_no_smoothing_behind_skrl_names():
    from skrl_like.torch.agents.td3 import TD3

    agent = make_ddpg()
    assert isinstance(agent, TD3)
    assert list(agent.checkpoint_modules) == [*ROLES, "policy_optimizer", "critic_optimizer"]
    assert agent.critic is agent.models["critic"] and not hasattr(agent, "critic_2")
    assert not {"policy_delay", "smooth_regularization_noise", "smooth_regularization_clip"} & set(DDPG_DEFAULT_CONFIG)
    with pytest.raises(ValueError, match=r"Unknown key 'policy_delay' in DDPG cfg"):
        make_ddpg(policy_delay=2)


# -- save / load, determinism, runs ---------------------------------------------------------------------------------


def test_save_load_round_trip_restores_models_targets_and_optimizers(tmp_path):
    set_seed(0)
    env = pendulum()
    agent = make_ddpg(
        env,
        batch_size=8,
        hidden=8,
        state_preprocessor=RunningStandardScaler,
        state_preprocessor_kwargs={"size": env.observation_space, "device": "cpu"},
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 20}).train()
    agent.save(str(tmp_path / "agent.pt"))
    saved = {name: agent._get_internal_value(module) for name, module in agent.checkpoint_modules.items()}
    assert set(saved) == {*ROLES, "policy_optimizer", "critic_optimizer", "state_preprocessor"}
    saved = {
        name: {k: v.clone() if torch.is_tensor(v) else v for k, v in state.items()}
        for name, state in saved.items()
        if "optimizer" not in name
    }

    other = make_ddpg(
        env,
        batch_size=8,
        hidden=8,
        state_preprocessor=RunningStandardScaler,
        state_preprocessor_kwargs={"size": env.observation_space, "device": "cpu"},
    )
    other.load(str(tmp_path / "agent.pt"))
    for name, state in saved.items():
        for key, value in state.items():
            torch.testing.assert_close(other.checkpoint_modules[name].state_dict()[key], value, msg=f"{name}.{key}")
    assert (
        other.policy_optimizer.state_dict()["state"][0]["step"]
        == agent.policy_optimizer.state_dict()["state"][0]["step"]
        > 0
    )


def _short_run(seed):
    set_seed(seed)
    env = pendulum(num_envs=2)
    agent = make_ddpg(
        env,
        batch_size=16,
        hidden=8,
        random_timesteps=5,
        learning_starts=5,
        exploration={
            "noise": GaussianNoise(0, 0.2, device="cpu"),
            "initial_scale": 1.0,
            "final_scale": 0.1,
            "timesteps": None,
        },
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 30}).train()
    return agent


def test_a_fixed_seed_reproduces_a_short_run():
    first, second, other = _short_run(3), _short_run(3), _short_run(4)
    assert tracked(first, "Loss / Critic loss") == tracked(second, "Loss / Critic loss")
    for a, b in zip(first.policy.parameters(), second.policy.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert tracked(first, "Loss / Critic loss") != tracked(other, "Loss / Critic loss")


@pytest.mark.parametrize("num_envs", [1, 3])
def test_short_runs_update_once_per_step_from_learning_starts(num_envs):
    set_seed(0)
    env = pendulum(num_envs)
    agent = make_ddpg(env, batch_size=8, hidden=8, gradient_steps=2, learning_starts=4)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 10}).train()
    assert len(agent.memory) == 10 * num_envs  # rows
    assert len(tracked(agent, "Loss / Critic loss")) == (10 - 4) * 2
    assert np.isfinite(tracked(agent, "Loss / Policy loss")).all()


def test_a_learning_rate_scheduler_steps_both_optimizers_every_gradient_step():
    env = pendulum()
    agent = make_ddpg(
        env,
        batch_size=4,
        actor_learning_rate=1e-3,
        critic_learning_rate=2e-3,
        learning_rate_scheduler=torch.optim.lr_scheduler.ExponentialLR,
        learning_rate_scheduler_kwargs={"gamma": 0.5},
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 6}).train()
    np.testing.assert_allclose(tracked(agent, "Learning / Policy learning rate"), [1e-3 * 0.5**k for k in range(1, 7)])
    np.testing.assert_allclose(tracked(agent, "Learning / Critic learning rate"), [2e-3 * 0.5**k for k in range(1, 7)])


# -- bad input -----------------------------------------------------------------------------------------------------


def test_a_discrete_action_space_is_rejected_with_the_alternative():
    with pytest.raises(ValueError, match=r"DDPG needs continuous \(Box\) actions.*use DQN or DDQN"):
        DDPG(
            models=make_models(),
            memory=None,
            observation_space=OBSERVATIONS,
            action_space=gymnasium.spaces.Discrete(3),
            cfg={"experiment": NO_FILES},
        )


def test_a_missing_target_is_named():
    models = make_models()
    del models["target_critic"]
    with pytest.raises(ValueError, match=r"needs a model for role\(s\) \['target_critic'\]"):
        make_ddpg(models=models)


def test_a_target_of_another_architecture_is_rejected():
    models = make_models()
    models["target_critic"] = StateActionCritic(OBSERVATIONS, ACTIONS, hidden=4)
    with pytest.raises(ValueError, match="'target_critic' model .* does not have the architecture of 'critic'"):
        make_ddpg(models=models)


def test_a_batch_larger_than_the_memory_is_rejected():
    with pytest.raises(ValueError, match=r"batch_size'\] = 64 is larger than the memory's 20 rows"):
        make_ddpg(memory_size=10, num_envs=2)


def test_a_policy_with_the_wrong_number_of_outputs_is_rejected():
    models = make_models()
    models["policy"] = Actor(OBSERVATIONS, gymnasium.spaces.Box(-1, 1, (ACTION_SIZE + 1,)))
    models["policy"].action_space = ACTIONS  # built for another space but claiming ours
    with pytest.raises(ValueError, match="'policy' model .* produces 3 outputs per sample"):
        make_ddpg(models=models)


def test_nan_rewards_are_named_at_the_next_update():
    agent = make_ddpg(memory_size=4, batch_size=4)
    agent.init()
    rng = np.random.default_rng(0)
    for step in random_transitions(rng, 4, 1):
        step["rewards"][:] = np.nan
        agent.record_transition(**{k: torch.as_tensor(v) for k, v in step.items()}, infos={}, timestep=0, timesteps=10)
    with pytest.raises(
        FloatingPointError, match="the sampled rewards of gradient step 0 contain NaN/inf .*environment"
    ):
        agent.post_interaction(timestep=0, timesteps=10)


# -- properties and learning -----------------------------------------------------------------------------------------


@settings(derandomize=True, max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    num_envs=st.integers(1, 3),
    gradient_steps=st.integers(1, 3),
    batch_size=st.integers(1, 16),
    discount_factor=st.floats(0, 1),
    polyak=st.sampled_from([0.0, 0.005, 0.5, 1.0]),
    learning_starts=st.integers(0, 6),
    random_timesteps=st.integers(0, 6),
    grad_norm_clip=st.sampled_from([0, 0.5]),
    noise=st.booleans(),
    preprocessor=st.booleans(),
)
def test_drawn_configs_train_with_the_expected_number_of_updates(
    num_envs,
    gradient_steps,
    batch_size,
    discount_factor,
    polyak,
    learning_starts,
    random_timesteps,
    grad_norm_clip,
    noise,
    preprocessor,
):
    set_seed(0)
    env = pendulum(num_envs)
    cfg = {
        "gradient_steps": gradient_steps,
        "batch_size": batch_size,
        "discount_factor": discount_factor,
        "polyak": polyak,
        "learning_starts": learning_starts,
        "random_timesteps": random_timesteps,
        "grad_norm_clip": grad_norm_clip,
        "exploration": {
            "noise": GaussianNoise(0, 0.3, device="cpu") if noise else None,
            "initial_scale": 1.0,
            "final_scale": 1e-3,
            "timesteps": None,
        },
    }
    if preprocessor:
        cfg.update(
            state_preprocessor=RunningStandardScaler,
            state_preprocessor_kwargs={"size": env.observation_space, "device": "cpu"},
        )
    agent = make_ddpg(env, memory_size=16, hidden=4, **cfg)
    target_before = [p.clone() for p in agent.target_critic.parameters()]
    timesteps = 8
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": timesteps}).train()
    updates = max(0, timesteps - learning_starts)
    losses = tracked(agent, "Loss / Critic loss")
    assert len(losses) == updates * gradient_steps and np.isfinite(losses).all()
    assert agent.memory.get_tensor_by_name("actions").shape == (16, num_envs, 1)
    moved = any(not torch.equal(a, b) for a, b in zip(target_before, agent.target_critic.parameters()))
    assert moved == (updates > 0 and polyak > 0)


def test_ddpg_learns_a_one_step_bandit():
    set_seed(0)
    env = wrap_env(gymnasium.vector.SyncVectorEnv([Bandit] * 4), verbose=False)
    models = {
        role: Actor(env.observation_space, env.action_space, 16)
        if "policy" in role
        else StateActionCritic(env.observation_space, env.action_space, 32)
        for role in ROLES
    }
    agent = make_ddpg(
        env,
        models=models,
        memory_size=1000,
        batch_size=64,
        discount_factor=0.0,
        polyak=0.05,
        actor_learning_rate=3e-3,
        critic_learning_rate=3e-3,
        exploration={
            "noise": GaussianNoise(0, 0.3, device="cpu"),
            "initial_scale": 1.0,
            "final_scale": 0.1,
            "timesteps": None,
        },
    )
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 600}).train()
    states = torch.linspace(-0.9, 0.9, 19)[:, None]
    with torch.no_grad():
        actions = agent.policy.act({"states": states}, role="policy")[0]
    # the best action is a = s: a random actor is off by about 0.5 on average
    assert float((actions - states).abs().mean()) < 0.15
