"""The half of an on-policy agent that PPO, A2C, RPO and TRPO share (torch), written once.

Collection (act, record, the rollout cadence), the rollout memory, and the start of every update: log pi_old(a|s)
and V(s) of the whole rollout in one batched call each, with the parameters and statistics it was collected with
(nothing changed while it was collected, so these are the numbers acting would have given), the time-limit
bootstrap, GAE, the named non-finite check and the value preprocessing. An algorithm subclasses
:class:`OnPolicyAgent` and writes only its own loss and step in ``_update``.
"""

from typing import Any, NamedTuple, Optional, Sequence, Tuple

import torch

from skrl_like.core.agents.checks import (
    check_named_flags,
    check_rollout_memory,
    non_finite_note,
    rollout_flag_names,
    step_flag_names,
)
from skrl_like.core.agents.schedule import RolloutSchedule
from skrl_like.torch.agents.base import Agent
from skrl_like.torch.agents.mechanics import all_finite, compute_gae, unique_parameters


class RolloutBatch(NamedTuple):
    """The rollout as the losses read it, one row per sample (time-major: row ``t * num_envs + env``)."""

    states: torch.Tensor  # as stored (the losses preprocess them)
    actions: torch.Tensor
    log_prob: torch.Tensor  # log pi_old(a|s)
    values: torch.Tensor  # V(s), preprocessed like the returns
    returns: torch.Tensor  # preprocessed
    advantages: torch.Tensor  # normalised


