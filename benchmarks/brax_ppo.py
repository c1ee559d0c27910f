"""JAX PPO on a Brax env: skrl_like's CompiledTrainer against Brax's own PPO trainer (``brax.training.agents.ppo``)
with the same env, budget and network (issue 27). Needs the brax extra.

Each trainer runs in its own process (the same imports and compilation on both sides) and appends one JSON line to
``benchmarks/results/brax_ppo.jsonl``: wall seconds of the training call, compilation included, and env steps/s.
The settings match one to one: ``num_envs`` sub-environments unroll ``rollouts`` steps per update (brax:
``unroll_length``, ``batch_size * num_minibatches == num_envs``), ``epochs`` passes over ``mini_batches`` mini-batches,
observation normalization, time-limit bootstrapping, two tanh layers of 64 for the policy and the value.

    python benchmarks/brax_ppo.py                      # both, then the ratio (skrl_like seconds / brax seconds)
    python benchmarks/brax_ppo.py --trainer brax       # one side only
"""

import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "brax_ppo.jsonl")
HIDDEN = (64, 64)


def settings(args: argparse.Namespace) -> dict:
    return {
        "env": args.env,
        "backend": args.backend,
        "num_envs": args.num_envs,
        "rollouts": args.rollouts,
        "updates": args.updates,
        "epochs": 4,
        "mini_batches": 4,
        "episode_length": 200,
        "learning_rate": 3e-4,
        "discount_factor": 0.97,
        "lambda": 0.95,
        "clip": 0.2,
        "entropy": 1e-3,
        "grad_norm_clip": 1.0,
        "seed": args.seed,
    }


def run_skrl_like(s: dict) -> float:
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    from brax import envs

    from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
    from skrl_like.jax.envs.wrappers import wrap_env
    from skrl_like.jax.memories import RandomMemory
    from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
    from skrl_like.jax.resources.preprocessors import RunningStandardScaler
    from skrl_like.jax.trainers import CompiledTrainer
    from skrl_like.utils import set_seed

    class Policy(GaussianMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            GaussianMixin.__init__(self, clip_actions=True)

        @nn.compact
        def __call__(self, inputs, role):
            x = inputs["states"]
            for size in HIDDEN:
                x = nn.tanh(nn.Dense(size)(x))
            log_std = self.param("log_std_parameter", lambda _: jnp.zeros(self.num_actions))
            return nn.Dense(self.num_actions)(x), log_std, {}

    class Value(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            x = inputs["states"]
            for size in HIDDEN:
                x = nn.tanh(nn.Dense(size)(x))
            return nn.Dense(1)(x), {}

    set_seed(s["seed"])
    env = envs.get_environment(s["env"], backend=s["backend"])
    env = wrap_env(env, verbose=False, num_envs=s["num_envs"], episode_length=s["episode_length"], seed=s["seed"])
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": s["rollouts"],
        "learning_epochs": s["epochs"],
        "mini_batches": s["mini_batches"],
        "discount_factor": s["discount_factor"],
        "lambda": s["lambda"],
        "learning_rate": s["learning_rate"],
        "ratio_clip": s["clip"],
        "value_clip": s["clip"],
        "entropy_loss_scale": s["entropy"],
        "grad_norm_clip": s["grad_norm_clip"],
        "time_limit_bootstrap": True,
        "state_preprocessor": RunningStandardScaler,
        "state_preprocessor_kwargs": {"size": env.observation_space},
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    models = {"policy": Policy(env.observation_space, env.action_space), "value": Value(env.observation_space, None)}
    for role, model in models.items():
        model.init_state_dict(role)
    memory = RandomMemory(memory_size=s["rollouts"], num_envs=env.num_envs)
    agent = PPO(models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
                action_space=env.action_space)  # fmt: skip
    start = time.perf_counter()
    trainer_cfg = {"timesteps": s["rollouts"] * s["updates"], "disable_progressbar": True}
    metrics = CompiledTrainer(env=env, agents=agent, cfg=trainer_cfg).train()
    jax.block_until_ready(metrics)
    return time.perf_counter() - start


def run_brax(s: dict) -> float:
    import functools

    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    from brax import envs
    from brax.training.agents.ppo import networks as ppo_networks
    from brax.training.agents.ppo import train as ppo

    if "device_put_replicated" not in dir(jax):  # removed in jax 0.10, still called by brax 0.14.2's PPO trainer

        def device_put_replicated(tree, devices):
            stacked = jax.tree_util.tree_map(lambda leaf: jnp.stack([jnp.asarray(leaf)] * len(devices)), tree)
            return jax.device_put(stacked, devices[0])

        jax.device_put_replicated = device_put_replicated
    env = envs.get_environment(s["env"], backend=s["backend"])
    network_factory = functools.partial(
        ppo_networks.make_ppo_networks,
        policy_hidden_layer_sizes=HIDDEN,
        value_hidden_layer_sizes=HIDDEN,
        activation=nn.tanh,
    )
    start = time.perf_counter()
    _, params, _ = ppo.train(
        environment=env,
        num_timesteps=s["num_envs"] * s["rollouts"] * s["updates"],
        num_envs=s["num_envs"],
        episode_length=s["episode_length"],
        unroll_length=s["rollouts"],
        batch_size=s["num_envs"] // s["mini_batches"],
        num_minibatches=s["mini_batches"],
        num_updates_per_batch=s["epochs"],
        learning_rate=s["learning_rate"],
        discounting=s["discount_factor"],
        gae_lambda=s["lambda"],
        clipping_epsilon=s["clip"],
        entropy_cost=s["entropy"],
        max_grad_norm=s["grad_norm_clip"],
        normalize_observations=True,
        bootstrap_on_timeout=True,
        network_factory=network_factory,
        seed=s["seed"],
        num_evals=1,
        run_evals=False,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trainer", choices=["skrl_like", "brax", "both"], default="both")
    parser.add_argument("--env", default="inverted_pendulum")
    parser.add_argument("--backend", default="positional")
    parser.add_argument("--num_envs", type=int, default=64)
    parser.add_argument("--rollouts", type=int, default=32)
    parser.add_argument("--updates", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    if args.trainer == "both":
        seconds = {}
        for trainer in ("skrl_like", "brax"):
            command = [sys.executable, __file__, "--trainer", trainer] + sys.argv[1:]
            line = subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
            print(line)
            seconds[trainer] = json.loads(line)["seconds"]
        print(json.dumps({"ratio_skrl_like_over_brax": round(seconds["skrl_like"] / seconds["brax"], 3)}))
        return
    s = settings(args)
    seconds = (run_skrl_like if args.trainer == "skrl_like" else run_brax)(s)
    steps = s["num_envs"] * s["rollouts"] * s["updates"]
    import jax

    record = {
        "benchmark": "brax_ppo",
        "trainer": args.trainer,
        "label": args.label,
        "device": str(jax.devices()[0]),
        **s,
        "env_steps": steps,
        "seconds": round(seconds, 3),
        "env_steps_per_second": round(steps / seconds, 1),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "a") as file:
        file.write(json.dumps(record) + "\n")
    print(json.dumps(record))


if __name__ == "__main__":
    main()
