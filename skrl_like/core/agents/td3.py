"""TD3's configuration and the names of its update's checks, written once for both backends (torch adds
``mixed_precision`` and re-exports it as ``TD3_DEFAULT_CONFIG``; JAX re-exports it as it is)."""

from skrl_like.core.agents.config import experiment_defaults

# fmt: off
TD3_DEFAULT_CONFIG = {
    "gradient_steps": 1,            # gradient steps
    "batch_size": 64,               # training batch size

    "discount_factor": 0.99,        # discount factor (gamma)
    "polyak": 0.005,                # soft update hyperparameter (tau)

    "actor_learning_rate": 1e-3,    # actor learning rate
    "critic_learning_rate": 1e-3,   # critic learning rate
    "learning_rate_scheduler": None,        # learning rate scheduler class (torch: a torch.optim.lr_scheduler class; JAX: an optax schedule function)
    "learning_rate_scheduler_kwargs": {},   # learning rate scheduler's kwargs (e.g. {"step_size": 1e-3})

    "state_preprocessor": None,             # state preprocessor class (e.g. RunningStandardScaler of the backend's resources.preprocessors)
    "state_preprocessor_kwargs": {},        # state preprocessor's kwargs (e.g. {"size": env.observation_space})
    "privileged_state_preprocessor": None,      # preprocessor class of the env's privileged states, where a value model/critic reads them (skrl 2.x's state_preprocessor)
    "privileged_state_preprocessor_kwargs": {}, # its kwargs (e.g. {"size": env.state_space})

    "random_timesteps": 0,          # random exploration steps
    "learning_starts": 0,           # learning starts after this many steps

    "grad_norm_clip": 0,            # clipping coefficient for the norm of the gradients

    "exploration": {
        "noise": None,              # exploration noise (a Noise instance of the backend's resources.noises)
        "initial_scale": 1.0,       # initial scale for the noise
        "final_scale": 1e-3,        # final scale for the noise
        "timesteps": None,          # timesteps for the noise decay (None: the trainer's timesteps)
    },

    "policy_delay": 2,                      # policy delay update with respect to critic update
    "smooth_regularization_noise": None,    # smooth noise for regularization (a Noise instance)
    "smooth_regularization_clip": 0.5,      # clip for smooth regularization

    "rewards_shaper": None,         # rewards shaping function: Callable(reward, timestep, timesteps) -> reward

    "experiment": experiment_defaults(),  # directory, names, writing and checkpoint intervals, wandb
}
# fmt: on

#: what each gradient step checks for NaN/inf, in order (the sampled batch first: the environment's data)
STEP_QUANTITIES = (
    "sampled states",
    "sampled actions",
    "sampled rewards",
    "sampled next_states",
    "TD targets",
    "critic loss",
    "policy loss",
)

SMOOTHING_WARNING = (
    "TD3: no smooth_regularization_noise: the target policy is not smoothed (pass e.g. "
    "GaussianNoise(0, 0.2) as cfg['smooth_regularization_noise'] to reduce the variance of the targets)"
)


def delayed_step(critic_update: int, policy_delay: int) -> bool:
    """Whether the ``critic_update``-th critic update (counted from 1) is followed by the policy step and the
    polyak update of the targets."""
    return critic_update % policy_delay == 0