class OnPolicyAgent(Agent):
    """An agent with a ``"policy"`` and a ``"value"`` model that learns from one rollout of ``cfg["rollouts"]``
    steps at a time. Its :meth:`_setup` sets up both models and one optimizer for them (an algorithm with other
    models or optimizers calls :meth:`_setup_on_policy` in its own); ``_update`` starts with :meth:`_rollout_batch`."""

    def _setup(self) -> None:
        self._setup_on_policy()
        self._setup_joint_optimizer(self.policy, self.value)

    def _setup_on_policy(self) -> None:
        """Check and register the two models; the rollout schedule and the state/value preprocessors."""
        self._require_models(("policy", "value"))
        self._check_model_outputs(value_roles=("value",), policy_roles=("policy",))
        self.policy = self.models["policy"]
        self.value = self.models["value"]
        self.checkpoint_modules["policy"] = self.policy
        self.checkpoint_modules["value"] = self.value
        self.schedule = RolloutSchedule(self.cfg["rollouts"], self.cfg["learning_starts"])
        self._state_preprocessor = self._build_preprocessor("state_preprocessor")
        self._value_preprocessor = self._build_preprocessor("value_preprocessor")

    def _setup_joint_optimizer(self, *models: Any) -> None:
        """One Adam over the parameters of ``models`` (a shared model's once), its learning-rate scheduler and the
        mixed-precision gradient scaler (``cfg["mixed_precision"]``)."""
        self._mixed_precision = bool(self.cfg.get("mixed_precision", False))
        self.scaler = torch.amp.GradScaler(device=self.device.type, enabled=self._mixed_precision)
        self._trainable_parameters = unique_parameters(*models)
        # fused: one kernel for all parameters instead of a loop of small ops (3x cheaper for small networks)
        self.optimizer = torch.optim.Adam(self._trainable_parameters, lr=self.cfg["learning_rate"], fused=True)
        self.checkpoint_modules["optimizer"] = self.optimizer
        scheduler = self.cfg["learning_rate_scheduler"]
        self.scheduler = scheduler(self.optimizer, **self.cfg["learning_rate_scheduler_kwargs"]) if scheduler else None

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        """Create the rollout memory's tensors and the experiment's writer (called once, by the trainer)."""
        super().init(trainer_cfg)
        self.set_mode("eval")
        if self.memory is not None:
            check_rollout_memory(
                type(self).__name__, self.memory, self.cfg["rollouts"], self.cfg.get("mini_batches", 1)
            )
            self.memory.create_tensor(name="states", size=self.observation_space, dtype=torch.float32)
            self.memory.create_tensor(name="actions", size=self.action_space, dtype=torch.float32)
            self.memory.create_tensor(name="rewards", size=1, dtype=torch.float32)
            self.memory.create_tensor(name="next_states", size=self.observation_space, dtype=torch.float32)
            self.memory.create_tensor(name="terminated", size=1, dtype=torch.bool)
            self.memory.create_tensor(name="truncated", size=1, dtype=torch.bool)

    def _model_inputs(self, states: torch.Tensor) -> dict:
        """The inputs of every policy and value call for (preprocessed) ``states``: RPO adds its ``alpha``."""
        return {"states": states}

    def _rollout_value_inputs(self, processed: torch.Tensor) -> dict:
        """The value model's inputs for the rollout's states and the last next states (preprocessed, one batch):
        MAPPO's centralised critic reads the shared states instead."""
        return self._model_inputs(processed)

    def _value_inputs(self, inputs: dict, batch: slice, epoch: int) -> dict:
        """The value model's inputs in the update for mini-batch ``batch`` (``inputs``: the policy's): the same
        by default; MAPPO's centralised critic reads the mini-batch's shared states."""
        return inputs

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, torch.Tensor, dict]:
        """Sample actions from the policy; returns ``(actions, log_prob, outputs)`` (before ``random_timesteps``,
        uniform random actions with their log-probability under the policy, which the update recomputes)."""
        inputs = self._model_inputs(self._state_preprocessor(states))
        with self._autocast():
            if timestep < self.cfg["random_timesteps"]:
                actions, _, outputs = self.policy.random_act(inputs, role="policy")
                _, log_prob, _ = self.policy.act({**inputs, "taken_actions": actions}, role="policy")
            else:
                actions, log_prob, outputs = self.policy.act(inputs, role="policy")
        return actions, log_prob, outputs

    # -- the start of every update ------------------------------------------------------------------------------

    def _evaluate_rollout(self, states: torch.Tensor, actions: torch.Tensor, last_states: torch.Tensor) -> Tuple:
        """``(log_prob, values, last_values)`` of the stored rollout, with the parameters and statistics it was
        collected with (eval mode, no gradients): values in raw return units."""
        with torch.no_grad(), self._autocast():
            self.policy.train(False)
            self.value.train(False)
            processed = self._state_preprocessor(torch.cat([states, last_states.float()]))
            rollout_inputs = self._model_inputs(processed[: len(states)])
            _, log_prob, _ = self.policy.act({**rollout_inputs, "taken_actions": actions}, role="policy")
            all_values, _, _ = self.value.act(self._rollout_value_inputs(processed), role="value")
            self.policy.train(True)
            self.value.train(True)
        all_values = self._value_preprocessor(all_values.float(), inverse=True)
        return log_prob.float(), all_values[: len(states)], all_values[len(states) :]

    def _rollout_batch(self, timestep: int) -> RolloutBatch:
        """The memory's rollout with log pi_old, values, GAE returns and advantages, checked finite (naming the
        first quantity that is not, before anything changes) and preprocessed: the value preprocessor's statistics
        are updated with the values, then with the returns."""
        cfg = self.cfg
        memory = self.memory
        rollouts, num_envs = memory.get_tensor_by_name("states").shape[:2]
        samples = rollouts * num_envs

        def rows(name: str) -> torch.Tensor:
            tensor = memory.get_tensor_by_name(name)
            return tensor.reshape(samples, *tensor.shape[2:])

        states, actions = rows("states"), rows("actions")
        rewards = memory.get_tensor_by_name("rewards")
        log_prob, values, last_values = self._evaluate_rollout(
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
        flags = all_finite((rewards, log_prob, values, returns, advantages)).tolist()
        check_named_flags(type(self).__name__, timestep, rollout_flag_names(), flags)

        values = self._value_preprocessor(values, train=True).reshape(samples, 1)
        returns = self._value_preprocessor(returns, train=True).reshape(samples, 1)
        return RolloutBatch(states, actions, log_prob, values, returns, advantages.reshape(samples, 1))

    # -- after every update -------------------------------------------------------------------------------------

    def _check_steps(self, timestep: int, losses: list, stepped_finite: list, per_epoch: int) -> None:
        """One host transfer after the update: the first non-finite loss (``losses``: one stacked tensor of the
        loss terms per step) or parameter (``stepped_finite``: one flag per step), in the order of the steps."""
        flags = torch.cat([torch.isfinite(torch.stack(losses)), torch.stack(stepped_finite)[:, None]], dim=1)
        flags = flags.reshape(-1).tolist()
        if all(flags):
            return
        steps = [(index // per_epoch, index % per_epoch) for index in range(len(losses))]
        names = step_flag_names(steps, non_finite_note(self._non_finite_parameters()), self._loss_terms)
        check_named_flags(type(self).__name__, timestep, names, flags)

    _loss_terms: Sequence[str] = ("policy", "value", "entropy")

    def _non_finite_parameters(self) -> list:
        seen, found = set(), []
        for role, model in self.models.items():
            if id(model) in seen:  # a model shared by two roles is named once, by its first role
                continue
            seen.add(id(model))
            found += [
                f"parameter '{name}' of the {role} model"
                for name, parameter in model.named_parameters()
                if not torch.isfinite(parameter).all()
            ]
        return found
