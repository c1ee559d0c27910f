"""Soft Actor-Critic (SAC), torch backend.

Haarnoja et al., "Soft Actor-Critic Algorithms and Applications", 2018. The update follows skrl 1.4.3: for each of
``gradient_steps`` fresh replay batches, a soft TD target from the target critics and a fresh next action, one step
of both critics on the mean of their MSEs, one actor step on ``alpha * log pi - min(Q1, Q2)``, one step of
``log(alpha)`` toward the target entropy, then the polyak update of both target critics.
"""

import math
from typing import Any, Mapping, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F

from skrl_like.core.agents import sac as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.config import with_backend_keys
from skrl_like.core.agents.off_policy import (
    check_action_space,
    check_batch_size,
    default_target_entropy,
)
from skrl_like.core.agents.privileged import build_privileged_preprocessor, critic_states, privileged_names
from skrl_like.core.agents.schedule import OffPolicySchedule
from skrl_like.core.agents.transition import TRANSITION_NAMES
from skrl_like.torch.agents.base import Agent
from skrl_like.torch.agents.mechanics import all_finite, optimizer_step, parameters_finite, td_targets
from skrl_like.torch.agents.off_policy import (
    create_replay_tensors,
    init_target,
    scoring_only,
    warn_if_identical,
)
from skrl_like.torch.models import GaussianMixin, MultivariateGaussianMixin

SAC_DEFAULT_CONFIG = with_backend_keys(
    neutral.SAC_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)


