"""IPPO's and MAPPO's configurations, written once for both backends (torch adds ``mixed_precision``)."""

import copy

from skrl_like.core.agents.config import experiment_defaults
from skrl_like.core.agents.ppo import PPO_DEFAULT_CONFIG
from skrl_like.core.agents.privileged import PRIVILEGED_PREPROCESSOR

#: keys that may be given per agent (``{"agent_0": 3e-4, "agent_1": 1e-3}``) or once for all agents (skrl 1.4.3)
IPPO_PER_AGENT_KEYS = (
    "learning_epochs",
    "mini_batches",
    "grad_norm_clip",
    "ratio_clip",
    "value_clip",
    "clip_predicted_values",
    "value_loss_scale",
    "entropy_loss_scale",
    "kl_threshold",
    "learning_rate",
    "learning_rate_scheduler",
    "learning_rate_scheduler_kwargs",
    "state_preprocessor",
    "state_preprocessor_kwargs",
    "value_preprocessor",
    "value_preprocessor_kwargs",
    "discount_factor",
    "lambda",
    "time_limit_bootstrap",
)
MAPPO_PER_AGENT_KEYS = IPPO_PER_AGENT_KEYS + ("shared_state_preprocessor", "shared_state_preprocessor_kwargs")

# the same keys and defaults as PPO (skrl 1.4.3's IPPO_DEFAULT_CONFIG is PPO's), without the privileged states'
# preprocessor (the multi-agent loop hands no privileged states: MAPPO's centralised critic reads the shared state)
IPPO_DEFAULT_CONFIG = {
    **{
        key: copy.deepcopy(value)
        for key, value in PPO_DEFAULT_CONFIG.items()
        if not key.startswith(PRIVILEGED_PREPROCESSOR)
    },
    "experiment": experiment_defaults(),
}


def _with_shared_state_preprocessor(config: dict) -> dict:
    merged = {}
    for key, value in config.items():
        merged[key] = copy.deepcopy(value)
        if key == "state_preprocessor_kwargs":
            merged["shared_state_preprocessor"] = None  # shared state preprocessor class (the centralised critic's)
            merged["shared_state_preprocessor_kwargs"] = {}  # its kwargs (e.g. {"size": env.state_space})
    merged["experiment"] = experiment_defaults()
    return merged


MAPPO_DEFAULT_CONFIG = _with_shared_state_preprocessor(IPPO_DEFAULT_CONFIG)
