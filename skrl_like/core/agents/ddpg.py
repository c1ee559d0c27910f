"""DDPG's configuration, written once for both backends (torch adds ``mixed_precision``; JAX re-exports it as is)."""

from skrl_like.core.agents.config import experiment_defaults

# fmt: off
DDPG_DEFAULT_CONFIG = {
    "gradient_steps": 1,            # gradient steps per environment step
    "batch_size": 64,               # transitions sampled from the replay memory per gradient step

    "discount_factor": 0.99,        # discount factor (gamma)
    "polyak": 0.005,                # soft update factor of the target networks (tau)

    "actor_learning_rate": 1e-3,    # actor (policy) learning rate
    "critic_learning_rate": 1e-3,   # critic learning rate
    "learning_rate_scheduler": None,        # learning rate scheduler class (torch) / schedule function (JAX), one per optimizer
    "learning_rate_scheduler_kwargs": {},   # learning rate scheduler's kwargs (e.g. {"step_size": 1e-3})

    "state_preprocessor": None,             # state preprocessor class (e.g. RunningStandardScaler of the backend's resources.preprocessors)
    "state_preprocessor_kwargs": {},        # state preprocessor's kwargs (e.g. {"size": env.observation_space})
    "privileged_state_preprocessor": None,      # preprocessor class of the env's privileged states, where a value model/critic reads them (skrl 2.x's state_preprocessor)
    "privileged_state_preprocessor_kwargs": {}, # its kwargs (e.g. {"size": env.state_space})

    "random_timesteps": 0,          # random exploration steps
    "learning_starts": 0,           # learning starts after this many steps

    "grad_norm_clip": 0,            # clipping coefficient for the norm of the gradients (<= 0 disables)

    "exploration": {
        "noise": None,              # exploration noise (a Noise instance, e.g. OrnsteinUhlenbeckNoise)
        "initial_scale": 1.0,       # initial scale for the noise
        "final_scale": 1e-3,        # final scale for the noise
        "timesteps": None,          # timesteps for the noise decay (None: the trainer's timesteps)
    },

    "rewards_shaper": None,         # rewards shaping function: Callable(reward, timestep, timesteps) -> reward

    "experiment": experiment_defaults(),  # directory, names, writing and checkpoint intervals, wandb
}
# fmt: on
