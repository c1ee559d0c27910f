"""A2C's configuration, written once for both backends (torch adds ``mixed_precision``; JAX re-exports it as
``A2C_DEFAULT_CONFIG``)."""

from skrl_like.core.agents.config import experiment_defaults

# fmt: off
A2C_DEFAULT_CONFIG = {
    "rollouts": 16,                 # number of rollouts before updating
    "mini_batches": 1,              # number of mini batches to use for updating (one pass, no epochs)

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

    "grad_norm_clip": 0.5,          # clipping coefficient for the norm of the gradients

    "entropy_loss_scale": 0.0,      # entropy loss scaling factor

    "rewards_shaper": None,         # rewards shaping function: Callable(reward, timestep, timesteps) -> reward
    "time_limit_bootstrap": False,  # bootstrap at timeout termination (episode truncation)

    "experiment": experiment_defaults(),  # directory, names, writing and checkpoint intervals, wandb
}
# fmt: on
