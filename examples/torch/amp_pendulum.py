"""Train AMP on Pendulum-v1 to imitate the motions of a scripted swing-up controller, with no task reward.

No simulator or motion-capture data is needed: the env, ``skrl_like.envs:AmpPendulum-v0``
(:mod:`skrl_like.envs.amp_pendulum`), is Pendulum-v1 that reports each step's AMP observation, the transition
``(s_t, s_{t+1})`` of Pendulum's observations ``(cos theta, sin theta, theta_dot)``, in ``info["amp_obs"]``, and
hands out reference motions (``collect_reference_motions``) recorded in a few hundred milliseconds from an
energy-pumping swing-up controller (:func:`swing_up_torque`, a few lines, no training) that brings the pendulum up and
holds it (mean return about -130 over 10 episodes). ``skrl_like train -f tuned/amp_pendulum.yaml`` trains the same
setup from YAML.

With ``task_reward_weight = 0`` the agent only learns from the discriminator's style reward; it is tracked per update
as ``Reward / Style reward (mean)`` and printed here in blocks; Pendulum's own return (never seen by the agent) shows
how far the imitation got. Run: python examples/torch/amp_pendulum.py [--timesteps 10000] [--seed 0]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn

from skrl_like.core.envs.wrappers import env_attribute
from skrl_like.envs.amp_pendulum import swing_up_torque
from skrl_like.torch.agents.amp import AMP, AMP_DEFAULT_CONFIG
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.resources.preprocessors import RunningStandardScaler
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

ENV_ID = "skrl_like.envs:AmpPendulum-v0"
NUM_ENVS = 8
TIMESTEPS = 10_000
HIDDEN = (64, 64)
MOTION_DATASET_SIZE = 4_000  # the env's 20 recorded episodes x 200 steps
AMP_CFG = {
    "rollouts": 32,
    "learning_epochs": 5,
    "mini_batches": 2,
    "learning_rate": 1e-3,
    "discount_factor": 0.95,
    "amp_batch_size": 256,
    "task_reward_weight": 0.0,  # imitation only: the style reward is the agent's whole reward
    "style_reward_weight": 1.0,
}


# -- the models ------------------------------------------------------------------------------------------------------


def mlp(inputs, outputs, hidden=HIDDEN):
    layers, size = [], inputs
    for width in hidden:
        layers += [nn.Linear(size, width), nn.ReLU()]
        size = width
    return nn.Sequential(*layers, nn.Linear(size, outputs))


class Policy(GaussianMixin, Model):
    def __init__(self, observation_space, action_space, device, hidden=HIDDEN):
        Model.__init__(self, observation_space, action_space, device)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-5, max_log_std=2)
        self.net = mlp(self.num_observations, self.num_actions, hidden)
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        return 2 * torch.tanh(self.net(inputs["states"])), self.log_std_parameter, {}


class Deterministic(DeterministicMixin, Model):
    """The value model (on observations) and the discriminator (on AMP observations): one output each."""

    def __init__(self, observation_space, action_space, device, hidden=HIDDEN):
        Model.__init__(self, observation_space, action_space, device)
        DeterministicMixin.__init__(self)
        self.net = mlp(self.num_observations, 1, hidden)

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def make_env(num_envs: int = NUM_ENVS, **env_kwargs):
    """``num_envs`` AmpPendulum envs in a sync vector env; ``env_kwargs`` go to each (``reference_episodes``...)."""
    return wrap_env(gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="sync", **env_kwargs), verbose=False)


def make_agent(env, experiment=None, hidden=HIDDEN, motion_dataset_size=MOTION_DATASET_SIZE, **cfg):
    """An AMP agent for ``env`` imitating the env's reference motions; keyword arguments override ``AMP_CFG``.

    The AMP observation space and ``collect_reference_motions`` are the env's (a sub-env's, for a vector env)."""
    device = env.device
    amp_space = env_attribute(env, "amp_observation_space")
    cfg = {
        **AMP_DEFAULT_CONFIG,
        **AMP_CFG,
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": env.observation_space, "device": device},
        "value_preprocessor": RunningStandardScaler,
        "value_preprocessor_kwargs": {"size": 1, "device": device},
        "amp_state_preprocessor": RunningStandardScaler,
        "amp_state_preprocessor_kwargs": {"size": amp_space, "device": device},
        **cfg,
        "experiment": experiment or {"directory": "runs/torch/amp_pendulum", "write_interval": 0},
    }
    models = {
        "policy": Policy(env.observation_space, env.action_space, device, hidden),
        "value": Deterministic(env.observation_space, env.action_space, device, hidden),
        "discriminator": Deterministic(amp_space, env.action_space, device, hidden),
    }
    return AMP(
        models=models,
        memory=RandomMemory(memory_size=cfg["rollouts"], num_envs=env.num_envs, device=device),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=device,
        amp_observation_space=amp_space,
        motion_dataset=RandomMemory(memory_size=motion_dataset_size, device=device),
        reply_buffer=RandomMemory(memory_size=20_000, device=device),
        collect_reference_motions=env_attribute(env, "collect_reference_motions"),
    )


def pendulum_returns(agent, episodes: int = 10, seed: int = 1000) -> list:
    """Pendulum's own return of the policy's mean action (the agent never sees this reward). ``act`` also samples
    actions: torch's RNG is forked, so that measuring leaves training's random stream as it was (the example then
    trains exactly as ``skrl_like train -f tuned/amp_pendulum.yaml`` does)."""
    env, returns = gym.make("Pendulum-v1"), []
    with torch.random.fork_rng(devices=[agent.device] if torch.device(agent.device).type == "cuda" else []):
        for episode in range(episodes):
            observation, _ = env.reset(seed=seed + episode)
            total, done = 0.0, False
            while not done:
                states = torch.as_tensor(observation, dtype=torch.float32, device=agent.device)[None]
                with torch.no_grad():
                    _, _, outputs = agent.act(states, timestep=0, timesteps=1)
                action = outputs["mean_actions"][0].cpu().numpy()
                observation, reward, terminated, truncated, _ = env.step(action)
                total += float(reward)
                done = terminated or truncated
            returns.append(total)
    return returns


def pendulum_returns_of_controller(episodes: int = 10, seed: int = 1000) -> list:
    """Pendulum's return of the scripted controller, for comparison."""
    env, returns = gym.make("Pendulum-v1"), []
    for episode in range(episodes):
        observation, _ = env.reset(seed=seed + episode)
        total, done = 0.0, False
        while not done:
            observation, reward, terminated, truncated, _ = env.step(swing_up_torque(observation))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return returns


