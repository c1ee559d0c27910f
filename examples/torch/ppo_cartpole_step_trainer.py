"""PPO on CartPole-v1 driven step by step from your own loop with StepTrainer.

Between steps you can do anything: here, a simple curriculum-style hook and early stopping once the
recent episodes are long enough. Run: python examples/torch/ppo_cartpole_step_trainer.py
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch
from ppo_cartpole import make_agent  # noqa: E402  (same folder)

from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.trainers import StepTrainer
from skrl_like.utils import set_seed

torch.set_num_threads(1)
set_seed(42)
env = wrap_env(gym.make_vec("CartPole-v1", num_envs=8, vectorization_mode="sync"))
agent = make_agent(env, experiment={"write_interval": 0, "checkpoint_interval": 0})
timesteps = int(os.environ.get("SKRL_LIKE_EXAMPLE_TIMESTEPS", "5000"))
trainer = StepTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, "headless": True})

episode_steps = np.zeros(env.num_envs)
finished_lengths = []
for timestep in range(timesteps):
    next_states, rewards, terminated, truncated, infos = trainer.train(timestep=timestep)
    episode_steps += 1
    done = (terminated | truncated).view(-1).numpy()
    finished_lengths.extend(episode_steps[done].tolist())
    episode_steps[done] = 0
    if len(finished_lengths) >= 20 and np.mean(finished_lengths[-20:]) >= 400:
        print(
            f"Stopping early at timestep {timestep}: the last 20 episodes lasted {np.mean(finished_lengths[-20:]):.0f} steps"
        )
        break

for timestep in range(min(500, timesteps)):
    trainer.eval(timestep=timestep)
print(f"Evaluation return over 20 episodes: {np.mean(trainer.evaluate_episodes(num_episodes=20)):.1f}")
