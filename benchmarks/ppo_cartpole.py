"""skrl_like PPO on CartPole-v1, torch or JAX backend: the same problem as the peers (benchmarks/configs.py).

    .venv/bin/python benchmarks/ppo_cartpole.py --backend torch --config cleanrl --seed 0
    .venv/bin/python benchmarks/ppo_cartpole.py --backend jax --config cleanrl --seed 0
    .venv/bin/python benchmarks/ppo_cartpole.py --backend torch --config cleanrl --no-learning   # collection only

Prints exactly one JSON line (benchmarks/common.py: emit). ``seconds`` is the wall time of
``SequentialTrainer.train()`` only (JAX compilation included, as for the skrl JAX peer). ``--no-learning``
never runs an update (``learning_starts`` past the end): what remains is the collection loop (act, env step,
value estimate, memory write), to compare with benchmarks/minimal_loop.py.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/
import argparse  # noqa: E402

import numpy as np  # noqa: E402
from common import Timer, emit, evaluate  # noqa: E402
from configs import ARCHITECTURE, CONFIGS, SKRL_EXPERIMENT, SKRL_TRAINER_CFG, make_env, plan  # noqa: E402


def torch_agent(env, run, ppo_cfg):
    import torch
    import torch.nn as nn

    from skrl_like.torch.agents.ppo import PPO, PPO_DEFAULT_CONFIG
    from skrl_like.torch.memories import RandomMemory
    from skrl_like.torch.models import CategoricalMixin, DeterministicMixin, Model

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)

    def mlp(in_features, hidden, out_features, head_gain):
        layers, last = [], in_features
        for width in hidden:
            layers += [nn.Linear(last, width), nn.Tanh()]
            last = width
        layers.append(nn.Linear(last, out_features))
        linears = [m for m in layers if isinstance(m, nn.Linear)]
        for i, linear in enumerate(linears):
            gain = head_gain if i == len(linears) - 1 else ARCHITECTURE["init"]["hidden_gain"]
            nn.init.orthogonal_(linear.weight, gain=gain)
            nn.init.constant_(linear.bias, ARCHITECTURE["init"]["bias"])
        return nn.Sequential(*layers)

    class Policy(CategoricalMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            CategoricalMixin.__init__(self, unnormalized_log_prob=True)
            self.net = mlp(
                self.num_observations,
                ARCHITECTURE["policy"]["hidden"],
                self.num_actions,
                ARCHITECTURE["init"]["policy_head_gain"],
            )

        def compute(self, inputs, role):
            return self.net(inputs["states"]), {}

    class Value(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            DeterministicMixin.__init__(self)
            self.net = mlp(
                self.num_observations, ARCHITECTURE["value"]["hidden"], 1, ARCHITECTURE["init"]["value_head_gain"]
            )

        def compute(self, inputs, role):
            return self.net(inputs["states"]), {}

    models = {
        "policy": Policy(env.observation_space, env.action_space, env.device),
        "value": Value(env.observation_space, env.action_space, env.device),
    }
    agent = PPO(
        models=models,
        memory=RandomMemory(memory_size=run["rollouts"], num_envs=env.num_envs, device=env.device),
        cfg={**PPO_DEFAULT_CONFIG, **ppo_cfg},
        observation_space=env.observation_space,
        action_space=env.action_space,
        device=env.device,
    )

    def act(observations):
        with torch.no_grad():
            _, _, outputs = models["policy"].act({"states": torch.as_tensor(observations)}, role="policy")
        return outputs["mean_actions"].numpy()

    return agent, act


def jax_agent(env, run, ppo_cfg):
    import flax.linen as nn

    from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
    from skrl_like.jax.memories import RandomMemory
    from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, Model

    def mlp(x, hidden, out_features, head_gain):
        init = ARCHITECTURE["init"]
        for width in hidden:
            x = nn.tanh(nn.Dense(width, kernel_init=nn.initializers.orthogonal(init["hidden_gain"]))(x))
        return nn.Dense(out_features, kernel_init=nn.initializers.orthogonal(head_gain))(x)

    class Policy(CategoricalMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            CategoricalMixin.__init__(self, unnormalized_log_prob=True)

        @nn.compact
        def __call__(self, inputs, role):
            return mlp(
                inputs["states"],
                ARCHITECTURE["policy"]["hidden"],
                self.num_actions,
                ARCHITECTURE["init"]["policy_head_gain"],
            ), {}

    class Value(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            return mlp(
                inputs["states"], ARCHITECTURE["value"]["hidden"], 1, ARCHITECTURE["init"]["value_head_gain"]
            ), {}

    models = {
        "policy": Policy(env.observation_space, env.action_space),
        "value": Value(env.observation_space, env.action_space),
    }
    for role, model in models.items():
        model.init_state_dict(role)
    agent = PPO(
        models=models,
        memory=RandomMemory(memory_size=run["rollouts"], num_envs=env.num_envs),
        cfg={**PPO_DEFAULT_CONFIG, **ppo_cfg},
        observation_space=env.observation_space,
        action_space=env.action_space,
    )

    def act(observations):
        _, _, outputs = agent.act(np.asarray(observations, np.float32), timestep=0, timesteps=1)
        return np.asarray(outputs["mean_actions"])

    return agent, act


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("torch", "jax"), required=True)
    parser.add_argument("--config", choices=sorted(CONFIGS), default="cleanrl")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=100_000, help="env steps summed over sub-envs")
    parser.add_argument("--no-eval", action="store_true")
    parser.add_argument("--no-learning", action="store_true", help="collection only: no update ever runs")
    args = parser.parse_args()

    run = plan(args.config, args.timesteps)
    from skrl_like import logger
    from skrl_like.utils import set_seed

    logger.setLevel("ERROR")
    set_seed(args.seed)
    if args.backend == "torch":
        from skrl_like.torch.envs.wrappers import wrap_env
        from skrl_like.torch.trainers import SequentialTrainer
    else:
        from skrl_like.jax.envs.wrappers import wrap_env
        from skrl_like.jax.trainers import SequentialTrainer
    env = wrap_env(make_env(run["num_envs"], seed=args.seed), wrapper="gymnasium", verbose=False)

    ppo_cfg = {**CONFIGS[args.config]["ppo"], "experiment": dict(SKRL_EXPERIMENT)}
    ppo_cfg.pop("mixed_precision", None) if args.backend == "jax" else None
    if args.no_learning:
        ppo_cfg["learning_starts"] = run["vector_steps"] + 1
    agent, act = (torch_agent if args.backend == "torch" else jax_agent)(env, run, ppo_cfg)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**SKRL_TRAINER_CFG, "timesteps": run["vector_steps"]})
    with Timer() as timer:
        trainer.train()

    final = None if args.no_eval or args.no_learning else evaluate(act, args.seed)
    library = "skrl_like-collection" if args.no_learning else "skrl_like"
    emit(library, args.backend, args.config, args.seed, run["env_steps"], timer.seconds, final)


if __name__ == "__main__":
    main()
