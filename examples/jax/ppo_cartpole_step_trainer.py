"""PPO on CartPole-v1 (JAX backend) driven step by step from your own loop with StepTrainer.

The mirror of examples/torch/ppo_cartpole_step_trainer.py. Run: python examples/jax/ppo_cartpole_step_trainer.py
"""

import importlib.util
import os
import pathlib

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import gymnasium as gym
import numpy as np

from skrl_like.jax.envs.wrappers import wrap_env
from skrl_like.jax.trainers import StepTrainer
from skrl_like.utils import set_seed

# the agent of ppo_cartpole.py in this folder (loaded by path: the torch example has the same file name)
_spec = importlib.util.spec_from_file_location("jax_ppo_cartpole", pathlib.Path(__file__).with_name("ppo_cartpole.py"))
_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_example)

set_seed(42)
env = wrap_env(gym.make_vec("CartPole-v1", num_envs=8, vectorization_mode="sync"))
agent = _example.make_agent(env, experiment={"write_interval": 0, "checkpoint_interval": 0})
timesteps = int(os.environ.get("SKRL_LIKE_EXAMPLE_TIMESTEPS", "5000"))
trainer = StepTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, "headless": True})

episode_steps = np.zeros(env.num_envs)
finished_lengths = []
for timestep in range(timesteps):
    next_states, rewards, terminated, truncated, infos = trainer.train(timestep=timestep)
    episode_steps += 1
    done = (np.asarray(terminated) | np.asarray(truncated)).reshape(-1).astype(bool)
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
