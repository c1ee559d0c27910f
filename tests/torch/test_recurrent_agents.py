"""The torch ``_RNN`` on-policy agents: hidden states carried per environment, zeroed at episode ends (terminated or
truncated) and carried across rollouts otherwise; one PPO_RNN update against a hand-written reference (a plain RNN
stepped by hand, sequences starting from their stored states and reset after a done, GAE and Adam by hand); the
run state round trip; the errors; a short training run."""

import math

import gymnasium
import numpy as np
import pytest
import torch

from skrl_like.torch.agents.a2c import A2C_RNN
from skrl_like.torch.agents.ppo import PPO, PPO_RNN
from skrl_like.torch.agents.rpo import RPO_RNN
from skrl_like.torch.agents.trpo import TRPO_RNN
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.trainers import SequentialTrainer
from tests.recurrent_rollouts import masked_pendulum, rollout_data
from tests.torch.recurrent_models import (
    ACTIONS,
    OBSERVATIONS,
    LinearValue,
    RecurrentGaussianPolicy,
    RecurrentValue,
)

NUM_ENVS, ROLLOUTS, LENGTH = 2, 4, 2
NO_WRITING = {"write_interval": 0, "checkpoint_interval": 0}


def make_agent(models, agent_class=PPO_RNN, rollouts=ROLLOUTS, **cfg):
    cfg = {"rollouts": rollouts, "mini_batches": 1, "experiment": NO_WRITING, **cfg}
    return agent_class(
        models=models,
        memory=RandomMemory(memory_size=rollouts, num_envs=NUM_ENVS),
        observation_space=OBSERVATIONS,
        action_space=ACTIONS,
        device="cpu",
        cfg=cfg,
    )


def drive(agent, states, actions, rewards, terminated, truncated, last_states):
    """The trainer's loop on hand-made arrays ``(steps, num_envs, ...)``: act (advancing the hidden states; the
    stored actions are the given ones), record, post-interaction (updates when the schedule says so)."""
    steps = len(states)
    for t in range(steps):
        with torch.no_grad():
            agent.act(torch.from_numpy(states[t]), t, steps)
        agent.record_transition(
            torch.from_numpy(states[t]),
            torch.from_numpy(actions[t]),
            torch.from_numpy(rewards[t]),
            torch.from_numpy(states[t + 1] if t + 1 < steps else last_states),
            torch.from_numpy(terminated[t]),
            torch.from_numpy(truncated[t]),
            {},
            t,
            steps,
        )
        agent.post_interaction(t, steps)


def rnn_step(params, x, h):
    """One tanh RNN step by hand: ``(batch, 1)`` inputs, ``(batch, hidden)`` state."""
    return torch.tanh(x @ params["w_ih"].T + params["b_ih"] + h @ params["w_hh"].T + params["b_hh"])


def hand_params(policy, value):
    rnn = policy.rnn
    return {
        "w_ih": rnn.weight_ih_l0,
        "w_hh": rnn.weight_hh_l0,
        "b_ih": rnn.bias_ih_l0,
        "b_hh": rnn.bias_hh_l0,
        "head_w": policy.head.weight,
        "head_b": policy.head.bias,
        "log_std": policy.log_std_parameter,
        "value_w": value.linear.weight,
        "value_b": value.linear.bias,
    }


def step_by_hand(params, states, dones, steps, alpha=0.0):
    """The states each step starts from and the policy's means (shifted by RPO's ``alpha``), stepping every
    environment in order and zeroing its state after a done."""
    h = torch.zeros(NUM_ENVS, params["w_hh"].shape[0])
    started, means = [], []
    for t in range(steps):
        started.append(h)
        h = rnn_step(params, torch.from_numpy(states[t]), h)
        means.append(h @ params["head_w"].T + params["head_b"] + alpha)
        h = h * torch.from_numpy(~dones[t]).float()
    return torch.stack(started), torch.stack(means), h


def log_normal(actions, means, log_std):
    return -0.5 * ((actions - means) / torch.exp(log_std)) ** 2 - log_std - 0.5 * math.log(2 * math.pi)


