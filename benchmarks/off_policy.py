"""Off-policy benchmark: SAC, TD3, DDPG (Pendulum-v1) and DQN, DDQN (CartPole-v1), one script for every library.

The same script trains skrl 1.4.3 and skrl_like: only the import lines differ (``--library``), which is also the
migration promise (a skrl script runs on skrl_like with its imports changed). Run it with the interpreter of the
library's environment:

    .venv/bin/python benchmarks/off_policy.py --library skrl_like --backend torch --algorithm SAC --seed 0
    /work/bench_venvs/torch/bin/python benchmarks/off_policy.py --library skrl --backend torch --algorithm SAC
    /work/bench_venvs/jax/bin/python benchmarks/off_policy.py --library skrl --backend jax --algorithm SAC
    /work/bench_venvs/sbx/bin/python benchmarks/off_policy.py --library sbx --backend jax --algorithm SAC

``--library sbx`` trains SBX (``sbx-rl``, the JAX port of Stable-Baselines3) with the same hyperparameters as far
as its API can express them (its actor has a state-dependent log-std head; the entropy coefficient learns at the
actor's rate); it is a peer for throughput, built by ``sbx_agent`` below.

Hyperparameters are written once, in ``HYPERPARAMETERS`` below, and printed with every result. Prints ONE JSON
line: library, backend, algorithm, env, seed, timesteps, seconds (``trainer.train()`` only, JAX compilation
included), env_steps_per_s, eval_return (mean of 20 deterministic episodes, null with ``--no-eval``),
peak_rss_mb (the process's peak resident memory) and the hyperparameters; with ``--rss-every SECONDS``, also
rss_mb_during_train: the resident memory sampled while ``train()`` runs (is it flat with a 1M-row replay?).
"""

import os

os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
from configs import SqueezeDiscreteActions  # noqa: E402

# fmt: off
HYPERPARAMETERS = {
    # issue 11: [256, 256] networks, batch 256, one gradient step per env step
    "SAC": {"env": "Pendulum-v1", "num_envs": 1, "timesteps": 20_000, "memory_size": 20_000, "hidden": [256, 256],
            "cfg": {"batch_size": 256, "gradient_steps": 1, "discount_factor": 0.99, "polyak": 0.005,
                    "actor_learning_rate": 3e-4, "critic_learning_rate": 1e-3, "entropy_learning_rate": 1e-3,
                    "learn_entropy": True, "initial_entropy_value": 1.0,
                    "random_timesteps": 1000, "learning_starts": 1000}},
    "TD3": {"env": "Pendulum-v1", "num_envs": 1, "timesteps": 20_000, "memory_size": 20_000, "hidden": [256, 256],
            "cfg": {"batch_size": 256, "gradient_steps": 1, "discount_factor": 0.99, "polyak": 0.005,
                    "actor_learning_rate": 1e-3, "critic_learning_rate": 1e-3, "policy_delay": 2,
                    "smooth_regularization_clip": 0.5, "random_timesteps": 1000, "learning_starts": 1000},
            "exploration_noise_std": 0.2, "smooth_noise_std": 0.4},
    "DDPG": {"env": "Pendulum-v1", "num_envs": 1, "timesteps": 20_000, "memory_size": 20_000, "hidden": [256, 256],
             "cfg": {"batch_size": 256, "gradient_steps": 1, "discount_factor": 0.99, "polyak": 0.005,
                     "actor_learning_rate": 1e-3, "critic_learning_rate": 1e-3,
                     "random_timesteps": 1000, "learning_starts": 1000},
             "exploration_noise_std": 0.2},
    "DQN": {"env": "CartPole-v1", "num_envs": 1, "timesteps": 100_000, "memory_size": 50_000, "hidden": [64, 64],
            "cfg": {"batch_size": 64, "gradient_steps": 1, "discount_factor": 0.99, "polyak": 1.0,
                    "learning_rate": 1e-3, "update_interval": 1, "target_update_interval": 500,
                    "random_timesteps": 0, "learning_starts": 1000,
                    "exploration": {"initial_epsilon": 1.0, "final_epsilon": 0.05, "timesteps": 5000}}},
}
HYPERPARAMETERS["DDQN"] = HYPERPARAMETERS["DQN"]
# fmt: on
# the throughput protocol of docs/benchmarks.md (``--timesteps``), also the floors' (torch_floor.py, jax_floor.py)
THROUGHPUT_TIMESTEPS = {"SAC": 3000, "TD3": 3000, "DQN": 20_000}
EVAL_EPISODES = 20
EVAL_SEED_OFFSET = 10_000


