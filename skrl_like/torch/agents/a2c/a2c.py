"""Advantage Actor-Critic (A2C), torch backend.

Mnih et al., "Asynchronous Methods for Deep Reinforcement Learning", 2016 (the synchronous variant). The update
follows skrl 1.4.3: the rollout with log pi_old(a|s), values and GAE (the on-policy half,
:class:`~skrl_like.torch.agents.on_policy.OnPolicyAgent`), then ONE pass over ``mini_batches`` contiguous
mini-batches: the policy-gradient loss ``-mean(A * log pi(a|s))``, an optional entropy bonus and the value MSE,
one optimizer step of the policy and value parameters per mini-batch.
"""

import torch
import torch.nn.functional as F

from skrl_like.core.agents import a2c as neutral
from skrl_like.core.agents.config import with_backend_keys
from skrl_like.core.agents.schedule import mini_batch_slices
from skrl_like.torch.agents.mechanics import optimizer_step, parameters_finite, step_scheduler
from skrl_like.torch.agents.on_policy import OnPolicyAgent
from skrl_like.torch.resources.schedulers import KLAdaptiveLR

A2C_DEFAULT_CONFIG = with_backend_keys(
    neutral.A2C_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)


class A2C(OnPolicyAgent):
    """Advantage Actor-Critic.

    :param models: ``{"policy": ..., "value": ...}`` (the same shared model may fill both roles).
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param cfg: keys of ``A2C_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.torch.agents.base.Agent`).
    """

    default_config = A2C_DEFAULT_CONFIG

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        states, actions, old_log_prob, _, returns, advantages = self._rollout_batch(timestep)

        needs_kl = isinstance(self.scheduler, KLAdaptiveLR)
        batches = mini_batch_slices(len(states), cfg["mini_batches"])
        losses, stepped_finite, kl_divergences = [], [], []
        for batch in batches:  # one pass, no epochs
            with self._autocast():
                # the state statistics are updated on every mini-batch [compat]
                inputs = self._update_inputs(self._state_preprocessor(states[batch], train=True), batch)
                _, log_prob, _ = self.policy.act({**inputs, "taken_actions": actions[batch]}, role="policy")
                if needs_kl:
                    with torch.no_grad():
                        log_ratio = log_prob - old_log_prob[batch]
                        kl_divergences.append(((torch.exp(log_ratio) - 1) - log_ratio).mean())

                # policy gradient with the normalised GAE advantages
                policy_loss = -(advantages[batch] * log_prob).mean()

                # entropy bonus
                if cfg["entropy_loss_scale"]:
                    entropy_loss = -cfg["entropy_loss_scale"] * self.policy.get_entropy(role="policy").mean()
                else:
                    entropy_loss = torch.zeros((), device=self.device)

                # value regression on the GAE returns (A2C has no value_loss_scale)
                predicted_values, _, _ = self.value.act(self._value_inputs(inputs, batch, 0), role="value")
                value_loss = F.mse_loss(returns[batch], predicted_values.float())

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

        # the scheduler steps once per update; KLAdaptiveLR sees the mean KL of the mini-batches
        step_scheduler(self.scheduler, kl_divergences)

        self._check_steps(timestep, losses, stepped_finite, cfg["mini_batches"])
        totals = torch.stack(losses).mean(dim=0)
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
