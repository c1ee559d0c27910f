"""Run the resume scenarios of tests/core/test_resume.py in a process of their own (a resumed run must not share
anything with the run that saved but the checkpoint file).

    python tests/resume_driver.py BACKEND ALGORITHMS MODE OUT_DIR [STEPS]

MODE ``full`` trains each algorithm for ``2 * STEPS`` steps and stores its parameters (``<algo>_full.npz``), then
trains a fresh set-up for ``STEPS`` steps and writes a full-state checkpoint (``<algo>_half.ckpt``). MODE ``resume``
builds the same set-up for ``2 * STEPS`` steps, restores that checkpoint, trains on and stores the parameters
(``<algo>_resumed.npz``). MODE ``killable`` trains ``2 * STEPS`` slow steps with a full-state checkpoint every
``STEPS // 4`` (to be killed), MODE ``restart`` restores the killed run's last checkpoint and finishes it.
"""

import os
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

from examples import load_example  # noqa: E402
from skrl_like.utils import set_seed  # noqa: E402

ENVS = {"ppo": "CartPole-v1", "dqn": "CartPole-v1", "sac": "Pendulum-v1", "td3": "Pendulum-v1"}


def slow_rewards(rewards, timestep, timesteps):
    time.sleep(0.01)  # so that a test can kill the run between two checkpoints
    return rewards


def build(
    backend,
    algorithm,
    timesteps,
    directory,
    checkpoint_interval=0,
    slow=False,
    ppo_cfg=None,
    experiment=None,
    trainer_cfg=None,
    num_envs=2,
    trainer="SequentialTrainer",
    evaluation_env=False,
):
    """The trainer of one scenario: the repository's example agent made tiny, on ``num_envs`` sync sub-envs.

    ``ppo_cfg``, ``experiment`` and ``trainer_cfg`` update the PPO config, the experiment dict and the trainer cfg;
    ``trainer`` names the trainer class; ``evaluation_env`` gives it a second env built like the training one.
    """
    if backend == "torch":
        from skrl_like.torch import trainers
        from skrl_like.torch.envs.wrappers import wrap_env
        from skrl_like.torch.resources.preprocessors import RunningStandardScaler
        from skrl_like.torch.resources.schedulers import KLAdaptiveLR
    else:
        from skrl_like.jax import trainers
        from skrl_like.jax.envs.wrappers import wrap_env
        from skrl_like.jax.resources.preprocessors import RunningStandardScaler
        from skrl_like.jax.resources.schedulers import KLAdaptiveLR

    set_seed(7)
    env = wrap_env(gym.make_vec(ENVS[algorithm], num_envs=num_envs, vectorization_mode="sync"))
    evaluation = None
    if evaluation_env:
        evaluation = wrap_env(gym.make_vec(ENVS[algorithm], num_envs=num_envs, vectorization_mode="sync"))
    experiment = {
        "directory": directory,
        "experiment_name": algorithm,
        "write_interval": 4,
        "checkpoint_interval": checkpoint_interval,
        **(experiment or {}),
    }
    if algorithm == "ppo":
        example = load_example(backend, "ppo_cartpole")
        # the KL-adaptive learning rate and the preprocessors are state a resume must carry
        example.PPO_DEFAULT_CONFIG = {
            **example.PPO_DEFAULT_CONFIG,
            "learning_rate_scheduler": KLAdaptiveLR,
            "learning_rate_scheduler_kwargs": {"kl_threshold": 0.002},
            "state_preprocessor": RunningStandardScaler,
            "state_preprocessor_kwargs": {"size": env.observation_space},
            "value_preprocessor": RunningStandardScaler,
            "value_preprocessor_kwargs": {"size": 1},
            "rewards_shaper": slow_rewards if slow else None,
            **(ppo_cfg or {}),
        }
        agent = example.make_agent(env, rollouts=8, experiment=experiment)
    elif algorithm == "dqn":
        example = load_example(backend, "dqn_cartpole")
        example.HYPERPARAMETERS.update(
            memory_size=64,
            batch_size=8,
            learning_starts=10,
            target_update_interval=1,  # the target moves within the short run (the example copies every 500)
            polyak=0.01,
            exploration={"initial_epsilon": 1.0, "timesteps": 40, "final_epsilon": 0.05},
        )
        agent = example.make_agent(env, experiment=experiment)
    elif algorithm == "td3":  # exploration timesteps None: the noise decays over the first start's total
        example = load_example(backend, "td3_pendulum")
        agent = example.make_agent(
            env, experiment=experiment, hidden=(16, 16), memory_size=64, batch_size=8, learning_starts=10
        )
    else:
        example = load_example(backend, "sac_pendulum")
        agent = example.make_agent(
            env, experiment=experiment, hidden=(16, 16), memory_size=64, batch_size=8, learning_starts=10
        )
    cfg = {"timesteps": timesteps, "headless": True, "disable_progressbar": True, "close_environment_at_exit": False}
    cfg.update(trainer_cfg or {})
    trainer_class = getattr(trainers, trainer)
    return trainer_class(env=env, agents=agent, cfg=cfg, evaluation_env=evaluation)


