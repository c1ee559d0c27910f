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

import argparse  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gymnasium  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
from configs import SqueezeDiscreteActions  # noqa: E402
from off_policy import HYPERPARAMETERS, THROUGHPUT_TIMESTEPS  # noqa: E402


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


class Replay:
    """Preallocated replay tensors filled with plausible values; ``batch`` gathers ``batch_size`` random rows."""

    def __init__(self, rows: int, observation_size: int, discrete_actions: int = 0):
        self.rows = rows
        self.states = torch.randn(rows, observation_size)
        self.next_states = torch.randn(rows, observation_size)
        if discrete_actions:
            self.actions = torch.randint(0, discrete_actions, (rows, 1))
        else:
            self.actions = torch.rand(rows, 1) * 4 - 2
        self.rewards = torch.randn(rows, 1)
        self.terminated = torch.zeros(rows, 1, dtype=torch.bool)

    def batch(self, batch_size: int) -> tuple:
        rows = torch.randint(0, self.rows, (batch_size,))
        return (
            self.states[rows],
            self.actions[rows],
            self.rewards[rows],
            self.next_states[rows],
            self.terminated[rows],
        )


def sac_parts(hyper: dict) -> tuple:
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
    replay, gamma, target_entropy = Replay(hyper["memory_size"], 3), cfg["discount_factor"], -1.0

    def sample(states):
        mean = 2 * torch.tanh(policy(states))
        std = torch.clamp(log_std, -20, 2).exp()
        actions = mean + std * torch.randn_like(mean)
        log_prob = -((actions - mean) ** 2) / (2 * std**2) - torch.log(std) - 0.5 * math.log(2 * math.pi)
        return actions, log_prob

    def act(states):
        with torch.no_grad():
            return sample(states)[0]

    def gradient_step(step):
        states, actions, rewards, next_states, terminated = replay.batch(cfg["batch_size"])
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


def td3_parts(hyper: dict) -> tuple:
    cfg, hidden = hyper["cfg"], hyper["hidden"]
    policy, critics = mlp(3, 1, hidden), [mlp(4, 1, hidden), mlp(4, 1, hidden)]
    target_policy, targets = frozen_copy(policy), [frozen_copy(critic) for critic in critics]
    critic_parameters = [p for critic in critics for p in critic.parameters()]
    policy_optimizer = torch.optim.Adam(policy.parameters(), cfg["actor_learning_rate"], fused=True)
    critic_optimizer = torch.optim.Adam(critic_parameters, cfg["critic_learning_rate"], fused=True)
    sources = [*policy.parameters(), *critic_parameters]
    destinations = [*target_policy.parameters(), *(p for target in targets for p in target.parameters())]
    replay, gamma, clip = Replay(hyper["memory_size"], 3), cfg["discount_factor"], cfg["smooth_regularization_clip"]

    def act(states):
        with torch.no_grad():
            actions = 2 * torch.tanh(policy(states))
            return torch.clamp(actions + hyper["exploration_noise_std"] * torch.randn_like(actions), -2, 2)

    def gradient_step(step):
        states, actions, rewards, next_states, terminated = replay.batch(cfg["batch_size"])
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


def dqn_parts(hyper: dict) -> tuple:
    cfg, hidden = hyper["cfg"], hyper["hidden"]
    q_network = mlp(4, 2, hidden)
    target = frozen_copy(q_network)
    optimizer = torch.optim.Adam(q_network.parameters(), cfg["learning_rate"], fused=True)
    replay, gamma = Replay(hyper["memory_size"], 4, discrete_actions=2), cfg["discount_factor"]
    epsilon = cfg["exploration"]["final_epsilon"]

    def act(states):
        if torch.rand(()) < epsilon:
            return torch.randint(0, 2, (1, 1))
        with torch.no_grad():
            return q_network(states).argmax(-1, keepdim=True)

    def gradient_step(step):
        states, actions, rewards, next_states, terminated = replay.batch(cfg["batch_size"])
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algorithm", choices=("SAC", "TD3", "DQN"), default="SAC")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=None, help="env steps (default: THROUGHPUT_TIMESTEPS)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    hyper = HYPERPARAMETERS[args.algorithm]
    act, gradient_step, random_action = {"SAC": sac_parts, "TD3": td3_parts, "DQN": dqn_parts}[args.algorithm](hyper)

    # the env every library gets in off_policy.py: a one-env sync vector env with same-step autoreset (unwrapped)
    env = gymnasium.make_vec(
        hyper["env"],
        num_envs=1,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP},
    )
    if isinstance(env.single_action_space, gymnasium.spaces.Discrete):
        env = SqueezeDiscreteActions(env)  # as off_policy.py's make_env

    replay = Replay(hyper["memory_size"], env.single_observation_space.shape[0])  # where the loop writes
    timesteps = args.timesteps or THROUGHPUT_TIMESTEPS[args.algorithm]
    learning_starts = hyper["cfg"]["learning_starts"]
    observations = env.reset(seed=args.seed)[0]
    start = time.perf_counter()
    for timestep in range(timesteps):  # the throughput protocol's loop, as bare as it gets
        states = torch.as_tensor(observations, dtype=torch.float32)
        actions = random_action() if timestep < learning_starts else act(states)
        observations, rewards, terminated, _, _ = env.step(actions.numpy())
        row = timestep % replay.rows
        replay.states[row] = states[0]
        replay.rewards[row] = float(rewards[0])
        replay.terminated[row] = bool(terminated[0])
        if timestep >= learning_starts:
            gradient_step(timestep)
    seconds = time.perf_counter() - start
    result = {
        "library": "plain torch (floor)",
        "backend": "torch",
        "algorithm": args.algorithm,
        "env": hyper["env"],
        "seed": args.seed,
        "torch": torch.__version__,
        "timesteps": timesteps,
        "learning_starts": learning_starts,
        "seconds": round(seconds, 3),
        "env_steps_per_s": round(timesteps / seconds, 1),
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
