"""Train IPPO (or MAPPO, with --mappo) on PettingZoo MPE simple_spread_v3 with the JAX backend, then compare the
mean episode return (summed over agents) of the trained policies (greedy) with a uniformly random policy.

The mirror of examples/torch/ippo_simple_spread.py (same hyperparameters); each agent's update is one compiled
function. Run: python examples/jax/ippo_simple_spread.py [--timesteps 300000] [--seed 42] [--mappo]
Needs: pip install pettingzoo mpe2 (in the dev/all extras).
"""

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import flax.linen as nn
import numpy as np
from mpe2 import simple_spread_v3

from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.memories import RandomMemory
from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, Model
from skrl_like.jax.multi_agents.ippo import IPPO, IPPO_DEFAULT_CONFIG
from skrl_like.jax.multi_agents.mappo import MAPPO, MAPPO_DEFAULT_CONFIG
from skrl_like.jax.resources.preprocessors import RunningStandardScaler
from skrl_like.jax.trainers import SequentialTrainer
from skrl_like.utils import set_seed


def mlp(x, out_features, head_gain):
    """64x64 tanh MLP, orthogonal weights (hidden gain sqrt(2), a small policy head), zero biases."""
    for _ in range(2):
        x = nn.tanh(nn.Dense(64, kernel_init=nn.initializers.orthogonal(np.sqrt(2)))(x))
    return nn.Dense(out_features, kernel_init=nn.initializers.orthogonal(head_gain))(x)


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        CategoricalMixin.__init__(self, unnormalized_log_prob=True)

    @nn.compact
    def __call__(self, inputs, role):
        return mlp(inputs["states"], self.num_actions, head_gain=0.01), {}


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, **kwargs):
        Model.__init__(self, observation_space, action_space, device, **kwargs)
        DeterministicMixin.__init__(self)

    @nn.compact
    def __call__(self, inputs, role):
        return mlp(inputs["states"], 1, head_gain=1.0), {}


def make_env(seed=None, max_cycles=25):
    env = wrap_env(simple_spread_v3.parallel_env(N=3, max_cycles=max_cycles, continuous_actions=False), "pettingzoo")
    if seed is not None:
        env._env.reset(seed=seed)
    return env


def make_agent(env, mappo=False, rollouts=250, experiment=None):
    """IPPO/MAPPO with the hyperparameters this repository benchmarks (docs/benchmarks.md); as the torch example."""
    algorithm, defaults = (MAPPO, MAPPO_DEFAULT_CONFIG) if mappo else (IPPO, IPPO_DEFAULT_CONFIG)
    cfg = {
        **defaults,
        "rollouts": rollouts,
        "learning_epochs": 5,
        "mini_batches": 2,
        "discount_factor": 0.99,
        "lambda": 0.95,
        "learning_rate": 3e-4,
        "entropy_loss_scale": 0.01,
        "grad_norm_clip": 0.5,
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": next(iter(env.observation_spaces.values()))},
        "value_preprocessor": RunningStandardScaler,
        "value_preprocessor_kwargs": {"size": 1},
        "experiment": {**defaults["experiment"], "write_interval": 0, "checkpoint_interval": 0, **(experiment or {})},
    }
    value_spaces = env.state_spaces if mappo else env.observation_spaces
    models = {}
    for uid in env.possible_agents:
        models[uid] = {
            "policy": Policy(env.observation_space(uid), env.action_space(uid), env.device),
            "value": Value(value_spaces[uid], env.action_space(uid), env.device),
        }
        for role, model in models[uid].items():
            model.init_state_dict(role)
    memories = {uid: RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device) for uid in models}
    kwargs = {}
    if mappo:
        cfg["shared_state_preprocessor"] = RunningStandardScaler
        cfg["shared_state_preprocessor_kwargs"] = {"size": env.state_space(env.possible_agents[0])}
        kwargs["shared_observation_spaces"] = env.state_spaces
    return algorithm(
        possible_agents=env.possible_agents,
        models=models,
        memories=memories,
        observation_spaces=env.observation_spaces,
        action_spaces=env.action_spaces,
        device=env.device,
        cfg=cfg,
        **kwargs,
    )


def episode_returns(env, agent=None, episodes=20, seed=0):
    """Mean over ``episodes`` of the return summed over agents: greedy actions of ``agent``, or uniform random ones
    (``agent=None``, from a generator seeded with ``seed``)."""
    rng = np.random.default_rng(seed)
    if agent is not None:
        agent.set_running_mode("eval")
    returns = []
    for _ in range(episodes):
        states, _ = env.reset()
        total = 0.0
        while env.agents:
            if agent is None:
                actions = {uid: np.array([[rng.integers(env.action_space(uid).n)]]) for uid in env.agents}
            else:
                _, _, outputs = agent.act(states, timestep=0, timesteps=0)
                actions = {uid: np.asarray(outputs[uid]["mean_actions"]) for uid in env.agents}
            states, rewards, _, _, _ = env.step(actions)
            total += float(sum(np.asarray(reward).sum() for reward in rewards.values()))
        returns.append(total)
    return float(np.mean(returns))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--timesteps", type=int, default=300000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--mappo", action="store_true", help="MAPPO (centralised critic) instead of IPPO")
    args = parser.parse_args()

    set_seed(args.seed)
    env = make_env(seed=args.seed)
    agent = make_agent(env, mappo=args.mappo)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True})
    trainer.train()

    evaluation_env = make_env(seed=args.seed + 1)
    random_return = episode_returns(evaluation_env, None, seed=args.seed)
    trained_return = episode_returns(evaluation_env, agent)
    name = "MAPPO" if args.mappo else "IPPO"
    print(
        f"{name}: mean episode return {trained_return:.2f} (random policy {random_return:.2f}, margin "
        f"{trained_return - random_return:+.2f}) after {args.timesteps} steps, seed {args.seed}"
    )


if __name__ == "__main__":
    main()
