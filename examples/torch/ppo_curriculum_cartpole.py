"""A curriculum: PPO on a windy CartPole whose gusts grow stronger each time the agent masters the current level.

The task is the wind level (0 = CartPole-v1 as it is). After every results row (one write interval, a "training
iteration"), ``env_task_fn`` reads the row's mean training return and raises the level by one when it reaches
``--promote-at``; the trainer gives the new level to every sub-environment (``set_task``).

Run: python examples/torch/ppo_curriculum_cartpole.py [--timesteps 200000] [--seed 42]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # small MLPs run fastest on one intra-op thread

import gymnasium as gym
import torch

from skrl_like.core.envs.task import get_task
from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.torch.utils.model_instantiators import categorical_model, deterministic_model
from skrl_like.utils import set_seed

MAX_LEVEL = 5


class WindyCartPole(gym.Wrapper):
    """CartPole with random gusts on the pole: at level ``k`` each step adds a push of standard deviation
    ``0.05 * k`` rad/s to the pole's angular velocity. ``set_task``/``get_task`` make it a task-settable env."""

    def __init__(self, env):
        super().__init__(env)
        self.level = 0

    def set_task(self, task):
        self.level = int(task)

    def get_task(self):
        return self.level

    def step(self, action):
        if self.level:
            self.unwrapped.state[3] += self.np_random.normal(0.0, 0.05 * self.level)
        return self.env.step(action)


def make_env(num_envs):
    return wrap_env(gym.make_vec("CartPole-v1", num_envs, vectorization_mode="sync", wrappers=[WindyCartPole]))


def curriculum(promote_at):
    """The ``env_task_fn``: the next level from the results row of the iteration that just ended."""

    def env_task_fn(train_results, env, env_ctx):
        level = env_ctx.task[0]  # a tuple: one level per sub-environment (they all have the same)
        mean_return = train_results.get("Reward / Total reward (mean)")
        if mean_return is not None and mean_return >= promote_at and level < MAX_LEVEL:
            print(f"timestep {env_ctx.timestep}: mean return {mean_return:.0f}, wind level {level} -> {level + 1}")
            return level + 1
        return level

    return env_task_fn


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=200_000, help="environment steps in total (all envs)")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--promote-at", type=float, default=400.0, help="mean return that raises the level")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    torch.set_num_threads(1)
    set_seed(args.seed)
    env = make_env(args.num_envs)
    network = [{"name": "net", "input": "STATES", "layers": [64, 64], "activations": "tanh"}]
    models = {
        "policy": categorical_model(
            env.observation_space, env.action_space, env.device, network=network, output="ACTIONS"
        ),
        "value": deterministic_model(
            env.observation_space, env.action_space, env.device, network=network, output="ONE"
        ),
    }
    timesteps = args.timesteps // args.num_envs
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": 64,
        "mini_batches": 4,
        "learning_rate": 1e-3,
        "entropy_loss_scale": 0.0,
        # one results row, so one curriculum step, every 1000 timesteps (8000 env steps)
        "experiment": {"directory": "runs/torch/curriculum", "write_interval": 1000, "checkpoint_interval": 0},
    }
    agent = PPO(
        models=models,
        memory=RandomMemory(memory_size=64, num_envs=env.num_envs, device=env.device),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )
    trainer_cfg = {"timesteps": timesteps, "headless": True, "env_task_fn": curriculum(args.promote_at)}
    SequentialTrainer(env=env, agents=agent, cfg=trainer_cfg).train()
    print(f"Final wind level: {get_task(env)[0]} (of {MAX_LEVEL})")


if __name__ == "__main__":
    main()
