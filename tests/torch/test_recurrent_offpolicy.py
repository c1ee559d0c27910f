"""SAC_RNN, TD3_RNN and DDPG_RNN (torch): the policy's hidden states carried per environment and zeroed at episode
ends, stored with each step and fed (with the episode ends) to every recurrent model of the update on sampled
sequences; run state; clear errors; short runs on Pendulum."""

import functools
import math

import gymnasium
import numpy as np
import pytest
import torch
from recurrent_offpolicy_runner import runner_cfg
from torch import nn

from skrl_like.torch.agents.ddpg import DDPG_RNN
from skrl_like.torch.agents.sac import SAC, SAC_RNN
from skrl_like.torch.agents.td3 import TD3_RNN
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.models.recurrent import hidden_state_sizes, make_recurrent_module, recurrent_forward
from skrl_like.torch.trainers import SequentialTrainer

OBSERVATIONS = gymnasium.spaces.Box(-1.0, 1.0, (3,))
ACTIONS = gymnasium.spaces.Box(-2.0, 2.0, (1,))
NO_FILES = {"write_interval": 0, "checkpoint_interval": 0}
QUIET = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
SAC_ROLES = ("policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")
TD3_ROLES = ("policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")
DDPG_ROLES = ("policy", "target_policy", "critic", "target_critic")


class _Recurrent(Model):
    """A GRU (or LSTM) over the observations, in skrl's layouts (docs/recurrent.md)."""

    def __init__(self, num_envs, sequence_length, kind, hidden):
        Model.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        self.num_envs, self.sequence_length, self.kind, self.hidden = num_envs, sequence_length, kind, hidden
        self.rnn = make_recurrent_module(kind, self.num_observations, hidden)

    def get_specification(self):
        sizes = hidden_state_sizes(self.kind, 1, self.num_envs, self.hidden)
        return {"rnn": {"sequence_length": self.sequence_length, "sizes": sizes}}

    def features(self, inputs):
        return recurrent_forward(
            self.rnn, inputs["states"], inputs["rnn"], self.sequence_length, inputs.get("terminated"), self.training
        )


class GaussianPolicy(GaussianMixin, _Recurrent):
    def __init__(self, num_envs=2, sequence_length=3, kind="GRU", hidden=4):
        _Recurrent.__init__(self, num_envs, sequence_length, kind, hidden)
        GaussianMixin.__init__(self, clip_actions=False)
        self.head = nn.Linear(hidden, self.num_actions)
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role=""):
        features, states = self.features(inputs)
        return self.head(features), self.log_std_parameter, {"rnn": states}


class DeterministicPolicy(DeterministicMixin, _Recurrent):
    def __init__(self, num_envs=2, sequence_length=3, kind="GRU", hidden=4):
        _Recurrent.__init__(self, num_envs, sequence_length, kind, hidden)
        DeterministicMixin.__init__(self, clip_actions=True)
        self.head = nn.Linear(hidden, self.num_actions)

    def compute(self, inputs, role=""):
        features, states = self.features(inputs)
        return torch.tanh(self.head(features)), {"rnn": states}


class Critic(DeterministicMixin, _Recurrent):
    """Q(s, a) = head([gru(s), a]); records the inputs of its calls."""

    def __init__(self, num_envs=2, sequence_length=3, kind="GRU", hidden=4):
        _Recurrent.__init__(self, num_envs, sequence_length, kind, hidden)
        DeterministicMixin.__init__(self)
        self.head = nn.Linear(hidden + self.num_actions, 1)
        self.calls = []

    def compute(self, inputs, role=""):
        self.calls.append({key: inputs.get(key) for key in ("states", "rnn", "terminated")})
        features, states = self.features(inputs)
        return self.head(torch.cat([features, inputs["taken_actions"]], -1)), {"rnn": states}


