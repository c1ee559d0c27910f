"""An independent NumPy reference of DDPG's update for linear actors and critics, and small envs for the DDPG tests.

The models of the tests are one linear layer each: the actor ``a = s @ Wp.T + bp`` and the critic
``Q = [s, a] @ Wc.T + bc``. Their gradients are written out by hand here, and Adam is the textbook rule, so the
expected numbers do not come from torch, optax or the code under test.
"""

from typing import NamedTuple

import gymnasium
import numpy as np

OBSERVATION_SIZE, ACTION_SIZE = 3, 2


class Linear(NamedTuple):
    weight: np.ndarray  # (out, in), torch's layout
    bias: np.ndarray


def random_linear(rng: np.random.Generator, inputs: int, outputs: int) -> Linear:
    return Linear(rng.normal(0, 0.5, (outputs, inputs)), rng.normal(0, 0.5, outputs))


class Adam:
    """Textbook Adam (Kingma & Ba), eps added to the square root of the bias-corrected second moment."""

    def __init__(self, lr: float, betas=(0.9, 0.999), eps: float = 1e-8):
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.step_count, self.m, self.v = 0, None, None

    def step(self, params: list, grads: list) -> list:
        if self.m is None:
            self.m = [np.zeros_like(g) for g in grads]
            self.v = [np.zeros_like(g) for g in grads]
        self.step_count += 1
        new = []
        for index, (param, grad) in enumerate(zip(params, grads)):
            self.m[index] = self.beta1 * self.m[index] + (1 - self.beta1) * grad
            self.v[index] = self.beta2 * self.v[index] + (1 - self.beta2) * grad**2
            m_hat = self.m[index] / (1 - self.beta1**self.step_count)
            v_hat = self.v[index] / (1 - self.beta2**self.step_count)
            new.append(param - self.lr * m_hat / (np.sqrt(v_hat) + self.eps))
        return new


def clip_by_global_norm(grads: list, max_norm: float) -> list:
    if max_norm <= 0:
        return grads
    norm = np.sqrt(sum(float(np.sum(g**2)) for g in grads))
    return [g * min(1.0, max_norm / norm) for g in grads]


def actor(params: Linear, states: np.ndarray) -> np.ndarray:
    return states @ params.weight.T + params.bias


def critic(params: Linear, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
    return np.concatenate([states, actions], axis=1) @ params.weight.T + params.bias


class Reference:
    """DDPG on linear models: ``step(batch)`` is one gradient step; the record lists what each step reported."""

    def __init__(self, policy: Linear, critic_params: Linear, cfg: dict):
        self.policy, self.critic = policy, critic_params
        self.target_policy, self.target_critic = policy, critic_params  # hard copies at construction
        self.cfg = cfg
        self.policy_adam = Adam(cfg["actor_learning_rate"])
        self.critic_adam = Adam(cfg["critic_learning_rate"])
        self.records = []

    def step(self, states, actions, rewards, next_states, terminated, truncated) -> None:
        cfg, rows = self.cfg, len(states)
        # TD targets: termination ends the bootstrap; a truncated row bootstraps from its stored next state
        next_actions = actor(self.target_policy, next_states)
        not_done = 1.0 - np.asarray(terminated, np.float64)
        targets = rewards + cfg["discount_factor"] * not_done * critic(self.target_critic, next_states, next_actions)

        # critic: L = mean((Q - y)^2), dL/dQ = 2 (Q - y) / N
        inputs = np.concatenate([states, actions], axis=1)
        q = critic(self.critic, states, actions)
        critic_loss = float(np.mean((q - targets) ** 2))
        dq = 2 * (q - targets) / rows
        grads = clip_by_global_norm([dq.T @ inputs, dq.sum(0)], cfg["grad_norm_clip"])
        self.critic = Linear(*self.critic_adam.step(list(self.critic), grads))

        # actor, with the updated critic: L = -mean(Q(s, mu(s))), dL/da = -Wc[:, actions] / N per row
        policy_actions = actor(self.policy, states)
        q_policy = critic(self.critic, states, policy_actions)
        policy_loss = float(-np.mean(q_policy))
        da = np.tile(-self.critic.weight[:, states.shape[1] :] / rows, (rows, 1))  # (N, A)
        grads = clip_by_global_norm([da.T @ states, da.sum(0)], cfg["grad_norm_clip"])
        self.policy = Linear(*self.policy_adam.step(list(self.policy), grads))

        # soft target updates
        tau = cfg["polyak"]
        self.target_policy = Linear(*(tau * p + (1 - tau) * t for p, t in zip(self.policy, self.target_policy)))
        self.target_critic = Linear(*(tau * p + (1 - tau) * t for p, t in zip(self.critic, self.target_critic)))
        self.records.append(
            {
                "critic_loss": critic_loss,
                "policy_loss": policy_loss,
                "q": (q_policy.max(), q_policy.min(), q_policy.mean()),
                "targets": (targets.max(), targets.min(), targets.mean()),
            }
        )


def transitions(rng: np.random.Generator, steps: int, num_envs: int) -> list:
    """``steps`` random transitions of ``num_envs`` envs, with some terminated and some truncated rows."""
    out = []
    for step in range(steps):
        terminated = np.zeros((num_envs, 1), bool)
        truncated = np.zeros((num_envs, 1), bool)
        terminated[0, 0] = step == 1
        truncated[-1, 0] = step == 2
        out.append(
            {
                "states": rng.normal(size=(num_envs, OBSERVATION_SIZE)).astype(np.float32),
                "actions": rng.uniform(-1, 1, (num_envs, ACTION_SIZE)).astype(np.float32),
                "rewards": rng.normal(size=(num_envs, 1)).astype(np.float32),
                "next_states": rng.normal(size=(num_envs, OBSERVATION_SIZE)).astype(np.float32),
                "terminated": terminated,
                "truncated": truncated,
            }
        )
    return out


def stacked(steps: list) -> dict:
    """The transitions as one batch of rows (float64 for the reference)."""
    flags = ("terminated", "truncated")
    return {
        name: np.concatenate([step[name] for step in steps]).astype(bool if name in flags else np.float64)
        for name in steps[0]
    }


class Counter(gymnasium.Env):
    """Observation ``[steps taken, offset]``; truncated after ``limit`` steps; reward 0."""

    def __init__(self, limit: int, offset: float):
        self.limit, self.offset = limit, offset
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
        self.action_space = gymnasium.spaces.Box(-1, 1, (1,), np.float32)

    def reset(self, seed=None, options=None):
        self.steps = 0
        return np.array([0.0, self.offset], np.float32), {}

    def step(self, action):
        self.steps += 1
        return np.array([self.steps, self.offset], np.float32), 0.0, False, self.steps >= self.limit, {}


class Bandit(gymnasium.Env):
    """One-step episodes: observation ``s ~ U(-1, 1)``, reward ``-(a - s)^2``: the best action is ``a = s``."""

    observation_space = gymnasium.spaces.Box(-1, 1, (1,), np.float32)
    action_space = gymnasium.spaces.Box(-1, 1, (1,), np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.state = self.np_random.uniform(-1, 1, (1,)).astype(np.float32)
        return self.state, {}

    def step(self, action):
        reward = -float((np.asarray(action).reshape(-1)[0] - self.state[0]) ** 2)
        return self.state, reward, True, False, {}
