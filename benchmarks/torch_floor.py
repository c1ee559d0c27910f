"""The floor under every torch library: the least time plain torch needs per environment step at issue 11's shapes.

One process, one intra-op thread, plain ``torch.nn`` modules and no library, running ``off_policy.py``'s
throughput protocol (``THROUGHPUT_TIMESTEPS`` env steps, the first ``learning_starts`` acting at random without
updates): the env that ``off_policy.py`` gives every library (a one-env gymnasium sync vector env) stepped
directly, without a wrapper; the action from one forward pass (no distribution object, no checks); the transition
written into preallocated tensors; one gradient step of bare tensor code per step (a batch gathered at random,
fused Adam, ``torch._foreach_lerp_`` for the targets; no finite checks, no tracking, no preprocessors, no
scheduler). A library that does the same arithmetic can only be slower: a library's time per run divided by this
floor's bounds what any rewrite of it could gain.

    .venv/bin/python benchmarks/torch_floor.py --algorithm SAC --seed 0       # also TD3, DQN

Prints ONE JSON line in ``off_policy.py``'s layout (``seconds``, ``env_steps_per_s``). The models and
hyperparameters are ``off_policy.py``'s (``HYPERPARAMETERS``: [256, 256] ReLU and batch 256 for SAC/TD3, [64, 64]
and batch 64 for DQN). The replay is filled with random numbers beforehand (sampling costs what it costs whatever
the numbers are).
"""

import os

os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})

import copy  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
from floor import ReplayRows, run  # noqa: E402


def mlp(inputs: int, outputs: int, hidden: list) -> torch.nn.Sequential:
    layers, last = [], inputs
    for width in hidden:
        layers += [torch.nn.Linear(last, width), torch.nn.ReLU()]
        last = width
    return torch.nn.Sequential(*layers, torch.nn.Linear(last, outputs))


def frozen_copy(module: torch.nn.Module) -> torch.nn.Module:
    target = copy.deepcopy(module)
    target.requires_grad_(False)
    return target


class Replay(ReplayRows):
    """Preallocated replay tensors filled with plausible values; ``batch`` gathers ``batch_size`` random rows."""

    def __init__(self, rows: int, observation_size: int, seed: int, discrete_actions: int = 0):
        torch.manual_seed(seed)
        self.rows = rows
        self.states = torch.randn(rows, observation_size)
        self.next_states = torch.randn(rows, observation_size)
        if discrete_actions:
            self.actions = torch.randint(0, discrete_actions, (rows, 1))
        else:
            self.actions = torch.rand(rows, 1) * 4 - 2
        self.rewards = torch.randn(rows, 1)
        self.terminated = torch.zeros(rows, 1, dtype=torch.bool)

    def write(self, row: int, observations, rewards, terminated) -> None:
        """One env step's row (of one env), one write per tensor as a library's memory does."""
        self.states[row] = torch.as_tensor(observations[0])
        self.rewards[row] = float(rewards[0])
        self.terminated[row] = bool(terminated[0])

    def random_rows(self, batch_size: int):
        return torch.randint(0, self.rows, (batch_size,))


def sac_parts(hyper: dict, seed: int, replay: Replay) -> tuple:
    cfg, hidden = hyper["cfg"], hyper["hidden"]
    policy, log_std = mlp(3, 1, hidden), torch.zeros(1, requires_grad=True)
    critics = [mlp(4, 1, hidden), mlp(4, 1, hidden)]
    targets = [frozen_copy(critic) for critic in critics]
    critic_parameters = [p for critic in critics for p in critic.parameters()]
    policy_optimizer = torch.optim.Adam([*policy.parameters(), log_std], cfg["actor_learning_rate"], fused=True)
    critic_optimizer = torch.optim.Adam(critic_parameters, cfg["critic_learning_rate"], fused=True)
    log_alpha = torch.zeros(1, requires_grad=True)
    alpha_optimizer = torch.optim.Adam([log_alpha], cfg["entropy_learning_rate"], fused=True)
    sources = critic_parameters
    destinations = [p for target in targets for p in target.parameters()]
    gamma, target_entropy = cfg["discount_factor"], -1.0

    def sample(states):
        mean = 2 * torch.tanh(policy(states))
        std = torch.clamp(log_std, -20, 2).exp()
        actions = mean + std * torch.randn_like(mean)
        log_prob = -((actions - mean) ** 2) / (2 * std**2) - torch.log(std) - 0.5 * math.log(2 * math.pi)
        return actions, log_prob

    def act(states):
        with torch.no_grad():
            return sample(states)[0]

    def gradient_step(step, batch):
        states, actions, rewards, next_states, terminated = batch
        alpha = log_alpha.detach().exp()
        with torch.no_grad():
            next_actions, next_log_prob = sample(next_states)
            pairs = torch.cat([next_states, next_actions], 1)
            next_q = torch.min(targets[0](pairs), targets[1](pairs)) - alpha * next_log_prob
            y = rewards + gamma * (~terminated) * next_q
        pairs = torch.cat([states, actions], 1)
        critic_loss = (F.mse_loss(critics[0](pairs), y) + F.mse_loss(critics[1](pairs), y)) / 2
        critic_optimizer.zero_grad()
        critic_loss.backward()
        critic_optimizer.step()
        for p in critic_parameters:  # the critics are scored, not trained, by the policy loss
            p.requires_grad_(False)
        new_actions, log_prob = sample(states)
        pairs = torch.cat([states, new_actions], 1)
        policy_loss = (alpha * log_prob - torch.min(critics[0](pairs), critics[1](pairs))).mean()
        policy_optimizer.zero_grad()
        policy_loss.backward()
        policy_optimizer.step()
        for p in critic_parameters:
            p.requires_grad_(True)
        alpha_loss = -(log_alpha * (log_prob.detach() + target_entropy)).mean()
        alpha_optimizer.zero_grad()
        alpha_loss.backward()
        alpha_optimizer.step()
        with torch.no_grad():
            torch._foreach_lerp_(destinations, sources, cfg["polyak"])

    return act, gradient_step, lambda: torch.rand(1, 1) * 4 - 2


