"""Proximal Policy Optimization (PPO), torch backend.

Schulman et al., "Proximal Policy Optimization Algorithms", 2017. The update follows skrl 1.4.3:
V(s) of the whole rollout in one batched call (the parameters did not change while it was collected),
GAE over it, then ``learning_epochs`` passes over ``mini_batches`` contiguous mini-batches,
a clipped surrogate policy loss, an (optionally clipped) value loss and an optional entropy bonus,
one optimizer for the policy and value parameters.
"""

import contextlib
from typing import Any, Mapping, Optional, Tuple, Union

import gymnasium
import torch
import torch.nn.functional as F

from skrl_like import config
from skrl_like.core.config import merge_config
from skrl_like.torch.agents.base import Agent
from skrl_like.torch.agents.mechanics import clip_gradients, compute_gae, step_scheduler
from skrl_like.torch.resources.schedulers import KLAdaptiveLR

# fmt: off
PPO_DEFAULT_CONFIG = {
    "rollouts": 16,                 # number of rollouts before updating
    "learning_epochs": 8,           # number of learning epochs during each update
    "mini_batches": 2,              # number of mini batches during each learning epoch

    "discount_factor": 0.99,        # discount factor (gamma)
    "lambda": 0.95,                 # TD(lambda) coefficient (lam) for computing returns and advantages

    "learning_rate": 1e-3,                  # learning rate
    "learning_rate_scheduler": None,        # learning rate scheduler class (see torch.optim.lr_scheduler)
    "learning_rate_scheduler_kwargs": {},   # learning rate scheduler's kwargs (e.g. {"step_size": 1e-3})

    "state_preprocessor": None,             # state preprocessor class (see skrl_like.torch.resources.preprocessors)
    "state_preprocessor_kwargs": {},        # state preprocessor's kwargs (e.g. {"size": env.observation_space})
    "value_preprocessor": None,             # value preprocessor class (see skrl_like.torch.resources.preprocessors)
    "value_preprocessor_kwargs": {},        # value preprocessor's kwargs (e.g. {"size": 1})

    "random_timesteps": 0,          # random exploration steps
    "learning_starts": 0,           # learning starts after this many steps

    "grad_norm_clip": 0.5,              # clipping coefficient for the norm of the gradients
    "ratio_clip": 0.2,                  # clipping coefficient for computing the clipped surrogate objective
    "value_clip": 0.2,                  # clipping coefficient for computing the value loss (if clip_predicted_values is True)
    "clip_predicted_values": False,     # clip predicted values during value loss computation

    "entropy_loss_scale": 0.0,      # entropy loss scaling factor
    "value_loss_scale": 1.0,        # value loss scaling factor

    "kl_threshold": 0,              # KL divergence threshold for early stopping

    "rewards_shaper": None,         # rewards shaping function: Callable(reward, timestep, timesteps) -> reward
    "time_limit_bootstrap": False,  # bootstrap at timeout termination (episode truncation)

    "mixed_precision": False,       # enable automatic mixed precision for higher performance

    "experiment": {
        "directory": "",            # experiment's parent directory
        "experiment_name": "",      # experiment name
        "write_interval": "auto",   # TensorBoard writing interval (timesteps)

        "checkpoint_interval": "auto",      # interval for checkpoints (timesteps)
        "store_separately": False,          # whether to store checkpoints separately

        "wandb": False,             # whether to use Weights & Biases
        "wandb_kwargs": {}          # wandb kwargs (see https://docs.wandb.ai/ref/python/init)
    }
}
# fmt: on