class FeedforwardCritic(DeterministicMixin, Model):
    def __init__(self):
        Model.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        DeterministicMixin.__init__(self)
        self.net = nn.Linear(self.num_observations + self.num_actions, 1)

    def compute(self, inputs, role=""):
        return self.net(torch.cat([inputs["states"], inputs["taken_actions"]], -1)), {}


class FeedforwardPolicy(GaussianMixin, Model):
    def __init__(self):
        Model.__init__(self, OBSERVATIONS, ACTIONS, "cpu")
        GaussianMixin.__init__(self)
        self.net = nn.Linear(self.num_observations, self.num_actions)
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role=""):
        return self.net(inputs["states"]), self.log_std_parameter, {}


def sac_models(num_envs=2, sequence_length=3, critic=Critic):
    models = {"policy": GaussianPolicy(num_envs, sequence_length)}
    for role in SAC_ROLES[1:]:
        models[role] = critic(num_envs, sequence_length) if critic is Critic else critic()
    return models


def make_agent(agent_class=SAC_RNN, models=None, num_envs=2, memory_size=16, sequence_length=3, **cfg):
    if models is None:
        policy = GaussianPolicy if agent_class is SAC_RNN else DeterministicPolicy
        roles = {SAC_RNN: SAC_ROLES, TD3_RNN: TD3_ROLES, DDPG_RNN: DDPG_ROLES}[agent_class]
        models = {role: (policy if "policy" in role else Critic)(num_envs, sequence_length) for role in roles}
    memory = RandomMemory(memory_size=memory_size, num_envs=num_envs, device="cpu")
    cfg = {"batch_size": 2, "experiment": NO_FILES, **cfg}
    return agent_class(models=models, memory=memory, cfg=cfg, observation_space=OBSERVATIONS, action_space=ACTIONS)


def step(agent, states, ended, timestep=0):
    """One acting + recording step: ``ended`` per environment (terminated)."""
    actions, _, _ = agent.act(states, timestep, 100)
    terminated = torch.tensor(ended).reshape(-1, 1)
    agent.record_transition(
        states, actions, torch.zeros(len(ended), 1), states, terminated, torch.zeros_like(terminated), {}, timestep, 100
    )


def test_the_hidden_state_is_zeroed_where_an_episode_ended_and_carried_elsewhere():
    torch.manual_seed(0)
    agent = make_agent()
    agent.init()
    agent.set_running_mode("train")
    policy = agent.policy
    states = torch.rand(4, 2, 3)
    # the hidden state after step 0, by hand: one GRU step from zeros
    policy.set_mode("eval")
    expected = policy.act({"states": states[0], "rnn": [torch.zeros(1, 2, 4)]}, role="policy")[2]["rnn"][0]
    step(agent, states[0], [True, False])
    step(agent, states[1], [False, False])
    stored = agent.memory.get_tensor_by_name("rnn_policy_0")  # (memory_size, num_envs, layers, hidden)
    assert torch.equal(stored[0], torch.zeros(2, 1, 4))  # an episode starts from zeros
    assert torch.equal(stored[1, 0], torch.zeros(1, 4))  # environment 0 ended at step 0: reset
    assert torch.allclose(stored[1, 1], expected[:, 1])  # environment 1 did not: carried
    assert stored[1, 1].abs().sum() > 0


def test_the_update_feeds_every_recurrent_model_the_policys_stored_state_of_each_sequence_start():
    torch.manual_seed(1)
    agent = make_agent(learning_starts=0, gradient_steps=1)
    agent.init()
    agent.set_running_mode("train")
    for timestep in range(6):
        step(agent, torch.rand(2, 3), [timestep == 2, False], timestep)
    critic = agent.critic_1
    critic.calls.clear()
    agent.set_mode("train")
    agent._update(6, 100)
    memory = agent.memory
    rows = memory.get_sampling_indexes().reshape(2, 3)  # batch_size sequences of sequence_length rows
    assert np.all(np.diff(rows, axis=1) == memory.num_envs)  # consecutive steps of one environment
    stored = memory.get_tensor_by_name("rnn_policy_0").reshape(-1, 1, 4)
    ended = memory.get_tensor_by_name("terminated").reshape(-1, 1)
    for call in critic.calls:  # the target pass, the critic step, the policy step
        assert torch.equal(call["rnn"][0], stored[rows.reshape(-1)].transpose(0, 1))
        assert torch.equal(call["terminated"], ended[rows.reshape(-1)])
    assert len(critic.calls) == 2  # the critic loss and the policy loss (the targets are other models)


