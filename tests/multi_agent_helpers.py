"""Shared pieces of the IPPO/MAPPO tests: a hand-made two-agent batch, its NumPy reference update, linear models for
both backends and a tiny duck-typed PettingZoo parallel environment."""

import gymnasium
import numpy as np

AGENTS = ["a0", "a1"]
OBSERVATION = gymnasium.spaces.Box(-np.inf, np.inf, (2,), np.float32)
ACTION = gymnasium.spaces.Discrete(2)
STATE = gymnasium.spaces.Box(-np.inf, np.inf, (3,), np.float32)

# one environment, two steps per agent: observations s0, s1 and the last next observation s2
OBS = {
    "a0": np.array([[0.5, -1.0], [1.0, 0.25], [-0.5, 0.75]], np.float32),
    "a1": np.array([[-0.25, 0.5], [0.75, 1.0], [0.5, -0.5]], np.float32),
}
SHARED = np.array([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6], [-0.7, 0.8, 0.9]], np.float32)
ACTIONS = {"a0": np.array([1, 0]), "a1": np.array([0, 1])}
REWARDS = {"a0": np.array([1.0, -0.5], np.float32), "a1": np.array([0.25, 2.0], np.float32)}

# hand-set linear weights: policy logits = W s + b, value = w . x + c
POLICY = {
    "a0": (np.array([[0.3, -0.2], [0.1, 0.4]]), np.array([0.05, -0.05])),
    "a1": (np.array([[-0.1, 0.2], [0.3, -0.3]]), np.array([0.0, 0.1])),
}
VALUE = {"a0": (np.array([0.2, -0.1]), 0.1), "a1": (np.array([-0.3, 0.25]), -0.2)}
SHARED_VALUE = {"a0": (np.array([0.2, -0.1, 0.3]), 0.1), "a1": (np.array([-0.3, 0.25, 0.1]), -0.2)}


def adam_first_step(parameter, gradient, lr, eps=1e-8):
    """Adam's first step from zero moments: the bias-corrected moments are g and g**2."""
    return parameter - lr * gradient / (np.abs(gradient) + eps)


def reference_update(uid, lr, gamma=0.99, lam=0.95, shared=False, clip_values=None, entropy_scale=0.0, policy=None):
    """One PPO update (1 epoch, 1 mini-batch of the 2 samples, no gradient clipping, no entropy) of agent ``uid``
    computed by hand: ``(value_loss, (W, b), (w, c))`` after the step. ``shared``: the value reads SHARED;
    ``entropy_scale``: the loss adds ``-entropy_scale * mean(H)``; ``policy``: ``(W, b)`` instead of POLICY's."""
    W, b = POLICY[uid] if policy is None else policy
    w, c = (SHARED_VALUE if shared else VALUE)[uid]
    obs = OBS[uid].astype(np.float64)
    x = SHARED.astype(np.float64) if shared else obs
    values = x @ w + c  # V(s0), V(s1), V(s2)
    rewards = REWARDS[uid]
    deltas = rewards + gamma * values[1:] - values[:2]
    advantages = np.array([deltas[0] + gamma * lam * deltas[1], deltas[1]])
    returns = advantages + values[:2]
    normalised = (advantages - advantages.mean()) / (advantages.std(ddof=1) + 1e-8)

    # policy: d/dW of -mean(A * ratio) at ratio 1 is -mean(A * grad log pi)
    logits = obs[:2] @ W.T + b
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    one_hot = np.eye(2)[ACTIONS[uid]]
    score = one_hot - probabilities  # d log pi / d logits
    grad_W = -np.mean(normalised[:, None, None] * score[:, :, None] * obs[:2, None, :], axis=0)
    grad_b = -np.mean(normalised[:, None] * score, axis=0)
    # entropy bonus: dH/dlogit_j = -p_j (log p_j + H)
    entropy = -np.sum(probabilities * np.log(probabilities), axis=1)
    d_entropy = -probabilities * (np.log(probabilities) + entropy[:, None])
    grad_W -= entropy_scale * np.mean(d_entropy[:, :, None] * obs[:2, None, :], axis=0)
    grad_b -= entropy_scale * np.mean(d_entropy, axis=0)

    predicted = values[:2]  # the update's first step sees the rollout's parameters
    if clip_values is not None:
        predicted = values[:2] + np.clip(predicted - values[:2], -clip_values, clip_values)
    value_loss = np.mean((returns - predicted) ** 2)
    grad_w = -2 * np.mean((returns - predicted)[:, None] * x[:2], axis=0)
    grad_c = -2 * np.mean(returns - predicted)
    new_policy = (adam_first_step(W, grad_W, lr), adam_first_step(b, grad_b, lr))
    new_value = (adam_first_step(w, grad_w, lr), adam_first_step(c, grad_c, lr))
    return value_loss, new_policy, new_value


def update_cfg(defaults, lr, **extra):
    return {
        **defaults,
        "rollouts": 2,
        "learning_epochs": 1,
        "mini_batches": 1,
        "learning_rate": lr,
        "grad_norm_clip": 0,
        "entropy_loss_scale": 0.0,
        "experiment": {**defaults["experiment"], "write_interval": 0, "checkpoint_interval": 0},
        **extra,
    }


