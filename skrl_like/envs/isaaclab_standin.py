"""An environment with Isaac Lab's contract and no simulator: try the Isaac Lab path (``wrap_env(env,
wrapper="isaaclab")``, the Runner with an Isaac Lab skrl YAML) without Isaac Sim.

:class:`DirectRLEnvStandIn` keeps the contract of Isaac Lab's ``DirectRLEnv`` that skrl's (and skrl_like's) Isaac Lab
wrapper relies on: ``num_envs`` sub-environments stepped at once as torch tensors on ``device``; observation groups
``{"policy": (num_envs, observation_size)[, "critic": (num_envs, state_size)]}``; ``single_observation_space`` (a
``Dict`` of the groups' spaces), ``single_action_space``, their batched ``observation_space``/``action_space`` and,
with a critic group, a batched ``state_space``; ``reset(seed=None, options=None) -> (observations, extras)``;
``step(actions) -> (observations, rewards, terminated, truncated, extras)`` with ``(num_envs,)`` rewards (float32)
and flags (bool); finished sub-environments reset inside ``step`` (their observations are then the first of the new
episode); ``extras["log"]`` holds scalar tensors to log; ``render()`` returns ``None``; ``close()``. The flags are
buffers the env writes in place at every step, as Isaac Lab's are.

Unlike Isaac Lab, which finds the sub-environments to reset with ``nonzero()`` (a host sync), the stand-in resets
them with masks: a step never reads a value on the host, so a test can check that the path through a wrapper to an
agent does not either.

:class:`IsaacLabStandInEnv` is a task on it, trivial but learnable: each sub-environment moves a point ``p`` in
``action_size`` dimensions by ``step_size * clip(action, -1, 1)`` towards a target ``g`` drawn uniformly in
``[-1, 1]`` at each reset; the reward is ``1 - |p - g| / sqrt(action_size)``; an episode terminates when ``p``
reaches the bound ``|p_i| = 2`` in some dimension and is truncated after ``max_episode_length`` steps. The policy
group is ``(g - p, p, g, last action)`` repeated up to ``observation_size`` numbers, the critic group the same plus
the episode's progress, repeated up to ``state_size``. Its defaults (60 observations, 8 actions) are the shapes of
Isaac Lab's Ant, which the Isaac Lab-shaped benchmark uses at 1024 and 4096 environments.

torch only: ``import skrl_like.envs`` does not import this module (nor torch) until its names are used.
"""

import math
from typing import Any, Dict, Optional, Tuple

import gymnasium
import numpy as np
import torch


def _box(size: int) -> gymnasium.spaces.Box:
    return gymnasium.spaces.Box(low=-np.inf, high=np.inf, shape=(size,), dtype=np.float32)


