"""Proximal Policy Optimization (PPO), torch backend.

Schulman et al., "Proximal Policy Optimization Algorithms", 2017. The update follows skrl 1.4.3:
log pi_old(a|s) and V(s) of the whole rollout in one batched call each (the parameters did not change while it was
collected, so these are the numbers acting would have given), GAE over it, then ``learning_epochs`` passes over ``mini_batches`` contiguous mini-batches,
a clipped surrogate policy loss, an (optionally clipped) value loss and an optional entropy bonus,
one optimizer for the policy and value parameters.
"""

from typing import Any, Mapping, Optional, Tuple, Union

import gymnasium
import torch
import torch.nn.functional as F

from skrl_like import config
from skrl_like.core.agents import ppo as neutral
from skrl_like.core.agents.checks import check_named_flags, check_rollout_memory
from skrl_like.core.agents.config import check_config, with_backend_keys
from skrl_like.core.agents.schedule import RolloutSchedule, mini_batch_slices
from skrl_like.core.config import merge_config
from skrl_like.torch.agents.base import Agent
from skrl_like.torch.agents.mechanics import (
    all_finite,
    compute_gae,
    optimizer_step,
    parameters_finite,
    step_scheduler,
    unique_parameters,
)
from skrl_like.torch.resources.schedulers import KLAdaptiveLR

PPO_DEFAULT_CONFIG = with_backend_keys(
    neutral.PPO_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)