def test_the_update_waits_for_batch_size_whole_sequences():
    agent = make_agent(batch_size=4, learning_starts=0)
    agent.init()
    agent.set_running_mode("train")
    before = [p.clone() for p in agent.policy.parameters()]
    for timestep in range(3):  # 3 steps of 2 envs: 2 starts of a 3-step sequence, fewer than 4
        step(agent, torch.rand(2, 3), [False, False], timestep)
        agent.post_interaction(timestep, 100)
    assert all(torch.equal(a, b) for a, b in zip(before, agent.policy.parameters()))
    step(agent, torch.rand(2, 3), [False, False], 3)
    agent.post_interaction(3, 100)  # 4 starts now
    assert not all(torch.equal(a, b) for a, b in zip(before, agent.policy.parameters()))


def test_the_hidden_states_are_run_state():
    torch.manual_seed(2)
    agent = make_agent()
    agent.init()
    agent.set_running_mode("train")
    step(agent, torch.rand(2, 3), [False, False])
    saved = agent.run_state()
    other = make_agent()
    other.init()
    other.load_run_state(saved)
    assert torch.equal(other.hidden_states.inputs("policy")[0], agent.hidden_states.inputs("policy")[0])
    assert other.hidden_states.inputs("policy")[0].abs().sum() > 0


def test_feedforward_and_recurrent_agents_refuse_the_other_kind_of_model():
    with pytest.raises(ValueError, match="SAC_RNN .same config."):
        make_agent(SAC, models=sac_models())
    feedforward = {"policy": FeedforwardPolicy(), **{role: FeedforwardCritic() for role in SAC_ROLES[1:]}}
    with pytest.raises(ValueError, match="none of the models .* is recurrent"):
        make_agent(SAC_RNN, models=feedforward)


def test_a_recurrent_critic_needs_a_recurrent_policy_of_its_sizes():
    models = {"policy": FeedforwardPolicy(), **{role: Critic() for role in SAC_ROLES[1:]}}
    with pytest.raises(ValueError, match="the policy is not"):
        make_agent(SAC_RNN, models=models)
    models = sac_models()
    models["critic_2"], models["target_critic_2"] = Critic(hidden=5), Critic(hidden=5)
    with pytest.raises(ValueError, match="'critic_2' model's hidden states .* differ from the policy's"):
        make_agent(SAC_RNN, models=models)


def test_a_memory_shorter_than_a_sequence_is_refused():
    with pytest.raises(ValueError, match="fewer than one sequence of 3 steps"):
        make_agent(memory_size=2)


def test_feedforward_critics_with_a_recurrent_policy_train():
    agent = make_agent(models=sac_models(critic=FeedforwardCritic), learning_starts=0)
    agent.init()
    agent.set_running_mode("train")
    for timestep in range(4):
        step(agent, torch.rand(2, 3), [False, False], timestep)
        agent.post_interaction(timestep, 100)


@pytest.mark.parametrize("agent_class", [SAC_RNN, TD3_RNN, DDPG_RNN])
def test_a_short_run_on_pendulum(agent_class):
    torch.manual_seed(3)
    env = wrap_env(
        gymnasium.make_vec("Pendulum-v1", num_envs=2, vectorization_mode="sync", max_episode_steps=10), verbose=False
    )
    agent = make_agent(agent_class, memory_size=32, learning_starts=8)
    before = [p.clone() for p in agent.policy.parameters()]
    SequentialTrainer(env=env, agents=agent, cfg={**QUIET, "timesteps": 24}).train()
    assert not all(torch.equal(a, b) for a, b in zip(before, agent.policy.parameters()))
    assert all(torch.isfinite(p).all() for p in agent.policy.parameters())