class DirectRLEnvStandIn(gymnasium.Env):
    """The contract of Isaac Lab's ``DirectRLEnv`` (see the module docstring); a task overrides the five hooks
    (``_pre_physics_step``, ``_apply_action``, ``_get_dones``, ``_get_rewards``, ``_get_observations``) and
    ``_reset_envs``.

    :param num_envs: number of sub-environments stepped at once.
    :param observation_size: size of the ``"policy"`` group.
    :param action_size: size of the actions.
    :param state_size: size of the ``"critic"`` group (privileged observations); 0: no critic group.
    :param max_episode_length: steps after which an episode is truncated.
    :param device: where the tensors live (``"cpu"``, ``"cuda:0"``...).
    :param seed: seed of the env's own generator; ``None``: torch's initial seed (what ``set_seed`` set).
    """

    is_vector_env = True
    metadata = {"render_modes": [None]}

    def __init__(
        self,
        num_envs: int,
        observation_size: int,
        action_size: int,
        state_size: int = 0,
        max_episode_length: int = 100,
        device: Any = "cpu",
        seed: Optional[int] = None,
    ) -> None:
        for name, value, least in (
            ("num_envs", num_envs, 1),
            ("observation_size", observation_size, 1),
            ("action_size", action_size, 1),
            ("state_size", state_size, 0),
            ("max_episode_length", max_episode_length, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{type(self).__name__}: {name} must be an int >= {least}, got {value!r}")
        self.num_envs = num_envs
        self.device = str(torch.device(device))  # a string, as Isaac Lab's env.device
        self.max_episode_length = max_episode_length
        self.render_mode = None
        self.single_observation_space = gymnasium.spaces.Dict({"policy": _box(observation_size)})
        self.state_space = None
        if state_size:
            self.single_observation_space["critic"] = _box(state_size)
            self.state_space = gymnasium.vector.utils.batch_space(self.single_observation_space["critic"], num_envs)
        self.single_action_space = _box(action_size)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)

        self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long, device=self.device)
        self.reset_terminated = torch.zeros(num_envs, dtype=torch.bool, device=self.device)
        self.reset_time_outs = torch.zeros(num_envs, dtype=torch.bool, device=self.device)
        self.reward_buf = torch.zeros(num_envs, dtype=torch.float32, device=self.device)
        self.extras: Dict[str, Any] = {}
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(torch.initial_seed() if seed is None else seed)
        self._is_closed = False

    # -- the contract --------------------------------------------------------------------------------------------

    def reset(
        self, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[Dict[str, torch.Tensor], Dict[str, Any]]:
        """Reset every sub-environment (re-seeding the env's generator with ``seed`` if given).

        :return: ``(observations, extras)``, observations ``{"policy": ...[, "critic": ...]}``.
        """
        if seed is not None:
            self.generator.manual_seed(seed)
        self._reset_envs(torch.ones(self.num_envs, dtype=torch.bool, device=self.device))
        return self._get_observations(), self.extras

    def step(
        self, action: torch.Tensor
    ) -> Tuple[Dict[str, torch.Tensor], torch.Tensor, torch.Tensor, torch.Tensor, Dict[str, Any]]:
        """Apply ``action`` ``(num_envs, action_size)`` to every sub-environment, then reset the finished ones.

        :return: ``(observations, rewards, terminated, truncated, extras)``, rewards and flags ``(num_envs,)``.
        """
        self._pre_physics_step(action.to(self.device))
        self._apply_action()
        self.episode_length_buf += 1
        terminated, time_outs = self._get_dones()
        self.reset_terminated.copy_(terminated)
        self.reset_time_outs.copy_(time_outs)
        self.reward_buf = self._get_rewards()
        self._reset_envs(self.reset_terminated | self.reset_time_outs)
        return self._get_observations(), self.reward_buf, self.reset_terminated, self.reset_time_outs, self.extras

    def render(self, recompute: bool = False) -> None:
        """Nothing to draw: there is no simulator."""
        return None

    def close(self) -> None:
        """Close the env (nothing to release)."""
        self._is_closed = True

    # -- a task's hooks ------------------------------------------------------------------------------------------

    def _pre_physics_step(self, actions: torch.Tensor) -> None:
        raise NotImplementedError

    def _apply_action(self) -> None:
        raise NotImplementedError

    def _get_dones(self) -> Tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def _get_rewards(self) -> torch.Tensor:
        raise NotImplementedError

    def _get_observations(self) -> Dict[str, torch.Tensor]:
        raise NotImplementedError

    def _reset_envs(self, mask: torch.Tensor) -> None:
        """Start a new episode in the sub-environments where ``mask`` (bool ``(num_envs,)``) is true."""
        raise NotImplementedError


class IsaacLabStandInEnv(DirectRLEnvStandIn):
    """Move a point to a target: the stand-in's task (see the module docstring).

    :param num_envs: number of sub-environments.
    :param observation_size: size of the ``"policy"`` group (at least ``action_size``: its first numbers are
        ``g - p``).
    :param action_size: dimensions of the point and of the actions.
    :param state_size: size of the ``"critic"`` group; 0 (the default): no critic group.
    :param max_episode_length: steps after which an episode is truncated.
    :param step_size: how far a unit action moves the point in one step.
    :param device: where the tensors live.
    :param seed: seed of the env's generator; ``None``: torch's initial seed (what ``set_seed`` set).
    """

    bound = 2.0

    def __init__(
        self,
        num_envs: int = 64,
        observation_size: int = 60,
        action_size: int = 8,
        state_size: int = 0,
        max_episode_length: int = 100,
        step_size: float = 0.2,
        device: Any = "cpu",
        seed: Optional[int] = None,
    ) -> None:
        super().__init__(num_envs, observation_size, action_size, state_size, max_episode_length, device, seed)
        if observation_size < action_size:
            raise ValueError(
                f"IsaacLabStandInEnv: observation_size ({observation_size}) must be at least action_size "
                f"({action_size}), so that the observations hold the offset to the target: raise observation_size"
            )
        self.step_size = step_size
        self.observation_size, self.state_size = observation_size, state_size
        shape = (num_envs, action_size)
        self.positions = torch.zeros(shape, device=self.device)
        self.targets = torch.zeros(shape, device=self.device)
        self.actions = torch.zeros(shape, device=self.device)

    def _pre_physics_step(self, actions: torch.Tensor) -> None:
        self.actions = actions.reshape(self.actions.shape).clamp(-1.0, 1.0)

    def _apply_action(self) -> None:
        self.positions = (self.positions + self.step_size * self.actions).clamp(-self.bound, self.bound)

    def _get_dones(self) -> Tuple[torch.Tensor, torch.Tensor]:
        terminated = (self.positions.abs() >= self.bound).any(dim=-1)
        return terminated, self.episode_length_buf >= self.max_episode_length

    def _get_rewards(self) -> torch.Tensor:
        distance = torch.linalg.vector_norm(self.positions - self.targets, dim=-1)
        self.extras["log"] = {"distance_to_target": distance.mean()}  # a device scalar: logging never syncs
        return 1.0 - distance / math.sqrt(self.actions.shape[-1])

    def _get_observations(self) -> Dict[str, torch.Tensor]:
        features = torch.cat([self.targets - self.positions, self.positions, self.targets, self.actions], dim=-1)
        observations = {"policy": _repeat_to(features, self.observation_size)}
        if self.state_size:
            progress = (self.episode_length_buf.float() / self.max_episode_length).unsqueeze(-1)
            observations["critic"] = _repeat_to(torch.cat([features, progress], dim=-1), self.state_size)
        return observations

    def _reset_envs(self, mask: torch.Tensor) -> None:
        new_targets = 2.0 * torch.rand(self.targets.shape, generator=self.generator, device=self.device) - 1.0
        rows = mask.unsqueeze(-1)
        self.targets = torch.where(rows, new_targets, self.targets)
        self.positions = torch.where(rows, 0.0, self.positions)
        self.actions = torch.where(rows, 0.0, self.actions)
        self.episode_length_buf.masked_fill_(mask, 0)


def _repeat_to(features: torch.Tensor, size: int) -> torch.Tensor:
    """``features`` ``(num_envs, n)`` repeated along the last axis and cut to ``size`` numbers."""
    return features.repeat(1, -(-size // features.shape[-1]))[:, :size]


__all__ = ["DirectRLEnvStandIn", "IsaacLabStandInEnv"]
