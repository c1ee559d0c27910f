"""Twin Delayed DDPG (TD3), torch backend.

Fujimoto et al., "Addressing Function Approximation Error in Actor-Critic Methods", 2018. DDPG's deterministic
policy and exploration noise, with three changes: two critics, the target being the smaller of their target values;
target policy smoothing (clipped noise on the target policy's actions); and a policy step, with the polyak update of
the three targets, only after every ``policy_delay``-th critic step. Each gradient step samples a fresh batch. The
update follows skrl 1.4.3, including its sum (not mean) of the two critics' errors.

DDPG is this class configured with one critic, a policy step after every critic step and no target policy smoothing
(:class:`~skrl_like.torch.agents.ddpg.DDPG`, as Stable-Baselines3 writes ``DDPG(TD3)``).
"""

import functools
from typing import Any, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F

from skrl_like import logger
from skrl_like.core.agents import td3 as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.config import with_backend_keys
from skrl_like.core.agents.off_policy import (
    check_action_space,
    check_batch_size,
    gradient_step_flag_names,
    noise_decay_timesteps,
)
from skrl_like.core.agents.privileged import build_privileged_preprocessor, critic_states, privileged_names
from skrl_like.core.agents.schedule import OffPolicySchedule
from skrl_like.core.agents.transition import TRANSITION_NAMES
from skrl_like.torch.agents.base import Agent
from skrl_like.torch.agents.mechanics import (
    all_finite,
    optimizer_step,
    parameters_finite,
    step_scheduler,
    td_targets,
    unique_parameters,
)
from skrl_like.torch.agents.off_policy import (
    create_replay_tensors,
    exploration_act,
    init_target,
    scoring_only,
    smoothed_target_actions,
    warn_if_identical,
)

__all__ = ["TD3", "TD3_DEFAULT_CONFIG"]

TD3_DEFAULT_CONFIG = with_backend_keys(
    neutral.TD3_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)


