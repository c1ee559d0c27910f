"""SAC's configuration, written once for both backends (torch adds ``mixed_precision``; JAX re-exports it as is),
and what both backends check and name the same way: the stochastic policy and the finite flags of an update."""

from typing import Any, Tuple

from skrl_like.core.agents.config import experiment_defaults
from skrl_like.core.agents.off_policy import gradient_step_flag_names

#: SAC's models: the stochastic policy, two Q-functions and their targets (no target policy)
ROLES = ("policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2")

#: the finite flags of one gradient step, in the order they are checked (the sampled batch first)
STEP_QUANTITIES = ("sampled rewards", "sampled states", "sampled next_states", "critic loss", "policy loss")

# fmt: off
SAC_DEFAULT_CONFIG = {
    "gradient_steps": 1,            # gradient steps per environment step
    "batch_size": 64,               # transitions sampled per gradient step

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

    "grad_norm_clip": 0,            # clipping coefficient for the norm of the gradients (0: disabled)

    "learn_entropy": True,          # learn the entropy coefficient (alpha)
    "entropy_learning_rate": 1e-3,  # entropy coefficient's learning rate
    "initial_entropy_value": 0.2,   # initial entropy coefficient (alpha)
    "target_entropy": None,         # target entropy (None: -prod(action_space.shape) for Box actions)

    "rewards_shaper": None,         # rewards shaping function: Callable(reward, timestep, timesteps) -> reward

    "experiment": experiment_defaults(),  # directory, names, writing and checkpoint intervals, wandb
}
# fmt: on


def check_gaussian_policy(policy: Any, gaussian_classes: Tuple[type, ...]) -> None:
    """SAC's actor loss needs the log-density of reparameterised samples: refuse any other policy with the fix."""
    if not isinstance(policy, gaussian_classes):
        bases = ", ".join(cls.__name__ for cls in type(policy).__mro__[1:] if cls.__name__.endswith("Mixin"))
        raise ValueError(
            f"SAC needs a stochastic Gaussian policy for the 'policy' role (a model built on "
            f"{' or '.join(cls.__name__ for cls in gaussian_classes)}); got {type(policy).__name__}"
            f"{f' ({bases})' if bases else ''}. Give the policy GaussianMixin, "
            "or use TD3/DDPG for a deterministic policy"
        )


def step_flag_names(gradient_steps: int, learn_entropy: bool, parameters_note: str) -> list:
    """The names of an update's finite flags, per gradient step: the sampled batch, the losses, then the parameters
    after the step's optimizer steps (``parameters_note`` says which are non-finite)."""
    quantities = STEP_QUANTITIES + (("entropy loss",) if learn_entropy else ())
    return gradient_step_flag_names(gradient_steps, quantities, parameters_note)
