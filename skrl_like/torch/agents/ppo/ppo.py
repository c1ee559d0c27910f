"""Proximal Policy Optimization (PPO), torch backend.

Schulman et al., "Proximal Policy Optimization Algorithms", 2017. The update follows skrl 1.4.3: the rollout with
log pi_old(a|s), values and GAE (the on-policy half, :class:`~skrl_like.torch.agents.on_policy.OnPolicyAgent`), then
``learning_epochs`` passes over ``mini_batches`` contiguous mini-batches: a clipped surrogate policy loss, an
(optionally clipped) value loss and an optional entropy bonus, one optimizer for the policy and value parameters.
"""

from typing import Mapping

import torch

from skrl_like.core.agents import ppo as neutral
from skrl_like.core.agents.config import with_backend_keys
from skrl_like.core.agents.schedule import mini_batch_slices
from skrl_like.torch.agents.mechanics import optimizer_step, parameters_finite, step_scheduler
from skrl_like.torch.agents.on_policy import OnPolicyAgent
from skrl_like.torch.resources.schedulers import KLAdaptiveLR
from skrl_like.torch.utils.distributed import mean_over_processes

PPO_DEFAULT_CONFIG = with_backend_keys(
    neutral.PPO_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
    compile_update=False,  # torch.compile the update's losses and their gradients (compiled at the first update)
)


class PPO(OnPolicyAgent):
    """Proximal Policy Optimization.

    :param models: ``{"policy": ..., "value": ...}`` (the same shared model may fill both roles).
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param cfg: keys of ``PPO_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.torch.agents.base.Agent`).
    """

    default_config = PPO_DEFAULT_CONFIG

    def _setup(self) -> None:
        super()._setup()
        self._setup_losses()

    def _setup_losses(self) -> None:
        """The mini-batch losses, compiled with ``torch.compile`` when ``cfg["compile_update"]`` is ``True`` (or a
        dict of ``torch.compile`` keyword arguments): the forward and backward passes of both models. The state
        statistics, the KL check and the optimizer step stay eager."""
        options = self.cfg["compile_update"]
        self._losses = self._mini_batch_losses
        if options:
            self._losses = torch.compile(self._mini_batch_losses, **(options if isinstance(options, Mapping) else {}))

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        states, actions, old_log_prob, old_values, returns, advantages = self._rollout_batch(timestep)
        samples = len(states)

        # the KL is only computed when something reads it (a KL scheduler or early stopping)
        needs_kl = bool(cfg["kl_threshold"]) or isinstance(self.scheduler, KLAdaptiveLR)
        batches = mini_batch_slices(samples, cfg["mini_batches"])
        losses, stepped_finite = [], []  # per mini-batch stepped: (policy, value, entropy) losses; parameters finite
        for epoch in range(cfg["learning_epochs"]):
            kl_divergences = []
            for batch in batches:
                with self._autocast():
                    # the state statistics are updated in the first epoch only
                    inputs = self._update_inputs(self._state_preprocessor(states[batch], train=not epoch), batch)
                    policy_loss, value_loss, entropy_loss, log_ratio = self._losses(
                        inputs,
                        self._value_inputs(inputs, batch, epoch),
                        actions[batch],
                        old_log_prob[batch],
                        old_values[batch],
                        returns[batch],
                        advantages[batch],
                    )
                    if needs_kl:
                        with torch.no_grad():
                            approx_kl = ((torch.exp(log_ratio) - 1) - log_ratio).mean()
                        if cfg["kl_threshold"]:
                            # every process stops at the same mini-batch: the KL of them all decides
                            approx_kl = mean_over_processes(approx_kl)
                        kl_divergences.append(approx_kl)
                        if cfg["kl_threshold"] and approx_kl > cfg["kl_threshold"]:
                            break  # early stopping: leaves this epoch's mini-batch loop only
                    loss = policy_loss + entropy_loss + value_loss

                optimizer_step(
                    loss,
                    self.optimizer,
                    self._trainable_parameters,
                    cfg["grad_norm_clip"],
                    self.scaler,
                )
                losses.append(torch.stack([policy_loss, value_loss, entropy_loss]).detach().float())
                stepped_finite.append(parameters_finite(self._trainable_parameters))

            step_scheduler(self.scheduler, kl_divergences)

        # KL early stopping at the first mini-batch of every epoch leaves no step: nothing to check, zero losses
        if losses:
            self._check_steps(timestep, losses, stepped_finite, cfg["mini_batches"])
        # losses are averaged over every planned mini-batch, also when KL early stopping skipped some [compat]
        totals = sum(losses, torch.zeros(3, device=self.device)) / (cfg["learning_epochs"] * cfg["mini_batches"])
        self.track_data("Loss / Policy loss", totals[0])
        self.track_data("Loss / Value loss", totals[1])
        if cfg["entropy_loss_scale"]:
            self.track_data("Loss / Entropy loss", totals[2])
        if self._has_standard_deviation("policy"):  # a categorical policy has none (torch's would be NaN)
            self.track_data(
                "Policy / Standard deviation", self.policy.distribution(role="policy").stddev.mean().detach()
            )
        if self.scheduler is not None:
            self.track_data("Learning / Learning rate", self.scheduler.get_last_lr()[0])
