"""The YAML ``Runner`` (torch): skrl-format configuration files build models, memories, agent and trainer.

Everything but the shared model is in :mod:`skrl_like.core.runner`.
"""

from typing import Any, Dict

from skrl_like.core.runner import RunnerConfigError, RunnerCore
from skrl_like.torch.utils.model_instantiators import shared_model


class Runner(RunnerCore):
    """Build and run the models, memories, agent and trainer a skrl-format configuration describes (torch).

    :param env: a wrapped environment (``skrl_like.torch.envs.wrappers.wrap_env(...)``), single- or multi-agent.
    :param cfg: the configuration, e.g. ``Runner.load_cfg_from_yaml("ppo_cartpole.yaml")`` (see docs/runner.md).
    :raises RunnerConfigError: the layout or a name in the configuration is wrong (nothing is built).
    """

    backend = "torch"
    shares_models = True

    def _shared_model(self, env: Any, uid: str, roles: Dict[str, dict]) -> Any:
        observation_space, action_space, _ = self._spaces(env, uid)
        structure = [role_cfg.pop("class") for role_cfg in roles.values()]
        try:
            return shared_model(
                observation_space=observation_space,
                action_space=action_space,
                device=env.device,
                structure=structure,
                roles=list(roles),
                parameters=list(roles.values()),
            )
        except (TypeError, ValueError) as error:
            raise RunnerConfigError(f"models (shared): {error}") from error


__all__ = ["Runner", "RunnerConfigError"]