def td3_parts(hyper: dict, seed: int, replay: Replay) -> tuple:
    cfg, hidden = hyper["cfg"], hyper["hidden"]
    policy, critics = mlp(3, 1, hidden), [mlp(4, 1, hidden), mlp(4, 1, hidden)]
    target_policy, targets = frozen_copy(policy), [frozen_copy(critic) for critic in critics]
    critic_parameters = [p for critic in critics for p in critic.parameters()]
    policy_optimizer = torch.optim.Adam(policy.parameters(), cfg["actor_learning_rate"], fused=True)
    critic_optimizer = torch.optim.Adam(critic_parameters, cfg["critic_learning_rate"], fused=True)
    sources = [*policy.parameters(), *critic_parameters]
    destinations = [*target_policy.parameters(), *(p for target in targets for p in target.parameters())]
    gamma, clip = cfg["discount_factor"], cfg["smooth_regularization_clip"]

    def act(states):
        with torch.no_grad():
            actions = 2 * torch.tanh(policy(states))
            return torch.clamp(actions + hyper["exploration_noise_std"] * torch.randn_like(actions), -2, 2)

    def gradient_step(step, batch):
        states, actions, rewards, next_states, terminated = batch
        with torch.no_grad():
            noise = torch.clamp(hyper["smooth_noise_std"] * torch.randn(actions.shape), -clip, clip)
            next_actions = torch.clamp(2 * torch.tanh(target_policy(next_states)) + noise, -2, 2)
            pairs = torch.cat([next_states, next_actions], 1)
            y = rewards + gamma * (~terminated) * torch.min(targets[0](pairs), targets[1](pairs))
        pairs = torch.cat([states, actions], 1)
        critic_loss = F.mse_loss(critics[0](pairs), y) + F.mse_loss(critics[1](pairs), y)
        critic_optimizer.zero_grad()
        critic_loss.backward()
        critic_optimizer.step()
        if step % cfg["policy_delay"]:
            return
        for p in critic_parameters:
            p.requires_grad_(False)
        policy_loss = -critics[0](torch.cat([states, 2 * torch.tanh(policy(states))], 1)).mean()
        policy_optimizer.zero_grad()
        policy_loss.backward()
        policy_optimizer.step()
        for p in critic_parameters:
            p.requires_grad_(True)
        with torch.no_grad():
            torch._foreach_lerp_(destinations, sources, cfg["polyak"])

    return act, gradient_step, lambda: torch.rand(1, 1) * 4 - 2


def dqn_parts(hyper: dict, seed: int, replay: Replay) -> tuple:
    cfg, hidden = hyper["cfg"], hyper["hidden"]
    q_network = mlp(4, 2, hidden)
    target = frozen_copy(q_network)
    optimizer = torch.optim.Adam(q_network.parameters(), cfg["learning_rate"], fused=True)
    gamma = cfg["discount_factor"]
    epsilon = cfg["exploration"]["final_epsilon"]

    def act(states):
        if torch.rand(()) < epsilon:
            return torch.randint(0, 2, (1, 1))
        with torch.no_grad():
            return q_network(states).argmax(-1, keepdim=True)

    def gradient_step(step, batch):
        states, actions, rewards, next_states, terminated = batch
        with torch.no_grad():
            y = rewards + gamma * (~terminated) * target(next_states).max(-1, keepdim=True).values
        loss = F.mse_loss(q_network(states).gather(1, actions), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % cfg["target_update_interval"] == 0:
            with torch.no_grad():
                torch._foreach_copy_(list(target.parameters()), list(q_network.parameters()))

    return act, gradient_step, lambda: torch.randint(0, 2, (1, 1))


def parts(algorithm: str, hyper: dict, seed: int, replay: Replay) -> tuple:
    """The algorithm's parts, acting on and returning NumPy arrays (what the env takes)."""
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    build = {"SAC": sac_parts, "TD3": td3_parts, "DQN": dqn_parts}[algorithm]
    act, gradient_step, random_action = build(hyper, seed, replay)

    def numpy_act(observations):
        return act(torch.as_tensor(observations, dtype=torch.float32)).numpy()

    return numpy_act, gradient_step, lambda: random_action().numpy()


def main() -> None:
    run(__doc__, "plain torch (floor)", "torch", torch.__version__, Replay, parts)


if __name__ == "__main__":
    main()