def test_hidden_states_are_zeroed_at_episode_ends_and_carried_across_rollouts():
    torch.manual_seed(0)
    policy = RecurrentGaussianPolicy(OBSERVATIONS, ACTIONS)
    agent = make_agent({"policy": policy, "value": LinearValue(OBSERVATIONS, ACTIONS)}, learning_starts=100)
    agent.init({"timesteps": 8})
    states, actions, rewards, terminated, truncated, last_states = rollout_data(8)
    truncated[5, 1] = True  # the second rollout's step 1: env 1's state entering step 6 is zero
    drive(agent, states, actions, rewards, terminated, truncated, last_states)

    params = {name: p.detach() for name, p in hand_params(policy, agent.value).items()}
    started, _, final = step_by_hand(params, states, terminated | truncated, 8)
    stored = agent.memory.get_tensor_by_name("rnn_policy_0")  # the second rollout: steps 4..7, (4, envs, 1, hidden)
    torch.testing.assert_close(stored[:, :, 0], started[4:], atol=1e-6, rtol=1e-5)
    # carried across the rollout boundary: step 4 starts where step 3 ended, not from zeros
    assert stored[0].abs().min() > 1e-3
    # zeroed after the truncation in env 1 only
    assert torch.all(stored[2, 1] == 0) and stored[2, 0].abs().min() > 1e-3
    torch.testing.assert_close(agent.hidden_states.current["policy"][0][0], final, atol=1e-6, rtol=1e-5)


def rollout_by_hand(params, rollout, gamma, lam, alpha=0.0):
    """What the update starts from, by hand: the states each step started from, log pi_old of the taken actions,
    the normalised GAE advantages and the returns (a linear value model)."""
    states, actions, rewards, terminated, truncated, last_states = rollout
    dones = terminated | truncated
    with torch.no_grad():
        started, means, _ = step_by_hand(params, states, dones, ROLLOUTS, alpha)
        old_log_prob = log_normal(torch.from_numpy(actions), means, params["log_std"])
        values = torch.from_numpy(states) @ params["value_w"].T + params["value_b"]
        last_values = torch.from_numpy(last_states) @ params["value_w"].T + params["value_b"]
    advantages = np.zeros((ROLLOUTS, NUM_ENVS, 1))
    advantage = 0.0
    for t in reversed(range(ROLLOUTS)):
        next_values = (values[t + 1] if t + 1 < ROLLOUTS else last_values).numpy()
        advantage = rewards[t] - values[t].numpy() + gamma * (1 - dones[t]) * (next_values + lam * advantage)
        advantages[t] = advantage
    returns = torch.from_numpy(advantages).float() + values
    advantages = torch.from_numpy((advantages - advantages.mean()) / (advantages.std(ddof=1) + 1e-8)).float()
    return started, old_log_prob, advantages, returns


def sequence_means(params, started, states, dones, reset=True, alpha=0.0):
    """The policy's means in the update: each sequence of LENGTH steps from its stored starting state, the state
    zeroed after a done inside it (unless ``reset`` is off)."""
    means = torch.zeros(ROLLOUTS, NUM_ENVS, 1)
    for start in range(0, ROLLOUTS, LENGTH):
        h = started[start]
        for t in range(start, start + LENGTH):
            if t > start and reset:
                h = h * torch.from_numpy(~dones[t - 1]).float()
            h = rnn_step(params, torch.from_numpy(states[t]), h)
            means[t] = h @ params["head_w"].T + params["head_b"] + alpha
    return means


