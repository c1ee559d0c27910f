"""PPO's configuration, written once for both backends (each backend adds only its own keys, e.g. torch's
``mixed_precision``, and re-exports it as ``PPO_DEFAULT_CONFIG``)."""

from skrl_like.core.agents.config import experiment_defaults

# fmt: off
PPO_DEFAULT_CONFIG = {
    "rollouts": 16,                 # number of rollouts before updating
    "learning_epochs": 8,           # number of learning epochs during each update
    "mini_batches": 2,              # number of mini batches during each learning epoch

    "discount_factor": 0.99,        # discount factor (gamma)
    "lambda": 0.95,                 # TD(lambda) coefficient (lam) for computing returns and advantages

    "learning_rate": 1e-3,                  # learning rate
    "learning_rate_scheduler": None,        # learning rate scheduler class (torch: a torch.optim.lr_scheduler class; JAX: an optax schedule function; both: KLAdaptiveLR)
    "learning_rate_scheduler_kwargs": {},   # learning rate scheduler's kwargs (e.g. {"step_size": 1e-3})

    "state_preprocessor": None,             # state preprocessor class (e.g. RunningStandardScaler of the backend's resources.preprocessors)
    "state_preprocessor_kwargs": {},        # state preprocessor's kwargs (e.g. {"size": env.observation_space})
    "privileged_state_preprocessor": None,      # preprocessor class of the env's privileged states, where a value model/critic reads them (skrl 2.x's state_preprocessor)
    "privileged_state_preprocessor_kwargs": {}, # its kwargs (e.g. {"size": env.state_space})
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
