"""AMP (torch): the config, the style reward and discriminator loss against NumPy, the GAE variant by hand, the motion
dataset and reply buffer, save/load, determinism, bad input, and one short learning check on the example's setup."""

import math

import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn

from skrl_like import cli
from skrl_like.core.envs.wrappers import env_attribute
from skrl_like.core.runner import read_yaml
from skrl_like.envs.amp_pendulum import reference_motions
from skrl_like.torch.agents.amp import AMP, AMP_DEFAULT_CONFIG
from skrl_like.torch.agents.amp.amp import discriminator_loss, style_reward
from skrl_like.torch.agents.mechanics import compute_gae_with_next_values
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, Model
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed
from tests.examples import load_example

example = load_example("torch", "amp_pendulum")

NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
AMP_SPACE = gymnasium.spaces.Box(-np.inf, np.inf, (6,), dtype=np.float32)

REFERENCE_EPISODES = 2  # the env's reference motions: 400 rows


def motions():
    return reference_motions(episodes=REFERENCE_EPISODES)


def small_env(num_envs=2, **env_kwargs):
    return example.make_env(num_envs, reference_episodes=REFERENCE_EPISODES, **env_kwargs)


def small_agent(env, rollouts=4, **cfg):
    cfg = {"rollouts": rollouts, "amp_batch_size": 64, "learning_epochs": 2, **cfg}
    return example.make_agent(env, experiment=NO_FILES, hidden=(16,), motion_dataset_size=len(motions()), **cfg)


# -- config ----------------------------------------------------------------------------------------------------------


def test_default_config_has_the_spec_keys_and_defaults():
    expected = {
        "rollouts": 16,
        "learning_epochs": 6,
        "mini_batches": 2,
        "discount_factor": 0.99,
        "lambda": 0.95,
        "learning_rate": 5e-5,
        "learning_rate_scheduler": None,
        "learning_rate_scheduler_kwargs": {},
        "state_preprocessor": None,
        "state_preprocessor_kwargs": {},
        "value_preprocessor": None,
        "value_preprocessor_kwargs": {},
        "amp_state_preprocessor": None,
        "amp_state_preprocessor_kwargs": {},
        "random_timesteps": 0,
        "learning_starts": 0,
        "grad_norm_clip": 0.0,
        "ratio_clip": 0.2,
        "value_clip": 0.2,
        "clip_predicted_values": False,
        "entropy_loss_scale": 0.0,
        "value_loss_scale": 2.5,
        "discriminator_loss_scale": 5.0,
        "amp_batch_size": 512,
        "task_reward_weight": 0.0,
        "style_reward_weight": 1.0,
        "discriminator_batch_size": 0,
        "discriminator_reward_scale": 2,
        "discriminator_logit_regularization_scale": 0.05,
        "discriminator_gradient_penalty_scale": 5,
        "discriminator_weight_decay_scale": 0.0001,
        "rewards_shaper": None,
        "time_limit_bootstrap": False,
        "mixed_precision": False,
    }
    assert list(AMP_DEFAULT_CONFIG) == list(expected) + ["experiment"]
    for key, value in expected.items():
        assert AMP_DEFAULT_CONFIG[key] == value and type(AMP_DEFAULT_CONFIG[key]) is type(value), key


# -- the style reward and the discriminator loss against NumPy -------------------------------------------------------


def test_style_reward_is_minus_log_of_one_minus_sigmoid_floored_at_1e_4():
    logits = np.array([-30.0, -2.0, 0.0, 1.5, 9.0, 30.0])
    expected = -np.log(np.maximum(1.0 - 1.0 / (1.0 + np.exp(-logits)), 1e-4)) * 3.0
    got = style_reward(torch.tensor(logits, dtype=torch.float32)[:, None], 3.0)
    np.testing.assert_allclose(got.numpy()[:, 0], expected, rtol=1e-5, atol=1e-6)
    assert got[-1, 0] == pytest.approx(-math.log(1e-4) * 3.0, rel=1e-6)  # the floor