def adam_by_hand(params, losses, learning_rate):
    """Adam steps by hand, one per loss function of ``params`` (each returns the terms it sums); the terms of each."""
    moments = {name: (torch.zeros_like(p), torch.zeros_like(p)) for name, p in params.items()}
    tracked = []
    for step, loss in enumerate(losses, start=1):
        terms = loss(params)
        tracked.append([term.item() for term in terms])
        grads = torch.autograd.grad(sum(terms), list(params.values()))
        with torch.no_grad():
            for (name, p), g in zip(params.items(), grads):
                m, v = moments[name]
                m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g**2
                moments[name] = (m, v)
                p -= learning_rate * (m / (1 - 0.9**step)) / (torch.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return tracked


def rollout_with_resets(seed):
    rollout = rollout_data(ROLLOUTS, seed=seed)
    rollout[3][0, 0] = True  # terminated: env 0's first sequence (steps 0, 1) is cut after step 0
    rollout[4][2, 1] = True  # truncated: env 1's second sequence (steps 2, 3) is cut after step 2
    return rollout


class ShiftedPolicy(RecurrentGaussianPolicy):
    """The mean shifted by RPO's ``inputs["alpha"]`` (deterministically: the test sees alpha reach every call)."""

    def compute(self, inputs, role=""):
        mean, log_std, outputs = super().compute(inputs, role)
        return mean + inputs["alpha"], log_std, outputs


@pytest.mark.parametrize(
    "agent_class, alpha, reset_in_reference", [(PPO_RNN, 0.0, True), (PPO_RNN, 0.0, False), (RPO_RNN, 0.5, True)]
)
def test_one_ppo_rnn_or_rpo_rnn_update_matches_a_hand_computed_reference(agent_class, alpha, reset_in_reference):
    torch.manual_seed(1)
    policy = (ShiftedPolicy if agent_class is RPO_RNN else RecurrentGaussianPolicy)(OBSERVATIONS, ACTIONS)
    value = LinearValue(OBSERVATIONS, ACTIONS)
    cfg = {"learning_epochs": 2, "learning_rate": 0.05, "grad_norm_clip": 0.0, "discount_factor": 0.9, "lambda": 0.8}
    agent = make_agent({"policy": policy, "value": value}, agent_class, **cfg, **({"alpha": alpha} if alpha else {}))
    agent.init({"timesteps": ROLLOUTS})
    rollout = rollout_with_resets(seed=2)
    states, actions, _, terminated, truncated, _ = rollout
    params = {name: p.detach().clone().requires_grad_() for name, p in hand_params(policy, value).items()}
    drive(agent, *rollout)
    started, old_log_prob, advantages, returns = rollout_by_hand(params, rollout, gamma=0.9, lam=0.8, alpha=alpha)

    def loss(params):
        """PPO's loss on the sequences (steps 0-1 and 2-3 of each env), each from its stored starting state."""
        means = sequence_means(params, started, states, terminated | truncated, reset_in_reference, alpha)
        ratio = torch.exp(log_normal(torch.from_numpy(actions), means, params["log_std"]) - old_log_prob)
        policy_loss = -torch.min(advantages * ratio, advantages * torch.clip(ratio, 0.8, 1.2)).mean()
        predicted = torch.from_numpy(states) @ params["value_w"].T + params["value_b"]
        value_loss = ((returns - predicted) ** 2).mean()
        return policy_loss, value_loss

    tracked = adam_by_hand(params, [loss, loss], learning_rate=0.05)  # two epochs of one mini-batch

    updated = hand_params(policy, value)
    matches = all(torch.allclose(updated[name], params[name], atol=1e-5) for name in params)
    expected_policy_loss = (tracked[0][0] + tracked[1][0]) / 2
    assert agent.tracking_data["Loss / Value loss"][0] == pytest.approx((tracked[0][1] + tracked[1][1]) / 2, abs=1e-5)
    if reset_in_reference:
        assert matches
        assert agent.tracking_data["Loss / Policy loss"][0] == pytest.approx(expected_policy_loss, abs=1e-6)
    else:  # the reference that ignores the dones inside a sequence gives other weights: the test sees the reset
        assert not matches


def test_one_a2c_rnn_update_matches_a_hand_computed_reference():
    """One pass over two mini-batches of whole sequences (environment-major rows: env 0's four steps, then env 1's),
    one Adam step each: -mean(A log pi) plus the value MSE, the sequences reset after their dones."""
    torch.manual_seed(4)
    policy = RecurrentGaussianPolicy(OBSERVATIONS, ACTIONS)
    value = LinearValue(OBSERVATIONS, ACTIONS)
    cfg = {"mini_batches": 2, "learning_rate": 0.05, "grad_norm_clip": 0.0, "discount_factor": 0.9, "lambda": 0.8}
    agent = make_agent({"policy": policy, "value": value}, agent_class=A2C_RNN, **cfg)
    agent.init({"timesteps": ROLLOUTS})
    rollout = rollout_with_resets(seed=5)
    states, actions, _, terminated, truncated, _ = rollout
    params = {name: p.detach().clone().requires_grad_() for name, p in hand_params(policy, value).items()}
    initial = params["w_hh"].detach().clone()
    drive(agent, *rollout)
    started, _, advantages, returns = rollout_by_hand(params, rollout, gamma=0.9, lam=0.8)

    def mini_batch_loss(env):
        def loss(params):
            means = sequence_means(params, started, states, terminated | truncated)[:, env]
            log_prob = log_normal(torch.from_numpy(actions[:, env]), means, params["log_std"])
            policy_loss = -(advantages[:, env] * log_prob).mean()
            predicted = torch.from_numpy(states[:, env]) @ params["value_w"].T + params["value_b"]
            return policy_loss, ((returns[:, env] - predicted) ** 2).mean()

        return loss

    tracked = adam_by_hand(params, [mini_batch_loss(0), mini_batch_loss(1)], learning_rate=0.05)

    updated = hand_params(policy, value)
    for name in params:
        torch.testing.assert_close(updated[name], params[name], atol=1e-5, rtol=1e-4, msg=name)
    assert agent.tracking_data["Loss / Policy loss"][0] == pytest.approx((tracked[0][0] + tracked[1][0]) / 2, abs=1e-6)
    assert agent.tracking_data["Loss / Value loss"][0] == pytest.approx((tracked[0][1] + tracked[1][1]) / 2, abs=1e-6)
    assert not torch.allclose(updated["w_hh"], initial)  # the update moved the recurrent weights


POLICY_NAMES = ("w_ih", "w_hh", "b_ih", "b_hh", "head_w", "head_b", "log_std")  # the order of policy.parameters()


def test_one_trpo_rnn_update_matches_a_hand_computed_reference():
    """The natural-gradient step by hand on the sequences (reset after their dones): the surrogate's gradient, the
    Fisher-vector products of the Gaussian KL, ten conjugate-gradient steps, the step scaled to max_kl and the
    backtracking line search; then the value function's Adam epochs."""
    torch.manual_seed(5)
    policy = RecurrentGaussianPolicy(OBSERVATIONS, ACTIONS)
    value = LinearValue(OBSERVATIONS, ACTIONS)
    cfg = {"learning_epochs": 2, "value_learning_rate": 0.05, "grad_norm_clip": 0.0, "max_kl_divergence": 0.01}
    cfg.update({"discount_factor": 0.9, "lambda": 0.8})
    agent = make_agent({"policy": policy, "value": value}, TRPO_RNN, **cfg)
    agent.init({"timesteps": ROLLOUTS})
    rollout = rollout_with_resets(seed=6)
    states, actions, _, terminated, truncated, _ = rollout
    params = {name: p.detach().clone().requires_grad_() for name, p in hand_params(policy, value).items()}
    drive(agent, *rollout)
    started, old_log_prob, advantages, returns = rollout_by_hand(params, rollout, gamma=0.9, lam=0.8)
    dones = terminated | truncated

    def unflatten(flat):
        sizes = [params[name].numel() for name in POLICY_NAMES]
        pieces = torch.split(flat, sizes)
        return {**params, **{name: piece.reshape(params[name].shape) for name, piece in zip(POLICY_NAMES, pieces)}}

    def surrogate_and_kl(flat):
        p = unflatten(flat)
        means = sequence_means(p, started, states, dones)
        ratio = torch.exp(log_normal(torch.from_numpy(actions), means, p["log_std"]) - old_log_prob)
        std, old_std = torch.exp(p["log_std"]), torch.exp(params["log_std"].detach())
        kl = p["log_std"] - params["log_std"].detach() + (old_std**2 + (old_means - means) ** 2) / (2 * std**2) - 0.5
        return (advantages * ratio).mean(), kl.mean()

    start = torch.cat([params[name].detach().reshape(-1) for name in POLICY_NAMES]).requires_grad_()
    with torch.no_grad():
        old_means = sequence_means(params, started, states, dones)
    surrogate, kl = surrogate_and_kl(start)
    gradient = torch.autograd.grad(surrogate, start, retain_graph=True)[0]
    kl_gradient = torch.autograd.grad(kl, start, create_graph=True)[0]

    def fisher(vector):
        return torch.autograd.grad(kl_gradient @ vector, start, retain_graph=True)[0] + 0.1 * vector  # damping

    x, residual = torch.zeros_like(gradient), gradient.clone()
    direction, residual_norm = residual.clone(), residual @ residual
    for _ in range(10):  # conjugate gradient from zero (its residual stays above the tolerance here)
        product = fisher(direction)
        step = residual_norm / (direction @ product)
        x, residual = x + step * direction, residual - step * product
        new_norm = residual @ residual
        direction, residual_norm = residual + new_norm / residual_norm * direction, new_norm
    full_step = torch.sqrt(2 * 0.01 / (x @ fisher(x))) * x
    expected = gradient @ full_step
    with torch.no_grad():
        for trial in range(10):  # backtracking: the first fraction within the KL bound and improving enough
            candidate = start + 0.5**trial * full_step
            trial_surrogate, trial_kl = surrogate_and_kl(candidate)
            if trial_kl < 0.01 and (trial_surrogate - surrogate) / (0.5**trial * expected) > 0.5:
                break
        else:
            candidate = start
    stepped = unflatten(candidate.detach())
    updated = hand_params(policy, value)
    assert not torch.equal(candidate, start)  # a step was taken
    for name in POLICY_NAMES:
        torch.testing.assert_close(updated[name].detach(), stepped[name], atol=2e-5, rtol=1e-4, msg=name)

    def value_loss(params):
        predicted = torch.from_numpy(states) @ params["value_w"].T + params["value_b"]
        return (((returns - predicted) ** 2).mean(),)

    value_params = {name: params[name] for name in ("value_w", "value_b")}
    adam_by_hand(value_params, [value_loss, value_loss], learning_rate=0.05)  # two epochs of one mini-batch
    for name in value_params:
        torch.testing.assert_close(updated[name].detach(), value_params[name].detach(), atol=1e-5, rtol=1e-4)


def test_a_recurrent_value_model_and_lstm_states_are_carried_stored_and_restored():
    torch.manual_seed(3)
    policy = RecurrentGaussianPolicy(OBSERVATIONS, ACTIONS, kind="GRU")
    value = RecurrentValue(OBSERVATIONS, ACTIONS, kind="LSTM")
    agent = make_agent({"policy": policy, "value": value}, learning_epochs=1)
    agent.init({"timesteps": 6})
    states, actions, rewards, terminated, truncated, last_states = rollout_data(6, seed=4)
    terminated[1, 0] = True
    drive(agent, states[:5], actions, rewards, terminated, truncated, states[5])
    assert set(agent.memory.tensors) >= {"rnn_policy_0", "rnn_value_0", "rnn_value_1"}
    assert len(agent.hidden_states.current["value"]) == 2  # LSTM: hidden and cell

    # the run state holds the hidden states: a fresh agent loading it acts the same
    restored = make_agent({"policy": policy, "value": value}, learning_epochs=1)
    restored.init({"timesteps": 6})
    restored.load_run_state(agent.run_state())
    for role in ("policy", "value"):
        for mine, theirs in zip(agent.hidden_states.current[role], restored.hidden_states.current[role]):
            assert mine.abs().sum() > 0
            torch.testing.assert_close(mine, theirs)
    with torch.no_grad():
        _, _, outputs = agent.act(torch.from_numpy(states[5]), 5, 6)
        _, _, restored_outputs = restored.act(torch.from_numpy(states[5]), 5, 6)
    torch.testing.assert_close(outputs["mean_actions"], restored_outputs["mean_actions"])


def test_recurrent_and_feedforward_agents_refuse_the_other_kind_of_model():
    recurrent = {"policy": RecurrentGaussianPolicy(OBSERVATIONS, ACTIONS), "value": LinearValue(OBSERVATIONS, ACTIONS)}
    with pytest.raises(ValueError, match=r"PPO: the \['policy'\] model\(s\) are recurrent .* use PPO_RNN"):
        make_agent(recurrent, agent_class=PPO)
    feedforward = {"policy": LinearValue(OBSERVATIONS, ACTIONS), "value": LinearValue(OBSERVATIONS, ACTIONS)}
    with pytest.raises(ValueError, match="PPO_RNN: none of the models .* use PPO for feedforward models"):
        make_agent(feedforward)


@pytest.mark.parametrize(
    "rollouts, mini_batches, message",
    [
        (1, 1, r"holds 1 steps per environment, fewer than one sequence of 2 steps"),
        (3, 1, r"cfg\['rollouts'\] = 3 is not a multiple of the models' sequence_length 2: .* use rollouts = 4"),
        (4, 3, r"cfg\['mini_batches'\] = 3 does not split the 4 sequences"),
    ],
)
def test_sequences_that_do_not_fit_the_rollout_are_refused(rollouts, mini_batches, message):
    models = {"policy": RecurrentGaussianPolicy(OBSERVATIONS, ACTIONS), "value": LinearValue(OBSERVATIONS, ACTIONS)}
    agent = make_agent(models, rollouts=rollouts, mini_batches=mini_batches)
    with pytest.raises(ValueError, match=message):
        agent.init({"timesteps": 8})


def test_a_recurrent_policy_of_the_wrong_width_is_refused_when_the_agent_is_built():
    policy = RecurrentGaussianPolicy(OBSERVATIONS, ACTIONS)
    policy.head = torch.nn.Linear(2, 3)  # 3 outputs for a 1-dimensional action space
    with pytest.raises(ValueError, match=r"PPO_RNN: the 'policy' model .* produces 3 outputs per sample"):
        make_agent({"policy": policy, "value": LinearValue(OBSERVATIONS, ACTIONS)})


def test_hidden_sizes_that_do_not_match_the_model_are_refused_at_the_first_step():
    policy = RecurrentGaussianPolicy(OBSERVATIONS, ACTIONS)
    policy.hidden = 5  # the specification now declares 5 units; the layer has 2
    agent = make_agent({"policy": policy, "value": LinearValue(OBSERVATIONS, ACTIONS)})
    agent.init({"timesteps": 4})
    with pytest.raises(ValueError, match=r"do not match the RNN layer, which takes 1 tensor\(s\) of shape \(1, 2, 2\)"):
        agent.act(torch.zeros(NUM_ENVS, 1), 0, 4)


@pytest.mark.parametrize("agent_class", [PPO_RNN, A2C_RNN, RPO_RNN, TRPO_RNN])
def test_short_training_on_velocity_masked_pendulum(agent_class):
    torch.manual_seed(5)

    env = wrap_env(masked_pendulum(NUM_ENVS))
    policy = RecurrentGaussianPolicy(env.observation_space, env.action_space, kind="GRU", hidden=8, sequence_length=4)
    value = RecurrentValue(env.observation_space, env.action_space, kind="GRU", hidden=8, sequence_length=4)
    agent = agent_class(
        models={"policy": policy, "value": value},
        memory=RandomMemory(memory_size=8, num_envs=NUM_ENVS),
        observation_space=env.observation_space,
        action_space=env.action_space,
        device="cpu",
        cfg={"rollouts": 8, "mini_batches": 2, "experiment": NO_WRITING},
    )
    before = [p.detach().clone() for p in policy.parameters()]
    SequentialTrainer(
        env=env, agents=agent, cfg={"timesteps": 24, "headless": True, "disable_progressbar": True}
    ).train()
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters()))
    assert all(torch.isfinite(p).all() for p in policy.parameters())