@pytest.mark.parametrize("agent_class", [SAC_RNN, TD3_RNN])
def test_the_policy_still_steps_its_memory_during_the_random_warm_up(agent_class):
    torch.manual_seed(4)
    agent = make_agent(agent_class, random_timesteps=10)
    agent.init()
    agent.set_running_mode("train")
    states = torch.rand(2, 3)
    agent.policy.set_mode("eval")
    expected = agent.policy.act({"states": states, "rnn": [torch.zeros(1, 2, 4)]}, role="policy")[2]["rnn"][0]
    step(agent, states, [False, False])
    assert torch.allclose(agent.hidden_states.inputs("policy")[0], expected)
    assert expected.abs().sum() > 0


@pytest.mark.parametrize("agent_class", ["SAC", "DDPG"])
def test_the_runner_runs_a_policy_with_a_recurrent_layer_as_the_recurrent_agent(agent_class):
    from skrl_like.torch.utils.runner import Runner

    env = wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=2, vectorization_mode="sync"), verbose=False)
    runner = Runner(env, runner_cfg(agent_class))
    assert type(runner.agent).__name__ == f"{agent_class}_RNN"
    runner.run("train")
    assert tuple(runner.agent.hidden_states.inputs("policy")[0].shape) == (1, 2, 8)


# -- one update of each agent against a hand-written reference -----------------------------------------------------

REFERENCE_MEMORY, REFERENCE_LENGTH, NOISE = 4, 2, 0.3
REFERENCE_CFG = {
    # every sequence the memory holds, drawn without replacement: the batch is the same set in any order
    "batch_size": 2 * (REFERENCE_MEMORY - REFERENCE_LENGTH + 1),
    "discount_factor": 0.9,
    "polyak": 0.5,
    "actor_learning_rate": 0.01,
    "critic_learning_rate": 0.02,
    "grad_norm_clip": 0.0,
    "experiment": NO_FILES,
}


def reference_replay():
    """Two environments, four steps: env 1 terminates at step 1 and env 0 is truncated at step 2 (each a reset
    inside a sequence); the stored policy states are arbitrary (a sequence must start from its own)."""
    rng = np.random.default_rng(8)
    terminated = np.zeros((REFERENCE_MEMORY, 2, 1), bool)
    truncated = np.zeros_like(terminated)
    terminated[1, 1] = truncated[2, 0] = True
    return {
        "states": rng.uniform(-1, 1, (REFERENCE_MEMORY, 2, 3)).astype(np.float32),
        "actions": rng.uniform(-2, 2, (REFERENCE_MEMORY, 2, 1)).astype(np.float32),
        "rewards": rng.normal(size=(REFERENCE_MEMORY, 2, 1)).astype(np.float32),
        "next_states": rng.uniform(-1, 1, (REFERENCE_MEMORY, 2, 3)).astype(np.float32),
        "terminated": terminated,
        "truncated": truncated,
        "rnn_policy_0": rng.normal(size=(REFERENCE_MEMORY, 2, 1, 2)).astype(np.float32),
    }


def sequences(data):
    """Every sequence of REFERENCE_LENGTH steps of one environment: ``(sequences, REFERENCE_LENGTH, ...)`` tensors,
    and each sequence's stored starting state ``(sequences, hidden)``."""
    starts = [(env, start) for env in range(2) for start in range(REFERENCE_MEMORY - REFERENCE_LENGTH + 1)]
    cut = {
        name: torch.from_numpy(np.stack([values[start : start + REFERENCE_LENGTH, env] for env, start in starts]))
        for name, values in data.items()
    }
    return cut, cut.pop("rnn_policy_0")[:, 0, 0]