def modules(library: str, backend: str) -> dict:
    """The modules a skrl script imports, for skrl 1.4.3 (area-first paths) or skrl_like (backend-first)."""
    if library == "skrl":
        import skrl

        skrl.logger.setLevel(logging.ERROR)
        names = {area: f"skrl.{area}.{backend}" for area in ("agents", "memories", "models", "trainers")}
        names.update(wrappers=f"skrl.envs.wrappers.{backend}", noises=f"skrl.resources.noises.{backend}")
        names.update(preprocessors=f"skrl.resources.preprocessors.{backend}")
    else:
        names = {area: f"skrl_like.{backend}.{area}" for area in ("agents", "memories", "models", "trainers")}
        names.update(wrappers=f"skrl_like.{backend}.envs.wrappers", noises=f"skrl_like.{backend}.resources.noises")
        names.update(preprocessors=f"skrl_like.{backend}.resources.preprocessors")
    loaded = {area: importlib.import_module(name) for area, name in names.items()}
    loaded["utils"] = importlib.import_module(f"{library}.utils")
    return loaded


def torch_models(m: dict, algorithm: str, observation_space, action_space, device, hidden: list) -> dict:
    import torch
    import torch.nn as nn

    torch.set_num_threads(1)
    Model, GaussianMixin, DeterministicMixin = m["models"].Model, m["models"].GaussianMixin, m["models"].DeterministicMixin

    def mlp(inputs: int, outputs: int) -> nn.Sequential:
        layers, last = [], inputs
        for width in hidden:
            layers += [nn.Linear(last, width), nn.ReLU()]
            last = width
        return nn.Sequential(*layers, nn.Linear(last, outputs))

    class StochasticActor(GaussianMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)
            self.net = mlp(self.num_observations, self.num_actions)
            self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

        def compute(self, inputs, role):
            return 2 * torch.tanh(self.net(inputs["states"])), self.log_std_parameter, {}

    class DeterministicActor(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            DeterministicMixin.__init__(self, clip_actions=False)
            self.net = mlp(self.num_observations, self.num_actions)

        def compute(self, inputs, role):
            return 2 * torch.tanh(self.net(inputs["states"])), {}

    class Critic(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            DeterministicMixin.__init__(self, clip_actions=False)
            self.net = mlp(self.num_observations + self.num_actions, 1)

        def compute(self, inputs, role):
            return self.net(torch.cat([inputs["states"], inputs["taken_actions"]], dim=1)), {}

    class QNetwork(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device):
            Model.__init__(self, observation_space, action_space, device)
            DeterministicMixin.__init__(self, clip_actions=False)
            self.net = mlp(self.num_observations, self.num_actions)

        def compute(self, inputs, role):
            return self.net(inputs["states"]), {}

    return _assemble(algorithm, StochasticActor, DeterministicActor, Critic, QNetwork, (observation_space, action_space, device))


def jax_models(m: dict, algorithm: str, observation_space, action_space, device, hidden: list) -> dict:
    import flax.linen as nn
    import jax.numpy as jnp

    Model, GaussianMixin, DeterministicMixin = m["models"].Model, m["models"].GaussianMixin, m["models"].DeterministicMixin

    def mlp(x, outputs: int):
        for width in hidden:
            x = nn.relu(nn.Dense(width)(x))
        return nn.Dense(outputs)(x)

    class StochasticActor(GaussianMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2)

        @nn.compact
        def __call__(self, inputs, role):
            log_std = self.param("log_std", lambda _: jnp.zeros(self.num_actions))
            return 2 * nn.tanh(mlp(inputs["states"], self.num_actions)), log_std, {}

    class DeterministicActor(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self, clip_actions=False)

        @nn.compact
        def __call__(self, inputs, role):
            return 2 * nn.tanh(mlp(inputs["states"], self.num_actions)), {}

    class Critic(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self, clip_actions=False)

        @nn.compact
        def __call__(self, inputs, role):
            return mlp(jnp.concatenate([inputs["states"], inputs["taken_actions"]], axis=-1), 1), {}

    class QNetwork(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self, clip_actions=False)

        @nn.compact
        def __call__(self, inputs, role):
            return mlp(inputs["states"], self.num_actions), {}

    models = _assemble(algorithm, StochasticActor, DeterministicActor, Critic, QNetwork, (observation_space, action_space, device))
    for role, model in models.items():
        model.init_state_dict(role)
    return models


def _assemble(algorithm: str, StochasticActor, DeterministicActor, Critic, QNetwork, spaces: tuple) -> dict:
    twin_critics = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
    if algorithm == "SAC":
        roles = {"policy": StochasticActor, **dict.fromkeys(twin_critics, Critic)}
    elif algorithm == "TD3":
        roles = {"policy": DeterministicActor, "target_policy": DeterministicActor, **dict.fromkeys(twin_critics, Critic)}
    elif algorithm == "DDPG":
        roles = {"policy": DeterministicActor, "target_policy": DeterministicActor, "critic": Critic, "target_critic": Critic}
    else:
        roles = {"q_network": QNetwork, "target_q_network": QNetwork}
    return {role: model_class(*spaces) for role, model_class in roles.items()}


def agent_cfg(m: dict, algorithm: str, hyper: dict, backend: str, device, directory: str) -> dict:
    package = importlib.import_module(f"{m['agents'].__name__}.{'dqn' if algorithm == 'DDQN' else algorithm.lower()}")
    defaults = getattr(package, f"{algorithm}_DEFAULT_CONFIG")
    cfg = {**defaults, **hyper["cfg"]}
    cfg["experiment"] = {**defaults["experiment"], "directory": directory, "write_interval": 0, "checkpoint_interval": 0}
    noise_kwargs = {} if backend == "jax" else {"device": device}
    if "exploration_noise_std" in hyper:
        noise = m["noises"].GaussianNoise(0.0, hyper["exploration_noise_std"], **noise_kwargs)
        cfg["exploration"] = {**defaults["exploration"], "noise": noise}
    if "smooth_noise_std" in hyper:
        cfg["smooth_regularization_noise"] = m["noises"].GaussianNoise(0.0, hyper["smooth_noise_std"], **noise_kwargs)
    if "exploration" in hyper["cfg"]:
        cfg["exploration"] = {**defaults["exploration"], **hyper["cfg"]["exploration"]}
    return getattr(package, algorithm), cfg


def evaluate(model, role: str, env_id: str, seed: int, backend: str) -> float:
    """Mean return of EVAL_EPISODES deterministic episodes of ``model`` acting as ``role``: the mean action of a
    Gaussian policy, the most probable action of a categorical one, the greedy action of a Q-network."""
    env = gymnasium.make_vec(env_id, num_envs=EVAL_EPISODES, vectorization_mode="sync")
    observations, _ = env.reset(seed=EVAL_SEED_OFFSET + seed)
    returns, running = np.zeros(EVAL_EPISODES), np.ones(EVAL_EPISODES, dtype=bool)
    while running.any():
        states = np.asarray(observations, dtype=np.float32)
        if backend == "torch":
            import torch

            with torch.no_grad():
                actions, _, outputs = model.act({"states": torch.as_tensor(states)}, role=role)
            outputs = {key: value.cpu().numpy() for key, value in outputs.items() if hasattr(value, "cpu")}
            actions = actions.cpu().numpy()
        else:
            actions, _, outputs = model.act({"states": states}, role=role, params=model.state_dict.params)
            outputs = {key: np.asarray(value) for key, value in outputs.items() if hasattr(value, "shape")}
        if role == "q_network":
            actions = np.asarray(actions).argmax(axis=-1)
        elif "mean_actions" in outputs:
            actions = outputs["mean_actions"]
        elif "net_output" in outputs:  # categorical: the most probable action
            actions = outputs["net_output"].argmax(axis=-1)
        actions = np.asarray(actions)
        if isinstance(env.single_action_space, gymnasium.spaces.Discrete):
            actions = actions.reshape(-1)
        observations, rewards, terminated, truncated, _ = env.step(actions)
        returns += np.where(running, rewards, 0.0)
        running &= ~(terminated | truncated)
    env.close()
    return float(returns.mean())


def make_vector_env(env_id: str, num_envs: int):
    """The gymnasium sync vector env every library gets (same-step autoreset), before any library's wrapper."""
    vector = gymnasium.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP},
    )
    if isinstance(vector.single_action_space, gymnasium.spaces.Discrete):
        vector = SqueezeDiscreteActions(vector)  # gymnasium 1.x vector envs reject (n, 1) (skrl 1.4.3 sends it)
    return vector


