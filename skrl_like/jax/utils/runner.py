"""The YAML ``Runner`` (JAX): skrl-format configuration files build models, memories, agent and trainer.

Everything is in :mod:`skrl_like.core.runner`; JAX has no shared models, so ``models: {separate: False}`` builds one
model per role (with a warning), as in skrl.
"""

from skrl_like.core.runner import RunnerConfigError, RunnerCore


class Runner(RunnerCore):
    """Build and run the models, memories, agent and trainer a skrl-format configuration describes (JAX).

    :param env: a wrapped environment (``skrl_like.jax.envs.wrappers.wrap_env(...)``), single- or multi-agent.
    :param cfg: the configuration, e.g. ``Runner.load_cfg_from_yaml("ppo_cartpole.yaml")`` (see docs/runner.md).
    :raises RunnerConfigError: the layout or a name in the configuration is wrong (nothing is built).
    """

    backend = "jax"


__all__ = ["Runner", "RunnerConfigError"]