def feed_hand_batch(agent, to_array, shared=False):
    """Record the two hand-made steps (``to_array``: a backend's array constructor) and run the update."""
    for t in range(2):
        infos = {uid: {} for uid in AGENTS}
        if shared:
            infos.update(shared_states=to_array(SHARED[t : t + 1]), shared_next_states=to_array(SHARED[t + 1 : t + 2]))
        agent.record_transition(
            states={uid: to_array(OBS[uid][t : t + 1]) for uid in AGENTS},
            actions={uid: to_array(ACTIONS[uid][t : t + 1].reshape(1, 1).astype(np.float32)) for uid in AGENTS},
            rewards={uid: to_array(REWARDS[uid][t : t + 1].reshape(1, 1)) for uid in AGENTS},
            next_states={uid: to_array(OBS[uid][t + 1 : t + 2]) for uid in AGENTS},
            terminated={uid: to_array(np.zeros((1, 1), bool)) for uid in AGENTS},
            truncated={uid: to_array(np.zeros((1, 1), bool)) for uid in AGENTS},
            infos=infos,
            timestep=t,
            timesteps=2,
        )
        agent.post_interaction(timestep=t, timesteps=2)


class TinyParallelEnv:
    """The PettingZoo parallel API, duck-typed: two agents, 3-step episodes (truncated), the reward of an agent is
    its action; observations and the state depend on the step only. With ``leave_at``, agent a0 leaves each episode
    early: terminated at that step, then absent until the reset; ``drop_leaver`` also leaves it out of that step's
    outputs (an environment that forgets the agents it removes)."""

    metadata = {"name": "tiny_parallel_v0"}
    possible_agents = list(AGENTS)
    observation_spaces = {uid: OBSERVATION for uid in AGENTS}
    action_spaces = {uid: ACTION for uid in AGENTS}
    state_space = STATE

    def __init__(self, max_steps=3, leave_at=None, drop_leaver=False):
        self.max_steps = max_steps
        self.leave_at = leave_at
        self.drop_leaver = drop_leaver
        self.agents = []
        self.steps = 0

    def _observations(self, agents=AGENTS):
        return {uid: np.array([self.steps * 0.5, index - 0.5], np.float32) for index, uid in enumerate(AGENTS)
                if uid in agents}  # fmt: skip

    def reset(self, seed=None, options=None):
        self.steps = 0
        self.agents = list(AGENTS)
        return self._observations(), {uid: {} for uid in AGENTS}

    def step(self, actions):
        self.steps += 1
        acting = list(self.agents)
        leaving = [uid for uid in acting if uid == "a0" and self.steps == self.leave_at]
        reported = [uid for uid in acting if not (self.drop_leaver and uid in leaving)]
        rewards = {uid: float(np.asarray(actions[uid]).reshape(-1)[0]) for uid in reported}
        done = self.steps >= self.max_steps
        terminated = {uid: uid in leaving for uid in reported}
        truncated = {uid: done for uid in reported}
        observations = self._observations(reported)
        self.agents = [] if done else [uid for uid in acting if uid not in leaving]
        return observations, rewards, terminated, truncated, {uid: {} for uid in reported}

    def state(self):
        return np.array([self.steps, 1.0, -1.0], np.float32)

    def render(self):
        return None

    def close(self):
        pass


def spy_on_updates(agent, to_numpy=np.asarray):
    """``{uid: [(timestep, states, actions, rewards, terminated), ...]}``: each learner's memory as its update read it."""
    seen = {uid: [] for uid in agent.learners}
    for uid, learner in agent.learners.items():

        def update(timestep, timesteps, uid=uid, learner=learner, original=learner._update):
            names = ("states", "actions", "rewards", "terminated")
            rows = [np.array(to_numpy(learner.memory.get_tensor_by_name(name))) for name in names]
            seen[uid].append((timestep, *rows))
            original(timestep, timesteps)

        learner._update = update
    return seen


def check_leaving_agent_rollouts(updates, tracker_stats, drop_leaver):
    """A TinyParallelEnv(leave_at=2) run of 6 steps with rollouts 4: a0 acts at the first two steps of each 3-step
    episode (timesteps 0, 1, 3, 4), so its rollout is full (4 of its own transitions) at timestep 4, not 3; a1's at 3."""
    assert [update[0] for update in updates["a0"]] == [4]
    _, states, actions, rewards, terminated = updates["a0"][0]
    np.testing.assert_array_equal(states[:, 0, 0], [0.0, 0.5, 0.0, 0.5])  # its own observations, in order
    assert terminated.reshape(-1).tolist() == [False, True, False, True]  # its done flag, once per episode
    departed = rewards.reshape(-1)[[1, 3]]  # dropped from the step's outputs: no reward; else its reward (its action)
    np.testing.assert_array_equal(departed, 0.0 if drop_leaver else actions.reshape(-1)[[1, 3]])
    assert [update[0] for update in updates["a1"]] == [3]
    np.testing.assert_array_equal(updates["a1"][0][1][:, 0, 0], [0.0, 0.5, 1.0, 0.0])
    # the episode statistics: an episode ends when every agent is done, not when a0 leaves
    assert tracker_stats["Episode / Total timesteps (max)"] == [3, 3]
