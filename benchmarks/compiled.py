"""The whole run compiled: skrl_like's CompiledTrainer against rejax (issue 15), PPO, SAC or TD3, one JSON line per
run.

PPO (``--algorithm ppo``, the default):

Both train PPO on gymnax CartPole-v1 with the same shape: 4 envs x 128 steps per rollout, 4 epochs x 4 mini-batches,
64x64 tanh networks, lr 2.5e-4, gamma 0.99, lambda 0.95, clip 0.2, value coefficient 0.5, entropy 0.01, gradient
norm 0.5; 976 updates (499,712 env steps, the largest whole number of rollouts within 500k). Timed apart: the
compilation (``lower().compile()``), then the compiled run (env-steps/s over every run of a vmapped call). The final
return is the mean return of sampled-action episodes after training (rejax's own evaluation protocol: 128 episodes
in rejax; 32 with ``CompiledTrainer.evaluate_episodes`` for ours, ``stochastic_evaluation``), for single runs; for
vmapped runs the mean over runs of the last 10 updates' training episode returns (ours) and of rejax's evaluation
(16 episodes per run).

    python benchmarks/compiled.py --library ours --seed 0                 # the main venv
    /work/bench_venvs/rejax/bin/python benchmarks/compiled.py --library rejax --seed 0
    python benchmarks/compiled.py --library ours --seeds 8                # 8 seeds vmapped in one call

SAC (``--algorithm sac``) on gymnax Pendulum-v1 with rejax's own Pendulum SAC config (rejax's configs/gymnax/
pendulum.yaml) less observation normalisation (rejax normalises the collected observations, our preprocessor the
sampled batches: not the same thing, so neither does): 1 env, 10,000 env steps, replay of 10,000, updates from step
256 on (rejax's fill_buffer), batch 256, one gradient step per env step, Adam at 0.01 for the actor, the critics and
the entropy coefficient (initial alpha 1, target entropy -1), gamma 0.99, target update 0.02 per step (rejax's
polyak 0.98 weighs the target), 64x64 swish networks, no gradient clipping and no random warm-up actions. The
policies differ in form: rejax's squashes a Gaussian with tanh (log-probability corrected), ours is skrl's Gaussian
(mean 2 tanh(.), state-dependent log std in [-10, 2], actions clipped to the bounds). The final return: 32 (ours) /
128 (rejax) sampled-action episodes after training. ``--library ours_sequential`` trains the same agent with our
ordinary ``SequentialTrainer`` on gymnasium's Pendulum-v1 (one jitted act and update call per step).

    python benchmarks/compiled.py --algorithm sac --library ours --seed 0
    /work/bench_venvs/rejax/bin/python benchmarks/compiled.py --algorithm sac --library rejax --seed 0
    python benchmarks/compiled.py --algorithm sac --library ours_sequential --seed 0

TD3 (``--algorithm td3``) on gymnax Pendulum-v1 with rejax's own Pendulum TD3 config less observation normalisation
(as SAC): 1 env, 10,000 env steps, replay of 10,000, uniform random actions and no update before step 1,000
(rejax's fill_buffer: our random_timesteps and learning_starts), batch 100, one critic step per env step and a policy
step (with the polyak update of the three targets, tau 0.05: rejax's polyak 0.95) every second one, Adam at 1e-3,
gamma 0.99, exploration noise N(0, 0.3) at a constant scale, smoothing noise N(0, 0.2) clipped to 0.5, 64x64 swish
networks, a tanh policy scaled to the bounds. rejax clips each gradient element to 100 (never reached here); we clip
nothing. rejax's critic loss is half the squared error, ours the squared error (Adam does not see the factor). The
final return: 32 (ours) / 128 (rejax) episodes of the deterministic policy after training.

    python benchmarks/compiled.py --algorithm td3 --library ours --seed 0
    /work/bench_venvs/rejax/bin/python benchmarks/compiled.py --algorithm td3 --library rejax --seed 0

Set OMP_NUM_THREADS=1 and XLA_FLAGS=--xla_cpu_multi_thread_eigen=false for both (one intra-op thread).
"""

import argparse
import json
import time

import numpy as np

NUM_ENVS, ROLLOUTS, EPOCHS, MINI_BATCHES, UPDATES = 4, 128, 4, 4, 976
HYPER = {"lr": 2.5e-4, "gamma": 0.99, "lambda": 0.95, "clip": 0.2, "vf": 0.5, "ent": 0.01, "max_grad_norm": 0.5}
ENV_STEPS = NUM_ENVS * ROLLOUTS * UPDATES
# SAC on Pendulum-v1: rejax's configs/gymnax/pendulum.yaml (without observation normalisation)
SAC = {"timesteps": 10_000, "buffer": 10_000, "learning_starts": 256, "batch": 256, "lr": 0.01, "gamma": 0.99,
       "tau": 0.02, "hidden": 64, "gradient_steps": 1}  # fmt: skip
