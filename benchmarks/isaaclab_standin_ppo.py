"""Isaac Lab-shaped PPO throughput (issue 28): torch or JAX PPO through the Runner on ``IsaacLabStandInEnv``
(60 observations, 8 actions: Isaac Lab's Ant) wrapped by ``wrap_env(env, wrapper="isaaclab")``, no user-written
wrapper, with Isaac Lab's Ant skrl config (``isaaclab_ant.ANT_AGENT``: rollouts 16, 4 epochs of 2 mini-batches,
[256, 128, 64] ELU networks, shared unless ``--separate``, ``RunningStandardScaler`` on states and values,
``KLAdaptiveLR``).

    .venv/bin/python benchmarks/isaaclab_standin_ppo.py --num-envs 1024 --timesteps 64
    .venv/bin/python benchmarks/isaaclab_standin_ppo.py --num-envs 4096 --separate --seed 1
    .venv/bin/python benchmarks/isaaclab_standin_ppo.py --backend jax --num-envs 4096
    .venv/bin/python benchmarks/isaaclab_standin_ppo.py --num-envs 4096 --timesteps 80 --compile-update
    .venv/bin/python benchmarks/isaaclab_standin_ppo.py --backend jax --num-envs 4096 --memory-storage device

Prints ONE JSON line (``isaaclab_ant.report``): the settings, ``env_steps_per_second`` over the whole run
(trainer steps times ``num_envs``, including the updates and, in JAX, the first compilation), the wall time, the
last write's mean step reward, and (torch) ``update_seconds``: each update's wall time (with ``--compile-update``
the first one includes ``torch.compile``'s compilation), ``median_step_seconds``: the median wall time of one trainer
step (from one ``pre_interaction`` to the next: act, env step, store; the steps that update or compile are the
outliers the median drops) and (JAX) the memory's storage, ``--memory-storage``: ``auto`` (the memory's
``on_device=None``), ``host`` or ``device``. The same line as ``torch_ppo_floor.py`` and the peers in
``peers/``.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Optional

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
from isaaclab_ant import ANT_AGENT, HIDDEN, add_arguments, report  # noqa: E402


def config(
    timesteps: int,
    directory: str,
    seed: int = 42,
    separate: bool = False,
    compile_update: bool = False,
    on_device: Optional[bool] = None,
) -> dict:
    """The Runner config of Isaac Lab's Ant skrl YAML (``isaaclab_ant.ANT_AGENT``)."""
    a = ANT_AGENT
    network = [{"name": "net", "input": "STATES", "layers": list(HIDDEN), "activations": "elu"}]
    return {
        "seed": seed,
        "models": {
            "separate": separate,
            "policy": {
                "class": "GaussianMixin",
                "clip_actions": False,
                "clip_log_std": True,
                "min_log_std": a["min_log_std"],
                "max_log_std": a["max_log_std"],
                "initial_log_std": a["initial_log_std"],
                "network": network,
                "output": "ACTIONS",
            },
            "value": {"class": "DeterministicMixin", "clip_actions": False, "network": network, "output": "ONE"},
        },
        "memory": {
            "class": "RandomMemory",
            "memory_size": -1,
            **({} if on_device is None else {"on_device": on_device}),
        },
        "agent": {
            "class": "PPO",
            **{key: a[key] for key in ("rollouts", "learning_epochs", "mini_batches", "discount_factor", "lambda")},
            "learning_rate": a["learning_rate"],
            "learning_rate_scheduler": "KLAdaptiveLR",
            "learning_rate_scheduler_kwargs": {"kl_threshold": a["kl_threshold_lr"]},
            "state_preprocessor": "RunningStandardScaler",
            "state_preprocessor_kwargs": None,
            "value_preprocessor": "RunningStandardScaler",
            "value_preprocessor_kwargs": None,
            "random_timesteps": 0,
            "learning_starts": 0,
            **{
                key: a[key]
                for key in (
                    "grad_norm_clip",
                    "ratio_clip",
                    "value_clip",
                    "clip_predicted_values",
                    "entropy_loss_scale",
                    "value_loss_scale",
                    "rewards_shaper_scale",
                )
            },
            "kl_threshold": 0.0,
            "time_limit_bootstrap": False,
            **({"compile_update": True} if compile_update else {}),
            "experiment": {"directory": directory, "write_interval": 16, "checkpoint_interval": 0},
        },
        "trainer": {
            "class": "SequentialTrainer",
            "timesteps": timesteps,
            "environment_info": "log",
            "disable_progressbar": True,
            "close_environment_at_exit": False,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["torch", "jax"], default="torch")
    parser.add_argument("--compile-update", action="store_true", help="torch: cfg['compile_update'] = True")
    parser.add_argument(
        "--memory-storage", choices=["auto", "host", "device"], default="auto", help="JAX: the memory's on_device"
    )
    add_arguments(parser)
    args = parser.parse_args()

    import skrl_like
    from skrl_like.envs import IsaacLabStandInEnv

    if args.backend == "torch":
        from skrl_like.torch.envs.wrappers import wrap_env
        from skrl_like.torch.utils.runner import Runner
    else:
        from skrl_like import config as skrl_config
        from skrl_like.jax.envs.wrappers import wrap_env
        from skrl_like.jax.utils.runner import Runner

        skrl_config.jax.backend = "jax"

    env = IsaacLabStandInEnv(num_envs=args.num_envs, device=args.device, seed=args.seed)
    env = wrap_env(env, wrapper="isaaclab", verbose=False)
    with tempfile.TemporaryDirectory() as directory:
        on_device = {"auto": None, "host": False, "device": True}[args.memory_storage]
        cfg = config(args.timesteps, directory, args.seed, args.separate, args.compile_update, on_device)
        runner = Runner(env, cfg)
        rows, update_seconds, step_starts = [], [], []
        runner.agent.result_listeners.append(rows.append)
        pre_interaction = runner.agent.pre_interaction

        def timed_pre_interaction(timestep: int, timesteps: int) -> None:
            step_starts.append(time.perf_counter())
            pre_interaction(timestep=timestep, timesteps=timesteps)

        runner.agent.pre_interaction = timed_pre_interaction
        if args.backend == "torch":
            update = runner.agent._update

            def timed_update(timestep: int, timesteps: int) -> None:
                started = time.perf_counter()
                update(timestep, timesteps)
                update_seconds.append(round(time.perf_counter() - started, 3))

            runner.agent._update = timed_update
        start = time.perf_counter()
        runner.run("train")
        seconds = time.perf_counter() - start
    report(
        "skrl_like",
        getattr(skrl_like, "__version__", "?"),
        args,
        seconds,
        backend=args.backend,
        compile_update=args.compile_update,
        median_step_seconds=round(statistics.median(b - a for a, b in zip(step_starts, step_starts[1:])), 5),
        memory_on_device=getattr(runner.agent.memory, "on_device", None),
        update_seconds=update_seconds,
        last_mean_step_reward=rows[-1].get("Reward / Instantaneous reward (mean)") if rows else None,
    )


if __name__ == "__main__":
    main()
