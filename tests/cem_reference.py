"""An independent NumPy reference of CEM, written step by step (a row-by-row walk over each environment's column,
not the vectorised code under test): the episodes of a window ending in its current rollout, their returns, the
elite rows, and one
cross-entropy Adam step of a linear categorical policy ``logits = s @ W.T + b``."""

import numpy as np


def elite_rows(rewards, dones, first_row, gamma, percentile):
    """``(returns, threshold, mask)`` over a window of rows (the previous rollout's, then the current one's from
    ``first_row`` on): the returns of the episodes that end at or after ``first_row`` (env by env, in time order; each
    from the row after its env's previous end in the window, or from the window's first row), the ``percentile``
    quantile (linear interpolation between order statistics) and the ``(rows, N)`` 0/1 elite mask."""
    rewards = np.asarray(rewards, dtype=np.float64)
    window, num_envs = rewards.shape
    episodes = []  # (env, rows, return)
    for env in range(num_envs):
        rows = []
        for t in range(window):
            rows.append(t)
            if dones[t, env]:
                if t >= first_row:
                    length = len(rows)
                    total = 0.0
                    for k, row in enumerate(rows):
                        total += rewards[row, env] * gamma ** (length - 1 - k)
                    episodes.append((env, list(rows), total))
                rows = []
    returns = np.array([episode[2] for episode in episodes])
    ordered = sorted(returns)
    position = percentile * (len(ordered) - 1)
    low = int(np.floor(position))
    high = min(low + 1, len(ordered) - 1)
    threshold = ordered[low] + (position - low) * (ordered[high] - ordered[low])
    mask = np.zeros((window, num_envs))
    for env, rows, total in episodes:
        if total >= threshold - 1e-12:
            mask[rows, env] = 1.0
    return returns, threshold, mask


def linear_cross_entropy_step(weight, bias, states, actions, mask, learning_rate):
    """``(loss, new_weight, new_bias)``: the mean of ``-log softmax(W s + b)[a]`` over the rows of mask 1 and one
    Adam step from a fresh state (its first step moves every parameter by ``lr * g / (|g| + eps)``)."""
    rows = np.flatnonzero(mask.reshape(-1))
    s = states[rows].astype(np.float64)
    a = actions.reshape(-1)[rows]
    logits = s @ weight.T.astype(np.float64) + bias.astype(np.float64)
    logits = logits - logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    loss = -np.mean(np.log(probabilities[np.arange(len(rows)), a]))
    one_hot = np.eye(weight.shape[0])[a]
    grad_logits = (probabilities - one_hot) / len(rows)
    grad_weight = grad_logits.T @ s
    grad_bias = grad_logits.sum(axis=0)

    def adam_first_step(parameter, grad):
        return parameter - learning_rate * grad / (np.abs(grad) + 1e-8)

    return loss, adam_first_step(weight, grad_weight), adam_first_step(bias, grad_bias)


# a hand-made rollout of 6 steps in 2 environments (the expected values below are worked out by hand)
REWARDS = np.array([[1, 2], [2, 2], [0, 2], [1, 4], [3, 1], [5, 1]], dtype=np.float32)
DONES = np.array([[0, 0], [1, 0], [0, 1], [0, 1], [1, 0], [0, 1]], dtype=bool)
GAMMA = 0.5
# env 0: episodes rows 0-1 (1*0.5 + 2 = 2.5), rows 2-4 (0*0.25 + 1*0.5 + 3 = 3.5), row 5 unfinished;
# env 1: rows 0-2 (2*0.25 + 2*0.5 + 2 = 3.5), row 3 (4), rows 4-5 (1*0.5 + 1 = 1.5)
HAND_RETURNS = [2.5, 3.5, 3.5, 4.0, 1.5]
# percentile 0.5 of [1.5, 2.5, 3.5, 3.5, 4] is 3.5: elites are env 0 rows 2-4 and env 1 rows 0-3
HAND_THRESHOLD = 3.5
HAND_MASK = np.array([[0, 1], [0, 1], [1, 1], [1, 1], [1, 0], [0, 0]], dtype=np.float32)

# a hand-made window of two rollouts of 4 steps in 2 environments (gamma 0.5, percentile 0.5):
# env 0: an episode ends at previous row 1 (not counted: it ended in the previous rollout); the next one begins at
#   previous row 2 and ends at current row 0 (window rows 2-4, rewards 4, 4, 4: 4 * 0.25 + 4 * 0.5 + 4 = 7); then
#   window rows 5-6 (1 * 0.5 + 1 = 1.5); window row 7 is unfinished;
# env 1: an episode ends at the previous rollout's last row; then window rows 4-5 (2 * 0.5 + 2 = 3)
CROSSING_PREVIOUS_REWARDS = np.array([[0, 1], [0, 1], [4, 1], [4, 1]], dtype=np.float32)
CROSSING_PREVIOUS_DONES = np.array([[0, 0], [1, 0], [0, 0], [0, 1]], dtype=bool)
CROSSING_REWARDS = np.array([[4, 2], [1, 2], [1, 2], [1, 2]], dtype=np.float32)
CROSSING_DONES = np.array([[1, 0], [0, 1], [1, 0], [0, 0]], dtype=bool)
CROSSING_RETURNS = [7.0, 1.5, 3.0]
# the 0.5 quantile of [1.5, 3, 7] is 3: elites are env 0 window rows 2-4 (the crossing episode) and env 1 rows 4-5
CROSSING_THRESHOLD = 3.0
CROSSING_MASK = np.array([[0, 0], [0, 0], [1, 0], [1, 0], [1, 1], [0, 1], [0, 0], [0, 0]], dtype=np.float32)