class PPO(Agent):
    """Proximal Policy Optimization.

    :param models: ``{"policy": ..., "value": ...}`` (the same shared model may fill both roles).
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param observation_space: observation space (or shape/size) of one environment.
    :param action_space: action space (or shape/size) of one environment.
    :param device: device for the agent's computations (``None``: the default torch device).
    :param cfg: keys of ``PPO_DEFAULT_CONFIG``; unknown keys raise ``ValueError`` with the closest key, and
        every value is checked against its documented type and range.
    """

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        action_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        device: Optional[Union[str, torch.device]] = None,
        cfg: Optional[dict] = None,
    ) -> None:
        cfg = merge_config(PPO_DEFAULT_CONFIG, cfg, "PPO cfg")
        check_config(cfg, "PPO cfg")
        super().__init__(models, memory, observation_space, action_space, device, cfg)
        self._require_models(("policy", "value"))
        self._check_model_outputs(value_roles=("value",), policy_roles=("policy",))

        self.policy = self.models["policy"]
        self.value = self.models["value"]
        self.checkpoint_modules["policy"] = self.policy
        self.checkpoint_modules["value"] = self.value
        if config.torch.is_distributed:
            self.policy.broadcast_parameters()
            if self.value is not self.policy:
                self.value.broadcast_parameters()

        self.schedule = RolloutSchedule(cfg["rollouts"], cfg["learning_starts"])
        # mixed precision: autocast around forward passes, a gradient scaler around backward passes
        self._mixed_precision = bool(cfg["mixed_precision"])
        self.scaler = torch.amp.GradScaler(device=self.device.type, enabled=self._mixed_precision)

        # one optimizer for the policy and value parameters (a shared model's once)
        self._trainable_parameters = unique_parameters(self.policy, self.value)
        # fused: one kernel for all parameters instead of a loop of small ops (3x cheaper for small networks)
        self.optimizer = torch.optim.Adam(self._trainable_parameters, lr=cfg["learning_rate"], fused=True)
        self.checkpoint_modules["optimizer"] = self.optimizer
        scheduler = cfg["learning_rate_scheduler"]
        self.scheduler = scheduler(self.optimizer, **cfg["learning_rate_scheduler_kwargs"]) if scheduler else None

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._value_preprocessor = self._build_preprocessor("value_preprocessor")

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory tensors and the experiment's writer (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        if self.memory is not None:
            check_rollout_memory("PPO", self.memory, self.cfg["rollouts"], self.cfg["mini_batches"])
            self.memory.create_tensor(name="states", size=self.observation_space, dtype=torch.float32)
            self.memory.create_tensor(name="actions", size=self.action_space, dtype=torch.float32)
            self.memory.create_tensor(name="rewards", size=1, dtype=torch.float32)
            self.memory.create_tensor(name="next_states", size=self.observation_space, dtype=torch.float32)
            self.memory.create_tensor(name="terminated", size=1, dtype=torch.bool)
            self.memory.create_tensor(name="truncated", size=1, dtype=torch.bool)

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, torch.Tensor, dict]:
        """Sample actions from the policy; returns ``(actions, log_prob, outputs)``."""
        inputs = {"states": self._state_preprocessor(states)}
        with self._autocast():
            if timestep < self.cfg["random_timesteps"]:
                actions, _, outputs = self.policy.random_act(inputs, role="policy")
                _, log_prob, _ = self.policy.act({**inputs, "taken_actions": actions}, role="policy")
            else:
                actions, log_prob, outputs = self.policy.act(inputs, role="policy")
        return actions, log_prob, outputs

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
        """Track episode statistics and, while training, store the transition (what the update needs besides is
        computed there from the stored states and actions)."""
        super().record_transition(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        )
        self._store_training_transition(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        )

    def post_interaction(self, timestep: int, timesteps: int) -> None:
        """While training, update every ``rollouts`` steps; then write checkpoints and TensorBoard data."""
        self._update_when_due(self.schedule, timestep, timesteps)
        super().post_interaction(timestep, timesteps)

    def _evaluate_rollout(self, states: torch.Tensor, actions: torch.Tensor, last_states: torch.Tensor) -> Tuple:
        """``(log_prob, values, last_values)`` of the stored rollout, with the parameters and statistics it was
        collected with (eval mode, no gradients): values in raw return units."""
        with torch.no_grad(), self._autocast():
            self.policy.train(False)
            self.value.train(False)
            processed = self._state_preprocessor(torch.cat([states, last_states.float()]))
            _, log_prob, _ = self.policy.act(
                {"states": processed[: len(states)], "taken_actions": actions}, role="policy"
            )
            all_values, _, _ = self.value.act({"states": processed}, role="value")
            self.policy.train(True)
            self.value.train(True)
        all_values = self._value_preprocessor(all_values.float(), inverse=True)
        return log_prob.float(), all_values[: len(states)], all_values[len(states) :]

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        memory = self.memory
        rollouts, num_envs = memory.get_tensor_by_name("states").shape[:2]
        samples = rollouts * num_envs

        def rows(name: str) -> torch.Tensor:
            tensor = memory.get_tensor_by_name(name)
            return tensor.reshape(samples, *tensor.shape[2:])

        states, actions = rows("states"), rows("actions")
        rewards = memory.get_tensor_by_name("rewards")
        old_log_prob, values, last_values = self._evaluate_rollout(
            states, actions, memory.get_tensor_by_name("next_states")[-1]
        )
        values = values.reshape(rollouts, num_envs, 1)
        if cfg["time_limit_bootstrap"]:
            rewards = rewards + cfg["discount_factor"] * values * memory.get_tensor_by_name("truncated")
        dones = memory.get_tensor_by_name("terminated") | memory.get_tensor_by_name("truncated")
        returns, advantages = compute_gae(
            rewards=rewards,
            dones=dones,
            values=values,
            next_values=last_values,
            discount_factor=cfg["discount_factor"],
            lambda_coefficient=cfg["lambda"],
        )
        # one host transfer, and nothing changed yet: name the first quantity that is not finite
        rollout_names = tuple(
            f"the rollout's {name}" for name in ("rewards", "log_prob", "values", "returns", "advantages")
        )
        rollout_flags = all_finite((rewards, old_log_prob, values, returns, advantages)).tolist()
        check_named_flags("PPO", timestep, rollout_names, rollout_flags)

        old_values = self._value_preprocessor(values, train=True).reshape(samples, 1)
        returns = self._value_preprocessor(returns, train=True).reshape(samples, 1)
        advantages = advantages.reshape(samples, 1)

        # the KL is only computed when something reads it (a KL scheduler or early stopping)
        needs_kl = bool(cfg["kl_threshold"]) or isinstance(self.scheduler, KLAdaptiveLR)
        batches = mini_batch_slices(samples, cfg["mini_batches"])
        losses, stepped_finite = [], []  # per mini-batch stepped: (policy, value, entropy) losses; parameters finite
        for epoch in range(cfg["learning_epochs"]):
            kl_divergences = []
            for batch in batches:
                with self._autocast():
                    # the state statistics are updated in the first epoch only
                    sampled_states = self._state_preprocessor(states[batch], train=not epoch)
                    _, log_prob, _ = self.policy.act(
                        {"states": sampled_states, "taken_actions": actions[batch]}, role="policy"
                    )
                    log_ratio = log_prob - old_log_prob[batch]
                    if needs_kl:
                        with torch.no_grad():
                            approx_kl = ((torch.exp(log_ratio) - 1) - log_ratio).mean()
                        kl_divergences.append(approx_kl)
                        if cfg["kl_threshold"] and approx_kl > cfg["kl_threshold"]:
                            break  # early stopping: leaves this epoch's mini-batch loop only

                    # clipped surrogate objective
                    ratio = torch.exp(log_ratio)
                    surrogate = advantages[batch] * ratio
                    clipped_surrogate = advantages[batch] * torch.clip(
                        ratio, 1.0 - cfg["ratio_clip"], 1.0 + cfg["ratio_clip"]
                    )
                    policy_loss = -torch.min(surrogate, clipped_surrogate).mean()

                    # entropy bonus
                    if cfg["entropy_loss_scale"]:
                        entropy = self.policy.get_entropy(role="policy").mean()
                        entropy_loss = -cfg["entropy_loss_scale"] * entropy
                    else:
                        entropy_loss = torch.zeros((), device=self.device)

                    # value loss, predictions optionally clipped around the rollout's values
                    predicted_values, _, _ = self.value.act({"states": sampled_states}, role="value")
                    if cfg["clip_predicted_values"]:
                        predicted_values = old_values[batch] + torch.clip(
                            predicted_values - old_values[batch], -cfg["value_clip"], cfg["value_clip"]
                        )
                    value_loss = cfg["value_loss_scale"] * F.mse_loss(returns[batch], predicted_values.float())

                    loss = policy_loss + entropy_loss + value_loss

                optimizer_step(
                    loss,
                    self.optimizer,
                    self._trainable_parameters,
                    cfg["grad_norm_clip"],
                    self.scaler,
                    models=(self.policy,) if self.value is self.policy else (self.policy, self.value),
                )
                losses.append(torch.stack([policy_loss, value_loss, entropy_loss]).detach().float())
                stepped_finite.append(parameters_finite(self._trainable_parameters))

            if config.torch.is_distributed and kl_divergences and self.scheduler is not None:
                kl = torch.stack(kl_divergences).mean()
                torch.distributed.all_reduce(kl, op=torch.distributed.ReduceOp.SUM)
                kl_divergences = [kl / config.torch.world_size]
            step_scheduler(self.scheduler, kl_divergences)

        # KL early stopping at the first mini-batch of every epoch leaves no step: nothing to check, zero losses
        if losses:
            self._check_update(timestep, losses, stepped_finite)
        # losses are averaged over every planned mini-batch, also when KL early stopping skipped some [compat]
        totals = sum(losses, torch.zeros(3, device=self.device)) / (cfg["learning_epochs"] * cfg["mini_batches"])
        self.track_data("Loss / Policy loss", totals[0])
        self.track_data("Loss / Value loss", totals[1])
        if cfg["entropy_loss_scale"]:
            self.track_data("Loss / Entropy loss", totals[2])
        self.track_data("Policy / Standard deviation", self.policy.distribution(role="policy").stddev.mean().detach())
        if self.scheduler is not None:
            self.track_data("Learning / Learning rate", self.scheduler.get_last_lr()[0])

    def _check_update(self, timestep: int, losses: list, stepped_finite: list) -> None:
        """One host transfer after the update: the first non-finite loss or parameter, in the order of the steps."""
        flags = torch.cat([torch.isfinite(torch.stack(losses)), torch.stack(stepped_finite)[:, None]], dim=1)
        flags = flags.reshape(-1).tolist()
        if all(flags):
            return
        mini_batches = self.cfg["mini_batches"]
        names = []
        for index in range(len(losses)):
            where = f"mini-batch {index % mini_batches} (epoch {index // mini_batches})"
            names += [f"the {term} loss of {where}" for term in ("policy", "value", "entropy")]
            names.append(f"the parameters after the optimizer step of {where} ({self._non_finite_parameters()})")
        check_named_flags("PPO", timestep, names, flags)

    def _non_finite_parameters(self) -> str:
        models = {"policy": self.policy} if self.value is self.policy else {"policy": self.policy, "value": self.value}
        names = [
            f"parameter '{name}' of the {role} model"
            for role, model in models.items()
            for name, parameter in model.named_parameters()
            if not torch.isfinite(parameter).all()
        ]
        return "non-finite now: " + ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
