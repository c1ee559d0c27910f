"""Multi-agent benchmark: IPPO and MAPPO on PettingZoo MPE simple_spread_v3, one script for every library.

The companion of ``benchmarks/on_policy.py``: the same script trains skrl 1.4.3 and skrl_like, only the import lines
differ (``--library``). The configuration is the one of ``examples/<backend>/ippo_simple_spread.py`` (3 agents,
discrete actions, 25-step episodes, one environment; rollouts 250, 5 epochs x 2 mini-batches, lr 3e-4, entropy 0.01,
standardised states, values and MAPPO's shared states, 64x64 tanh MLPs with orthogonal weights), written once in
``HYPERPARAMETERS``. Run it with the interpreter of the library's environment:

    .venv/bin/python benchmarks/multi_agent.py --library skrl_like --backend torch --algorithm IPPO --seed 0
    /work/bench_venvs/torch/bin/python benchmarks/multi_agent.py --library skrl --backend torch --algorithm MAPPO

Prints ONE JSON line: ``eval_return`` is the mean over 20 episodes of the return summed over the agents, each agent
taking its policy's most probable action; ``random_return`` is a uniformly random policy's on the same evaluation
episodes (the same environment seeds), ``margin`` their difference. ``env_steps_per_s``: environment steps (one step
of all agents) per second of ``trainer.train()``.
"""

import argparse
import importlib
import json
import os
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
import numpy as np  # noqa: E402
from mpe2 import simple_spread_v3  # noqa: E402
from off_policy import modules  # noqa: E402  (sets the one-thread environment first)

# fmt: off
HYPERPARAMETERS = {
    "env": {"N": 3, "max_cycles": 25, "continuous_actions": False},
    "timesteps": 300_000, "hidden": [64, 64], "evaluation_episodes": 20,
    "cfg": {"rollouts": 250, "learning_epochs": 5, "mini_batches": 2, "discount_factor": 0.99, "lambda": 0.95,
            "learning_rate": 3e-4, "entropy_loss_scale": 0.01, "grad_norm_clip": 0.5},
}
# fmt: on
EVAL_SEED_OFFSET = 1000


def make_env(m: dict, seed: int):
    """The wrapped parallel env, its random state seeded alike for both libraries (later resets continue it)."""
    raw = simple_spread_v3.parallel_env(**HYPERPARAMETERS["env"])
    raw.reset(seed=seed)
    return m["wrappers"].wrap_env(raw, wrapper="pettingzoo", verbose=False)