class TinyDiscriminator(DeterministicMixin, Model):
    """``D(x) = w2 . tanh(W1 x + b1) + b2``, with an activation registered after the logit layer (skrl's "last
    module" would be the Identity, which has no weight)."""

    def __init__(self, observation_space=2, action_space=1, device="cpu"):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1), nn.Identity())

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def _numpy_discriminator(W1, b1, w2, b2, x):
    hidden = np.tanh(x @ W1.T + b1)
    logits = hidden @ w2 + b2
    gradient = ((1.0 - hidden**2) * w2) @ W1  # dD/dx per row
    return logits, gradient


def _bce(logits, label):
    return np.mean(np.log1p(np.exp(-logits)) if label else np.log1p(np.exp(logits)))


@pytest.mark.parametrize(
    "logit_reg, penalty, decay", [(0.0, 0.0, 0.0), (0.3, 0.0, 0.0), (0.0, 0.7, 0.0), (0.0, 0.0, 0.2), (0.3, 0.7, 0.2)]
)
def test_discriminator_loss_terms_match_numpy(logit_reg, penalty, decay):
    discriminator = TinyDiscriminator()
    W1 = np.array([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]])
    b1 = np.array([0.1, -0.2, 0.05])
    w2 = np.array([0.7, -0.4, 0.9])
    b2 = np.array([0.3])
    with torch.no_grad():
        discriminator.net[0].weight.copy_(torch.tensor(W1))
        discriminator.net[0].bias.copy_(torch.tensor(b1))
        discriminator.net[2].weight.copy_(torch.tensor(w2[None]))
        discriminator.net[2].bias.copy_(torch.tensor(b2))
    policy = np.array([[0.2, -1.0], [1.5, 0.3]])
    replay = np.array([[-0.7, 0.4]])
    motion = np.array([[0.9, 0.9], [-1.2, 0.5], [0.0, 2.0]])

    policy_logits, _ = _numpy_discriminator(W1, b1, w2, b2, policy)
    replay_logits, _ = _numpy_discriminator(W1, b1, w2, b2, replay)
    motion_logits, motion_gradient = _numpy_discriminator(W1, b1, w2, b2, motion)
    expected = 0.5 * (_bce(np.concatenate([policy_logits, replay_logits]), 0) + _bce(motion_logits, 1))
    expected += logit_reg * np.sum(w2**2)
    expected += penalty * np.mean(np.sum(motion_gradient**2, axis=1))
    expected += decay * (np.sum(W1**2) + np.sum(w2**2))

    def tensor(array):
        return torch.tensor(array, dtype=torch.float32)

    loss = discriminator_loss(
        discriminator, discriminator.net[2], tensor(policy), tensor(replay), tensor(motion), logit_reg, penalty, decay
    )
    assert loss.item() == pytest.approx(expected, rel=1e-5)
    # the gradient penalty stays in the graph (create_graph): its own gradient reaches the first layer's weights
    loss.backward()
    assert discriminator.net[0].weight.grad is not None and torch.isfinite(discriminator.net[0].weight.grad).all()


def test_the_logit_layer_is_the_last_linear_that_runs_not_the_last_registered_module():
    class OutputFirst(DeterministicMixin, Model):
        def __init__(self):
            Model.__init__(self, AMP_SPACE, 1, "cpu")
            DeterministicMixin.__init__(self)
            self.out = nn.Linear(8, 1)  # registered first, runs last
            self.hidden = nn.Linear(6, 8)
            self.activation = nn.ReLU()

        def compute(self, inputs, role):
            return self.out(self.activation(self.hidden(inputs["states"]))), {}

    env = small_env()
    agent = small_agent(env)
    discriminator = OutputFirst()
    agent = AMP(**{**_amp_arguments(env), "models": {**agent.models, "discriminator": discriminator}})
    assert agent._logit_layer is discriminator.out


# -- the GAE variant by hand -----------------------------------------------------------------------------------------