class PPO(Agent):
    """Proximal Policy Optimization.

    :param models: ``{"policy": ..., "value": ...}`` (the same shared model may fill both roles).
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param observation_space: observation space (or shape/size) of one environment.
    :param action_space: action space (or shape/size) of one environment.
    :param device: device for the agent's computations (``None``: the default torch device).
    :param cfg: keys of ``PPO_DEFAULT_CONFIG``; unknown keys raise ``ValueError`` with the closest key.
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
        super().__init__(models, memory, observation_space, action_space, device, cfg)
        self._require_models(("policy", "value"))

        self.policy = self.models["policy"]
        self.value = self.models["value"]
        self.checkpoint_modules["policy"] = self.policy
        self.checkpoint_modules["value"] = self.value
        if config.torch.is_distributed:
            self.policy.broadcast_parameters()
            if self.value is not self.policy:
                self.value.broadcast_parameters()

        self._rollouts = cfg["rollouts"]
        self._learning_epochs = cfg["learning_epochs"]
        self._mini_batches = cfg["mini_batches"]
        self._discount_factor = cfg["discount_factor"]
        self._lambda = cfg["lambda"]
        self._learning_rate = cfg["learning_rate"]
        self._random_timesteps = cfg["random_timesteps"]
        self._learning_starts = cfg["learning_starts"]
        self._grad_norm_clip = cfg["grad_norm_clip"]
        self._ratio_clip = cfg["ratio_clip"]
        self._value_clip = cfg["value_clip"]
        self._clip_predicted_values = cfg["clip_predicted_values"]
        self._entropy_loss_scale = cfg["entropy_loss_scale"]
        self._value_loss_scale = cfg["value_loss_scale"]
        self._kl_threshold = cfg["kl_threshold"]
        self._rewards_shaper = cfg["rewards_shaper"]
        self._time_limit_bootstrap = cfg["time_limit_bootstrap"]
        self._mixed_precision = cfg["mixed_precision"]
        for key in ("rollouts", "learning_epochs", "mini_batches"):
            if not isinstance(cfg[key], int) or cfg[key] < 1:
                raise ValueError(f"PPO cfg['{key}'] must be an int >= 1, got {cfg[key]!r}")

        # mixed precision: autocast around forward passes, a gradient scaler around backward passes
        self._device_type = self.device.type
        self.scaler = torch.amp.GradScaler(device=self._device_type, enabled=self._mixed_precision)

        # one optimizer for the policy and value parameters (shared once when the model is shared)
        self._trainable_parameters = list(self.policy.parameters())
        if self.value is not self.policy:
            self._trainable_parameters += list(self.value.parameters())
        # fused: one kernel for all parameters instead of a loop of small ops (3x cheaper for small networks)
        self.optimizer = torch.optim.Adam(self._trainable_parameters, lr=self._learning_rate, fused=True)
        self.checkpoint_modules["optimizer"] = self.optimizer
        scheduler = cfg["learning_rate_scheduler"]
        self.scheduler = scheduler(self.optimizer, **cfg["learning_rate_scheduler_kwargs"]) if scheduler else None

        self._state_preprocessor = self._empty_preprocessor
        if cfg["state_preprocessor"]:
            self._state_preprocessor = cfg["state_preprocessor"](**cfg["state_preprocessor_kwargs"])
            self.checkpoint_modules["state_preprocessor"] = self._state_preprocessor
        self._value_preprocessor = self._empty_preprocessor
        if cfg["value_preprocessor"]:
            self._value_preprocessor = cfg["value_preprocessor"](**cfg["value_preprocessor_kwargs"])
            self.checkpoint_modules["value_preprocessor"] = self._value_preprocessor

    def _autocast(self) -> Any:
        if self._mixed_precision:
            return torch.autocast(device_type=self._device_type, enabled=True)
        return contextlib.nullcontext()

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory tensors and the experiment's writer (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        if self.memory is not None:
            if self.memory.memory_size != self._rollouts:
                raise ValueError(
                    f"PPO: the memory holds {self.memory.memory_size} steps but cfg['rollouts'] is {self._rollouts}; "
                    "the update uses the whole memory as one rollout: create it with memory_size=cfg['rollouts']"
                )
            samples = self._rollouts * self.memory.num_envs
            if self._mini_batches > samples:
                raise ValueError(
                    f"PPO: cfg['mini_batches'] ({self._mini_batches}) exceeds the samples per update "
                    f"(rollouts x num_envs = {samples}); use at most {samples} mini-batches"
                )
            self.memory.create_tensor(name="states", size=self.observation_space, dtype=torch.float32)
            self.memory.create_tensor(name="actions", size=self.action_space, dtype=torch.float32)
            self.memory.create_tensor(name="rewards", size=1, dtype=torch.float32)
            self.memory.create_tensor(name="terminated", size=1, dtype=torch.bool)
            self.memory.create_tensor(name="truncated", size=1, dtype=torch.bool)
            self.memory.create_tensor(name="log_prob", size=1, dtype=torch.float32)
            self.memory.create_tensor(name="values", size=1, dtype=torch.float32)
            self.memory.create_tensor(name="returns", size=1, dtype=torch.float32)
            self.memory.create_tensor(name="advantages", size=1, dtype=torch.float32)
        self._tensors_names = ["states", "actions", "log_prob", "values", "returns", "advantages"]
        self._rollout = 0
        self._current_log_prob = None
        self._current_next_states = None

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, torch.Tensor, dict]:
        """Sample actions from the policy; returns ``(actions, log_prob, outputs)``."""
        inputs = {"states": self._state_preprocessor(states)}
        with self._autocast():
            if timestep < self._random_timesteps:
                # keep a valid log-probability for the update: that of the random action under the policy
                actions, _, outputs = self.policy.random_act(inputs, role="policy")
                _, log_prob, _ = self.policy.act({**inputs, "taken_actions": actions}, role="policy")
            else:
                actions, log_prob, outputs = self.policy.act(inputs, role="policy")
        self._current_log_prob = log_prob
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
        """Track episode statistics and store the transition with its log-probability (V(s) is computed at the update)."""
        super().record_transition(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        )
        if self.memory is None:
            return
        self._current_next_states = next_states
        if self._rewards_shaper is not None:
            rewards = self._rewards_shaper(rewards, timestep, timesteps)
        # the value estimates are not stored here: the parameters do not change during a rollout, so the
        # update computes V(s) for all stored states at once (same numbers, one batched call instead of one per step)
        sample = dict(
            states=states,
            actions=actions,
            rewards=rewards,
            next_states=next_states,
            terminated=terminated,
            truncated=truncated,
            log_prob=self._current_log_prob,
        )
        self.memory.add_samples(**sample)
        for memory in self.secondary_memories:
            memory.add_samples(**sample)

    def post_interaction(self, timestep: int, timesteps: int) -> None:
        """Update the policy and value every ``rollouts`` steps, then write checkpoints and TensorBoard data."""
        self._rollout += 1
        if not self._rollout % self._rollouts and timestep >= self._learning_starts:
            self.set_mode("train")
            self._update(timestep, timesteps)
            self.set_mode("eval")
        super().post_interaction(timestep, timesteps)

    @staticmethod
    def _check_finite(timestep: int, name: str, tensor: torch.Tensor) -> None:
        """One host sync: fail clearly if NaN/inf reached the rollout (from the networks or the rewards)."""
        if not torch.isfinite(tensor).all():
            raise FloatingPointError(
                f"PPO update at timestep {timestep}: the rollout's '{name}' contain NaN/inf "
                f"({'the environment or rewards_shaper' if name == 'rewards' else 'the networks'} produced them); "
                "lower the learning rate, keep grad_norm_clip > 0, or standardise inputs with "
                "state_preprocessor=RunningStandardScaler"
            )

    def _update(self, timestep: int, timesteps: int) -> None:
        rewards = self.memory.get_tensor_by_name("rewards")
        self._check_finite(timestep, "rewards", rewards)
        self._check_finite(timestep, "log_prob", self.memory.get_tensor_by_name("log_prob"))

        # V(s_t) of every stored state and of the state after the last step, in one call without gradients and in
        # eval mode, with the parameters and statistics the rollout was collected with
        states = self.memory.get_tensor_by_name("states")
        rollout_shape = states.shape[:2]
        with torch.no_grad(), self._autocast():
            self.value.train(False)
            all_states = torch.cat([states.reshape(-1, states.shape[-1]), self._current_next_states.float()])
            all_values, _, _ = self.value.act({"states": self._state_preprocessor(all_states)}, role="value")
            self.value.train(True)
            all_values = self._value_preprocessor(all_values.float(), inverse=True)
        values = all_values[: states.shape[0] * states.shape[1]].reshape(*rollout_shape, 1)
        last_values = all_values[values.numel() :]
        self._check_finite(timestep, "values", values)
        if self._time_limit_bootstrap:
            rewards = rewards + self._discount_factor * values * self.memory.get_tensor_by_name("truncated")

        dones = self.memory.get_tensor_by_name("terminated") | self.memory.get_tensor_by_name("truncated")
        returns, advantages = compute_gae(
            rewards=rewards,
            dones=dones,
            values=values,
            next_values=last_values,
            discount_factor=self._discount_factor,
            lambda_coefficient=self._lambda,
        )
        self.memory.set_tensor_by_name("values", self._value_preprocessor(values, train=True))
        self.memory.set_tensor_by_name("returns", self._value_preprocessor(returns, train=True))
        self.memory.set_tensor_by_name("advantages", advantages)

        sampled_batches = self.memory.sample_all(names=self._tensors_names, mini_batches=self._mini_batches)
        policy_losses, value_losses, entropy_losses = [], [], []
        # the KL is only computed when something reads it (a KL scheduler or early stopping)
        needs_kl = bool(self._kl_threshold) or isinstance(self.scheduler, KLAdaptiveLR)

        for epoch in range(self._learning_epochs):
            kl_divergences = []
            for (
                sampled_states,
                sampled_actions,
                sampled_log_prob,
                sampled_values,
                sampled_returns,
                sampled_advantages,
            ) in sampled_batches:
                with self._autocast():
                    # the state statistics are updated in the first epoch only
                    sampled_states = self._state_preprocessor(sampled_states, train=not epoch)
                    _, next_log_prob, _ = self.policy.act(
                        {"states": sampled_states, "taken_actions": sampled_actions}, role="policy"
                    )
                    log_ratio = next_log_prob - sampled_log_prob

                    if needs_kl:
                        with torch.no_grad():
                            approx_kl = ((torch.exp(log_ratio) - 1) - log_ratio).mean()
                            kl_divergences.append(approx_kl)
                        if self._kl_threshold and approx_kl > self._kl_threshold:
                            break  # early stopping: leaves this epoch's mini-batch loop only

                    if self._entropy_loss_scale:
                        entropy_loss = -self._entropy_loss_scale * self.policy.get_entropy(role="policy").mean()
                    else:
                        entropy_loss = 0

                    ratio = torch.exp(log_ratio)
                    surrogate = sampled_advantages * ratio
                    clipped_surrogate = sampled_advantages * torch.clip(
                        ratio, 1.0 - self._ratio_clip, 1.0 + self._ratio_clip
                    )
                    policy_loss = -torch.min(surrogate, clipped_surrogate).mean()

                    predicted_values, _, _ = self.value.act({"states": sampled_states}, role="value")
                    if self._clip_predicted_values:
                        predicted_values = sampled_values + torch.clip(
                            predicted_values - sampled_values, min=-self._value_clip, max=self._value_clip
                        )
                    value_loss = self._value_loss_scale * F.mse_loss(sampled_returns, predicted_values)

                self.optimizer.zero_grad(set_to_none=True)
                self.scaler.scale(policy_loss + entropy_loss + value_loss).backward()
                if config.torch.is_distributed:
                    self.policy.reduce_parameters()
                    if self.value is not self.policy:
                        self.value.reduce_parameters()
                if self._grad_norm_clip > 0:
                    self.scaler.unscale_(self.optimizer)
                    clip_gradients(self._trainable_parameters, self._grad_norm_clip)
                self.scaler.step(self.optimizer)
                self.scaler.update()

                policy_losses.append(policy_loss.detach())
                value_losses.append(value_loss.detach())
                if self._entropy_loss_scale:
                    entropy_losses.append(entropy_loss.detach())

            if config.torch.is_distributed and kl_divergences and self.scheduler is not None:
                kl = torch.stack(kl_divergences).mean()
                torch.distributed.all_reduce(kl, op=torch.distributed.ReduceOp.SUM)
                kl_divergences = [kl / config.torch.world_size]
            step_scheduler(self.scheduler, kl_divergences)

        # losses are averaged over every planned mini-batch, also when KL early stopping skipped some [compat]
        updates = self._learning_epochs * self._mini_batches
        self.track_data("Loss / Policy loss", torch.stack(policy_losses).sum() / updates)
        self.track_data("Loss / Value loss", torch.stack(value_losses).sum() / updates)
        if self._entropy_loss_scale:
            self.track_data("Loss / Entropy loss", torch.stack(entropy_losses).sum() / updates)
        self.track_data("Policy / Standard deviation", self.policy.distribution(role="policy").stddev.mean().detach())
        if self.scheduler is not None:
            self.track_data("Learning / Learning rate", self.scheduler.get_last_lr()[0])
