"""Learning quality: skrl_like DDPG on Pendulum-v1, one seed per run, one JSON line.

    .venv/bin/python benchmarks/ddpg_learning.py --backend torch --seed 0               # 20k env steps
    .venv/bin/python benchmarks/ddpg_learning.py --backend jax --seed 0 --timesteps 2000

The hyperparameters are those of skrl 1.4.3's ``torch_gymnasium_pendulum_ddpg.py`` example (400-300 ReLU networks
initialised N(0, 0.1), Ornstein-Uhlenbeck noise, batch 100, 100 random steps), written once below. The env is
seeded once (``reset(seed=seed)``); ``seconds`` is the training time only; ``eval_return`` is the mean of 20
deterministic episodes (the actor without noise, ``Trainer.evaluate_episodes``).
"""

import argparse
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

ENVS = {"pendulum": "Pendulum-v1"}
NUM_ENVS = 1
DEFAULT_TIMESTEPS = 20_000
HIDDEN = (400, 300)  # ReLU; the actor's output is 2 * tanh (Pendulum's bounds are +-2)
INIT_STDDEV = 0.1  # every parameter ~ N(0, 0.1), as the skrl example
MEMORY_SIZE = 20_000  # every transition of the run stays in the replay memory
NOISE = {"theta": 0.15, "sigma": 0.1, "base_scale": 1.0}  # Ornstein-Uhlenbeck exploration noise
HYPERPARAMETERS = {
    "gradient_steps": 1,
    "batch_size": 100,
    "discount_factor": 0.99,
    "polyak": 0.005,
    "actor_learning_rate": 1e-3,
    "critic_learning_rate": 1e-3,
    "random_timesteps": 100,
    "learning_starts": 100,
    "grad_norm_clip": 0,
}
EVAL_EPISODES = 20


def torch_agent(env, seed):
    import torch
    import torch.nn as nn

    from skrl_like.torch.agents.ddpg import DDPG, DDPG_DEFAULT_CONFIG
    from skrl_like.torch.memories import RandomMemory
    from skrl_like.torch.models import DeterministicMixin, Model
    from skrl_like.torch.resources.noises import OrnsteinUhlenbeckNoise

    torch.set_num_threads(1)

    def mlp(inputs, outputs):
        return nn.Sequential(
            nn.Linear(inputs, HIDDEN[0]),
            nn.ReLU(),
            nn.Linear(HIDDEN[0], HIDDEN[1]),
            nn.ReLU(),
            nn.Linear(HIDDEN[1], outputs),
        )

    class Actor(DeterministicMixin, Model):
        def __init__(self):
            Model.__init__(self, env.observation_space, env.action_space, env.device)
            DeterministicMixin.__init__(self)
            self.net = mlp(self.num_observations, self.num_actions)

        def compute(self, inputs, role):
            return 2 * torch.tanh(self.net(inputs["states"])), {}

    class Critic(DeterministicMixin, Model):
        def __init__(self):
            Model.__init__(self, env.observation_space, env.action_space, env.device)
            DeterministicMixin.__init__(self)
            self.net = mlp(self.num_observations + self.num_actions, 1)

        def compute(self, inputs, role):
            return self.net(torch.cat([inputs["states"], inputs["taken_actions"]], dim=1)), {}

    models = {"policy": Actor(), "target_policy": Actor(), "critic": Critic(), "target_critic": Critic()}
    for model in models.values():
        model.init_parameters(method_name="normal_", mean=0.0, std=INIT_STDDEV)
    cfg = {
        **DDPG_DEFAULT_CONFIG,
        **HYPERPARAMETERS,
        "exploration": {
            **DDPG_DEFAULT_CONFIG["exploration"],
            "noise": OrnsteinUhlenbeckNoise(**NOISE, device=env.device),
        },
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    memory = RandomMemory(memory_size=MEMORY_SIZE, num_envs=env.num_envs, device=env.device, replacement=False)
    return DDPG(
        models=models,
        memory=memory,
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )


def jax_agent(env, seed):
    import flax.linen as nn
    import jax.numpy as jnp

    from skrl_like.jax.agents.ddpg import DDPG, DDPG_DEFAULT_CONFIG
    from skrl_like.jax.memories import RandomMemory
    from skrl_like.jax.models import DeterministicMixin, Model
    from skrl_like.jax.resources.noises import OrnsteinUhlenbeckNoise

    def mlp(x, outputs):
        x = nn.relu(nn.Dense(HIDDEN[0])(x))
        x = nn.relu(nn.Dense(HIDDEN[1])(x))
        return nn.Dense(outputs)(x)

    class Actor(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            return 2 * jnp.tanh(mlp(inputs["states"], self.num_actions)), {}

    class Critic(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            return mlp(jnp.concatenate([inputs["states"], inputs["taken_actions"]], axis=-1), 1), {}

    spaces = (env.observation_space, env.action_space)
    models = {
        "policy": Actor(*spaces),
        "target_policy": Actor(*spaces),
        "critic": Critic(*spaces),
        "target_critic": Critic(*spaces),
    }
    for role, model in models.items():
        model.init_state_dict(role)
        model.init_parameters(method_name="normal", stddev=INIT_STDDEV)
    cfg = {
        **DDPG_DEFAULT_CONFIG,
        **HYPERPARAMETERS,
        "exploration": {**DDPG_DEFAULT_CONFIG["exploration"], "noise": OrnsteinUhlenbeckNoise(**NOISE)},
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    memory = RandomMemory(memory_size=MEMORY_SIZE, num_envs=env.num_envs, replacement=False)
    return DDPG(
        models=models, memory=memory, cfg=cfg, observation_space=env.observation_space, action_space=env.action_space
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("torch", "jax"), required=True)
    parser.add_argument("--env", choices=sorted(ENVS), default="pendulum")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=DEFAULT_TIMESTEPS, help="env steps in total")
    args = parser.parse_args()
    env_id = ENVS[args.env]

    import gymnasium

    from skrl_like import logger
    from skrl_like.utils import set_seed

    logger.setLevel("ERROR")
    if args.backend == "torch":
        from skrl_like.torch.envs.wrappers import wrap_env
        from skrl_like.torch.trainers import SequentialTrainer
    else:
        from skrl_like.jax.envs.wrappers import wrap_env
        from skrl_like.jax.trainers import SequentialTrainer

    set_seed(args.seed)
    env = wrap_env(gymnasium.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode="sync"), verbose=False)
    env._env.reset(seed=args.seed)
    agent = (torch_agent if args.backend == "torch" else jax_agent)(env, args.seed)
    cfg = {"timesteps": args.timesteps // NUM_ENVS, "headless": True, "disable_progressbar": True}
    trainer = SequentialTrainer(env=env, agents=agent, cfg=cfg)
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    returns = trainer.evaluate_episodes(num_episodes=EVAL_EPISODES)
    result = {
        "library": "skrl_like",
        "backend": args.backend,
        "algorithm": "DDPG",
        "env": env_id,
        "seed": args.seed,
        "timesteps": args.timesteps,
        "seconds": round(seconds, 2),
        "env_steps_per_s": round(args.timesteps / seconds, 1),
        "eval_return": round(float(sum(returns) / len(returns)), 2),
        "hyperparameters": {
            **HYPERPARAMETERS,
            "num_envs": NUM_ENVS,
            "hidden": list(HIDDEN),
            "init_stddev": INIT_STDDEV,
            "memory_size": MEMORY_SIZE,
            "noise": {"OrnsteinUhlenbeck": NOISE},
        },
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
