"""The plain-torch floor of the Isaac Lab-shaped PPO benchmark (issue 28): the same PPO arithmetic as bare tensor
code, no library, so the gap between a library and the least that torch needs is known.

Same env (``IsaacLabStandInEnv``, stepped directly, no wrapper), same config (``isaaclab_ant.ANT_AGENT``: rollouts
16, 4 epochs of 2 mini-batches, [256, 128, 64] ELU trunk with a Gaussian mean head, a state-independent log std
clamped to [-20, 2] and a value head, shared or ``--separate``), and the arithmetic skrl's PPO does with it:

- a running standard scaler of the states (updated once per rollout over its states, which is what skrl's
  first-epoch mini-batch updates add up to) and of the values (updated with the rollout's values, then its returns,
  as skrl does);
- rewards times 0.6; dones = terminated or truncated (no time-limit bootstrap); GAE(0.99, 0.95) with the value of
  the last next states; advantages standardised;
- per mini-batch: log-probabilities and values recomputed, clipped surrogate (0.2), predicted values clipped (0.2)
  against the rollout's, MSE to the returns, one backward over both losses, grad-norm clip 1.0, Adam (fused);
- ``KLAdaptiveLR`` (threshold 0.008, factor 2, lr x/÷ 1.5 within [1e-6, 1e-2]) once per epoch on the epoch's mean
  approximate KL, the one host read per epoch.

No finite checks, no tracking, no episode statistics, no memory object: preallocated rollout tensors.

    .venv/bin/python benchmarks/torch_ppo_floor.py --num-envs 4096 --timesteps 64 --seed 0 [--separate]

Prints ONE JSON line in ``isaaclab_ant.report``'s layout (``library: "torch-floor"``).
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
from isaaclab_ant import ANT_AGENT, HIDDEN, add_arguments, load_standin, report  # noqa: E402

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def trunk(inputs: int) -> torch.nn.Sequential:
    layers, last = [], inputs
    for width in HIDDEN:
        layers += [torch.nn.Linear(last, width), torch.nn.ELU()]
        last = width
    return torch.nn.Sequential(*layers)


class ActorCritic(torch.nn.Module):
    """Gaussian mean and value heads on one trunk (skrl's shared model) or on one trunk each (``separate``)."""

    def __init__(self, observations: int, actions: int, separate: bool):
        super().__init__()
        self.policy_trunk = trunk(observations)
        self.value_trunk = trunk(observations) if separate else None
        self.mean = torch.nn.Linear(HIDDEN[-1], actions)
        self.value = torch.nn.Linear(HIDDEN[-1], 1)
        self.log_std = torch.nn.Parameter(torch.full((actions,), ANT_AGENT["initial_log_std"]))

    def forward(self, states: torch.Tensor):
        features = self.policy_trunk(states)
        value_features = features if self.value_trunk is None else self.value_trunk(states)
        log_std = self.log_std.clamp(ANT_AGENT["min_log_std"], ANT_AGENT["max_log_std"])
        return self.mean(features), log_std, self.value(value_features)


def log_prob(actions: torch.Tensor, mean: torch.Tensor, log_std: torch.Tensor) -> torch.Tensor:
    return (-0.5 * ((actions - mean) * torch.exp(-log_std)) ** 2 - log_std - LOG_SQRT_2PI).sum(-1)


class Scaler:
    """Running mean and variance (parallel algorithm), as skrl's ``RunningStandardScaler`` (clip 5, epsilon 1e-8)."""

    def __init__(self, size: int):
        self.mean = torch.zeros(size)
        self.var = torch.ones(size)
        self.count = 1e-4

    def update(self, x: torch.Tensor) -> None:
        var, mean = torch.var_mean(x, dim=0, correction=0)
        n = x.shape[0]
        delta = mean - self.mean
        total = self.count + n
        self.mean = self.mean + delta * (n / total)
        self.var = (self.var * self.count + var * n + delta**2 * (self.count * n / total)) / total
        self.count = total

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return ((x - self.mean) / (self.var.sqrt() + 1e-8)).clamp(-5.0, 5.0)

    def inverse(self, x: torch.Tensor) -> torch.Tensor:
        return self.var.sqrt() * x.clamp(-5.0, 5.0) + self.mean


def gae(rewards, dones, values, last_values, gamma: float, lam: float):
    """Advantages and returns over ``(rollouts, num_envs)`` tensors."""
    advantages = torch.empty_like(rewards)
    running = torch.zeros_like(last_values)
    next_values = last_values
    not_dones = 1.0 - dones
    for t in range(rewards.shape[0] - 1, -1, -1):
        running = rewards[t] - values[t] + gamma * not_dones[t] * (next_values + lam * running)
        advantages[t] = running
        next_values = values[t]
    returns = advantages + values
    return (advantages - advantages.mean()) / (advantages.std() + 1e-8), returns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args()
    a = ANT_AGENT
    torch.manual_seed(args.seed)
    torch.set_default_device(args.device)  # the model, the rollout buffers and the mini-batch permutations
    env = load_standin()(num_envs=args.num_envs, device=args.device, seed=args.seed)
    observations = env.single_observation_space["policy"].shape[0]
    action_size = env.single_action_space.shape[0]
    model = ActorCritic(observations, action_size, args.separate)
    lr = a["learning_rate"]
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, fused=True)
    state_scaler, value_scaler = Scaler(observations), Scaler(1)

    rollouts, n = a["rollouts"], args.num_envs
    states = torch.empty(rollouts, n, observations)
    actions = torch.empty(rollouts, n, action_size)
    log_probs = torch.empty(rollouts, n)
    values = torch.empty(rollouts, n)
    rewards = torch.empty(rollouts, n)
    dones = torch.empty(rollouts, n)
    samples = rollouts * n
    mini_batch = samples // a["mini_batches"]

    obs = env.reset()[0]["policy"]
    start = time.perf_counter()
    for step in range(args.timesteps):
        t = step % rollouts
        with torch.no_grad():
            mean, log_std, value = model(state_scaler(obs))
            action = mean + torch.randn_like(mean) * log_std.exp()
            states[t] = obs
            actions[t] = action
            log_probs[t] = log_prob(action, mean, log_std)
            values[t] = value_scaler.inverse(value).squeeze(-1)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        rewards[t] = reward * a["rewards_shaper_scale"]
        dones[t] = (terminated | truncated).float()
        obs = next_obs["policy"]
        if t < rollouts - 1:
            continue

        # -- update
        with torch.no_grad():
            last_values = value_scaler.inverse(model(state_scaler(obs))[2]).squeeze(-1)
            advantages, returns = gae(rewards, dones, values, last_values, a["discount_factor"], a["lambda"])
            value_scaler.update(values.reshape(-1, 1))
            old_values = value_scaler(values.reshape(-1, 1)).squeeze(-1)
            value_scaler.update(returns.reshape(-1, 1))
            targets = value_scaler(returns.reshape(-1, 1)).squeeze(-1)
            flat_states = states.reshape(samples, observations)
            state_scaler.update(flat_states)
            flat_states = state_scaler(flat_states)
        flat_actions, flat_log_probs = actions.reshape(samples, action_size), log_probs.reshape(samples)
        flat_advantages = advantages.reshape(samples)
        for _ in range(a["learning_epochs"]):
            kls = []
            for index in torch.randperm(samples).split(mini_batch):
                mean, log_std, predicted = model(flat_states[index])
                log_ratio = log_prob(flat_actions[index], mean, log_std) - flat_log_probs[index]
                ratio = log_ratio.exp()
                with torch.no_grad():
                    kls.append(((ratio - 1) - log_ratio).mean())
                advantage = flat_advantages[index]
                clipped = ratio.clamp(1 - a["ratio_clip"], 1 + a["ratio_clip"])
                policy_loss = -torch.min(advantage * ratio, advantage * clipped).mean()
                old = old_values[index]
                predicted = old + (predicted.squeeze(-1) - old).clamp(-a["value_clip"], a["value_clip"])
                value_loss = a["value_loss_scale"] * (targets[index] - predicted).pow(2).mean()
                optimizer.zero_grad(set_to_none=True)
                (policy_loss + value_loss).backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), a["grad_norm_clip"])
                optimizer.step()
            kl = torch.stack(kls).mean().item()  # KLAdaptiveLR (factor 2, x/÷ 1.5, lr in [1e-6, 1e-2])
            if kl > a["kl_threshold_lr"] * 2:
                lr = max(lr / 1.5, 1e-6)
            elif kl < a["kl_threshold_lr"] / 2:
                lr = min(lr * 1.5, 1e-2)
            for group in optimizer.param_groups:
                group["lr"] = lr
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    report("torch-floor", torch.__version__, args, seconds, last_mean_step_reward=float(rewards[-1].mean() / 0.6))


if __name__ == "__main__":
    main()