def runner_cfg(agent_class: str, recurrent: bool = True) -> dict:
    """An Isaac Lab 3.0-style configuration: a GRU fed by an MLP in the policy, a feedforward value model."""
    trunk = [{"name": "mlp", "input": "OBSERVATIONS", "layers": [8], "activations": "elu"}]
    if recurrent:
        trunk.append({"name": "rnn", "input": "mlp", "type": "GRU", "layers": [8], "sequence_length": 4})
    return {
        "seed": 1,
        "models": {
            "separate": True,
            "policy": {"class": "GaussianMixin", "network": trunk, "output": "ACTIONS"},
            "value": {"class": "DeterministicMixin", "network": trunk[:1], "output": "ONE"},
        },
        "memory": {"class": "RandomMemory", "memory_size": -1},
        "agent": {"class": agent_class, "rollouts": 8, "mini_batches": 2, "experiment": NO_WRITING},
        "trainer": {"class": "SequentialTrainer", "timesteps": 16, "headless": True, "disable_progressbar": True},
    }


@pytest.mark.parametrize("agent_class", ["PPO", "PPO_RNN", "TRPO"])
def test_the_runner_runs_a_model_with_a_recurrent_layer_as_the_recurrent_agent(agent_class):
    from skrl_like.torch.utils.runner import Runner

    env = wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=NUM_ENVS, vectorization_mode="sync"), verbose=False)
    runner = Runner(env, runner_cfg(agent_class))
    assert type(runner.agent).__name__ == agent_class.removesuffix("_RNN") + "_RNN"
    runner.run("train")
    assert runner.agent.hidden_states.current["policy"][0].shape == (1, NUM_ENVS, 8)


def test_the_runner_refuses_a_recurrent_agent_without_a_recurrent_model():
    from skrl_like.torch.utils.runner import Runner

    env = wrap_env(gymnasium.make_vec("Pendulum-v1", num_envs=NUM_ENVS, vectorization_mode="sync"), verbose=False)
    with pytest.raises(ValueError, match="PPO_RNN: none of the models .* use PPO for feedforward models"):
        Runner(env, runner_cfg("PPO_RNN", recurrent=False))
