"""Isaac Lab-shaped environments for the wrapper tests of both backends (Isaac Lab itself is not installed here).

- :func:`task_in_module`: a task class on the stand-in whose base class lives in ``module`` (``isaaclab.envs...``), as a
  real Isaac Lab task derives from ``isaaclab.envs.DirectRLEnv``: what ``wrap_env``'s ``"auto"`` detection reads.
- :class:`CompositeEnv`: a ``"policy"`` group with a ``Dict`` space and a ``Tuple`` action space.
- :class:`MultiAgentEnv`: the ``DirectMARLEnv`` contract with two agents, a ``Box`` and a ``Discrete`` action.
"""

from typing import Any, Dict

import gymnasium
import numpy as np
import torch
from gymnasium import spaces

from skrl_like.envs.isaaclab_standin import IsaacLabStandInEnv


def task_in_module(module: str, base_name: str = "DirectRLEnv") -> type:
    """``class Task(<module>.<base_name>)`` where the base is the stand-in env."""
    base = type(base_name, (IsaacLabStandInEnv,), {"__module__": module})
    return type("Task", (base,), {"__module__": "isaaclab_tasks.direct.stand_in"})


class CompositeEnv(gymnasium.Env):
    """Policy group ``{"position": (2,), "velocity": (1,)}``, critic group ``(3,)``, actions ``(Discrete(3), Box(2))``.

    The policy group of step ``t`` is ``position = (t, t)``, ``velocity = -t``; every step's actions are kept in
    :attr:`received`; rewards are the Box actions' sums.
    """

    def __init__(self, num_envs: int = 2) -> None:
        self.num_envs, self.device = num_envs, "cpu"
        policy = spaces.Dict({"velocity": spaces.Box(-9, 9, (1,)), "position": spaces.Box(-9, 9, (2,))})
        self.single_observation_space = spaces.Dict({"policy": policy, "critic": spaces.Box(-9, 9, (3,))})
        self.single_action_space = spaces.Tuple((spaces.Discrete(3), spaces.Box(-1, 1, (2,))))
        self.received: list = []
        self.resets = 0
        self.closed = False
        self._t = 0

    def _observations(self) -> Dict[str, Any]:
        t = float(self._t)
        policy = {
            "position": torch.full((self.num_envs, 2), t),
            "velocity": torch.full((self.num_envs, 1), -t),
        }
        return {"policy": policy, "critic": torch.full((self.num_envs, 3), 10 + t)}

    def reset(self, seed: Any = None, options: Any = None) -> Any:
        self.resets += 1
        self._t = 0
        return self._observations(), {"reset": True}

    def step(self, actions: Any) -> Any:
        self.received.append(actions)
        self._t += 1
        rewards = actions[1].sum(dim=-1)
        flags = torch.zeros(self.num_envs, dtype=torch.bool)
        return self._observations(), rewards, flags, flags.clone(), {"t": self._t}

    def close(self) -> None:
        self.closed = True


class MultiAgentEnv(gymnasium.Env):
    """``DirectMARLEnv``'s contract: agents ``"a"`` (observations ``(3,)``, actions ``Box(2)``) and ``"b"``
    (observations ``(2,)``, actions ``Discrete(4)``), a global state ``(5,)`` from ``state()``.

    At step ``t`` agent a observes ``t``, agent b ``-t``, the state is ``100 + t``; rewards are a's action sums and b's
    actions; b's episodes terminate at every second step. Actions are kept in :attr:`received`.
    """

    def __init__(self, num_envs: int = 3) -> None:
        self.num_envs, self.device = num_envs, "cpu"
        self.possible_agents = ["a", "b"]
        self.agents = list(self.possible_agents)
        self.observation_spaces = {"a": spaces.Box(-np.inf, np.inf, (3,)), "b": spaces.Box(-np.inf, np.inf, (2,))}
        self.action_spaces = {"a": spaces.Box(-1, 1, (2,)), "b": spaces.Discrete(4)}
        self.state_space = spaces.Box(-np.inf, np.inf, (5,))
        self.received: list = []
        self.resets = 0
        self._t = 0

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        return len(self.possible_agents)

    def _observations(self) -> Dict[str, torch.Tensor]:
        return {
            "a": torch.full((self.num_envs, 3), float(self._t)),
            "b": torch.full((self.num_envs, 2), -float(self._t)),
        }

    def state(self) -> torch.Tensor:
        return torch.full((self.num_envs, 5), 100.0 + self._t)

    def reset(self, seed: Any = None, options: Any = None) -> Any:
        self.resets += 1
        self._t = 0
        return self._observations(), {}

    def step(self, actions: Dict[str, torch.Tensor]) -> Any:
        self.received.append(actions)
        self._t += 1
        rewards = {"a": actions["a"].sum(dim=-1), "b": actions["b"].reshape(-1).float()}
        terminated = {
            "a": torch.zeros(self.num_envs, dtype=torch.bool),
            "b": torch.full((self.num_envs,), self._t % 2 == 0),
        }
        truncated = {uid: torch.zeros(self.num_envs, dtype=torch.bool) for uid in self.possible_agents}
        return self._observations(), rewards, terminated, truncated, {}

    def close(self) -> None:
        pass
