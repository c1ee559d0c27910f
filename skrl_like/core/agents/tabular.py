"""What Q-learning and SARSA share and what holds no tensors: their configuration (the same five keys and defaults
for both), the checks made at construction (Discrete spaces, the Q-table's shape), and skrl's ignored ``alpha`` key
(``IGNORED_KEYS``, for ``merge_config``).

Each function is called explicitly from the torch agents' base (:mod:`skrl_like.torch.agents.tabular`).
"""

from typing import Any, Sequence

import gymnasium

from skrl_like.core.agents.config import experiment_defaults

#: keys that skrl 1.4.3's published tabular examples set although its agents never read them: skrl_like warns and
#: drops them (refusing them would break those scripts; honouring them would change skrl's numbers)
IGNORED_KEYS = {"alpha": "the step size is cfg['learning_rate']: set it instead"}


def default_config() -> dict:
    """A fresh ``Q_LEARNING_DEFAULT_CONFIG`` / ``SARSA_DEFAULT_CONFIG`` (separate objects, as in skrl)."""
    # fmt: off
    return {
        "discount_factor": 0.99,        # discount factor (gamma)

        "random_timesteps": 0,          # random exploration steps
        "learning_starts": 0,           # learning starts after this many steps

        "learning_rate": 0.5,           # learning rate (alpha): the tabular step size

        "rewards_shaper": None,         # rewards shaping function: Callable(reward, timestep, timesteps) -> reward

        "experiment": experiment_defaults(),  # directory, names, writing and checkpoint intervals, wandb
    }
    # fmt: on


def check_spaces(algorithm: str, observation_space: Any, action_space: Any) -> None:
    """Both spaces must be ``gymnasium.spaces.Discrete``: a state is a row of the Q-table and an action a column.

    :raises ValueError: naming the space found, the agent, and what to do instead.
    """
    fixes = {
        "observation": "discretise the observations into a gymnasium.spaces.Discrete(n) (e.g. a gymnasium "
        "ObservationWrapper that maps each observation to a cell index), or use DQN/DDQN for Box observations",
        "action": "discretise the actions into a gymnasium.spaces.Discrete(n), or use DQN/DDQN (Discrete actions, "
        "Box observations) or SAC/TD3/DDPG (Box actions)",
    }
    for kind, space in (("observation", observation_space), ("action", action_space)):
        if not isinstance(space, gymnasium.spaces.Discrete):
            raise ValueError(
                f"{algorithm} is tabular and needs a gymnasium.spaces.Discrete {kind} space (its Q-table has one "
                f"{'row per state' if kind == 'observation' else 'column per action'}); the {kind} space is "
                f"{space!r}: {fixes[kind]}"
            )


def check_table_shape(algorithm: str, model_name: str, shape: Sequence[int], expected: Sequence[int]) -> None:
    """The Q-table is ``(num_envs, num_states, num_actions)``: one table per environment.

    :param shape: the table's shape.
    :param expected: ``(num_envs, observation_space.n, action_space.n)``.
    :raises ValueError: naming both shapes and how to build the table.
    """
    if tuple(shape) != tuple(expected):
        num_envs, num_states, num_actions = expected
        raise ValueError(
            f"{algorithm}: the 'policy' model ({model_name}) has a Q-table of shape {list(shape)}, but the agent "
            f"needs (num_envs, num_states, num_actions) = {list(expected)} ({num_envs} environment(s) of the "
            f"model's num_envs, {num_states} states, {num_actions} actions): create it as "
            f"torch.zeros((num_envs, observation_space.n, action_space.n)) with num_envs=env.num_envs"
        )


def check_batch_size(algorithm: str, batch: int, num_envs: int) -> None:
    """One transition per environment table: a batch of another size was collected with other ``num_envs``.

    :raises ValueError: naming both sizes and the fix.
    """
    if batch != num_envs:
        raise ValueError(
            f"{algorithm}: a transition of {batch} environment(s) reached an agent whose Q-table holds {num_envs} "
            f"(the policy's num_envs): build the tabular model with num_envs=env.num_envs"
        )