def torch_models(m: dict, env, mappo: bool) -> dict:
    import torch
    import torch.nn as nn

    torch.set_num_threads(1)
    Model = m["models"].Model

    def mlp(inputs: int, outputs: int, head_gain: float) -> nn.Sequential:
        layers, last = [], inputs
        for width in HYPERPARAMETERS["hidden"]:
            layers += [nn.Linear(last, width), nn.Tanh()]
            last = width
        layers.append(nn.Linear(last, outputs))
        linear = [layer for layer in layers if isinstance(layer, nn.Linear)]
        for index, layer in enumerate(linear):
            nn.init.orthogonal_(layer.weight, gain=head_gain if index == len(linear) - 1 else np.sqrt(2))
            nn.init.zeros_(layer.bias)
        return nn.Sequential(*layers)

    class Policy(m["models"].CategoricalMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            m["models"].CategoricalMixin.__init__(self, unnormalized_log_prob=True)
            self.net = mlp(self.num_observations, self.num_actions, 0.01)

        def compute(self, inputs, role):
            return self.net(inputs["states"]), {}

    class Value(m["models"].DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            m["models"].DeterministicMixin.__init__(self)
            self.net = mlp(self.num_observations, 1, 1.0)

        def compute(self, inputs, role):
            return self.net(inputs["states"]), {}

    value_spaces = env.state_spaces if mappo else env.observation_spaces
    return {
        uid: {
            "policy": Policy(env.observation_space(uid), env.action_space(uid), env.device),
            "value": Value(value_spaces[uid], env.action_space(uid), env.device),
        }
        for uid in env.possible_agents
    }


def jax_models(m: dict, env, mappo: bool) -> dict:
    import flax.linen as nn

    Model = m["models"].Model

    def mlp(x, outputs: int, head_gain: float):
        for width in HYPERPARAMETERS["hidden"]:
            x = nn.tanh(nn.Dense(width, kernel_init=nn.initializers.orthogonal(np.sqrt(2)))(x))
        return nn.Dense(outputs, kernel_init=nn.initializers.orthogonal(head_gain))(x)

    class Policy(m["models"].CategoricalMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            m["models"].CategoricalMixin.__init__(self, unnormalized_log_prob=True)

        @nn.compact
        def __call__(self, inputs, role):
            return mlp(inputs["states"], self.num_actions, 0.01), {}

    class Value(m["models"].DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            m["models"].DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            return mlp(inputs["states"], 1, 1.0), {}

    value_spaces = env.state_spaces if mappo else env.observation_spaces
    models = {}
    for uid in env.possible_agents:
        models[uid] = {
            "policy": Policy(env.observation_space(uid), env.action_space(uid), env.device),
            "value": Value(value_spaces[uid], env.action_space(uid), env.device),
        }
        for role, model in models[uid].items():
            model.init_state_dict(role)
    return models


def make_agent(m: dict, library: str, backend: str, algorithm: str, env, directory: str):
    area = f"skrl.multi_agents.{backend}" if library == "skrl" else f"skrl_like.{backend}.multi_agents"
    package = importlib.import_module(f"{area}.{algorithm.lower()}")
    defaults = getattr(package, f"{algorithm}_DEFAULT_CONFIG")
    mappo = algorithm == "MAPPO"
    scaler = m["preprocessors"].RunningStandardScaler
    device = {"device": env.device} if backend == "torch" else {}
    cfg = {**defaults, **HYPERPARAMETERS["cfg"]}
    cfg.update(
        state_preprocessor=scaler,
        state_preprocessor_kwargs={"size": env.observation_space(env.possible_agents[0]), **device},
        value_preprocessor=scaler,
        value_preprocessor_kwargs={"size": 1, **device},
        experiment={**defaults["experiment"], "directory": directory, "write_interval": 0, "checkpoint_interval": 0},
    )
    kwargs = {}
    if mappo:
        cfg["shared_state_preprocessor"] = scaler
        cfg["shared_state_preprocessor_kwargs"] = {"size": env.state_space(env.possible_agents[0]), **device}
        kwargs["shared_observation_spaces"] = env.state_spaces
    build = torch_models if backend == "torch" else jax_models
    models = build(m, env, mappo)
    rollouts = cfg["rollouts"]
    memories = {
        uid: m["memories"].RandomMemory(memory_size=rollouts, num_envs=env.num_envs, device=env.device)
        for uid in env.possible_agents
    }
    return getattr(package, algorithm)(
        possible_agents=env.possible_agents,
        models=models,
        memories=memories,
        observation_spaces=env.observation_spaces,
        action_spaces=env.action_spaces,
        device=env.device,
        cfg=cfg,
        **kwargs,
    )


def greedy_actions(agent, states: dict, backend: str) -> dict:
    """Each agent's most probable action (skrl 1.4.3's categorical models return only the logits)."""
    if backend == "torch":
        import torch

        with torch.no_grad():
            _, _, outputs = agent.act(states, timestep=0, timesteps=0)
    else:
        _, _, outputs = agent.act(states, timestep=0, timesteps=0)
    actions = {}
    for uid, output in outputs.items():
        if "mean_actions" in output:
            actions[uid] = output["mean_actions"]
        else:
            actions[uid] = (
                output["net_output"].argmax(-1, keepdims=True)
                if backend == "jax"
                else (output["net_output"].argmax(-1, keepdim=True))
            )
    return actions


def evaluate(m: dict, agent, backend: str, seed: int) -> float:
    """Mean return (summed over agents) of the evaluation episodes: greedy ``agent``, or uniform random (None)."""
    env = make_env(m, EVAL_SEED_OFFSET + seed)
    rng = np.random.default_rng(seed)
    if agent is not None:
        agent.set_running_mode("eval")
    returns = []
    for _ in range(HYPERPARAMETERS["evaluation_episodes"]):
        states, _ = env.reset()
        total = 0.0
        while env.agents:
            if agent is None:
                actions = {uid: rng.integers(env.action_space(uid).n, size=(1, 1)) for uid in env.possible_agents}
                if backend == "torch":
                    import torch

                    actions = {uid: torch.as_tensor(action) for uid, action in actions.items()}
            else:
                actions = greedy_actions(agent, states, backend)
            states, rewards, _, _, _ = env.step(actions)
            total += float(sum(np.asarray(reward).sum() for reward in rewards.values()))
        returns.append(total)
    env.close()
    return float(np.mean(returns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", choices=("skrl", "skrl_like"), default="skrl_like")
    parser.add_argument("--backend", choices=("torch", "jax"), default="torch")
    parser.add_argument("--algorithm", choices=("IPPO", "MAPPO"), default="IPPO")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=None, help="env steps (default: HYPERPARAMETERS')")
    parser.add_argument("--no-eval", action="store_true")
    args = parser.parse_args()
    timesteps = args.timesteps or HYPERPARAMETERS["timesteps"]

    m = modules(args.library, args.backend)
    m["utils"].set_seed(args.seed)
    env = make_env(m, args.seed)
    with tempfile.TemporaryDirectory() as directory:
        agent = make_agent(m, args.library, args.backend, args.algorithm, env, directory)
        trainer_cfg = {
            "timesteps": timesteps,
            "headless": True,
            "disable_progressbar": True,
            "close_environment_at_exit": False,
        }
        trainer = m["trainers"].SequentialTrainer(cfg=trainer_cfg, env=env, agents=agent)
        start = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - start
    eval_return = random_return = None
    if not args.no_eval:
        eval_return = evaluate(m, agent, args.backend, args.seed)
        random_return = evaluate(m, None, args.backend, args.seed)
    env.close()
    result = {
        "library": args.library,
        "backend": args.backend,
        "algorithm": args.algorithm,
        "env": "simple_spread_v3",
        "seed": args.seed,
        "timesteps": timesteps,
        "env_steps": timesteps,
        "seconds": round(seconds, 3),
        "env_steps_per_s": round(timesteps / seconds, 1),
        "eval_return": None if eval_return is None else round(eval_return, 2),
        "random_return": None if random_return is None else round(random_return, 2),
        "margin": None if eval_return is None else round(eval_return - random_return, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "hyperparameters": HYPERPARAMETERS,
    }
    sys.stdout.write(json.dumps(result, default=str) + "\n")


if __name__ == "__main__":
    main()
