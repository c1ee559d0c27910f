"""Writing your own agent (docs/writing-an-agent.md): REINFORCE in about sixty lines on the torch ``Agent`` base.

The base owns the interaction step: it stores each step's transition in the memory (``record_transition``) and calls
``_update`` when ``self.schedule`` says so (``post_interaction``), so an algorithm writes ``__init__``, ``init``,
``act`` and ``_update`` and nothing else. Run it: ``python examples/torch/custom_agent_reinforce.py``.
"""

import os
from typing import Any, Mapping, Optional

import gymnasium as gym
import torch
import torch.nn as nn

from skrl_like.core.agents.config import experiment_defaults
from skrl_like.core.agents.schedule import RolloutSchedule
from skrl_like.core.config import merge_config
from skrl_like.torch.agents.base import Agent
from skrl_like.torch.envs.wrappers import wrap_env
from skrl_like.torch.memories import RandomMemory
from skrl_like.torch.models import CategoricalMixin, Model
from skrl_like.torch.trainers import SequentialTrainer
from skrl_like.utils import set_seed

REINFORCE_DEFAULT_CONFIG = {
    "rollouts": 64,  # environment steps between updates (the memory's size)
    "discount_factor": 0.99,  # gamma of the Monte-Carlo returns
    "learning_rate": 1e-3,  # Adam learning rate
    "rewards_shaper": None,  # f(rewards, timestep, timesteps), applied by the base before storing
    "experiment": experiment_defaults(),  # directory, writing and checkpoint intervals
}


class REINFORCE(Agent):
    """Monte-Carlo policy gradient over each rollout (returns cut at the rollout's end)."""

    def __init__(self, models, memory=None, observation_space=None, action_space=None, device=None, cfg=None):
        cfg = merge_config(REINFORCE_DEFAULT_CONFIG, cfg, "REINFORCE cfg")  # unknown keys: the close match
        super().__init__(models, memory, observation_space, action_space, device, cfg)
        self._require_models(("policy",))  # a missing role is named at construction
        self._check_model_outputs(policy_roles=("policy",))  # so is a policy of the wrong output size
        self.policy = self.models["policy"]
        self.checkpoint_modules["policy"] = self.policy
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=cfg["learning_rate"])
        self.checkpoint_modules["optimizer"] = self.optimizer
        # when to learn: the base's post_interaction calls _update when this says so
        self.schedule = RolloutSchedule(cfg["rollouts"])

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        super().init(trainer_cfg)  # writer, run directory, intervals
        for name, size, dtype in (
            ("states", self.observation_space, torch.float32),
            ("actions", self.action_space, torch.float32),
            ("rewards", 1, torch.float32),
            ("next_states", self.observation_space, torch.float32),
            ("terminated", 1, torch.bool),
            ("truncated", 1, torch.bool),
        ):
            self.memory.create_tensor(name=name, size=size, dtype=dtype)

    def act(self, states, timestep, timesteps):
        with torch.no_grad():
            return self.policy.act({"states": states}, role="policy")

    def _update(self, timestep, timesteps):
        states = self.memory.get_tensor_by_name("states")  # (rollouts, num_envs, ...)
        actions = self.memory.get_tensor_by_name("actions")
        rewards = self.memory.get_tensor_by_name("rewards")
        done = self.memory.get_tensor_by_name("terminated") | self.memory.get_tensor_by_name("truncated")
        returns, running = torch.zeros_like(rewards), torch.zeros_like(rewards[0])
        for t in reversed(range(len(rewards))):
            running = rewards[t] + self.cfg["discount_factor"] * running * (~done[t])
            returns[t] = running
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)

        _, log_prob, _ = self.policy.act(
            {"states": states.flatten(0, 1), "taken_actions": actions.flatten(0, 1)}, role="policy"
        )
        policy_loss = -(returns.flatten(0, 1) * log_prob).mean()
        self.optimizer.zero_grad()
        policy_loss.backward()
        self.optimizer.step()
        self.track_data("Loss / Policy loss", policy_loss.detach())


class Policy(CategoricalMixin, Model):
    def __init__(self, observation_space, action_space, device):
        Model.__init__(self, observation_space, action_space, device)
        CategoricalMixin.__init__(self)
        self.net = nn.Sequential(nn.Linear(self.num_observations, 64), nn.Tanh(), nn.Linear(64, self.num_actions))

    def compute(self, inputs, role):
        return self.net(inputs["states"]), {}


def make_agent(env, experiment=None):
    return REINFORCE(
        models={"policy": Policy(env.observation_space, env.action_space, env.device)},
        memory=RandomMemory(memory_size=REINFORCE_DEFAULT_CONFIG["rollouts"], num_envs=env.num_envs, device=env.device),
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
        cfg={"experiment": experiment or {"directory": "runs/torch/reinforce"}},
    )


if __name__ == "__main__":
    set_seed(0)
    env = wrap_env(gym.make_vec("CartPole-v1", num_envs=8, vectorization_mode="sync"))
    agent = make_agent(env)
    timesteps = int(os.environ.get("SKRL_LIKE_EXAMPLE_TIMESTEPS", 10000))
    trainer = SequentialTrainer(env=env, agents=agent, cfg={"timesteps": timesteps, "headless": True})
    trainer.train()
    returns = trainer.evaluate_episodes(20)
    print(f"Evaluation return over 20 episodes: {sum(returns) / len(returns):.1f}")