def parameters(trainer):
    """Every model's parameters (and the optimizers' and preprocessors' states) as named arrays."""
    agent = trainer.agents
    arrays = {}
    for name, module in agent.checkpoint_modules.items():
        arrays.update(_flatten(agent._get_internal_value(module), name))
    for name in ("_learning_rate", "scheduler"):  # the KL-adapted learning rate (JAX attribute, torch scheduler)
        value = getattr(agent, name, None)
        if name == "scheduler" and value is not None:
            value = value.get_last_lr()[0]
        if value is not None:
            arrays["learning_rate"] = np.asarray(value)
    return arrays


def _flatten(value, prefix):
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}/{key}"))
        return out
    if isinstance(value, (list, tuple)):
        out = {}
        for index, item in enumerate(value):
            out.update(_flatten(item, f"{prefix}/{index}"))
        return out
    if hasattr(value, "detach"):
        return {prefix: value.detach().cpu().numpy()}
    if hasattr(value, "shape") or isinstance(value, (int, float)):
        return {prefix: np.asarray(value)}
    if hasattr(value, "_asdict"):
        return _flatten(value._asdict(), prefix)
    return {}


def main():
    backend, algorithms, mode, out = sys.argv[1], sys.argv[2].split(","), sys.argv[3], sys.argv[4]
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 36
    from skrl_like.core.checkpoints import find_checkpoint

    for algorithm in algorithms:
        if mode == "full":
            trainer = build(backend, algorithm, steps if algorithm == "ppo" else 2 * steps, os.path.join(out, "full"))
            trainer.train()
            if algorithm == "ppo":  # two train() calls: the second continues the run
                trainer.timesteps = 2 * steps
                trainer.train()
            np.savez(os.path.join(out, f"{algorithm}_full.npz"), **parameters(trainer))
            trainer = build(backend, algorithm, steps, os.path.join(out, "half"))
            trainer.train()
            trainer.save(os.path.join(out, f"{algorithm}_half.ckpt"))
        elif mode == "resume":
            trainer = build(backend, algorithm, 2 * steps, os.path.join(out, "resumed"))
            trainer.restore(os.path.join(out, f"{algorithm}_half.ckpt"))
            trainer.train()
            np.savez(os.path.join(out, f"{algorithm}_resumed.npz"), **parameters(trainer))
        elif mode == "killable":
            trainer = build(backend, algorithm, 2 * steps, os.path.join(out, "killed"), steps // 4, slow=True)
            trainer.train()
        elif mode == "restart":
            trainer = build(backend, algorithm, 2 * steps, os.path.join(out, "killed"), steps // 4, slow=True)
            trainer.restore(find_checkpoint(os.path.join(out, "killed", algorithm)))
            trainer.train()
            np.savez(os.path.join(out, f"{algorithm}_restarted.npz"), **parameters(trainer))
    print("done", flush=True)


if __name__ == "__main__":
    main()