def style_reward_blocks(agent, blocks: int = 10) -> list:
    """The per-update ``Reward / Style reward (mean)`` averaged in ``blocks`` consecutive blocks of updates (needs
    ``write_interval = 0``, which keeps every tracked value)."""
    history = np.asarray(agent.tracking_data["Reward / Style reward (mean)"], dtype=float)
    return [float(block.mean()) for block in np.array_split(history, blocks)]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=TIMESTEPS, help="steps of the vector env (x8 transitions)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.set_num_threads(1)
    set_seed(args.seed)
    env = make_env(reference_seed=args.seed)
    agent = make_agent(env)
    print(f"Reference controller: Pendulum return {np.mean(pendulum_returns_of_controller()):.1f} (10 episodes)")
    print(f"Untrained policy: Pendulum return {np.mean(pendulum_returns(agent)):.1f} (10 episodes, mean action)")
    trainer = SequentialTrainer(
        env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True, "disable_progressbar": True}
    )
    trainer.train()
    blocks = style_reward_blocks(agent)
    print(
        f"Style reward (mean per update) in {len(blocks)} blocks of updates: "
        + ", ".join(f"{value:.3f}" for value in blocks)
    )
    print(f"Trained policy: Pendulum return {np.mean(pendulum_returns(agent)):.1f} (10 episodes, mean action)")


if __name__ == "__main__":
    main()