def test_gae_with_next_values_by_hand():
    gamma, lam = 0.9, 0.8
    rewards = [1.0, 0.5, -0.2, 2.0]
    values = [0.3, -0.1, 0.4, 0.6]
    next_values = [0.7, 0.0, 1.1, 0.2]  # step 1 terminated: its next value was zeroed at recording
    dones = [False, True, False, True]  # step 3 truncated: bootstraps from next_values[3], ends the sum
    advantages, advantage = [0.0] * 4, 0.0
    for t in (3, 2, 1, 0):
        advantage = rewards[t] - values[t] + gamma * (next_values[t] + lam * (not dones[t]) * advantage)
        advantages[t] = advantage
    returns = np.array(advantages) + np.array(values)
    normalised = (np.array(advantages) - np.mean(advantages)) / (np.std(advantages, ddof=1) + 1e-8)

    def column(data):
        return torch.tensor(data).reshape(4, 1, 1)

    got_returns, got_advantages = compute_gae_with_next_values(
        column(rewards), column(dones), column(values), column(next_values), gamma, lam
    )
    np.testing.assert_allclose(got_returns.flatten().numpy(), returns, rtol=1e-6)
    np.testing.assert_allclose(got_advantages.flatten().numpy(), normalised, rtol=1e-5, atol=1e-6)


# -- collection, motion dataset and reply buffer ---------------------------------------------------------------------


def test_motion_dataset_prefilled_reply_buffer_filled_after_each_update_and_next_values_stored():
    set_seed(0)
    env = small_env()
    calls = []
    agent = small_agent(env, rollouts=4)
    collect = agent.collect_reference_motions
    agent.collect_reference_motions = lambda n: calls.append(n) or collect(n)
    agent.init(trainer_cfg={"timesteps": 8})
    # pre-fill: ceil(memory_size / amp_batch_size) batches of amp_batch_size
    assert calls == [64] * math.ceil(len(motions()) / 64) and len(agent.motion_dataset) == len(motions())

    states, _ = env.reset()
    stored_amp, stored_next_values = [], []
    for timestep in range(4):
        actions = agent.act(states, timestep, 8)[0]
        next_states, rewards, terminated, truncated, infos = env.step(actions)
        terminated = torch.tensor([[False], [True]])  # pretend env 1 terminated: its next value must be 0
        agent.record_transition(states, actions, rewards, next_states, terminated, truncated, infos, timestep, 8)
        stored_amp.append(torch.as_tensor(infos["amp_obs"]))
        with torch.no_grad():
            values = agent.value.act({"states": agent._state_preprocessor(next_states)}, role="value")[0]
        stored_next_values.append(agent._value_preprocessor(values, inverse=True) * torch.tensor([[1.0], [0.0]]))
        assert len(agent.reply_buffer) == 0
        agent.post_interaction(timestep, 8)
        states = next_states
    torch.testing.assert_close(agent.memory.get_tensor_by_name("next_values"), torch.stack(stored_next_values))
    # one update: one more batch of reference motions, the rollout's AMP observations appended to the reply buffer
    assert calls[-1] == 64 and len(calls) == math.ceil(len(motions()) / 64) + 1
    assert len(agent.reply_buffer) == 8
    torch.testing.assert_close(
        agent.reply_buffer.get_tensor_by_name("states")[:8, 0], torch.cat(stored_amp).reshape(8, 6).float()
    )
    for tag in ("Loss / Discriminator loss", "Reward / Style reward (mean)", "Reward / Combined reward (mean)"):
        assert len(agent.tracking_data[tag]) == 1 and math.isfinite(agent.tracking_data[tag][0])


def test_record_transition_without_amp_obs_names_the_info_key():
    env = small_env()
    agent = small_agent(env)
    agent.init(trainer_cfg={"timesteps": 8})
    states = torch.zeros(2, 3)
    with pytest.raises(KeyError, match=r"infos has no 'amp_obs'.*report it"):
        agent.record_transition(
            states, torch.zeros(2, 1), torch.zeros(2, 1), states, *[torch.zeros(2, 1, dtype=torch.bool)] * 2, {}, 0, 8
        )


def _parameters_after_one_update(**cfg):
    set_seed(1)
    # a 5-step time limit: every rollout has truncated steps
    env = small_env(max_episode_steps=5)
    env._env.reset(seed=1)
    agent = small_agent(env, rollouts=8, task_reward_weight=1.0, **cfg)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 8}).train()
    assert agent.tracking_data["Loss / Value loss"]  # one update ran
    return [parameter.detach().clone() for parameter in agent.value.parameters()]