class TD3(Agent):
    """Twin Delayed DDPG.

    :param models: ``{"policy", "target_policy", "critic_1", "critic_2", "target_critic_1", "target_critic_2"}``:
        deterministic policies with one output per action dimension, critics taking ``states`` and
        ``taken_actions`` with one output; each target of the same architecture as its online model.
    :param memory: a replay memory (e.g. ``RandomMemory``) of at least ``cfg["batch_size"]`` rows, or a list of
        memories (the first one is used for learning).
    :param action_space: the ``Box`` action space of one environment (its bounds clip the actions).
    :param cfg: keys of ``TD3_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.torch.agents.base.Agent`).
    """

    samples_memory_at_random = True  # a replay: agents may share one (skrl's shared-memory example)
    _learning_rates = {
        "actor_learning_rate": ("policy_optimizer", "policy_scheduler"),
        "critic_learning_rate": ("critic_optimizer", "critic_scheduler"),
    }
    default_config = TD3_DEFAULT_CONFIG
    #: the online critics (each with a ``target_<role>``): the TD target bootstraps from the smallest target value,
    #: the critic loss sums their errors, the policy climbs the first one
    _critic_roles: Tuple[str, ...] = ("critic_1", "critic_2")
    #: the roles that may read the env's privileged states (asymmetric critics): the critics and their targets
    _privileged_state_roles: Tuple[str, ...] = ("critic_1", "critic_2", "target_critic_1", "target_critic_2")
    #: the models whose non-finite parameters a failed update check names, in that order
    _checked_roles: Tuple[str, ...] = ("policy", "critic_1", "critic_2")
    #: track as ``Q1`` the first critic's values of the policy's actions (those of the policy loss) instead of each
    #: critic's values of the batch: what skrl's DDPG tracks [compat]
    _tracks_policy_q_values = False

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        name = type(self).__name__
        check_action_space(name, action_space, "Box")

    def _setup(self) -> None:
        cfg = self.cfg
        name = type(self).__name__
        critic_roles = self._critic_roles
        roles = ("policy", "target_policy", *critic_roles, *(f"target_{role}" for role in critic_roles))
        self._require_models(roles)
        self._check_model_outputs(policy_roles=("policy", "target_policy"), critic_roles=roles[2:])
        check_batch_size(name, cfg["batch_size"], self.memory)

        # self.policy, self.target_policy, self.critic_1, self.target_critic_1, ... (DDPG: self.critic, ...)
        for role in roles:
            setattr(self, role, self.models[role])
            self.checkpoint_modules[role] = self.models[role]
        for source in ("policy", *critic_roles):
            init_target(name, self.models, f"target_{source}", source)

        self.schedule = OffPolicySchedule(cfg["learning_starts"], cfg["random_timesteps"])
        self._critic_update_counter = 0
        self._mixed_precision = bool(cfg["mixed_precision"])
        self.scaler = torch.amp.GradScaler(device=self.device.type, enabled=self._mixed_precision)

        # one optimizer for the policy, one for both critics (their joint gradient norm is clipped)
        self._policy_parameters = unique_parameters(self.policy)
        self._critic_parameters = unique_parameters(*(self.models[role] for role in critic_roles))
        self.policy_optimizer = torch.optim.Adam(self._policy_parameters, lr=cfg["actor_learning_rate"], fused=True)
        self.critic_optimizer = torch.optim.Adam(self._critic_parameters, lr=cfg["critic_learning_rate"], fused=True)
        self.checkpoint_modules["policy_optimizer"] = self.policy_optimizer
        self.checkpoint_modules["critic_optimizer"] = self.critic_optimizer
        scheduler, scheduler_kwargs = cfg["learning_rate_scheduler"], cfg["learning_rate_scheduler_kwargs"]
        self.policy_scheduler = scheduler(self.policy_optimizer, **scheduler_kwargs) if scheduler else None
        self.critic_scheduler = scheduler(self.critic_optimizer, **scheduler_kwargs) if scheduler else None

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._privileged_state_preprocessor = build_privileged_preprocessor(self)
        self._warn_about_settings()

    def _warn_about_settings(self) -> None:
        """TD3 without target policy smoothing, or with twin critics that start equal, works but loses a correction."""
        if self.cfg["smooth_regularization_noise"] is None:
            logger.warning(neutral.SMOOTHING_WARNING)
        warn_if_identical("TD3", self.models, "critic_1", "critic_2")

    def _delay_and_smoothing(self) -> Tuple[int, Optional[Any], float]:
        """``(policy_delay, smooth_regularization_noise, smooth_regularization_clip)``: the policy steps after every
        ``policy_delay``-th critic step; the target policy's actions get clipped noise (none if the noise is ``None``)."""
        cfg = self.cfg
        return cfg["policy_delay"], cfg["smooth_regularization_noise"], cfg["smooth_regularization_clip"]

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory tensors, the action bounds and the experiment's writer (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        # the decay length is fixed now; resuming restores it (run state) instead of taking the new total
        self._noise_decay_timesteps = noise_decay_timesteps(self.cfg["exploration"], trainer_cfg)
        create_replay_tensors(self.memory, self.observation_space, self.action_space, torch.float32)
        self._create_privileged_state_tensors(torch.float32)
        self.clip_actions_min = torch.tensor(self.action_space.low, device=self.device, dtype=torch.float32).reshape(-1)
        self.clip_actions_max = torch.tensor(self.action_space.high, device=self.device, dtype=torch.float32).reshape(
            -1
        )

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, None, dict]:
        """The policy's actions plus the decaying exploration noise (random actions during ``random_timesteps`` while
        training);
        returns ``(actions, None, outputs)``, ``outputs["mean_actions"]`` the actions without noise."""
        inputs = self._acting_inputs(states)
        # warm-up while training only: an evaluation (whose timesteps restart at 0) plays the policy
        if self.training and self.schedule.acts_randomly(timestep):
            return self.policy.random_act(inputs, role="policy")
        with torch.no_grad(), self._autocast():
            actions, _, outputs = self.policy.act(inputs, role="policy")
        # the noiseless actions, which a trainer's deterministic evaluation plays (exploration off)
        outputs = {**outputs, "mean_actions": actions}
        exploration = self.cfg["exploration"]
        actions = exploration_act(
            actions,
            exploration["noise"],
            exploration,
            timestep,
            self._noise_decay_timesteps or timesteps,
            self.clip_actions_min,
            self.clip_actions_max,
            self.track_data,
        )
        return actions, None, outputs

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        policy_delay, smoothing_noise, smoothing_clip = self._delay_and_smoothing()
        critic_roles, first_critic = self._critic_roles, self.models[self._critic_roles[0]]
        flags = []  # per gradient step: the finite flags of neutral.STEP_QUANTITIES and of the parameters
        for _ in range(cfg["gradient_steps"]):
            # sequence: what every model reads beside its states (a recurrent agent's hidden states); the privileged
            # states where the critics read them
            privileged = privileged_names(self)
            batch, sequence = self._replay_batch((*TRANSITION_NAMES, *privileged))
            sampled_states, sampled_actions, sampled_rewards, sampled_next_states, terminated, truncated = batch[:6]

            with self._autocast():
                # the state statistics are updated twice, with the states and the next states [compat]
                states = self._state_preprocessor(sampled_states, train=True)
                next_states = self._state_preprocessor(sampled_next_states, train=True)
                # the critics read the env's privileged states where they ask for them (asymmetric actor-critic)
                states_for_critics, next_states_for_critics = critic_states(
                    dict(zip(privileged, batch[6:])), states, next_states, self._privileged_state_preprocessor
                )

                # TD targets: the smallest target critic, at the (smoothed) target policy's action
                with torch.no_grad():
                    next_actions, _, _ = self.target_policy.act(
                        {"states": next_states, **sequence}, role="target_policy"
                    )
                    next_actions = smoothed_target_actions(
                        next_actions, smoothing_noise, smoothing_clip, self.clip_actions_min, self.clip_actions_max
                    )
                    next_inputs = {"states": next_states_for_critics, "taken_actions": next_actions, **sequence}
                    target_q_values = [
                        self.models[f"target_{role}"].act(next_inputs, role=f"target_{role}")[0]
                        for role in critic_roles
                    ]
                    next_values = functools.reduce(torch.min, target_q_values).float()
                    target_values = td_targets(sampled_rewards, terminated, next_values, cfg["discount_factor"])

                # critic loss: the SUM of the critics' squared errors [compat]
                inputs = {"states": states_for_critics, "taken_actions": sampled_actions, **sequence}
                critic_values = [self.models[role].act(inputs, role=role)[0] for role in critic_roles]
                critic_loss = sum(F.mse_loss(values.float(), target_values) for values in critic_values)

            optimizer_step(
                critic_loss,
                self.critic_optimizer,
                self._critic_parameters,
                cfg["grad_norm_clip"],
                self.scaler,
                update_scaler=False,
            )

            # delayed policy step and polyak update of the targets
            self._critic_update_counter += 1
            delayed = neutral.delayed_step(self._critic_update_counter, policy_delay)
            policy_q_values = None
            if delayed:
                with self._autocast(), scoring_only(self._critic_parameters):
                    actions, _, _ = self.policy.act({"states": states, **sequence}, role="policy")
                    policy_q_values, _, _ = first_critic.act(
                        {"states": states_for_critics, "taken_actions": actions, **sequence}, role=critic_roles[0]
                    )
                    policy_loss = -policy_q_values.float().mean()
                optimizer_step(
                    policy_loss,
                    self.policy_optimizer,
                    self._policy_parameters,
                    cfg["grad_norm_clip"],
                    self.scaler,
                    update_scaler=False,
                )
                for role in critic_roles:
                    self.models[f"target_{role}"].update_parameters(self.models[role], polyak=cfg["polyak"])
                self.target_policy.update_parameters(self.policy, polyak=cfg["polyak"])
            self.scaler.update()  # once, after this round's optimizers
            step_scheduler(self.policy_scheduler, [])
            step_scheduler(self.critic_scheduler, [])

            checked_policy_loss = policy_loss.detach() if delayed else torch.zeros((), device=self.device)
            quantities = (sampled_states, sampled_actions, sampled_rewards, sampled_next_states, target_values)
            flags.append(
                torch.cat(
                    [
                        all_finite((*quantities, critic_loss.detach(), checked_policy_loss)),
                        parameters_finite(self._policy_parameters + self._critic_parameters)[None],
                    ]
                )
            )
            self._track_step(
                policy_loss if delayed else None, critic_loss, critic_values, policy_q_values, target_values
            )
        self._keep_report(timestep, torch.stack(flags).reshape(-1))  # read at the next write or checkpoint step

    def _track_step(
        self,
        policy_loss: Optional[torch.Tensor],
        critic_loss: torch.Tensor,
        critic_values: Sequence[torch.Tensor],
        policy_q_values: Optional[torch.Tensor],
        target_values: torch.Tensor,
    ) -> None:
        """Track one gradient step's numbers as device scalars (no host sync), under skrl's tags: the policy loss
        (``None``: no policy step), the critic loss, each critic's values of the batch (``Q1``, ``Q2``; see
        :attr:`_tracks_policy_q_values`) and the targets."""
        if policy_loss is not None:
            self.track_data("Loss / Policy loss", policy_loss.detach())
        self.track_data("Loss / Critic loss", critic_loss.detach())
        if self._tracks_policy_q_values:
            critic_values = [policy_q_values.float()]
        tagged = [(f"Q-network / Q{index + 1}", values) for index, values in enumerate(critic_values)]
        for tag, values in (*tagged, ("Target / Target", target_values)):
            values = values.detach()
            self.track_data(f"{tag} (max)", torch.max(values))
            self.track_data(f"{tag} (min)", torch.min(values))
            self.track_data(f"{tag} (mean)", torch.mean(values))
        if self.policy_scheduler is not None:
            self.track_data("Learning / Policy learning rate", self.policy_scheduler.get_last_lr()[0])
            self.track_data("Learning / Critic learning rate", self.critic_scheduler.get_last_lr()[0])

    def _handle_report(self, timestep: int, flags: np.ndarray) -> None:
        """Raise naming the first non-finite quantity of the update at ``timestep``, step by step (its finite flags
        are read at the next write or checkpoint step, or at once with writing off: ``_keep_report``)."""
        if flags.all():
            return
        flags = flags.tolist()
        steps = len(flags) // (len(neutral.STEP_QUANTITIES) + 1)
        names = gradient_step_flag_names(steps, neutral.STEP_QUANTITIES, self._non_finite_note())
        check_named_flags(type(self).__name__, timestep, names, flags)

    def _non_finite_note(self) -> str:
        return non_finite_note(
            [
                f"parameter '{name}' of the {role} model"
                for role in self._checked_roles
                for name, parameter in self.models[role].named_parameters()
                if not torch.isfinite(parameter).all()
            ]
        )
