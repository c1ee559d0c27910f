"""Train SAC_RNN with a GRU on velocity-masked Pendulum ("PendulumNoVel": the angular velocity reads 0), then
evaluate with exploration off (examples/*/ppo_rnn_pendulumnovel.py also deploy with ``compute_action``).

The policy and both critics read the observations through a GRU of 400 units and then skrl's [400, 300] ReLU
layers; they train on sequences of 20 steps sampled from the replay memory, each started from the policy's hidden
state stored with its first step (docs/recurrent.md, "Off-policy recurrent agents"). The other settings are skrl's
Pendulum SAC example's (examples/torch/sac_pendulum.py), as skrl's PendulumNoVel SAC GRU example keeps them.
On a CPU each gradient step (100 sequences of 20 steps through five recurrent models) takes about a second: a GPU,
or a smaller --hidden-size, makes the 15k steps practical.
Run: python examples/torch/sac_rnn_pendulumnovel.py [--timesteps 15000] [--seed 42] [--cell GRU|LSTM|RNN]
"""

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn

from skrl_like.torch.agents.sac import SAC_DEFAULT_CONFIG, SAC_RNN
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import DeterministicMixin, GaussianMixin, Model
from skrl_like.torch.models.recurrent import hidden_state_sizes, make_recurrent_module, recurrent_forward
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

MEMORY_SIZE = 20_000
SAC_CFG = {  # skrl's Pendulum SAC settings; the other keys keep SAC_DEFAULT_CONFIG's
    "discount_factor": 0.98,
    "batch_size": 100,  # sequences per gradient step
    "random_timesteps": 0,
    "learning_starts": 1000,
    "learn_entropy": True,
}


class RecurrentNet(Model):
    """A recurrent layer over the observations, then [400, 300] ReLU layers (reading the actions too, for a critic)."""

    def __init__(self, observation_space, action_space, device, outputs, takes_actions, recurrent):
        Model.__init__(self, observation_space, action_space, device)
        self.num_envs, self.cell = recurrent["num_envs"], recurrent["cell"]
        self.hidden_size, self.sequence_length = recurrent["hidden_size"], recurrent["sequence_length"]
        self.rnn = make_recurrent_module(self.cell, self.num_observations, self.hidden_size)
        self.takes_actions = takes_actions
        inputs = self.hidden_size + (self.num_actions if takes_actions else 0)
        self.net = nn.Sequential(
            nn.Linear(inputs, 400), nn.ReLU(), nn.Linear(400, 300), nn.ReLU(), nn.Linear(300, outputs)
        )

    def get_specification(self):
        sizes = hidden_state_sizes(self.cell, 1, self.num_envs, self.hidden_size)
        return {"rnn": {"sequence_length": self.sequence_length, "sizes": sizes}}

    def output(self, inputs):
        # acting: one step per environment; training (train mode): sequences reset after inputs["terminated"]
        features, states = recurrent_forward(
            self.rnn, inputs["states"], inputs["rnn"], self.sequence_length, inputs.get("terminated"), self.training
        )
        if self.takes_actions:
            features = torch.cat([features, inputs["taken_actions"]], dim=-1)
        return self.net(features), states


class Policy(GaussianMixin, RecurrentNet):
    def __init__(self, observation_space, action_space, device, **recurrent):
        RecurrentNet.__init__(self, observation_space, action_space, device, action_space.shape[0], False, recurrent)
        GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)
        self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

    def compute(self, inputs, role):
        output, states = self.output(inputs)
        return 2 * torch.tanh(output), self.log_std_parameter, {"rnn": states}  # Pendulum's torque is in [-2, 2]


class Critic(DeterministicMixin, RecurrentNet):
    def __init__(self, observation_space, action_space, device, **recurrent):
        RecurrentNet.__init__(self, observation_space, action_space, device, 1, True, recurrent)
        DeterministicMixin.__init__(self)

    def compute(self, inputs, role):
        output, states = self.output(inputs)
        return output, {"rnn": states}


def make_env(num_envs=1):
    # skrl_like.envs registers PendulumNoVel-v1 (Pendulum-v1 with the velocity reading 0) when gymnasium imports it
    env = gym.make_vec("skrl_like.envs:PendulumNoVel-v1", num_envs=num_envs, vectorization_mode="sync")
    return wrap_env(env)


def make_agent(env, cell="GRU", hidden_size=400, sequence_length=20, experiment=None, **cfg):
    """A SAC_RNN agent for ``env``; keyword arguments override entries of ``SAC_CFG``."""
    recurrent = {"num_envs": env.num_envs, "cell": cell, "hidden_size": hidden_size, "sequence_length": sequence_length}
    spaces = {"observation_space": env.observation_space, "action_space": env.action_space}
    models = {"policy": Policy(**spaces, device=env.device, **recurrent)}
    for role in ("critic_1", "critic_2", "target_critic_1", "target_critic_2"):
        models[role] = Critic(**spaces, device=env.device, **recurrent)
    cfg = {
        **SAC_DEFAULT_CONFIG,
        **SAC_CFG,
        **cfg,
        "experiment": experiment or {"directory": "runs/torch/pendulumnovel"},
    }
    memory = RandomMemory(memory_size=MEMORY_SIZE, num_envs=env.num_envs, device=env.device, replacement=False)
    return SAC_RNN(models=models, memory=memory, cfg=cfg, device=env.device, **spaces)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=15_000, help="environment steps")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--cell", default="GRU", choices=["GRU", "LSTM", "RNN"])
    parser.add_argument("--hidden-size", type=int, default=400, help="units of the recurrent layer")
    parser.add_argument("--learning-starts", type=int, default=SAC_CFG["learning_starts"])
    parser.add_argument("--evaluation-episodes", type=int, default=20)
    args = parser.parse_args()

    torch.set_num_threads(1)
    set_seed(args.seed)
    env = make_env()
    agent = make_agent(env, cell=args.cell, hidden_size=args.hidden_size, learning_starts=args.learning_starts)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": args.timesteps, "headless": True})
    trainer.train()
    returns = np.array(trainer.evaluate_episodes(num_episodes=args.evaluation_episodes))
    print(f"Evaluation over {len(returns)} episodes (exploration off): mean return {returns.mean():.1f}")


if __name__ == "__main__":
    main()
