"""Shared benchmark settings: every benchmark script (ours and the peers) reads its hyperparameters,
network architecture, environment construction and evaluation protocol from here, so that all
libraries are compared on exactly the same problem.

This module must stay importable without torch or jax (it only needs numpy + gymnasium), because it is
imported by scripts running in the torch-only, jax-only (no torch) and main virtual environments.

Naming: keys of ``CONFIGS[...]["ppo"]`` are skrl 1.4.3 ``PPO_DEFAULT_CONFIG`` keys; the SB3 translation
is ``sb3_ppo_kwargs()``. Anything a config does not list is skrl 1.4.3's PPO default, written out here
explicitly so nothing is implicit.

Timestep convention: ``--timesteps`` counts *environment* steps summed over all sub-environments (SB3's
``total_timesteps`` convention). skrl's trainer ``timesteps`` counts vector steps (one step of all N
envs), so it is ``env_steps // num_envs``. The request is rounded UP to a whole number of PPO updates
(see :func:`plan`), so every library performs exactly the same number of updates on exactly the same
number of environment steps, and the reported ``timesteps`` is that rounded number.
"""

from __future__ import annotations

import math
import os

# --------------------------------------------------------------------------------------------------
# single intra-op thread for every library. Scripts set these themselves BEFORE importing numpy/torch/
# jax (import order matters); the dict is kept here so there is one written-down source of truth.
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false",
    "JAX_PLATFORMS": "cpu",
    "TF_CPP_MIN_LOG_LEVEL": "3",
}


def apply_thread_env() -> None:
    """Force :data:`THREAD_ENV` into ``os.environ`` (call before importing numpy/torch/jax)."""
    os.environ.update(THREAD_ENV)


apply_thread_env()

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402

# --------------------------------------------------------------------------------------------------
ENV_ID = "CartPole-v1"

# Policy and value function are two SEPARATE MLPs (no shared trunk), trained by one Adam optimizer on
# the sum of the losses (skrl torch, SB3, skrl_like). skrl 1.4.3's JAX PPO necessarily uses one Adam per
# model with per-model gradient clipping -- an inherent difference of that backend.
ARCHITECTURE = {
    "policy": {"hidden": [64, 64], "activation": "tanh", "output": "num_actions logits (categorical)"},
    "value": {"hidden": [64, 64], "activation": "tanh", "output": "1 (state value)"},
    # orthogonal weights, zero biases: hidden gain sqrt(2), policy head 0.01, value head 1.0
    # (= SB3 ortho_init=True = CleanRL layer_init; written explicitly in the skrl/skrl_like models)
    "init": {
        "weights": "orthogonal",
        "hidden_gain": math.sqrt(2),
        "policy_head_gain": 0.01,
        "value_head_gain": 1.0,
        "bias": 0.0,
    },
    "shared": False,
}

# Adam: skrl 1.4.3 uses torch.optim.Adam / optax.adam defaults (eps 1e-8); SB3's own default is 1e-5,
# so the SB3 peer passes eps explicitly.
OPTIMIZER = {"name": "Adam", "eps": 1e-8, "betas": (0.9, 0.999)}

# skrl 1.4.3 PPO_DEFAULT_CONFIG values used unchanged by both configurations (listed for the record)
_SKRL_PPO_DEFAULTS_KEPT = {
    "learning_rate_scheduler": None,  # constant learning rate
    "state_preprocessor": None,
    "value_preprocessor": None,
    "random_timesteps": 0,
    "learning_starts": 0,
    "grad_norm_clip": 0.5,  # = SB3 max_grad_norm default
    "ratio_clip": 0.2,
    "value_clip": 0.2,  # unused: clip_predicted_values is False
    "clip_predicted_values": False,  # SB3 clip_range_vf=None
    "entropy_loss_scale": 0.0,  # SB3 ent_coef
    "kl_threshold": 0,  # no KL early stopping; SB3 target_kl=None
    "rewards_shaper": None,
    "time_limit_bootstrap": False,  # truncation treated like termination (SB3 adapter follows this)
    "mixed_precision": False,
}

CONFIGS = {
    # CleanRL ppo.py CartPole shape: 4 envs x 128 steps, 4 epochs x 4 mini-batches (batch 512, mb 128).
    # CleanRL itself also uses lr annealing, ent_coef 0.01, value clipping and 0.5*MSE*0.5; here the
    # skrl defaults above apply instead (constant lr, no entropy bonus, no value clipping, 0.5*MSE).
    "cleanrl": {
        "num_envs": 4,
        "ppo": {
            **_SKRL_PPO_DEFAULTS_KEPT,
            "rollouts": 128,
            "learning_epochs": 4,
            "mini_batches": 4,
            "discount_factor": 0.99,
            "lambda": 0.95,
            "learning_rate": 1e-3,
            "ratio_clip": 0.2,
            "value_loss_scale": 0.5,  # = SB3 vf_coef 0.5 on a plain MSE
        },
    },
    # rl-baselines3-zoo hyperparams/ppo.yml "CartPole-v1" (tuned): n_envs 8, n_steps 32, batch_size 256,
    # n_epochs 20, gamma 0.98, gae_lambda 0.8, ent_coef 0.0, learning_rate lin_0.001, clip_range lin_0.2.
    # Kept CONSTANT here (lr 1e-3, clip 0.2): skrl 1.4.3 has no linear schedule for either.
    "zoo": {
        "num_envs": 8,
        "ppo": {
            **_SKRL_PPO_DEFAULTS_KEPT,
            "rollouts": 32,
            "learning_epochs": 20,
            "mini_batches": 1,
            "discount_factor": 0.98,
            "lambda": 0.8,
            "learning_rate": 1e-3,
            "ratio_clip": 0.2,
            "value_loss_scale": 0.5,  # zoo leaves SB3's vf_coef at its default 0.5
        },
    },
}