def make_env(m: dict, library: str, env_id: str, num_envs: int, seed: int):
    """The wrapped vector env, gymnasium's same-step autoreset, seeded alike for both libraries."""
    vector = make_vector_env(env_id, num_envs)
    env = m["wrappers"].wrap_env(vector, wrapper="gymnasium", verbose=False)
    if library == "skrl":  # skrl_like seeds the env from set_seed; skrl 1.4.3 leaves it unseeded
        vector.reset(seed=seed)
    return env


def sbx_agent(algorithm: str, hyper: dict, seed: int):
    """SBX's SAC / TD3 / DQN on a one-env ``DummyVecEnv`` with ``HYPERPARAMETERS``' values (SB3's
    ``learning_starts`` acts at random before learning, as our ``random_timesteps`` = ``learning_starts`` does)."""
    import sbx
    from stable_baselines3.common.noise import NormalActionNoise

    cfg = hyper["cfg"]
    common = {"buffer_size": hyper["memory_size"], "batch_size": cfg["batch_size"], "gamma": cfg["discount_factor"],
              "gradient_steps": cfg["gradient_steps"], "train_freq": 1, "learning_starts": cfg["learning_starts"],
              "policy_kwargs": {"net_arch": hyper["hidden"]}, "seed": seed, "verbose": 0}
    env = gymnasium.make(hyper["env"])
    if algorithm == "DQN":
        fraction = cfg["exploration"]["timesteps"] / hyper["timesteps"]
        return sbx.DQN("MlpPolicy", env, learning_rate=cfg["learning_rate"], tau=cfg["polyak"],
                       target_update_interval=cfg["target_update_interval"], exploration_fraction=fraction,
                       exploration_final_eps=cfg["exploration"]["final_epsilon"], **common)
    common.update(tau=cfg["polyak"], learning_rate=cfg["actor_learning_rate"], qf_learning_rate=cfg["critic_learning_rate"])
    if algorithm == "SAC":
        return sbx.SAC("MlpPolicy", env, ent_coef="auto_1.0", **common)
    noise = NormalActionNoise(np.zeros(1), np.full(1, hyper["exploration_noise_std"]))
    return sbx.TD3("MlpPolicy", env, policy_delay=cfg["policy_delay"], target_policy_noise=hyper["smooth_noise_std"],
                   target_noise_clip=cfg["smooth_regularization_clip"], action_noise=noise, **common)