def rnn_features(p, states, h, ended):
    """A tanh RNN over ``(sequences, steps, features)`` from ``h``, the state zeroed after each episode end."""
    features = []
    for t in range(states.shape[1]):
        if t:
            h = h * (~ended[:, t - 1, None]).float()
        h = torch.tanh(
            states[:, t] @ p["rnn.weight_ih_l0"].T
            + p["rnn.bias_ih_l0"]
            + h @ p["rnn.weight_hh_l0"].T
            + p["rnn.bias_hh_l0"]
        )
        features.append(h)
    return torch.stack(features, 1)


def policy_by_hand(p, states, h, ended):
    """Reparameterised actions with the fixed noise, and their log-density (which the noise alone sets)."""
    std = torch.exp(p["log_std_parameter"])
    actions = rnn_features(p, states, h, ended) @ p["head.weight"].T + p["head.bias"] + std * NOISE
    log_prob = -0.5 * NOISE**2 - p["log_std_parameter"] - 0.5 * math.log(2 * math.pi)
    return actions, log_prob.expand_as(actions)


def q_by_hand(p, states, actions, h, ended):
    return torch.cat([rnn_features(p, states, h, ended), actions], -1) @ p["head.weight"].T + p["head.bias"]


def deterministic_by_hand(p, states, h, ended):
    return torch.tanh(rnn_features(p, states, h, ended) @ p["head.weight"].T + p["head.bias"])


def reference_agent(agent_class, models, **cfg):
    """``agent_class`` on tiny RNN models (hidden 2) with the replay of :func:`reference_replay` in its memory, and a
    copy of every model's parameters before the update (leaves with gradients), by role."""
    memory = RandomMemory(memory_size=REFERENCE_MEMORY, num_envs=2, device="cpu", replacement=False)
    cfg = {**REFERENCE_CFG, **cfg}
    agent = agent_class(models=models, memory=memory, cfg=cfg, observation_space=OBSERVATIONS, action_space=ACTIONS)
    agent.init()
    data = reference_replay()
    for step in range(REFERENCE_MEMORY):
        memory.add_samples(**{name: torch.from_numpy(values[step]) for name, values in data.items()})
    agent.set_mode("train")
    params = {
        role: {name: p.detach().clone().requires_grad_() for name, p in model.named_parameters()}
        for role, model in models.items()
    }
    return agent, params


def step_critics(params, critics, loss, learning_rate):
    """One Adam step of all the critics on ``loss`` (one optimizer), by role."""
    joint = {f"{c}.{name}": p for c in critics for name, p in params[c].items()}
    stepped = first_adam_step(joint, loss, learning_rate)
    return {c: {name: stepped[f"{c}.{name}"] for name in params[c]} for c in critics}


def check_stepped(models, params, stepped, polyak):
    """Every stepped model has the reference's parameters; its target moved polyak of the way from the old ones."""
    for role, expected in stepped.items():
        targets = dict(models[f"target_{role}"].named_parameters()) if f"target_{role}" in models else {}
        for name, p in models[role].named_parameters():
            torch.testing.assert_close(p.detach(), expected[name].detach(), atol=1e-5, rtol=1e-4, msg=role + name)
            if targets:
                old, new = params[role][name].detach(), expected[name].detach()
                torch.testing.assert_close(targets[name].detach(), old + polyak * (new - old), atol=1e-5, rtol=1e-4)


def first_adam_step(params, loss, learning_rate):
    """Adam's first step: each parameter moves by ``lr * g / (|g| + eps)`` (bias-corrected moments of one g)."""
    grads = torch.autograd.grad(loss, list(params.values()))
    return {
        name: (p - learning_rate * g / (g.abs() + 1e-8)).detach().requires_grad_()
        for (name, p), g in zip(params.items(), grads)
    }


