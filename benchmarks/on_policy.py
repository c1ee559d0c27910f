"""On-policy and episodic benchmark: A2C, CEM (CartPole-v1), TRPO, RPO (Pendulum-v1), one script for every library.

The companion of ``benchmarks/off_policy.py`` (whose module loading, environment and evaluation it uses): the same
script trains skrl 1.4.3 and skrl_like, only the import lines differ (``--library``). skrl 1.4.3 has TRPO in torch
only. Run it with the interpreter of the library's environment:

    .venv/bin/python benchmarks/on_policy.py --library skrl_like --backend torch --algorithm A2C --seed 0
    /work/bench_venvs/torch/bin/python benchmarks/on_policy.py --library skrl --backend torch --algorithm TRPO

Hyperparameters are written once, in ``HYPERPARAMETERS``, and printed with every result. Prints ONE JSON line, the
fields of ``off_policy.py``'s (``eval_return``: mean of 20 deterministic episodes: the mean action of a Gaussian
policy, the most probable action of a categorical one).
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
from off_policy import evaluate, make_env, modules  # noqa: E402  (sets the one-thread environment first)

# fmt: off
# the examples' hyperparameters (examples/<backend>/<algo>_<task>.py), in a form both libraries accept; "timesteps"
# are trainer steps (env steps / num_envs), the budgets: A2C and TRPO 200k env steps, CEM 100k
HYPERPARAMETERS = {
    "A2C": {"env": "CartPole-v1", "num_envs": 8, "timesteps": 25_000, "hidden": [64, 64], "policy": "categorical",
            "cfg": {"rollouts": 8, "mini_batches": 1, "discount_factor": 0.99, "lambda": 0.95,
                    "learning_rate": 7e-4, "grad_norm_clip": 0.5, "entropy_loss_scale": 0.0}},
    "CEM": {"env": "CartPole-v1", "num_envs": 1, "timesteps": 100_000, "hidden": [64, 64], "policy": "categorical",
            "cfg": {"rollouts": 500, "learning_starts": 100, "percentile": 0.70, "discount_factor": 0.99,
                    "learning_rate": 1e-2}},
    "TRPO": {"env": "Pendulum-v1", "num_envs": 4, "timesteps": 50_000, "hidden": [64, 64], "policy": "gaussian",
             "cfg": {"rollouts": 512, "learning_epochs": 10, "mini_batches": 32, "discount_factor": 0.9,
                     "lambda": 0.95, "value_learning_rate": 1e-3, "grad_norm_clip": 0.5, "value_loss_scale": 0.5,
                     "max_kl_divergence": 0.05, "state_preprocessor": True, "value_preprocessor": True}},
    "RPO": {"env": "Pendulum-v1", "num_envs": 4, "timesteps": 100_000, "hidden": [64, 64], "policy": "gaussian",
            "cfg": {"rollouts": 1024, "learning_epochs": 10, "mini_batches": 32, "discount_factor": 0.9,
                    "lambda": 0.95, "learning_rate": 3e-4, "grad_norm_clip": 0.5, "ratio_clip": 0.2,
                    "value_loss_scale": 0.5, "alpha": 0.5, "state_preprocessor": True, "value_preprocessor": True}},
}
# fmt: on


def torch_models(m: dict, hyper: dict, observation_space, action_space, device) -> dict:
    import torch
    import torch.nn as nn

    torch.set_num_threads(1)
    Model = m["models"].Model

    def mlp(inputs: int, outputs: int) -> nn.Sequential:
        layers, last = [], inputs
        for width in hyper["hidden"]:
            layers += [nn.Linear(last, width), nn.Tanh()]
            last = width
        return nn.Sequential(*layers, nn.Linear(last, outputs))

    class CategoricalPolicy(m["models"].CategoricalMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            m["models"].CategoricalMixin.__init__(self, unnormalized_log_prob=True)
            self.net = mlp(self.num_observations, self.num_actions)

        def compute(self, inputs, role):
            return self.net(inputs["states"]), {}

    class GaussianPolicy(m["models"].GaussianMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            m["models"].GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)
            self.net = mlp(self.num_observations, self.num_actions)
            self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

        def compute(self, inputs, role):
            mean = self.net(inputs["states"])
            alpha = inputs.get("alpha", 0.0)  # RPO: a uniform perturbation of the mean
            if alpha:
                mean = mean + torch.empty_like(mean).uniform_(-alpha, alpha)
            return mean, self.log_std_parameter, {}

    class Value(m["models"].DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            m["models"].DeterministicMixin.__init__(self, clip_actions=False)
            self.net = mlp(self.num_observations, 1)

        def compute(self, inputs, role):
            return self.net(inputs["states"]), {}

    policy = CategoricalPolicy if hyper["policy"] == "categorical" else GaussianPolicy
    models = {"policy": policy(observation_space, action_space, device)}
    if "lambda" in hyper["cfg"]:
        models["value"] = Value(observation_space, action_space, device)
    return models


def jax_models(m: dict, hyper: dict, observation_space, action_space, device) -> dict:
    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    Model = m["models"].Model

    def mlp(x, outputs: int):
        for width in hyper["hidden"]:
            x = nn.tanh(nn.Dense(width)(x))
        return nn.Dense(outputs)(x)

    class CategoricalPolicy(m["models"].CategoricalMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            m["models"].CategoricalMixin.__init__(self, unnormalized_log_prob=True)

        @nn.compact
        def __call__(self, inputs, role):
            return mlp(inputs["states"], self.num_actions), {}

    class GaussianPolicy(m["models"].GaussianMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            m["models"].GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)

        @nn.compact
        def __call__(self, inputs, role):
            log_std = self.param("log_std", lambda _: jnp.zeros(self.num_actions))
            mean = mlp(inputs["states"], self.num_actions)
            if "alpha" in inputs and "key" in inputs:  # RPO: a uniform perturbation of the mean (alpha may be traced)
                alpha = inputs["alpha"]
                mean = mean + jax.random.uniform(inputs["key"], mean.shape, minval=-alpha, maxval=alpha)
            return mean, log_std, {}

    class Value(m["models"].DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            m["models"].DeterministicMixin.__init__(self, clip_actions=False)

        @nn.compact
        def __call__(self, inputs, role):
            return mlp(inputs["states"], 1), {}

    policy = CategoricalPolicy if hyper["policy"] == "categorical" else GaussianPolicy
    models = {"policy": policy(observation_space, action_space, device)}
    if "lambda" in hyper["cfg"]:
        models["value"] = Value(observation_space, action_space, device)
    for role, model in models.items():
        model.init_state_dict(role)
    return models


def agent_cfg(m: dict, algorithm: str, hyper: dict, env, directory: str) -> tuple:
    package = importlib.import_module(f"{m['agents'].__name__}.{algorithm.lower()}")
    defaults = getattr(package, f"{algorithm}_DEFAULT_CONFIG")
    cfg = {**defaults, **hyper["cfg"]}
    scaler = m["preprocessors"].RunningStandardScaler
    if cfg.get("state_preprocessor") is True:
        cfg.update(state_preprocessor=scaler, state_preprocessor_kwargs={"size": env.observation_space})
    if cfg.get("value_preprocessor") is True:
        cfg.update(value_preprocessor=scaler, value_preprocessor_kwargs={"size": 1})
    if not isinstance(env.device, str) and hasattr(env.device, "type"):  # torch: the scalers' device
        for name in ("state_preprocessor", "value_preprocessor"):
            if cfg.get(name):
                cfg[f"{name}_kwargs"] = {**cfg[f"{name}_kwargs"], "device": env.device}
    cfg["experiment"] = {**defaults["experiment"], "directory": directory, "write_interval": 0, "checkpoint_interval": 0}
    return getattr(package, algorithm), cfg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", choices=("skrl", "skrl_like"), default="skrl_like")
    parser.add_argument("--backend", choices=("torch", "jax"), default="torch")
    parser.add_argument("--algorithm", choices=sorted(HYPERPARAMETERS), default="A2C")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=None, help="trainer steps (default: the algorithm's)")
    parser.add_argument("--no-eval", action="store_true")
    args = parser.parse_args()
    hyper = HYPERPARAMETERS[args.algorithm]
    timesteps = args.timesteps or hyper["timesteps"]

    m = modules(args.library, args.backend)
    m["utils"].set_seed(args.seed)
    env = make_env(m, args.library, hyper["env"], hyper["num_envs"], args.seed)
    device = env.device
    build = torch_models if args.backend == "torch" else jax_models
    models = build(m, hyper, env.observation_space, env.action_space, device)
    memory = m["memories"].RandomMemory(memory_size=hyper["cfg"]["rollouts"], num_envs=env.num_envs, device=device)
    with tempfile.TemporaryDirectory() as directory:
        Agent, cfg = agent_cfg(m, args.algorithm, hyper, env, directory)
        agent = Agent(
            models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
            action_space=env.action_space, device=device,
        )
        trainer_cfg = {"timesteps": timesteps, "headless": True, "disable_progressbar": True,
                       "close_environment_at_exit": False}
        trainer = m["trainers"].SequentialTrainer(cfg=trainer_cfg, env=env, agents=agent)
        start = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - start
    eval_return = None if args.no_eval else evaluate(agent.models["policy"], "policy", hyper["env"], args.seed, args.backend)
    env.close()
    result = {
        "library": args.library, "backend": args.backend, "algorithm": args.algorithm, "env": hyper["env"],
        "seed": args.seed, "timesteps": timesteps, "env_steps": timesteps * hyper["num_envs"],
        "seconds": round(seconds, 3), "env_steps_per_s": round(timesteps * hyper["num_envs"] / seconds, 1),
        "eval_return": None if eval_return is None else round(eval_return, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "hyperparameters": hyper,
    }
    sys.stdout.write(json.dumps(result, default=str) + "\n")


if __name__ == "__main__":
    main()
