"""Deep Deterministic Policy Gradient (DDPG), torch backend.

Lillicrap et al., "Continuous control with deep reinforcement learning", 2015. The update follows skrl 1.4.3:
for each of ``gradient_steps`` gradient steps a fresh replay batch, the TD target from the target actor and target
critic, a critic step on the mean squared TD error, an actor step on ``-Q(s, mu(s))`` with the just-updated critic,
and a polyak update of both targets. Truncation ends the bootstrap like termination (skrl's rule).
"""

from typing import Any, Mapping, Optional, Tuple, Union

import gymnasium
import torch
import torch.nn.functional as F

from skrl_like.core.agents import ddpg as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.config import check_config, with_backend_keys
from skrl_like.core.agents.off_policy import check_action_space, check_batch_size, noise_decay_timesteps
from skrl_like.core.agents.schedule import OffPolicySchedule
from skrl_like.core.config import merge_config
from skrl_like.torch.agents.base import Agent
from skrl_like.torch.agents.mechanics import (
    all_finite,
    optimizer_step,
    parameters_finite,
    step_scheduler,
    td_targets,
)
from skrl_like.torch.agents.off_policy import (
    create_replay_tensors,
    exploration_act,
    init_target,
    sample_batch,
    scoring_only,
)

DDPG_DEFAULT_CONFIG = with_backend_keys(
    neutral.DDPG_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)