class SAC(Agent):
    """Soft Actor-Critic.

    :param models: ``{"policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2"}``: a Gaussian policy
        (``GaussianMixin`` or ``MultivariateGaussianMixin``) and four Q-functions of states and taken actions with
        one output each; each target has its critic's architecture (it is frozen and starts as a copy).
    :param memory: a replay memory (``batch_size`` rows at least), or a list of memories (the first one is sampled).
    :param action_space: the ``Box`` action space of one environment.
    :param cfg: keys of ``SAC_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.torch.agents.base.Agent`).
    """

    samples_memory_at_random = True  # a replay: agents may share one (skrl's shared-memory example)
    _privileged_state_roles = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")  # asymmetric critics
    _learning_rates = {
        "actor_learning_rate": ("policy_optimizer", "policy_scheduler"),
        "critic_learning_rate": ("critic_optimizer", "critic_scheduler"),
        "entropy_learning_rate": ("entropy_optimizer", None),  # with learn_entropy
    }
    default_config = SAC_DEFAULT_CONFIG

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        check_action_space("SAC", action_space, "Box")

    def _setup(self) -> None:
        cfg = self.cfg
        self._require_models(neutral.ROLES)
        neutral.check_gaussian_policy(self.models["policy"], (GaussianMixin, MultivariateGaussianMixin))
        self._check_model_outputs(policy_roles=("policy",), critic_roles=neutral.ROLES[1:])
        check_batch_size("SAC", cfg["batch_size"], self.memory)

        self.policy = self.models["policy"]
        self.critic_1, self.critic_2 = self.models["critic_1"], self.models["critic_2"]
        self.target_critic_1, self.target_critic_2 = self.models["target_critic_1"], self.models["target_critic_2"]
        for role in neutral.ROLES:
            self.checkpoint_modules[role] = self.models[role]
        warn_if_identical("SAC", self.models, "critic_1", "critic_2")
        # targets: frozen, hard copies of their critics
        init_target("SAC", self.models, "target_critic_1", "critic_1")
        init_target("SAC", self.models, "target_critic_2", "critic_2")

        self.schedule = OffPolicySchedule(cfg["learning_starts"], cfg["random_timesteps"])
        self._mixed_precision = bool(cfg["mixed_precision"])
        self.scaler = torch.amp.GradScaler(device=self.device.type, enabled=self._mixed_precision)

        # optimizers: the policy's, one for both critics, one for log(alpha); fused: one kernel for all parameters
        self._policy_parameters = list(self.policy.parameters())
        self._critic_parameters = [*self.critic_1.parameters(), *self.critic_2.parameters()]
        self.policy_optimizer = torch.optim.Adam(self._policy_parameters, lr=cfg["actor_learning_rate"], fused=True)
        self.critic_optimizer = torch.optim.Adam(self._critic_parameters, lr=cfg["critic_learning_rate"], fused=True)
        self.checkpoint_modules["policy_optimizer"] = self.policy_optimizer
        self.checkpoint_modules["critic_optimizer"] = self.critic_optimizer
        scheduler = cfg["learning_rate_scheduler"]
        kwargs = cfg["learning_rate_scheduler_kwargs"]
        self.policy_scheduler = scheduler(self.policy_optimizer, **kwargs) if scheduler else None
        self.critic_scheduler = scheduler(self.critic_optimizer, **kwargs) if scheduler else None

        # the entropy coefficient alpha, learned as log(alpha); log(alpha) itself is not checkpointed [compat]
        self._entropy_coefficient = torch.tensor([float(cfg["initial_entropy_value"])], device=self.device)
        if cfg["learn_entropy"]:
            target_entropy = cfg["target_entropy"]
            self._target_entropy = (
                default_target_entropy(self.action_space) if target_entropy is None else target_entropy
            )
            self.log_entropy_coefficient = torch.tensor(
                [math.log(cfg["initial_entropy_value"])], device=self.device, requires_grad=True
            )
            self.entropy_optimizer = torch.optim.Adam(
                [self.log_entropy_coefficient], lr=cfg["entropy_learning_rate"], fused=True
            )
            self.checkpoint_modules["entropy_optimizer"] = self.entropy_optimizer

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._privileged_state_preprocessor = build_privileged_preprocessor(self)

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory tensors and the experiment's writer (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        create_replay_tensors(self.memory, self.observation_space, self.action_space, torch.float32)
        self._create_privileged_state_tensors(torch.float32)

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, None, dict]:
        """Sample actions from the policy (uniformly at random before ``random_timesteps``)."""
        inputs = self._acting_inputs(states)
        if self.schedule.acts_randomly(timestep):
            return self.policy.random_act(inputs, role="policy")
        with torch.no_grad(), self._autocast():
            actions, _, outputs = self.policy.act(inputs, role="policy")
        return actions, None, outputs

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        learn_entropy = cfg["learn_entropy"]
        flags = []
        for _ in range(cfg["gradient_steps"]):
            # sequence: what every model reads beside its states (a recurrent agent's hidden states); the privileged
            # states where the critics read them
            privileged = privileged_names(self)
            batch, sequence = self._replay_batch((*TRANSITION_NAMES, *privileged))
            states, actions, rewards, next_states, terminated, truncated, *sampled = batch
            alpha = self._entropy_coefficient
            with self._autocast():
                # the statistics see both the states and the next states (skrl's order)
                states = self._state_preprocessor(states, train=True)
                next_states = self._state_preprocessor(next_states, train=True)
                # the critics read the env's privileged states where they ask for them (asymmetric actor-critic)
                states_for_critics, next_states_for_critics = critic_states(
                    dict(zip(privileged, sampled)), states, next_states, self._privileged_state_preprocessor
                )

                # soft TD target: a fresh next action from the current policy, the smaller target Q, minus alpha log pi
                with torch.no_grad():
                    next_actions, next_log_prob, _ = self.policy.act({"states": next_states, **sequence}, role="policy")
                    inputs = {"states": next_states_for_critics, "taken_actions": next_actions, **sequence}
                    target_q1, _, _ = self.target_critic_1.act(inputs, role="target_critic_1")
                    target_q2, _, _ = self.target_critic_2.act(inputs, role="target_critic_2")
                    next_values = torch.min(target_q1, target_q2) - alpha * next_log_prob
                    target_values = td_targets(rewards, terminated, next_values, cfg["discount_factor"])

                # critic loss: the mean of both critics' MSEs [compat]
                inputs = {"states": states_for_critics, "taken_actions": actions, **sequence}
                critic_1_values, _, _ = self.critic_1.act(inputs, role="critic_1")
                critic_2_values, _, _ = self.critic_2.act(inputs, role="critic_2")
                critic_loss = (
                    F.mse_loss(critic_1_values.float(), target_values)
                    + F.mse_loss(critic_2_values.float(), target_values)
                ) / 2
            optimizer_step(
                critic_loss,
                self.critic_optimizer,
                self._critic_parameters,
                cfg["grad_norm_clip"],
                self.scaler,
                update_scaler=False,
            )

            # policy loss: reparameterised actions, scored by the freshly stepped critics
            with self._autocast(), scoring_only(self._critic_parameters):
                sampled_actions, log_prob, _ = self.policy.act({"states": states, **sequence}, role="policy")
                inputs = {"states": states_for_critics, "taken_actions": sampled_actions, **sequence}
                critic_1_values, _, _ = self.critic_1.act(inputs, role="critic_1")
                critic_2_values, _, _ = self.critic_2.act(inputs, role="critic_2")
                policy_loss = (alpha * log_prob - torch.min(critic_1_values, critic_2_values)).float().mean()
            optimizer_step(
                policy_loss,
                self.policy_optimizer,
                self._policy_parameters,
                cfg["grad_norm_clip"],
                self.scaler,
                update_scaler=not learn_entropy,
            )

            # entropy coefficient: log(alpha) rises while the policy's entropy is below the target
            if learn_entropy:
                with self._autocast():
                    entropy_loss = -(
                        self.log_entropy_coefficient * (log_prob.detach().float() + self._target_entropy)
                    ).mean()
                optimizer_step(entropy_loss, self.entropy_optimizer, [self.log_entropy_coefficient], 0, self.scaler)
                self._entropy_coefficient = torch.exp(self.log_entropy_coefficient.detach())

            # targets follow their critics
            self.target_critic_1.update_parameters(self.critic_1, polyak=cfg["polyak"])
            self.target_critic_2.update_parameters(self.critic_2, polyak=cfg["polyak"])
            for scheduler in (self.policy_scheduler, self.critic_scheduler):
                if scheduler is not None:
                    scheduler.step()

            losses = (critic_loss, policy_loss) + ((entropy_loss,) if learn_entropy else ())
            flags.append(all_finite((rewards, states, next_states, *losses)))
            flags.append(parameters_finite(self._policy_parameters + self._critic_parameters)[None])

            if self.write_interval > 0:
                self._track(critic_loss, policy_loss, critic_1_values, critic_2_values, target_values)
                if learn_entropy:
                    self.track_data("Loss / Entropy loss", entropy_loss.detach())
                    self.track_data("Coefficient / Entropy coefficient", self._entropy_coefficient[0])

        self._keep_report(timestep, torch.cat(flags))  # read at the next write or checkpoint step

    def _track(self, critic_loss: Any, policy_loss: Any, q1: Any, q2: Any, targets: Any) -> None:
        """Losses and Q/target statistics as device scalars (converted only when written)."""
        self.track_data("Loss / Policy loss", policy_loss.detach())
        self.track_data("Loss / Critic loss", critic_loss.detach())
        for tag, values in (("Q-network / Q1", q1), ("Q-network / Q2", q2), ("Target / Target", targets)):
            values = values.detach()
            self.track_data(f"{tag} (max)", values.max())
            self.track_data(f"{tag} (min)", values.min())
            self.track_data(f"{tag} (mean)", values.mean())
        if self.policy_scheduler is not None:
            self.track_data("Learning / Policy learning rate", self.policy_scheduler.get_last_lr()[0])
            self.track_data("Learning / Critic learning rate", self.critic_scheduler.get_last_lr()[0])

    def _handle_report(self, timestep: int, flags: np.ndarray) -> None:
        """Raise naming the first non-finite quantity of the update at ``timestep``, in the order of its steps (its
        finite flags are read at the next write or checkpoint step: ``_keep_report``).

        (The sampled rewards and states were non-finite before the update touched them; the losses and parameters
        are named at the gradient step where they first went non-finite.)"""
        if flags.all():
            return
        names = neutral.step_flag_names(
            self.cfg["gradient_steps"], self.cfg["learn_entropy"], non_finite_note(self._non_finite_parameters())
        )
        check_named_flags("SAC", timestep, names, flags.tolist())

    def _non_finite_parameters(self) -> list:
        return [
            f"parameter '{name}' of the {role} model"
            for role in ("policy", "critic_1", "critic_2")
            for name, parameter in self.models[role].named_parameters()
            if not torch.isfinite(parameter).all()
        ]
