"""RPO's configuration, written once for both backends: PPO's keys plus ``alpha`` (torch adds ``mixed_precision``;
JAX re-exports it as ``RPO_DEFAULT_CONFIG``)."""

import gymnasium

from skrl_like.core.agents.config import experiment_defaults

# fmt: off
RPO_DEFAULT_CONFIG = {
    "rollouts": 16,                 # number of rollouts before updating
    "learning_epochs": 8,           # number of learning epochs during each update
    "mini_batches": 2,              # number of mini batches during each learning epoch

    "alpha": 0.5,                   # half-width of the uniform perturbation the policy adds to its mean actions: U(-alpha, alpha)

    "discount_factor": 0.99,        # discount factor (gamma)
    "lambda": 0.95,                 # TD(lambda) coefficient (lam) for computing returns and advantages

    "learning_rate": 1e-3,                  # learning rate
    "learning_rate_scheduler": None,        # learning rate scheduler class (torch: a torch.optim.lr_scheduler class; JAX: an optax schedule function; both: KLAdaptiveLR)
    "learning_rate_scheduler_kwargs": {},   # learning rate scheduler's kwargs (e.g. {"step_size": 1e-3})

    "state_preprocessor": None,             # state preprocessor class (e.g. RunningStandardScaler of the backend's resources.preprocessors)
    "state_preprocessor_kwargs": {},        # state preprocessor's kwargs (e.g. {"size": env.observation_space})
    "value_preprocessor": None,             # value preprocessor class (e.g. RunningStandardScaler of the backend's resources.preprocessors)
    "value_preprocessor_kwargs": {},        # value preprocessor's kwargs (e.g. {"size": 1})

    "random_timesteps": 0,          # random exploration steps
    "learning_starts": 0,           # learning starts after this many steps

    "grad_norm_clip": 0.5,              # clipping coefficient for the norm of the gradients
    "ratio_clip": 0.2,                  # clipping coefficient for computing the clipped surrogate objective
    "value_clip": 0.2,                  # clipping coefficient for computing the value loss (if clip_predicted_values is True)
    "clip_predicted_values": False,     # clip predicted values during value loss computation

    "entropy_loss_scale": 0.0,      # entropy loss scaling factor
    "value_loss_scale": 1.0,        # value loss scaling factor

    "kl_threshold": 0,              # KL divergence threshold for early stopping

    "rewards_shaper": None,         # rewards shaping function: Callable(reward, timestep, timesteps) -> reward
    "time_limit_bootstrap": False,  # bootstrap at timeout termination (episode truncation)

    "experiment": experiment_defaults(),  # directory, names, writing and checkpoint intervals, wandb
}
# fmt: on


def check_action_space(action_space: object) -> None:
    """RPO perturbs the mean of continuous actions: any gymnasium space other than ``Box`` is rejected (a shape or
    size given instead of a space cannot be checked and is accepted)."""
    if isinstance(action_space, gymnasium.Space) and not isinstance(action_space, gymnasium.spaces.Box):
        raise ValueError(
            f"RPO: the action space {action_space} is not a Box; RPO perturbs the mean of a Gaussian policy's "
            "continuous actions by U(-alpha, alpha): use PPO (or A2C) for discrete action spaces"
        )
