"""Environments skrl_like ships for its examples and tuned files, registered with gymnasium on import.

``gymnasium.make("skrl_like.envs:AmpPendulum-v0")`` (gymnasium's ``module:id`` syntax imports this package first),
or ``env: {id: "skrl_like.envs:AmpPendulum-v0", num_envs: 8}`` in a YAML file of the command line; likewise
``skrl_like.envs:PendulumNoVel-v1``, Pendulum-v1 without its velocity (:mod:`skrl_like.envs.pendulum_novel`). NumPy and
gymnasium only: either backend trains on them.

One exception, torch only: :class:`~skrl_like.envs.isaaclab_standin.IsaacLabStandInEnv`, an environment with Isaac
Lab's contract (batched torch tensors, observation groups) for the ``"isaaclab"`` wrapper, as
``skrl_like.envs.IsaacLabStandInEnv`` or ``gymnasium.make("skrl_like.envs:IsaacLabStandIn-v0", num_envs=64)``.
Importing this package does not import torch: the name is resolved when first used.

JAX only: :class:`~skrl_like.envs.masked_gymnax.ObservationMask` (``masked_cartpole()``), a gymnax environment
that shows only some observation entries, imported from its module.

And :func:`~skrl_like.envs.playground.load_playground_env`, a MuJoCo Playground task by name (needs the
``playground`` extra), as ``skrl_like.envs.load_playground_env``.
"""

from typing import Any

import gymnasium

from skrl_like.envs.amp_pendulum import EPISODE_STEPS as _AMP_PENDULUM_STEPS
from skrl_like.envs.pendulum_novel import EPISODE_STEPS as _PENDULUM_NOVEL_STEPS

# a module imported again (importlib.reload, a test) must not register twice: gymnasium warns on overrides
if "AmpPendulum-v0" not in gymnasium.registry:
    gymnasium.register(
        id="AmpPendulum-v0",
        entry_point="skrl_like.envs.amp_pendulum:AmpPendulumEnv",
        max_episode_steps=_AMP_PENDULUM_STEPS,
    )
if "PendulumNoVel-v1" not in gymnasium.registry:
    gymnasium.register(
        id="PendulumNoVel-v1",
        entry_point="skrl_like.envs.pendulum_novel:pendulum_no_velocity",
        max_episode_steps=_PENDULUM_NOVEL_STEPS,
    )
if "IsaacLabStandIn-v0" not in gymnasium.registry:
    # as Isaac Lab registers its tasks: no environment checker (it would sample the batched spaces as NumPy)
    gymnasium.register(
        id="IsaacLabStandIn-v0",
        entry_point="skrl_like.envs.isaaclab_standin:IsaacLabStandInEnv",
        disable_env_checker=True,
    )

_TORCH_ONLY = {"DirectRLEnvStandIn", "IsaacLabStandInEnv"}


def __getattr__(name: str) -> Any:
    if name == "load_playground_env":
        from skrl_like.envs.playground import load_playground_env

        return load_playground_env
    if name in _TORCH_ONLY:
        from skrl_like.envs import isaaclab_standin

        return getattr(isaaclab_standin, name)
    raise AttributeError(f"module 'skrl_like.envs' has no attribute {name!r}")