def test_one_sac_rnn_update_matches_a_hand_computed_reference(monkeypatch):
    """Every recurrent model starts each sequence from the policy's stored state and resets after a done inside it;
    the TD target bootstraps through the truncation, not the termination."""
    torch.manual_seed(6)
    roles = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
    models = {
        "policy": GaussianPolicy(2, REFERENCE_LENGTH, "RNN", 2),
        **{role: Critic(2, REFERENCE_LENGTH, "RNN", 2) for role in roles},
    }
    alpha, cfg = 0.2, REFERENCE_CFG
    agent, params = reference_agent(SAC_RNN, models, learn_entropy=False, initial_entropy_value=alpha)
    monkeypatch.setattr(torch, "randn_like", lambda tensor: torch.full_like(tensor, NOISE))
    agent._update(0, 1)

    batch, h = sequences(reference_replay())
    ended = (batch["terminated"] | batch["truncated"])[..., 0]
    critics = ("critic_1", "critic_2")
    with torch.no_grad():  # the targets are copies of the critics before the step
        next_actions, next_log_prob = policy_by_hand(params["policy"], batch["next_states"], h, ended)
        target_q = torch.min(*(q_by_hand(params[c], batch["next_states"], next_actions, h, ended) for c in critics))
        not_terminated = (~batch["terminated"]).float()
        targets = batch["rewards"] + cfg["discount_factor"] * not_terminated * (target_q - alpha * next_log_prob)
    errors = [q_by_hand(params[c], batch["states"], batch["actions"], h, ended) - targets for c in critics]
    critic_loss = sum((error**2).mean() for error in errors) / 2
    stepped = step_critics(params, critics, critic_loss, cfg["critic_learning_rate"])
    actions, log_prob = policy_by_hand(params["policy"], batch["states"], h, ended)
    q_values = [q_by_hand(stepped[c], batch["states"], actions, h, ended) for c in critics]
    policy_loss = (alpha * log_prob - torch.min(*q_values)).mean()
    stepped["policy"] = first_adam_step(params["policy"], policy_loss, cfg["actor_learning_rate"])
    check_stepped(models, params, stepped, cfg["polyak"])


@pytest.mark.parametrize("agent_class", [TD3_RNN, DDPG_RNN])
def test_one_td3_rnn_or_ddpg_rnn_update_matches_a_hand_computed_reference(agent_class):
    """TD3's targets: the smaller target critic at the target policy's action (no smoothing noise by default); the
    critics' summed squared errors; the policy step on the first critic (policy_delay 1: in this update)."""
    torch.manual_seed(7)
    critics = ("critic_1", "critic_2") if agent_class is TD3_RNN else ("critic",)
    models = {role: DeterministicPolicy(2, REFERENCE_LENGTH, "RNN", 2) for role in ("policy", "target_policy")}
    models.update({role: Critic(2, REFERENCE_LENGTH, "RNN", 2) for c in critics for role in (c, f"target_{c}")})
    agent, params = reference_agent(agent_class, models, **({"policy_delay": 1} if agent_class is TD3_RNN else {}))
    agent._update(0, 1)

    batch, h = sequences(reference_replay())
    ended = (batch["terminated"] | batch["truncated"])[..., 0]
    cfg = REFERENCE_CFG
    with torch.no_grad():  # the targets are copies of the models before the step
        next_actions = deterministic_by_hand(params["policy"], batch["next_states"], h, ended)
        q_values = [q_by_hand(params[c], batch["next_states"], next_actions, h, ended) for c in critics]
        target_q = functools.reduce(torch.min, q_values)
        targets = batch["rewards"] + cfg["discount_factor"] * (~batch["terminated"]).float() * target_q
    critic_loss = sum(
        ((q_by_hand(params[c], batch["states"], batch["actions"], h, ended) - targets) ** 2).mean() for c in critics
    )
    stepped = step_critics(params, critics, critic_loss, cfg["critic_learning_rate"])
    actions = deterministic_by_hand(params["policy"], batch["states"], h, ended)
    policy_loss = -q_by_hand(stepped[critics[0]], batch["states"], actions, h, ended).mean()
    stepped["policy"] = first_adam_step(params["policy"], policy_loss, cfg["actor_learning_rate"])
    check_stepped(models, params, stepped, cfg["polyak"])