class DDPG(Agent):
    """Deep Deterministic Policy Gradient.

    :param models: ``{"policy", "target_policy", "critic", "target_critic"}``: deterministic actors that output
        one number per action dimension, and Q-functions of ``{"states", "taken_actions"}`` that output one value;
        each target has the architecture of its online model (it starts as a copy of it).
    :param memory: a replay memory of at least ``cfg["batch_size"]`` rows, or a list of memories (the first one
        is used for learning).
    :param observation_space: observation space (or shape/size) of one environment.
    :param action_space: the ``Box`` action space of one environment (its bounds clip the exploration noise).
    :param device: device for the agent's computations (``None``: the default torch device).
    :param cfg: keys of ``DDPG_DEFAULT_CONFIG``; unknown keys raise ``ValueError`` with the closest key, and
        every value is checked against its documented type and range.
    """

    samples_memory_at_random = True  # a replay: agents may share one (skrl's shared-memory example)
    _learning_rates = {
        "actor_learning_rate": ("policy_optimizer", "policy_scheduler"),
        "critic_learning_rate": ("critic_optimizer", "critic_scheduler"),
    }

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        action_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        device: Optional[Union[str, torch.device]] = None,
        cfg: Optional[dict] = None,
    ) -> None:
        cfg = merge_config(DDPG_DEFAULT_CONFIG, cfg, "DDPG cfg")
        check_config(cfg, "DDPG cfg")
        check_action_space("DDPG", action_space, "Box")
        super().__init__(models, memory, observation_space, action_space, device, cfg)
        self._require_models(("policy", "target_policy", "critic", "target_critic"))
        self._check_model_outputs(policy_roles=("policy", "target_policy"), critic_roles=("critic", "target_critic"))
        check_batch_size("DDPG", cfg["batch_size"], self.memory)

        self.policy = self.models["policy"]
        self.target_policy = self.models["target_policy"]
        self.critic = self.models["critic"]
        self.target_critic = self.models["target_critic"]
        for role in ("policy", "target_policy", "critic", "target_critic"):
            self.checkpoint_modules[role] = self.models[role]
        init_target("DDPG", self.models, "target_policy", "policy")
        init_target("DDPG", self.models, "target_critic", "critic")

        self.schedule = OffPolicySchedule(cfg["learning_starts"], cfg["random_timesteps"])
        self._mixed_precision = bool(cfg["mixed_precision"])
        self.scaler = torch.amp.GradScaler(device=self.device.type, enabled=self._mixed_precision)

        self._policy_parameters = list(self.policy.parameters())
        self._critic_parameters = list(self.critic.parameters())
        self.policy_optimizer = torch.optim.Adam(self._policy_parameters, lr=cfg["actor_learning_rate"], fused=True)
        self.critic_optimizer = torch.optim.Adam(self._critic_parameters, lr=cfg["critic_learning_rate"], fused=True)
        self.checkpoint_modules["policy_optimizer"] = self.policy_optimizer
        self.checkpoint_modules["critic_optimizer"] = self.critic_optimizer
        scheduler, scheduler_kwargs = cfg["learning_rate_scheduler"], cfg["learning_rate_scheduler_kwargs"]
        self.policy_scheduler = scheduler(self.policy_optimizer, **scheduler_kwargs) if scheduler else None
        self.critic_scheduler = scheduler(self.critic_optimizer, **scheduler_kwargs) if scheduler else None

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the replay tensors, the action bounds and the experiment's writer (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        # the decay length is fixed now; resuming restores it (run state) instead of taking the new total
        self._noise_decay_timesteps = noise_decay_timesteps(self.cfg["exploration"], trainer_cfg)
        create_replay_tensors(self.memory, self.observation_space, self.action_space, torch.float32)
        # flat, as the actions (a multi-dimensional Box is acted on as one row per env)
        self.clip_actions_min = torch.as_tensor(self.action_space.low, dtype=torch.float32, device=self.device).reshape(
            -1
        )
        self.clip_actions_max = torch.as_tensor(
            self.action_space.high, dtype=torch.float32, device=self.device
        ).reshape(-1)

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, None, dict]:
        """The actor's actions plus the decaying exploration noise, clipped to the action bounds; returns
        ``(actions, None, outputs)`` with the noiseless actions as ``outputs["mean_actions"]`` (what a deterministic
        evaluation plays). While training and ``timestep < random_timesteps``: random actions."""
        inputs = {"states": self._state_preprocessor(states)}
        if self.training and self.schedule.acts_randomly(timestep):
            return self.policy.random_act(inputs, role="policy")
        with torch.no_grad(), self._autocast():
            mean_actions, _, outputs = self.policy.act(inputs, role="policy")
        exploration = self.cfg["exploration"]
        actions = exploration_act(
            mean_actions,
            exploration["noise"],
            exploration,
            timestep,
            self._noise_decay_timesteps or timesteps,
            self.clip_actions_min,
            self.clip_actions_max,
            self.track_data,
        )
        return actions, None, {**outputs, "mean_actions": mean_actions}

    def record_transition(
        self,
        states: torch.Tensor,
        actions: torch.Tensor,
        rewards: torch.Tensor,
        next_states: torch.Tensor,
        terminated: torch.Tensor,
        truncated: torch.Tensor,
        infos: Any,
        timestep: int,
        timesteps: int,
    ) -> None:
        """Track episode statistics and, while training, store the transition; a finished sub-environment stores
        its terminal observation as next state (not the first observation of its next episode)."""
        super().record_transition(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        )
        self._store_training_transition(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        )

    def post_interaction(self, timestep: int, timesteps: int) -> None:
        """While training, update at every timestep from ``learning_starts`` on; then write checkpoints and data."""
        self._update_when_due(self.schedule, timestep, timesteps)
        super().post_interaction(timestep, timesteps)

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        flags = []  # per gradient step: the sampled batch, the TD targets, both losses, the parameters after the step
        for _ in range(cfg["gradient_steps"]):
            batch = sample_batch(self.memory, neutral.BATCH_NAMES, cfg["batch_size"])
            states, actions, rewards, next_states, terminated, truncated = batch

            with self._autocast():
                # the statistics are updated with the states, then with the next states [compat]
                states = self._state_preprocessor(states, train=True)
                next_states = self._state_preprocessor(next_states, train=True)

                # TD target from the target actor and target critic
                with torch.no_grad():
                    next_actions, _, _ = self.target_policy.act({"states": next_states}, role="target_policy")
                    target_q_values, _, _ = self.target_critic.act(
                        {"states": next_states, "taken_actions": next_actions}, role="target_critic"
                    )
                    target_values = td_targets(rewards, terminated, target_q_values.float(), cfg["discount_factor"])

                # critic loss: mean squared TD error
                critic_values, _, _ = self.critic.act({"states": states, "taken_actions": actions}, role="critic")
                critic_loss = F.mse_loss(critic_values.float(), target_values)
            optimizer_step(
                critic_loss,
                self.critic_optimizer,
                self._critic_parameters,
                cfg["grad_norm_clip"],
                self.scaler,
                update_scaler=False,
            )

            # policy loss: the updated critic's value of the actor's actions, maximised
            with self._autocast(), scoring_only(self._critic_parameters):
                policy_actions, _, _ = self.policy.act({"states": states}, role="policy")
                q_values, _, _ = self.critic.act({"states": states, "taken_actions": policy_actions}, role="critic")
                policy_loss = -q_values.float().mean()
            optimizer_step(
                policy_loss,
                self.policy_optimizer,
                self._policy_parameters,
                cfg["grad_norm_clip"],
                self.scaler,
            )

            # soft updates of the targets
            self.target_policy.update_parameters(self.policy, polyak=cfg["polyak"])
            self.target_critic.update_parameters(self.critic, polyak=cfg["polyak"])
            step_scheduler(self.policy_scheduler, [])
            step_scheduler(self.critic_scheduler, [])

            # tracked as device scalars: converted only when written
            q_values, target_values = q_values.detach().float(), target_values.detach()
            self.track_data("Loss / Policy loss", policy_loss.detach())
            self.track_data("Loss / Critic loss", critic_loss.detach())
            self.track_data("Q-network / Q1 (max)", q_values.max())
            self.track_data("Q-network / Q1 (min)", q_values.min())
            self.track_data("Q-network / Q1 (mean)", q_values.mean())
            self.track_data("Target / Target (max)", target_values.max())
            self.track_data("Target / Target (min)", target_values.min())
            self.track_data("Target / Target (mean)", target_values.mean())
            if self.policy_scheduler is not None:
                self.track_data("Learning / Policy learning rate", self.policy_scheduler.get_last_lr()[0])
                self.track_data("Learning / Critic learning rate", self.critic_scheduler.get_last_lr()[0])

            flags.append(
                torch.cat(
                    [
                        all_finite((*batch[:4], target_values, critic_loss, policy_loss)),
                        parameters_finite(self._critic_parameters + self._policy_parameters)[None],
                    ]
                )
            )
        self._check_update(timestep, flags)

    def _check_update(self, timestep: int, flags: list) -> None:
        """One host transfer after the update: the first non-finite quantity, in the order of the gradient steps."""
        flags = torch.stack(flags).reshape(-1).tolist()
        if all(flags):
            return
        names = neutral.step_flag_names(self.cfg["gradient_steps"], self._non_finite_parameters())
        check_named_flags("DDPG", timestep, names, flags)

    def _non_finite_parameters(self) -> str:
        return non_finite_note(
            [
                f"parameter '{name}' of the {role} model"
                for role, model in (("critic", self.critic), ("policy", self.policy))
                for name, parameter in model.named_parameters()
                if not torch.isfinite(parameter).all()
            ]
        )
