"""Cross-Entropy Method (CEM), torch backend.

Rubinstein, "The Cross-Entropy Method for Combinatorial and Continuous Optimization", 1999. Every ``rollouts``
steps: cut each environment's column of the window (a kept copy of the previous rollout's rows, then the current
rollout's) into episodes, keep the elite ones among those that end in the current rollout (discounted return at
least the ``percentile`` quantile of their returns; :mod:`skrl_like.core.agents.cem`), and take one Adam step on
the cross-entropy ``-mean log pi(a|s)`` of the actions taken in the elite episodes' rows.
"""

from typing import Any, Mapping, Optional, Tuple

import numpy as np
import torch

from skrl_like.core.agents import cem as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.config import with_backend_keys
from skrl_like.core.agents.off_policy import check_action_space
from skrl_like.core.agents.schedule import RolloutSchedule
from skrl_like.torch.agents.base import Agent
from skrl_like.torch.agents.mechanics import all_finite, optimizer_step, parameters_finite
from skrl_like.torch.agents.off_policy import create_replay_tensors

CEM_DEFAULT_CONFIG = with_backend_keys(
    neutral.CEM_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)


class CEM(Agent):
    """Cross-Entropy Method.

    :param models: ``{"policy": ...}``: a ``CategoricalMixin`` model with one output per discrete action.
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` (one rollout) and ``num_envs`` equal to the
        environments', or a list of memories (the first one is used for learning).
    :param action_space: the ``gymnasium.spaces.Discrete`` action space of one environment.
    :param cfg: keys of ``CEM_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.torch.agents.base.Agent`).
    """

    switches_modes_at_update = False  # as skrl's torch CEM
    default_config = CEM_DEFAULT_CONFIG

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        check_action_space("CEM", action_space, "Discrete")

    def _setup(self) -> None:
        cfg = self.cfg
        self._require_models(("policy",))
        self._check_categorical_policy()
        self._check_model_outputs(policy_roles=("policy",))
        neutral.check_memory("CEM", self.memory, cfg["rollouts"])

        self.policy = self.models["policy"]
        self.checkpoint_modules["policy"] = self.policy

        self.schedule = RolloutSchedule(cfg["rollouts"], cfg["learning_starts"])
        self.episodes = neutral.EpisodeWindows("CEM", cfg["rollouts"], cfg["discount_factor"], cfg["percentile"])
        self._mixed_precision = bool(cfg["mixed_precision"])
        self.scaler = torch.amp.GradScaler(device=self.device.type, enabled=self._mixed_precision)

        self._trainable_parameters = list(self.policy.parameters())
        self.optimizer = torch.optim.Adam(self._trainable_parameters, lr=cfg["learning_rate"], fused=True)
        self.checkpoint_modules["optimizer"] = self.optimizer
        scheduler = cfg["learning_rate_scheduler"]
        self.scheduler = scheduler(self.optimizer, **cfg["learning_rate_scheduler_kwargs"]) if scheduler else None

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")

    def _check_categorical_policy(self) -> None:
        """The loss is the log-probability of the taken class: the policy must be a categorical one."""
        distribution, _ = self._output_size(self.models["policy"], "policy")
        if distribution != "categorical":
            raise ValueError(
                f"CEM needs a categorical policy (its outputs' 'net_output' are the logits of the discrete actions); "
                f"the 'policy' model ({type(self.models['policy']).__name__}) is a {distribution} one: build it "
                f"with CategoricalMixin"
            )

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory's tensors and the experiment's writer (called once, by the trainer)."""
        super().init(trainer_cfg)
        create_replay_tensors(self.memory, self.observation_space, self.action_space, torch.int64)
        # the previous rollout's rows, the window's first half (zeros, of weight 0, before the first rollout)
        self._previous_states = torch.zeros_like(self.memory.get_tensor_by_name("states"))
        self._previous_actions = torch.zeros_like(self.memory.get_tensor_by_name("actions"))

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, Any, dict]:
        """Sample actions from the policy: ``(actions, log_prob, outputs)`` (before ``random_timesteps``, uniform
        random actions)."""
        inputs = {"states": self._state_preprocessor(states)}
        if timestep < self.cfg["random_timesteps"]:
            return self.policy.random_act(inputs, role="policy")
        with torch.no_grad(), self._autocast():
            return self.policy.act(inputs, role="policy")

    def _update_when_due(self, timestep: int, timesteps: int) -> bool:
        """The base's update at the end of every rollout from ``learning_starts`` on; a rollout that ends before it
        only records which episodes run on into the next one."""
        if self.memory is None:
            return False
        updated = super()._update_when_due(timestep, timesteps)
        if not updated and self.training and self.schedule.collected % self.schedule.rollouts == 0:
            self._end_rollout(*self._rewards_and_ends())
        return updated

    def _episode_ends(self) -> torch.Tensor:
        """``(rollouts, num_envs)`` bools: the memory's ``terminated | truncated``."""
        memory = self.memory
        return (memory.get_tensor_by_name("terminated") | memory.get_tensor_by_name("truncated"))[..., 0]

    def _rewards_and_ends(self) -> Tuple[np.ndarray, np.ndarray]:
        """The rollout's ``(rollouts, num_envs)`` rewards and episode ends on the host (one transfer)."""
        memory = self.memory
        host = torch.stack([memory.get_tensor_by_name("rewards")[..., 0], self._episode_ends().float()]).cpu().numpy()
        return host[0], host[1].astype(bool)

    def _end_rollout(self, rewards: np.ndarray, dones: np.ndarray) -> None:
        """Keep the rollout's rows as the next window's first half (a rollout before ``learning_starts`` too)."""
        self._previous_states.copy_(self.memory.get_tensor_by_name("states"))
        self._previous_actions.copy_(self.memory.get_tensor_by_name("actions"))
        self.episodes.end_rollout(rewards, dones)

    def _update(self, timestep: int, timesteps: int) -> None:
        memory = self.memory
        current_states = memory.get_tensor_by_name("states")
        rollouts, num_envs = current_states.shape[:2]
        rows = rollouts * num_envs
        # the window, time-major: the previous rollout's rows, then the current one's
        actions = torch.cat([self._previous_actions, memory.get_tensor_by_name("actions")]).reshape(2 * rows, -1)
        previous_states = self._previous_states.reshape(rows, -1)
        current_states = current_states.reshape(rows, -1)

        # the episodes and their elites, on the host: one transfer of the rewards and episode ends
        rewards, dones = self._rewards_and_ends()
        check_named_flags("CEM", timestep, ["the rollout's rewards"], [np.isfinite(rewards).all()])
        selection = self.episodes.select(rewards, dones, timestep)  # keeps this rollout's rewards and ends
        if selection is None:
            self._end_rollout(rewards, dones)
            return
        weights = torch.as_tensor(selection.weights.reshape(-1), device=self.device)

        with self._autocast():
            # the statistics learn from the current rollout's rows only (the previous ones were seen last update)
            current_states = self._state_preprocessor(current_states, train=True)
            states = torch.cat([self._state_preprocessor(previous_states), current_states])
            # cross-entropy of the elite rows' actions: -log pi(a|s) averaged over the elite rows only
            _, log_prob, _ = self.policy.act({"states": states, "taken_actions": actions}, role="policy")
            policy_loss = -(weights * log_prob.reshape(-1).float()).sum() / weights.sum()

        optimizer_step(policy_loss, self.optimizer, self._trainable_parameters, 0, self.scaler)
        if self.scheduler is not None:
            self.scheduler.step()
        self._check_update(timestep, states, policy_loss)
        self._end_rollout(rewards, dones)

        self.track_data("Loss / Policy loss", policy_loss.detach())
        self.track_data("Coefficient / Return threshold", selection.threshold)
        self.track_data("Coefficient / Mean discounted returns", float(selection.returns.mean()))
        if self.scheduler is not None:
            self.track_data("Learning / Learning rate", self.scheduler.get_last_lr()[0])

    def _check_update(self, timestep: int, states: torch.Tensor, policy_loss: torch.Tensor) -> None:
        """One host transfer: raise naming the first non-finite quantity (states, loss, parameters after the step)."""
        flags = torch.cat([all_finite((states, policy_loss)), parameters_finite(self._trainable_parameters)[None]])
        flags = flags.tolist()
        if all(flags):
            return
        non_finite = [
            f"parameter '{name}' of the policy model"
            for name, parameter in self.policy.named_parameters()
            if not torch.isfinite(parameter).all()
        ]
        names = [
            "the rollout's states (preprocessed)",
            "the policy loss",
            f"the parameters after the optimizer step ({non_finite_note(non_finite)})",
        ]
        check_named_flags("CEM", timestep, names, flags)
