"""DQN's and DDQN's configuration, written once for both backends (torch adds ``mixed_precision``), and the parts of
their acting rule that hold no tensors.

DDQN has the same keys and defaults as DQN; the two dicts are separate objects (as in skrl), so that editing one
never changes the other.
"""

from typing import Any, Mapping, Optional

from skrl_like.core.agents.config import experiment_defaults
from skrl_like.core.agents.off_policy import epsilon

#: the finite flags of one gradient step, in the order both backends compute them (then the parameters after its
#: optimizer step: :func:`~skrl_like.core.agents.off_policy.gradient_step_flag_names`)
STEP_QUANTITIES = ("sampled states", "sampled next_states", "sampled rewards", "TD targets", "Q-network loss")


def _default_config() -> dict:
    # fmt: off
    return {
        "gradient_steps": 1,            # gradient steps per update
        "batch_size": 64,               # transitions sampled per gradient step

        "discount_factor": 0.99,        # discount factor (gamma)
        "polyak": 0.005,                # soft update factor (tau) of the target network, on target-update timesteps

        "learning_rate": 1e-3,                  # learning rate
        "learning_rate_scheduler": None,        # learning rate scheduler class (torch: a torch.optim.lr_scheduler class; JAX: an optax schedule function)
        "learning_rate_scheduler_kwargs": {},   # learning rate scheduler's kwargs (e.g. {"step_size": 1e-3})

        "state_preprocessor": None,             # state preprocessor class (e.g. RunningStandardScaler of the backend's resources.preprocessors)
        "state_preprocessor_kwargs": {},        # state preprocessor's kwargs (e.g. {"size": env.observation_space})

        "random_timesteps": 0,          # random exploration steps
        "learning_starts": 0,           # learning starts after this many steps

        "update_interval": 1,           # agent update interval (timesteps)
        "target_update_interval": 10,   # target network update interval (timesteps)

        "exploration": {
            "initial_epsilon": 1.0,     # initial epsilon for epsilon-greedy exploration
            "final_epsilon": 0.05,      # final epsilon for epsilon-greedy exploration
            "timesteps": 1000,          # time constant of the exponential epsilon decay (0 or None: always greedy)
        },

        "rewards_shaper": None,         # rewards shaping function: Callable(reward, timestep, timesteps) -> reward

        "experiment": experiment_defaults(),  # directory, names, writing and checkpoint intervals, wandb
    }
    # fmt: on


DQN_DEFAULT_CONFIG = _default_config()
DDQN_DEFAULT_CONFIG = _default_config()

_EXPLORATION_KEYS = ("initial_epsilon", "final_epsilon", "timesteps")


def check_exploration(algorithm: str, exploration: Mapping[str, Any]) -> None:
    """A user's ``exploration`` dict replaces the default one whole (skrl's shallow merge): every key must be there.

    :raises KeyError: naming the missing keys and the fix (a ``KeyError``, as skrl raises, with a message).
    """
    missing = [key for key in _EXPLORATION_KEYS if key not in exploration]
    if missing:
        raise KeyError(
            f"{algorithm} cfg['exploration'] lacks {missing}: a user's exploration dict replaces the default one "
            f"whole; give all of {list(_EXPLORATION_KEYS)}, e.g. {{**{algorithm}_DEFAULT_CONFIG['exploration'], ...}}"
        )


def exploration_epsilon(timestep: int, exploration: Mapping[str, Any]) -> Optional[float]:
    """The probability of a random action at ``timestep`` (exponential decay toward ``final_epsilon`` with time
    constant ``exploration["timesteps"]``), or ``None`` when exploration is off (``timesteps`` 0 or ``None``) and the
    agent always acts greedily, also during ``random_timesteps`` (skrl's order of the checks)."""
    if not exploration["timesteps"]:
        return None
    return epsilon(timestep, exploration)


def target_update_due(timestep: int, target_update_interval: int) -> bool:
    """The target network is blended toward the online one (polyak) at every gradient step of the updates made at
    timesteps that are multiples of ``target_update_interval`` (skrl's rule), and left alone at the others."""
    return timestep % target_update_interval == 0