# evaluation protocol: mean undiscounted return of this many deterministic (argmax) episodes,
# played by as many parallel sub-envs of a fresh sync vector env seeded with EVAL_SEED_OFFSET + seed
EVAL_EPISODES = 20
EVAL_SEED_OFFSET = 10_000

# bookkeeping switched off everywhere (no TensorBoard events, no checkpoints, no progress bars)
SKRL_EXPERIMENT = {"write_interval": 0, "checkpoint_interval": 0, "wandb": False}
SKRL_TRAINER_CFG = {"headless": True, "disable_progressbar": True, "close_environment_at_exit": False}


# --------------------------------------------------------------------------------------------------
class SqueezeDiscreteActions(gymnasium.vector.VectorActionWrapper):
    """Reshape Discrete actions from ``(num_envs, 1)`` (skrl's flat layout) to ``(num_envs,)``.

    gymnasium >= 1.0 vector envs reject ``(num_envs, 1)`` for a Discrete single-action space. Applied for
    every library (a no-op for actions that are already ``(num_envs,)``).
    """

    def actions(self, actions):
        return np.asarray(actions).reshape(self.num_envs)


def make_env(num_envs: int, seed: int | None = None, env_id: str = ENV_ID):
    """The one environment construction used by every benchmark script.

    gymnasium sync vector env, "same-step" autoreset (the terminal step returns the reset observation and
    ``info["final_obs"]``; skrl 1.4.3 assumes this), Discrete actions squeezed to ``(num_envs,)``.
    If ``seed`` is given, the env is reset once with it (sub-env ``i`` gets ``seed + i``) and the action
    space is seeded; later resets continue those RNG streams.
    """
    env = gymnasium.make_vec(
        env_id,
        num_envs=num_envs,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP},
    )
    env = SqueezeDiscreteActions(env)
    if seed is not None:
        env.reset(seed=seed)
        env.action_space.seed(seed)
    return env


def plan(config: str, timesteps: int) -> dict:
    """Round a requested env-step budget up to whole PPO updates.

    Returns ``num_envs``, ``rollouts``, ``updates``, ``vector_steps`` (skrl trainer ``timesteps``) and
    ``env_steps`` (= SB3 ``total_timesteps`` = the reported ``timesteps``).
    """
    cfg = CONFIGS[config]
    n, t = cfg["num_envs"], cfg["ppo"]["rollouts"]
    updates = max(1, math.ceil(timesteps / (n * t)))
    return {"num_envs": n, "rollouts": t, "updates": updates, "vector_steps": updates * t, "env_steps": updates * t * n}


def sb3_ppo_kwargs(config: str) -> dict:
    """stable-baselines3 ``PPO(...)`` keyword arguments equivalent to ``CONFIGS[config]`` (no torch import:
    the caller adds ``policy_kwargs["activation_fn"] = torch.nn.Tanh``)."""
    cfg = CONFIGS[config]
    p = cfg["ppo"]
    n_batch = cfg["num_envs"] * p["rollouts"]
    assert n_batch % p["mini_batches"] == 0
    return {
        "learning_rate": p["learning_rate"],
        "n_steps": p["rollouts"],
        "batch_size": n_batch // p["mini_batches"],
        "n_epochs": p["learning_epochs"],
        "gamma": p["discount_factor"],
        "gae_lambda": p["lambda"],
        "clip_range": p["ratio_clip"],
        "clip_range_vf": p["value_clip"] if p["clip_predicted_values"] else None,
        "normalize_advantage": True,  # NOTE: SB3 normalizes per mini-batch, skrl over the whole rollout
        "ent_coef": p["entropy_loss_scale"],
        "vf_coef": p["value_loss_scale"],
        "max_grad_norm": p["grad_norm_clip"],
        "target_kl": None if not p["kl_threshold"] else p["kl_threshold"],
        "policy_kwargs": {
            "net_arch": {"pi": ARCHITECTURE["policy"]["hidden"], "vf": ARCHITECTURE["value"]["hidden"]},
            "ortho_init": ARCHITECTURE["init"]["weights"] == "orthogonal",
            "share_features_extractor": ARCHITECTURE["shared"],
            "optimizer_kwargs": {"eps": OPTIMIZER["eps"]},
        },
    }
