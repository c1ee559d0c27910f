"""Environments skrl_like ships for its examples and tuned files, registered with gymnasium on import.

``gymnasium.make("skrl_like.envs:AmpPendulum-v0")`` (gymnasium's ``module:id`` syntax imports this package first),
or ``env: {id: "skrl_like.envs:AmpPendulum-v0", num_envs: 8}`` in a YAML file of the command line. NumPy and
gymnasium only: either backend trains on them.
"""

import gymnasium

from skrl_like.envs.amp_pendulum import EPISODE_STEPS as _AMP_PENDULUM_STEPS

# a module imported again (importlib.reload, a test) must not register twice: gymnasium warns on overrides
if "AmpPendulum-v0" not in gymnasium.registry:
    gymnasium.register(
        id="AmpPendulum-v0",
        entry_point="skrl_like.envs.amp_pendulum:AmpPendulumEnv",
        max_episode_steps=_AMP_PENDULUM_STEPS,
    )