def test_time_limit_bootstrap_does_not_bootstrap_truncations_twice():
    """Truncated steps bootstrap from V(s_{t+1}) through the stored next values; skrl 1.4.3 also adds gamma * V(s_t)
    to their reward when time_limit_bootstrap is set (a second bootstrap). Here the option changes nothing."""
    without = _parameters_after_one_update(time_limit_bootstrap=False)
    with_bootstrap = _parameters_after_one_update(time_limit_bootstrap=True)
    for a, b in zip(without, with_bootstrap):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


# -- save/load and determinism ---------------------------------------------------------------------------------------


def test_save_load_round_trip_includes_the_discriminator_and_amp_preprocessor(tmp_path):
    set_seed(0)
    env = small_env()
    first = small_agent(env)
    SequentialTrainer(env=env, agents=first, cfg={**QUIET, "timesteps": 8}).train()
    assert {"policy", "value", "discriminator", "optimizer", "amp_state_preprocessor"} <= set(first.checkpoint_modules)
    path = str(tmp_path / "agent.pt")
    first.save(path)

    second = small_agent(env)
    second.load(path)
    amp_states = torch.randn(5, 6)
    outputs = []
    for agent in (first, second):
        processed = agent._amp_state_preprocessor(amp_states)
        outputs.append(agent.discriminator.act({"states": processed}, role="discriminator")[0])
    assert not torch.equal(
        first._amp_state_preprocessor(amp_states), small_agent(env)._amp_state_preprocessor(amp_states)
    )  # the statistics moved during training, so comparing them is meaningful
    torch.testing.assert_close(outputs[0], outputs[1], rtol=0, atol=0)


def _short_run_losses(seed):
    set_seed(seed)
    env = small_env()
    env._env.reset(seed=seed)
    agent = small_agent(env)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 12}).train()
    return [
        float(v) for v in agent.tracking_data["Loss / Discriminator loss"] + agent.tracking_data["Loss / Policy loss"]
    ]


def test_the_example_and_its_tuned_file_train_the_same_agent():
    """examples/torch/amp_pendulum.py and tuned/amp_pendulum.yaml (through the command line's env and the Runner)
    build the same models from the same seed and train them to the same parameters: the file holds the example's
    hyperparameters and models, and the Runner finds the env's AMP attributes in a vector env's sub-env."""
    changes = {"rollouts": 8, "amp_batch_size": 64}
    cfg = read_yaml(cli.resolve_config_path("amp_pendulum"))
    cfg["env"] = {**cfg["env"], "num_envs": 2, "kwargs": {"reference_episodes": REFERENCE_EPISODES}}
    cfg["motion_dataset"]["memory_size"] = len(motions())
    cfg["agent"].update(changes, experiment=NO_FILES)
    cfg["trainer"].update(timesteps=16, disable_progressbar=True)
    runner = cli._build(cfg, "torch")
    runner.run("train")
    set_seed(cfg["seed"])
    env = small_env()
    agent = example.make_agent(env, experiment=NO_FILES, motion_dataset_size=len(motions()), **changes)
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 16}).train()
    assert len(agent.tracking_data["Loss / Policy loss"]) == 2  # two updates
    for role in ("policy", "value", "discriminator"):
        for ours, theirs in zip(runner.agent.models[role].parameters(), agent.models[role].parameters()):
            torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
    runner.trainer.env.close()


def test_a_fixed_seed_gives_identical_losses():
    first, second = _short_run_losses(5), _short_run_losses(5)
    assert len(first) == 6 and first == second
    assert _short_run_losses(6) != first


# -- bad input -------------------------------------------------------------------------------------------------------


def _amp_arguments(env, **changes):
    template = small_agent(env)
    arguments = {
        "models": template.models,
        "memory": RandomMemory(memory_size=4, num_envs=env.num_envs),
        "cfg": {**template.cfg},
        "observation_space": env.observation_space,
        "action_space": env.action_space,
        "amp_observation_space": AMP_SPACE,
        "motion_dataset": RandomMemory(memory_size=100),
        "reply_buffer": RandomMemory(memory_size=100),
        "collect_reference_motions": env_attribute(env, "collect_reference_motions"),
    }
    return {**arguments, **changes}


