"""An independent NumPy reference of one SAC gradient step for linear models, with analytic gradients.

The models: a Gaussian policy ``mean = s @ W + b`` with a state-independent ``log_std``; critics
``Q_i(s, a) = [s, a] @ w_i + c_i``; targets equal to their critics (the agent hard-copies them). The policy's noise is
the fixed ``noise_pattern`` (tests patch the backends' normal draws with it). The first Adam step moves every
parameter by ``-lr * g / (|g| + 1e-8)`` (bias-corrected moments of one gradient), so one step is computable exactly.

Used by ``tests/torch/test_sac.py`` and ``tests/jax/test_sac.py`` (``tests/`` is on ``sys.path``).
"""

import math

import gymnasium
import numpy as np

OBSERVATIONS = gymnasium.spaces.Box(-np.inf, np.inf, (3,))
ACTIONS = gymnasium.spaces.Box(-2.0, 2.0, (1,))
BATCH_SIZE = 5


def noise_pattern(shape) -> np.ndarray:
    """The 'standard normal' draws of the patched backends: fixed, varied, shape-dependent only."""
    size = int(np.prod(shape))
    return (1.3 * np.sin(1.7 * np.arange(1, size + 1))).reshape(shape).astype(np.float32)


def initial_weights(log_std: float = -0.5) -> dict:
    """Linear weights in float32 (what both backends are given)."""
    rng = np.random.default_rng(7)
    return {
        "W": rng.normal(0, 0.5, (3, 1)).astype(np.float32),
        "b": np.array([0.1], np.float32),
        "log_std": np.array([log_std], np.float32),
        "w1": rng.normal(0, 0.5, (4,)).astype(np.float32),
        "c1": np.array([0.2], np.float32),
        "w2": rng.normal(0, 0.5, (4,)).astype(np.float32),
        "c2": np.array([-0.3], np.float32),
    }


def batch() -> dict:
    """A hand-made replay batch: 5 transitions, one terminated (no bootstrap) and one truncated (bootstraps from its
    stored terminal observation)."""
    rng = np.random.default_rng(3)
    return {
        "states": rng.normal(0, 1, (BATCH_SIZE, 3)).astype(np.float32),
        "actions": rng.uniform(-2, 2, (BATCH_SIZE, 1)).astype(np.float32),
        "rewards": np.array([[-1.0], [-0.5], [-2.0], [0.3], [-1.2]], np.float32),
        "next_states": rng.normal(0, 1, (BATCH_SIZE, 3)).astype(np.float32),
        "terminated": np.array([[0], [1], [0], [0], [0]], bool),
        "truncated": np.array([[0], [0], [0], [1], [0]], bool),
    }


def _adam_first_step(parameter: np.ndarray, gradient: np.ndarray, learning_rate: float) -> np.ndarray:
    return parameter - learning_rate * gradient / (np.abs(gradient) + 1e-8)


def reference_update(weights: dict, data: dict, cfg: dict) -> dict:
    """One SAC gradient step in float64: the losses, the TD targets and every new parameter."""
    p = {name: value.astype(np.float64) for name, value in weights.items()}
    d = {name: value.astype(np.float64) for name, value in data.items()}
    gamma, polyak, alpha = cfg["discount_factor"], cfg["polyak"], cfg["initial_entropy_value"]
    target_entropy = -1.0  # -prod(ACTIONS.shape)
    noise = noise_pattern((BATCH_SIZE, 1)).astype(np.float64)
    std = np.exp(p["log_std"])

    def log_prob() -> np.ndarray:  # the density of mean + std * noise: z = noise
        return np.sum(-0.5 * noise**2 - p["log_std"] - 0.5 * math.log(2 * math.pi), axis=-1, keepdims=True)

    def q(states, actions, w, c):
        return np.concatenate([states, actions], -1) @ w[:, None] + c

    # soft TD targets with the target critics (= the critics before the step) and a fresh next action
    next_actions = d["next_states"] @ p["W"] + p["b"] + std * noise
    next_q = np.minimum(
        q(d["next_states"], next_actions, p["w1"], p["c1"]), q(d["next_states"], next_actions, p["w2"], p["c2"])
    )
    not_done = 1.0 - d["terminated"]
    targets = d["rewards"] + gamma * not_done * (next_q - alpha * log_prob())

    # critic step on (MSE_1 + MSE_2) / 2
    inputs = np.concatenate([d["states"], d["actions"]], -1)
    new, losses = dict(p), {}
    critic_losses = []
    for i in ("1", "2"):
        errors = q(d["states"], d["actions"], p["w" + i], p["c" + i]) - targets
        critic_losses.append(np.mean(errors**2))
        new["w" + i] = _adam_first_step(p["w" + i], inputs.T @ errors[:, 0] / BATCH_SIZE, cfg["critic_learning_rate"])
        new["c" + i] = _adam_first_step(p["c" + i], np.array([errors.mean()]), cfg["critic_learning_rate"])
    losses["critic"] = sum(critic_losses) / 2

    # actor step with the stepped critics: d loss / d a = -w_k^a / B for the critic k giving the smaller Q
    actions = d["states"] @ p["W"] + p["b"] + std * noise
    q1, q2 = (q(d["states"], actions, new["w" + i], new["c" + i]) for i in ("1", "2"))
    losses["policy"] = np.mean(alpha * log_prob() - np.minimum(q1, q2))
    action_weight = np.where(q1 <= q2, new["w1"][-1], new["w2"][-1])  # (B, 1)
    grad_actions = -action_weight / BATCH_SIZE
    new["W"] = _adam_first_step(p["W"], d["states"].T @ grad_actions, cfg["actor_learning_rate"])
    new["b"] = _adam_first_step(p["b"], grad_actions.sum(0), cfg["actor_learning_rate"])
    grad_log_std = -alpha + np.sum(grad_actions * std * noise, axis=0)
    new["log_std"] = _adam_first_step(p["log_std"], grad_log_std, cfg["actor_learning_rate"])

    # entropy step on -mean(log_alpha * (log_prob + target_entropy))
    log_alpha = math.log(alpha)
    entropy_term = np.mean(log_prob() + target_entropy)
    losses["entropy"] = -log_alpha * entropy_term
    new["log_alpha"] = _adam_first_step(np.array([log_alpha]), np.array([-entropy_term]), cfg["entropy_learning_rate"])

    # polyak: the targets move polyak of the way from the old critics to the new ones
    for i in ("1", "2"):
        for name in ("w", "c"):
            new["target_" + name + i] = p[name + i] + polyak * (new[name + i] - p[name + i])
    return {"losses": losses, "targets": targets, "params": new, "q1": q1, "q2": q2}