def sbx_evaluate(model, env_id: str, seed: int) -> float:
    """Mean return of EVAL_EPISODES deterministic episodes of an SBX model, seeded as ``evaluate`` seeds ours."""
    env = gymnasium.make_vec(env_id, num_envs=EVAL_EPISODES, vectorization_mode="sync")
    observations, _ = env.reset(seed=EVAL_SEED_OFFSET + seed)
    returns, running = np.zeros(EVAL_EPISODES), np.ones(EVAL_EPISODES, dtype=bool)
    while running.any():
        actions, _ = model.predict(observations, deterministic=True)
        observations, rewards, terminated, truncated, _ = env.step(actions)
        returns += np.where(running, rewards, 0.0)
        running &= ~(terminated | truncated)
    env.close()
    return float(returns.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", choices=("skrl", "skrl_like", "sbx"), default="skrl_like")
    parser.add_argument("--backend", choices=("torch", "jax"), default="torch")
    parser.add_argument("--algorithm", choices=sorted(HYPERPARAMETERS), default="SAC")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timesteps", type=int, default=None, help="env steps (default: the algorithm's budget)")
    parser.add_argument("--memory-size", type=int, default=None, help="replay rows (e.g. 1000000 for the RSS check)")
    parser.add_argument("--no-eval", action="store_true")
    parser.add_argument("--rss-every", type=float, default=0, help="seconds between resident-memory samples (0: none)")
    args = parser.parse_args()
    sampler = RssSampler(args.rss_every) if args.rss_every > 0 else None
    hyper = HYPERPARAMETERS[args.algorithm]
    timesteps = args.timesteps or hyper["timesteps"]
    if args.library == "sbx":
        args.backend = "jax"
        model = sbx_agent(args.algorithm, {**hyper, "memory_size": args.memory_size or hyper["memory_size"]}, args.seed)
        start = time.perf_counter()
        model.learn(total_timesteps=timesteps)
        seconds = time.perf_counter() - start
        eval_return = None if args.no_eval else sbx_evaluate(model, hyper["env"], args.seed)
        report(args, hyper, timesteps, seconds, eval_return)
        return

    m = modules(args.library, args.backend)
    m["utils"].set_seed(args.seed)
    env = make_env(m, args.library, hyper["env"], hyper["num_envs"], args.seed)
    device = env.device
    build = torch_models if args.backend == "torch" else jax_models
    models = build(m, args.algorithm, env.observation_space, env.action_space, device, hyper["hidden"])
    memory = m["memories"].RandomMemory(
        memory_size=args.memory_size or hyper["memory_size"], num_envs=env.num_envs, device=device
    )
    with tempfile.TemporaryDirectory() as directory:
        Agent, cfg = agent_cfg(m, args.algorithm, hyper, args.backend, device, directory)
        agent = Agent(
            models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
            action_space=env.action_space, device=device,
        )
        trainer_cfg = {"timesteps": timesteps, "headless": True, "disable_progressbar": True,
                       "close_environment_at_exit": False}
        trainer = m["trainers"].SequentialTrainer(cfg=trainer_cfg, env=env, agents=agent)
        start = time.perf_counter()
        if sampler is not None:
            sampler.start()
        trainer.train()
        seconds = time.perf_counter() - start
        if sampler is not None:
            sampler.stop()
    role = "q_network" if args.algorithm in ("DQN", "DDQN") else "policy"
    eval_return = None if args.no_eval else evaluate(agent.models[role], role, hyper["env"], args.seed, args.backend)
    env.close()
    report(args, hyper, timesteps, seconds, eval_return, sampler)


class RssSampler:
    """The process's current resident memory (``/proc/self/statm``), sampled every ``every`` seconds from a thread
    while ``train()`` runs: ``samples`` holds ``(seconds since start, MB)``."""

    def __init__(self, every: float):
        import threading

        self.every, self.samples, self._stopped = every, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def current_mb() -> float:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    def _run(self) -> None:
        start = time.perf_counter()
        while True:
            self.samples.append((round(time.perf_counter() - start, 1), round(self.current_mb(), 1)))
            if self._stopped.wait(self.every):
                break

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
        self.samples.append((self.samples[-1][0], round(self.current_mb(), 1)))


def report(args: argparse.Namespace, hyper: dict, timesteps: int, seconds: float, eval_return, sampler=None) -> None:
    """Print the run's one JSON line."""
    result = {
        "library": args.library, "backend": args.backend, "algorithm": args.algorithm, "env": hyper["env"],
        "seed": args.seed, "timesteps": timesteps, "seconds": round(seconds, 3),
        "env_steps_per_s": round(timesteps * hyper["num_envs"] / seconds, 1),
        "eval_return": None if eval_return is None else round(eval_return, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "memory_size": args.memory_size or hyper["memory_size"], "hyperparameters": hyper,
    }
    if sampler is not None:  # resident memory during train(): [seconds, MB] pairs
        result["rss_mb_during_train"] = sampler.samples
    sys.stdout.write(json.dumps(result, default=str) + "\n")


if __name__ == "__main__":
    main()
