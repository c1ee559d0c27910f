"""An independent NumPy TD3 for linear models, written from the paper's equations (not from skrl_like): the expected
values of the hand-made-batch tests of both backends.

Policy ``a = s W^T + b``; critics ``Q(s, a) = [s, a] w^T + c``; gradients derived by hand; Adam with PyTorch's and
optax's defaults (betas 0.9 / 0.999, eps 1e-8 outside the square root)."""

import numpy as np

# the hand-made batch: 4 transitions of a 2-d observation and a 1-d action in [-1, 1]
STATES = np.array([[0.5, -1.0], [1.0, 0.25], [-0.5, 0.75], [0.0, 1.5]], np.float32)
ACTIONS = np.array([[0.3], [-0.6], [0.9], [-0.1]], np.float32)
REWARDS = np.array([[1.0], [-0.5], [0.25], [2.0]], np.float32)
NEXT_STATES = np.array([[0.25, -0.5], [-1.0, 0.5], [0.75, 1.0], [1.5, -0.25]], np.float32)
TERMINATED = np.array([[False], [False], [True], [False]])
TRUNCATED = np.array([[False], [True], [False], [False]])
LOW, HIGH = -1.0, 1.0


def policy(params, states):
    return states @ params["W"].T + params["b"]


def critic(params, states, actions):
    return np.concatenate([states, actions], 1) @ params["w"].T + params["c"]


class Adam:
    def __init__(self, lr):
        self.lr, self.t, self.m, self.v = lr, 0, {}, {}

    def step(self, params, grads):
        self.t += 1
        new = {}
        for name, grad in grads.items():
            m = 0.9 * self.m.get(name, 0.0) + 0.1 * grad
            v = 0.999 * self.v.get(name, 0.0) + 0.001 * grad * grad
            self.m[name], self.v[name] = m, v
            m_hat, v_hat = m / (1 - 0.9**self.t), v / (1 - 0.999**self.t)
            new[name] = params[name] - self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)
        return new


def td3_update(params, gradient_steps, policy_delay, gamma, polyak, actor_lr, critic_lr, smoothing=None, clip=0.5):
    """``gradient_steps`` TD3 steps on the whole batch; ``params`` holds ``policy``, ``critic_1``, ``critic_2`` and
    their ``target_*`` copies (dicts of float64 arrays). ``smoothing``: one ``(4, 1)`` noise per step or ``None``.
    Returns the new params and, per step, ``(critic_loss, policy_loss or None, targets)``."""
    params = {role: dict(p) for role, p in params.items()}
    optimizers = {
        role: Adam(actor_lr if role == "policy" else critic_lr) for role in ("policy", "critic_1", "critic_2")
    }
    records = []
    states, next_states = STATES.astype(np.float64), NEXT_STATES.astype(np.float64)
    actions, rewards = ACTIONS.astype(np.float64), REWARDS.astype(np.float64)
    not_done = 1.0 - TERMINATED  # a truncated row bootstraps
    n = len(states)
    for step in range(gradient_steps):
        next_actions = policy(params["target_policy"], next_states)
        if smoothing is not None:
            next_actions = np.clip(next_actions + np.clip(smoothing[step], -clip, clip), LOW, HIGH)
        target_q = np.minimum(
            critic(params["target_critic_1"], next_states, next_actions),
            critic(params["target_critic_2"], next_states, next_actions),
        )
        targets = rewards + gamma * not_done * target_q
        inputs = np.concatenate([states, actions], 1)
        critic_loss = 0.0
        for role in ("critic_1", "critic_2"):
            errors = critic(params[role], states, actions) - targets
            critic_loss += np.mean(errors**2)  # the sum of both critics' mean squared errors
            grads = {"w": 2.0 / n * errors.T @ inputs, "c": 2.0 / n * errors.sum(0)}
            params[role] = optimizers[role].step(params[role], grads)
        policy_loss = None
        if (step + 1) % policy_delay == 0:
            w = params["critic_1"]["w"]
            policy_actions = policy(params["policy"], states)
            policy_loss = -np.mean(critic(params["critic_1"], states, policy_actions))
            # d(-mean Q)/dW = -mean(dQ/da * s), dQ/da = w_a
            grads = {"W": -w[:, 2:] * states.mean(0, keepdims=True), "b": -w[0, 2:]}
            params["policy"] = optimizers["policy"].step(params["policy"], grads)
            for role in ("policy", "critic_1", "critic_2"):
                target = params[f"target_{role}"]
                params[f"target_{role}"] = {k: polyak * params[role][k] + (1 - polyak) * target[k] for k in target}
        records.append((critic_loss, policy_loss, targets))
    return params, records