@pytest.mark.parametrize(
    "keyword", ["amp_observation_space", "motion_dataset", "reply_buffer", "collect_reference_motions"]
)
def test_a_missing_amp_argument_is_named_with_the_fix(keyword):
    env = small_env()
    with pytest.raises(ValueError, match=f"AMP: no {keyword} given.*pass"):
        AMP(**_amp_arguments(env, **{keyword: None}))


def test_amp_observation_space_not_matching_the_discriminator_is_rejected():
    env = small_env()
    # a discriminator built for 6 inputs, an AMP space of 5: the declared space differs
    with pytest.raises(ValueError, match="amp_observation_space has size 5.*observation_space=amp_observation_space"):
        AMP(**_amp_arguments(env, amp_observation_space=5))
    # a discriminator whose declared space matches but whose network takes another size: the probe fails
    odd = example.Deterministic(AMP_SPACE, env.action_space, "cpu", (8,))
    odd.net[0] = nn.Linear(4, 8)
    models = {**small_agent(env).models, "discriminator": odd}
    with pytest.raises(ValueError, match="does not run on AMP observations of size 6"):
        AMP(**_amp_arguments(env, models=models))


def test_a_discriminator_with_more_than_one_output_is_rejected():
    env = small_env()
    wide = example.Deterministic(AMP_SPACE, env.action_space, "cpu", (8,))
    wide.net[-1] = nn.Linear(8, 2)
    with pytest.raises(ValueError, match="produces 2 outputs per sample.*one logit"):
        AMP(**_amp_arguments(env, models={**small_agent(env).models, "discriminator": wide}))


def test_non_box_action_space_and_wrong_memory_size_are_rejected():
    env = small_env()
    with pytest.raises(ValueError, match="action space is Discrete.*Box action space"):
        AMP(**_amp_arguments(env, action_space=gymnasium.spaces.Discrete(3)))
    with pytest.raises(ValueError, match="memory holds 7 steps but cfg\\['rollouts'\\] is 4.*memory_size"):
        AMP(**_amp_arguments(env, memory=RandomMemory(memory_size=7, num_envs=2)))
    with pytest.raises(ValueError, match="reply_buffer must be a sampling memory with num_envs=1"):
        AMP(**_amp_arguments(env, reply_buffer=RandomMemory(memory_size=100, num_envs=2)))


def test_a_missing_role_is_named():
    env = small_env()
    models = {role: model for role, model in small_agent(env).models.items() if role != "discriminator"}
    with pytest.raises(ValueError, match="needs a model for role\\(s\\) \\['discriminator'\\]"):
        AMP(**_amp_arguments(env, models=models))


# -- CI learning check -----------------------------------------------------------------------------------------------


def test_amp_style_reward_rises_on_the_pendulum_example():
    """A silent break of the discriminator/style-reward loop fails the suite. The example's setup (8 envs, task reward
    weight 0: the style reward is the agent's only reward) with 32-unit networks, 4000 steps (125 updates, ~8 s of one
    core): the mean style reward of the last 20 updates against that of updates 5-25 (after the discriminator's first
    fast gains), and Pendulum's own return (never seen by the agent) of the mean action, 5 episodes, before and after.
    Seed 0 (this test): 0.96 -> 1.28, return -1556 -> -1081; seeds 1-4: 1.10 -> 1.34 (-1339 -> -258), 1.11 -> 1.37
    (-1354 -> -490), 1.02 -> 1.30 (-1368 -> -571), 1.02 -> 1.32 (-1337 -> -606). (Reference motions are drawn with
    NumPy's RNG since they moved into skrl_like.envs.amp_pendulum; the figures changed with that stream.)"""
    torch.set_num_threads(1)
    set_seed(0)
    env = example.make_env(reference_episodes=10)
    env._env.reset(seed=0)
    agent = example.make_agent(env, experiment=NO_FILES, hidden=(32, 32), motion_dataset_size=2000)
    untrained = np.mean(example.pendulum_returns(agent, episodes=5))
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 4000}).train()
    style = np.asarray(agent.tracking_data["Reward / Style reward (mean)"], dtype=float)
    trained = np.mean(example.pendulum_returns(agent, episodes=5))
    assert len(style) == 125
    assert style[-20:].mean() > style[5:25].mean() + 0.1, (style[5:25].mean(), style[-20:].mean())
    assert trained > untrained + 300, (untrained, trained)