# TD3 on Pendulum-v1: rejax's configs/gymnax/pendulum.yaml (without observation normalisation)
TD3 = {"timesteps": 10_000, "buffer": 10_000, "learning_starts": 1000, "batch": 100, "lr": 1e-3, "gamma": 0.99,
       "tau": 0.05, "hidden": 64, "exploration": 0.3, "smoothing": 0.2, "smoothing_clip": 0.5, "policy_delay": 2}  # fmt: skip


def run_ours(seed: int, seeds: int) -> dict:
    import flax.linen as nn
    import gymnax

    from skrl_like import config
    from skrl_like.jax.agents.ppo import PPO, PPO_DEFAULT_CONFIG
    from skrl_like.jax.envs.wrappers import wrap_env
    from skrl_like.jax.memories import RandomMemory
    from skrl_like.jax.models import CategoricalMixin, DeterministicMixin, Model
    from skrl_like.jax.trainers import CompiledTrainer
    from skrl_like.utils import set_seed

    config.jax.backend = "jax"
    set_seed(seed)
    env = wrap_env(gymnax.make("CartPole-v1")[0], verbose=False, num_envs=NUM_ENVS)

    class Policy(CategoricalMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            CategoricalMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            x = nn.tanh(nn.Dense(64)(nn.tanh(nn.Dense(64)(inputs["states"]))))
            return nn.Dense(self.num_actions)(x), {}

    class Value(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            return nn.Dense(1)(nn.tanh(nn.Dense(64)(nn.tanh(nn.Dense(64)(inputs["states"]))))), {}

    models = {"policy": Policy(env.observation_space, env.action_space), "value": Value(env.observation_space, None)}
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {
        **PPO_DEFAULT_CONFIG,
        "rollouts": ROLLOUTS,
        "learning_epochs": EPOCHS,
        "mini_batches": MINI_BATCHES,
        "learning_rate": HYPER["lr"],
        "discount_factor": HYPER["gamma"],
        "lambda": HYPER["lambda"],
        "ratio_clip": HYPER["clip"],
        "value_loss_scale": HYPER["vf"],
        "entropy_loss_scale": HYPER["ent"],
        "grad_norm_clip": HYPER["max_grad_norm"],
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    agent = PPO(
        models=models,
        memory=RandomMemory(memory_size=ROLLOUTS, num_envs=NUM_ENVS),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
    )
    trainer_cfg = {"timesteps": ROLLOUTS * UPDATES, "disable_progressbar": True, "stochastic_evaluation": True}
    if seeds > 1:
        trainer_cfg["seeds"] = list(range(seed, seed + seeds))
    trainer = CompiledTrainer(env=env, agents=agent, cfg=trainer_cfg)
    metrics = trainer.train()
    if seeds > 1:
        final = float(np.nanmean(metrics["Reward / Total reward (mean)"][:, -10:]))
    else:
        final = float(np.mean(trainer.evaluate_episodes(32)))
    timings = trainer.timings
    return {
        "compile_s": timings["compile_seconds"],
        "run_s": timings["run_seconds"],
        "compile_cpu_s": timings["compile_cpu_seconds"],
        "run_cpu_s": timings["run_cpu_seconds"],
        "final": final,
    }


def run_ours_sac(seed: int, seeds: int, sequential: bool = False) -> dict:
    import flax.linen as nn
    import gymnasium
    import gymnax
    import jax.numpy as jnp

    from skrl_like import config
    from skrl_like.jax.agents.sac import SAC as SACAgent
    from skrl_like.jax.agents.sac import SAC_DEFAULT_CONFIG
    from skrl_like.jax.envs.wrappers import wrap_env
    from skrl_like.jax.memories import RandomMemory
    from skrl_like.jax.models import DeterministicMixin, GaussianMixin, Model
    from skrl_like.jax.trainers import CompiledTrainer, SequentialTrainer
    from skrl_like.utils import set_seed

    config.jax.backend = "jax"
    set_seed(seed)
    if sequential:
        env = wrap_env(gymnasium.make("Pendulum-v1"), verbose=False)
    else:
        env = wrap_env(gymnax.make("Pendulum-v1")[0], verbose=False, num_envs=1)
    width = SAC["hidden"]

    class Policy(GaussianMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            GaussianMixin.__init__(self, clip_actions=True, clip_log_std=True, min_log_std=-10, max_log_std=2)

        @nn.compact
        def __call__(self, inputs, role):
            x = nn.swish(nn.Dense(width)(nn.swish(nn.Dense(width)(inputs["states"]))))
            return 2 * nn.tanh(nn.Dense(self.num_actions)(x)), nn.Dense(self.num_actions)(x), {}

    class Critic(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            x = jnp.concatenate([inputs["states"], inputs["taken_actions"]], axis=-1)
            return nn.Dense(1)(nn.swish(nn.Dense(width)(nn.swish(nn.Dense(width)(x))))), {}

    roles = ("policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")
    models = {role: (Policy if role == "policy" else Critic)(env.observation_space, env.action_space) for role in roles}
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {
        **SAC_DEFAULT_CONFIG,
        "gradient_steps": SAC["gradient_steps"],
        "batch_size": SAC["batch"],
        "discount_factor": SAC["gamma"],
        "polyak": SAC["tau"],
        "actor_learning_rate": SAC["lr"],
        "critic_learning_rate": SAC["lr"],
        "entropy_learning_rate": SAC["lr"],
        "initial_entropy_value": 1.0,
        "learning_starts": SAC["learning_starts"],
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    agent = SACAgent(
        models=models,
        memory=RandomMemory(memory_size=SAC["buffer"], num_envs=1),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
    )
    trainer_cfg = {"timesteps": SAC["timesteps"], "disable_progressbar": True, "stochastic_evaluation": True}
    if not sequential:
        return compiled_pendulum_run(CompiledTrainer, env, agent, trainer_cfg, seed, seeds)
    trainer = SequentialTrainer(env=env, agents=agent, cfg={**trainer_cfg, "headless": True})
    start, start_cpu = time.perf_counter(), time.process_time()
    trainer.train()  # the first act and update calls compile (a fraction of a second each)
    run_s, run_cpu_s = time.perf_counter() - start, time.process_time() - start_cpu
    final = float(np.mean(trainer.evaluate_episodes(32)))
    return {"compile_s": 0.0, "run_s": run_s, "compile_cpu_s": 0.0, "run_cpu_s": run_cpu_s, "final": final}


def compiled_pendulum_run(CompiledTrainer, env, agent, trainer_cfg: dict, seed: int, seeds: int) -> dict:
    """Train ``agent`` compiled (``seeds`` > 1: that many runs vmapped from ``seed``); timings and the final return
    (one seed: 32 deterministic episodes; several: the mean of the runs' last 10 Pendulum episodes' training
    returns)."""
    if seeds > 1:
        trainer_cfg = {**trainer_cfg, "seeds": list(range(seed, seed + seeds))}
    trainer = CompiledTrainer(env=env, agents=agent, cfg=trainer_cfg)
    metrics = trainer.train()
    timings = trainer.timings
    if seeds > 1:
        final = float(np.nanmean(metrics["Reward / Total reward (mean)"][:, -2000:]))
    else:
        final = float(np.mean(trainer.evaluate_episodes(32)))
    return {
        "compile_s": timings["compile_seconds"],
        "run_s": timings["run_seconds"],
        "compile_cpu_s": timings["compile_cpu_seconds"],
        "run_cpu_s": timings["run_cpu_seconds"],
        "final": final,
    }


def run_ours_td3(seed: int, seeds: int) -> dict:
    import flax.linen as nn
    import gymnax
    import jax.numpy as jnp

    from skrl_like import config
    from skrl_like.jax.agents.td3 import TD3 as TD3Agent
    from skrl_like.jax.agents.td3 import TD3_DEFAULT_CONFIG
    from skrl_like.jax.envs.wrappers import wrap_env
    from skrl_like.jax.memories import RandomMemory
    from skrl_like.jax.models import DeterministicMixin, Model
    from skrl_like.jax.resources.noises import GaussianNoise
    from skrl_like.jax.trainers import CompiledTrainer
    from skrl_like.utils import set_seed

    config.jax.backend = "jax"
    set_seed(seed)
    env = wrap_env(gymnax.make("Pendulum-v1")[0], verbose=False, num_envs=1)
    width = TD3["hidden"]

    class Policy(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            x = nn.swish(nn.Dense(width)(nn.swish(nn.Dense(width)(inputs["states"]))))
            return 2 * nn.tanh(nn.Dense(self.num_actions)(x)), {}

    class Critic(DeterministicMixin, Model):
        def __init__(self, observation_space, action_space, device=None, **kwargs):
            Model.__init__(self, observation_space, action_space, device, **kwargs)
            DeterministicMixin.__init__(self)

        @nn.compact
        def __call__(self, inputs, role):
            x = jnp.concatenate([inputs["states"], inputs["taken_actions"]], axis=-1)
            return nn.Dense(1)(nn.swish(nn.Dense(width)(nn.swish(nn.Dense(width)(x))))), {}

    roles = ("policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")
    models = {role: (Policy if "policy" in role else Critic)(env.observation_space, env.action_space) for role in roles}
    for role, model in models.items():
        model.init_state_dict(role)
    cfg = {
        **TD3_DEFAULT_CONFIG,
        "batch_size": TD3["batch"],
        "discount_factor": TD3["gamma"],
        "polyak": TD3["tau"],
        "actor_learning_rate": TD3["lr"],
        "critic_learning_rate": TD3["lr"],
        "random_timesteps": TD3["learning_starts"],
        "learning_starts": TD3["learning_starts"],
        "exploration": {
            "noise": GaussianNoise(0, TD3["exploration"]),
            "initial_scale": 1.0,
            "final_scale": 1.0,
            "timesteps": None,
        },
        "policy_delay": TD3["policy_delay"],
        "smooth_regularization_noise": GaussianNoise(0, TD3["smoothing"]),
        "smooth_regularization_clip": TD3["smoothing_clip"],
        "experiment": {"write_interval": 0, "checkpoint_interval": 0},
    }
    agent = TD3Agent(
        models=models,
        memory=RandomMemory(memory_size=TD3["buffer"], num_envs=1),
        cfg=cfg,
        observation_space=env.observation_space,
        action_space=env.action_space,
    )
    return compiled_pendulum_run(CompiledTrainer, env, agent, {"timesteps": TD3["timesteps"], "disable_progressbar": True}, seed, seeds)


def run_rejax_td3(seed: int, seeds: int) -> dict:
    import jax
    import jax.numpy as jnp
    from rejax import TD3 as TD3Algorithm
    from rejax.evaluate import evaluate

    algo = TD3Algorithm.create(
        env="Pendulum-v1",
        actor_kwargs={"activation": "swish"},
        critic_kwargs={"activation": "swish"},
        num_envs=1,
        buffer_size=TD3["buffer"],
        fill_buffer=TD3["learning_starts"],
        batch_size=TD3["batch"],
        learning_rate=TD3["lr"],
        num_epochs=1,
        total_timesteps=TD3["timesteps"],
        eval_freq=TD3["timesteps"],
        skip_initial_evaluation=True,
        gamma=TD3["gamma"],
        polyak=1 - TD3["tau"],
        max_grad_norm=100,
        exploration_noise=TD3["exploration"],
        target_noise=TD3["smoothing"],
        target_noise_clip=TD3["smoothing_clip"],
        policy_delay=TD3["policy_delay"],
    )
    return _time_rejax(algo, seed, seeds, evaluate, jax, jnp, 200)


def run_rejax_sac(seed: int, seeds: int) -> dict:
    import jax
    import jax.numpy as jnp
    from rejax import SAC as SACAlgorithm
    from rejax.evaluate import evaluate

    algo = SACAlgorithm.create(
        env="Pendulum-v1",
        agent_kwargs={"activation": "swish", "hidden_layer_sizes": (SAC["hidden"], SAC["hidden"])},
        num_envs=1,
        buffer_size=SAC["buffer"],
        fill_buffer=SAC["learning_starts"],
        batch_size=SAC["batch"],
        learning_rate=SAC["lr"],
        num_epochs=SAC["gradient_steps"],
        total_timesteps=SAC["timesteps"],
        eval_freq=SAC["timesteps"],
        skip_initial_evaluation=True,
        gamma=SAC["gamma"],
        polyak=1 - SAC["tau"],
    )
    return _time_rejax(algo, seed, seeds, evaluate, jax, jnp, 200)


def _time_rejax(algo, seed, seeds, evaluate, jax, jnp, max_steps) -> dict:
    """Compile, then run rejax's train (its evaluation replaced by nothing in the timed call), then evaluate."""
    algo = algo.replace(eval_callback=lambda algo, ts, rng: jnp.zeros(()))
    keys = jnp.stack([jax.random.PRNGKey(s) for s in range(seed, seed + seeds)])
    train = jax.vmap(algo.train) if seeds > 1 else algo.train
    keys = keys if seeds > 1 else keys[0]
    start, start_cpu = time.perf_counter(), time.process_time()
    compiled = jax.jit(train).lower(keys).compile()
    compile_s, compile_cpu_s = time.perf_counter() - start, time.process_time() - start_cpu
    start, start_cpu = time.perf_counter(), time.process_time()
    ts, _ = jax.block_until_ready(compiled(keys))
    run_s, run_cpu_s = time.perf_counter() - start, time.process_time() - start_cpu

    def final_return(ts, key):
        _, returns = evaluate(algo.make_act(ts), key, algo.env, algo.env_params, 128 if seeds == 1 else 16, max_steps)
        return returns.mean()

    if seeds > 1:
        final = float(jax.vmap(final_return)(ts, keys).mean())
    else:
        final = float(final_return(ts, keys))
    return {
        "compile_s": compile_s,
        "run_s": run_s,
        "compile_cpu_s": compile_cpu_s,
        "run_cpu_s": run_cpu_s,
        "final": final,
    }


def run_rejax(seed: int, seeds: int) -> dict:
    import jax
    import jax.numpy as jnp
    from rejax import PPO
    from rejax.evaluate import evaluate

    algo = PPO.create(
        env="CartPole-v1",
        num_envs=NUM_ENVS,
        num_steps=ROLLOUTS,
        num_epochs=EPOCHS,
        num_minibatches=MINI_BATCHES,
        total_timesteps=ENV_STEPS,
        eval_freq=ENV_STEPS,
        skip_initial_evaluation=True,
        learning_rate=HYPER["lr"],
        gamma=HYPER["gamma"],
        gae_lambda=HYPER["lambda"],
        clip_eps=HYPER["clip"],
        vf_coef=HYPER["vf"],
        ent_coef=HYPER["ent"],
        max_grad_norm=HYPER["max_grad_norm"],
        agent_kwargs={"activation": "tanh", "hidden_layer_sizes": (64, 64)},
    )
    # training only in the timed call: the evaluation runs afterwards, outside it
    return _time_rejax(algo, seed, seeds, evaluate, jax, jnp, 500)


def main() -> None:
    global UPDATES, ENV_STEPS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", choices=("ppo", "sac", "td3"), default="ppo")
    parser.add_argument("--library", choices=("ours", "rejax", "ours_sequential"), required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=1, help="runs vmapped in one compiled call (seed, seed + 1, ...)")
    parser.add_argument("--updates", type=int, default=UPDATES, help="PPO updates (976: 499,712 env steps)")
    parser.add_argument("--timesteps", type=int, default=SAC["timesteps"], help="SAC, TD3: env steps (10,000)")
    args = parser.parse_args()
    if args.algorithm == "td3":
        if args.library == "ours_sequential":
            parser.error("--library ours_sequential is SAC's")
        TD3["timesteps"] = ENV_STEPS = args.timesteps
        config_name = "td3_pendulum_gymnax_rejax_config"
        result = (run_ours_td3 if args.library == "ours" else run_rejax_td3)(args.seed, args.seeds)
    elif args.algorithm == "sac":
        SAC["timesteps"] = ENV_STEPS = args.timesteps
        config_name = (
            "sac_pendulum_gymnax_rejax_config" if args.library != "ours_sequential" else "sac_pendulum_gymnasium"
        )
        run = {"ours": run_ours_sac, "rejax": run_rejax_sac}.get(args.library)
        result = run(args.seed, args.seeds) if run else run_ours_sac(args.seed, 1, sequential=True)
    else:
        if args.library == "ours_sequential":
            parser.error("--library ours_sequential is SAC's (PPO's ordinary path: benchmarks/ppo_cartpole.py)")
        UPDATES, ENV_STEPS = args.updates, NUM_ENVS * ROLLOUTS * args.updates
        config_name = "ppo_cartpole_gymnax_4x128_4x4"
        result = (run_ours if args.library == "ours" else run_rejax)(args.seed, args.seeds)
    import jax

    print(
        json.dumps(
            {
                "library": args.library,
                "algorithm": args.algorithm,
                "config": config_name,
                "seed": args.seed,
                "seeds": args.seeds,
                "env_steps": ENV_STEPS * args.seeds,
                "compile_s": round(result["compile_s"], 3),
                "run_s": round(result["run_s"], 3),
                "env_steps_per_s": round(ENV_STEPS * args.seeds / result["run_s"], 1),
                "compile_cpu_s": round(result["compile_cpu_s"], 3),
                "run_cpu_s": round(result["run_cpu_s"], 3),
                "env_steps_per_cpu_s": round(ENV_STEPS * args.seeds / result["run_cpu_s"], 1),
                "final_return": round(result["final"], 2),
                "device": jax.devices()[0].platform,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
