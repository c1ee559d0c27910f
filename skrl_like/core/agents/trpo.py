"""TRPO's configuration, written once for both backends (neither backend adds a key: TRPO has no
``mixed_precision``, as in skrl 1.4.3)."""

from skrl_like.core.agents.config import experiment_defaults

# fmt: off
#: keys that skrl 1.4.3's published TRPO example sets although TRPO never reads them (see ``merge_config``)
IGNORED_KEYS = {
    "learning_rate": "the value function learns at cfg['value_learning_rate'] and the policy step is sized by "
    "cfg['max_kl_divergence']: set those instead",
}

TRPO_DEFAULT_CONFIG = {
    "rollouts": 16,                 # number of rollouts before updating
    "learning_epochs": 8,           # number of learning epochs during each update (value function)
    "mini_batches": 2,              # number of mini batches during each learning epoch (value function)

    "discount_factor": 0.99,        # discount factor (gamma)
    "lambda": 0.95,                 # TD(lambda) coefficient (lam) for computing returns and advantages

    "value_learning_rate": 1e-3,            # value learning rate
    "learning_rate_scheduler": None,        # learning rate scheduler of the value optimizer (torch: a torch.optim.lr_scheduler class; JAX: an optax schedule function; both: KLAdaptiveLR)
    "learning_rate_scheduler_kwargs": {},   # learning rate scheduler's kwargs (e.g. {"step_size": 1e-3})

    "state_preprocessor": None,             # state preprocessor class (e.g. RunningStandardScaler of the backend's resources.preprocessors)
    "state_preprocessor_kwargs": {},        # state preprocessor's kwargs (e.g. {"size": env.observation_space})
    "privileged_state_preprocessor": None,      # preprocessor class of the env's privileged states, where a value model/critic reads them (skrl 2.x's state_preprocessor)
    "privileged_state_preprocessor_kwargs": {}, # its kwargs (e.g. {"size": env.state_space})
    "value_preprocessor": None,             # value preprocessor class (e.g. RunningStandardScaler of the backend's resources.preprocessors)
    "value_preprocessor_kwargs": {},        # value preprocessor's kwargs (e.g. {"size": 1})

    "random_timesteps": 0,          # random exploration steps
    "learning_starts": 0,           # learning starts after this many steps

    "grad_norm_clip": 0.5,          # clipping coefficient for the norm of the gradients (value function)
    "value_loss_scale": 1.0,        # value loss scaling factor

    "damping": 0.1,                     # damping coefficient for computing the Hessian-vector product
    "max_kl_divergence": 0.01,          # maximum KL divergence between old and new policy
    "conjugate_gradient_steps": 10,     # maximum number of iterations for the conjugate gradient algorithm
    "max_backtrack_steps": 10,          # maximum number of backtracking steps during line search
    "accept_ratio": 0.5,                # accept ratio for the line search loss improvement
    "step_fraction": 1.0,               # fraction of the step size for the line search

    "rewards_shaper": None,         # rewards shaping function: Callable(reward, timestep, timesteps) -> reward
    "time_limit_bootstrap": False,  # bootstrap at timeout termination (episode truncation)

    "experiment": experiment_defaults(),  # directory, names, writing and checkpoint intervals, wandb
}
# fmt: on


def check_trpo_models(models: dict, gaussian_mixin: type) -> None:
    """TRPO's step needs a Gaussian policy's mean and log standard deviation, and a value model of its own
    (``gaussian_mixin``: the backend's ``GaussianMixin``); missing roles are left to the common check."""
    policy, value = models.get("policy"), models.get("value")
    if policy is not None and not isinstance(policy, gaussian_mixin):
        raise ValueError(
            f"TRPO: the 'policy' model is a {type(policy).__name__}, not a GaussianMixin model; the trust-region step "
            "needs the mean actions and log standard deviation of a Gaussian policy: define the policy with "
            "GaussianMixin (continuous Box actions)"
        )
    if policy is not None and value is policy:
        raise ValueError(
            "TRPO: the same model fills the 'policy' and 'value' roles; TRPO moves the policy by a natural-gradient "
            "step and fits the value function with its own optimizer, so shared models are not supported: "
            "pass a separate value model"
        )
