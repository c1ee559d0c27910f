"""The half of an on-policy agent that PPO, A2C, RPO and TRPO share (torch), written once.

Collection (act, record, the rollout cadence), the rollout memory, and the start of every update: log pi_old(a|s)
and V(s) of every step as the acting pass computed them (stored beside the transition; a shared model runs its
trunk once for both), V of the last next states, the time-limit bootstrap, GAE, the named non-finite check and the
value preprocessing. An algorithm subclasses :class:`OnPolicyAgent` and writes only its own loss and step in
``_update``.
"""

from typing import Any, NamedTuple, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from skrl_like.core.agents.checks import (
    check_named_flags,
    check_rollout_memory,
    non_finite_note,
    rollout_flag_names,
    step_flag_names,
)
from skrl_like.core.agents.privileged import NEXT_PRIVILEGED_STATES, PRIVILEGED_STATES, build_privileged_preprocessor
from skrl_like.core.agents.schedule import RolloutSchedule
from skrl_like.core.agents.transition import Transition
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


class ActingPass(NamedTuple):
    """What ``act`` computed for the step that ``record_transition`` stores next, found by the identity of its states
    and actions tensors (a cache: on any other tensors the same numbers are computed there instead)."""

    states: torch.Tensor  # as act received them
    actions: torch.Tensor
    log_prob: torch.Tensor  # log pi(a|s), float32
    values: Optional[torch.Tensor]  # V(s) as the value model gives it (preprocessed units), float32; None unless shared


class OnPolicyAgent(Agent):
    """An agent with a ``"policy"`` and a ``"value"`` model that learns from one rollout of ``cfg["rollouts"]``
    steps at a time. Its :meth:`_setup` sets up both models and one optimizer for them (an algorithm with other
    models or optimizers calls :meth:`_setup_on_policy` in its own); ``_update`` starts with :meth:`_rollout_batch`."""

    def _setup(self) -> None:
        self._setup_on_policy()
        self._setup_joint_optimizer(self.policy, self.value)

    _privileged_state_roles = ("value",)  # an asymmetric actor-critic's value model may read the env's states
    #: store log pi(a|s) of each step from the acting pass (memory tensor ``log_prob``), and V(s) too (``values``)
    #: where one shared model gives it with the policy's trunk, instead of evaluating the whole rollout again at the
    #: update (separate value models evaluate the rollout's values there, in one batch: cheaper than a value call
    #: per step); ``False`` where the value model reads what ``act`` does not get (MAPPO's shared states) or the
    #: algorithm evaluates the rollout itself (AMP)
    keeps_acting_pass = True
    #: whether the acting pass stores V(s) too: set up as ``keeps_acting_pass`` and one model for both roles
    _acting_values = False
    _acting_pass: Optional[ActingPass] = None

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
        self._privileged_state_preprocessor = build_privileged_preprocessor(self)
        if self.privileged_roles:  # the value model reads the env's states, which act does not get
            self.keeps_acting_pass = False
        self._acting_values = self.policy is self.value

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
            self._create_privileged_state_tensors(torch.float32)
            if self.keeps_acting_pass:
                self.memory.create_tensor(name="log_prob", size=1, dtype=torch.float32)
                if self._acting_values:
                    self.memory.create_tensor(name="values", size=1, dtype=torch.float32)

    def _model_inputs(self, states: torch.Tensor) -> dict:
        """The inputs of every policy and value call for (preprocessed) ``states``: RPO adds its ``alpha``."""
        return {"states": states}

    def _rollout_policy_inputs(self, processed: torch.Tensor) -> dict:
        """The policy's inputs for the rollout's (preprocessed) states, time-major rows: a recurrent agent adds each
        row's stored hidden states."""
        return self._model_inputs(processed)

    def _update_inputs(self, processed: torch.Tensor, batch: slice) -> dict:
        """The policy's inputs in the update for the rows ``batch`` of the rollout batch (``processed``: their
        preprocessed states): a recurrent agent adds the rows' stored hidden states and episode ends."""
        return self._model_inputs(processed)

    def _rollout_value_inputs(self, processed: torch.Tensor) -> dict:
        """The value model's inputs for the rollout's states and the last next states (preprocessed, one batch):
        MAPPO's centralised critic reads the shared states instead, an asymmetric value model the privileged states
        stored beside the rollout."""
        if self.privileged_roles:
            rows = self._privileged_rows()
            last = self.memory.get_tensor_by_name(NEXT_PRIVILEGED_STATES)[-1]
            return self._model_inputs(self._privileged_state_preprocessor(torch.cat([rows, last])))
        return self._model_inputs(processed)

    def _value_inputs(self, inputs: dict, batch: slice, epoch: int) -> dict:
        """The value model's inputs in the update for mini-batch ``batch`` (``inputs``: the policy's): the same
        by default; MAPPO's centralised critic reads the mini-batch's shared states, an asymmetric value model the
        mini-batch's privileged states (their statistics updated in the first epoch, as the states')."""
        if self.privileged_roles:
            return self._model_inputs(
                self._privileged_state_preprocessor(self._privileged_rows()[batch], train=not epoch)
            )
        return inputs

    def _privileged_rows(self) -> torch.Tensor:
        """The rollout's privileged states, one row per sample (time-major, as :class:`RolloutBatch`): a view."""
        return self._rollout_rows(PRIVILEGED_STATES)

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, torch.Tensor, dict]:
        """Sample actions from the policy; returns ``(actions, log_prob, outputs)`` (before ``random_timesteps``,
        uniform random actions with their log-probability under the policy). While training, log pi(a|s) is kept
        for ``record_transition`` to store with the step, and V(s) too where one shared model reuses the policy's
        trunk for it."""
        inputs = self._model_inputs(self._state_preprocessor(states))
        with self._autocast():
            if timestep < self.cfg["random_timesteps"]:
                actions, _, outputs = self.policy.random_act(inputs, role="policy")
                _, log_prob, _ = self.policy.act({**inputs, "taken_actions": actions}, role="policy")
            else:
                actions, log_prob, outputs = self.policy.act(inputs, role="policy")
            if self.training and self.keeps_acting_pass and self.memory is not None:
                values = self.value.act(inputs, role="value")[0].detach().float() if self._acting_values else None
                self._acting_pass = ActingPass(states, actions, log_prob.detach().float(), values)
        return actions, log_prob, outputs

    def transition_to_store(self, states: torch.Tensor, actions: torch.Tensor, *args: Any, **kwargs: Any) -> Transition:
        """The base's transition with the step's ``log_prob`` (and ``values``, one shared model) of
        :attr:`keeps_acting_pass`."""
        transition = super().transition_to_store(states, actions, *args, **kwargs)
        if not self.keeps_acting_pass:
            return transition
        log_prob, values = self._step_log_prob_and_values(states, actions)
        if values is None:
            return transition.with_extras(log_prob=log_prob)
        return transition.with_extras(log_prob=log_prob, values=values)

    def _step_log_prob_and_values(self, states: torch.Tensor, actions: torch.Tensor) -> Tuple:
        """log pi(a|s) and V(s) (``None`` unless one shared model gives both) of the step being stored: the acting
        pass's when ``act`` acted on these very tensors, else computed here in one batched call (a loop that stores
        actions it did not get from ``act``)."""
        acted, self._acting_pass = self._acting_pass, None
        if acted is not None and acted.states is states and acted.actions is actions:
            return acted.log_prob, acted.values
        with torch.no_grad(), self._autocast():
            inputs = self._model_inputs(self._state_preprocessor(states))
            _, log_prob, _ = self.policy.act({**inputs, "taken_actions": actions}, role="policy")
            values = self.value.act(inputs, role="value")[0].float() if self._acting_values else None
        return log_prob.float(), values

    # -- the start of every update ------------------------------------------------------------------------------

    def _evaluate_rollout(self, states: torch.Tensor, actions: torch.Tensor, last_states: torch.Tensor) -> Tuple:
        """``(log_prob, values, last_values)`` of the stored rollout, with the parameters and statistics it was
        collected with (eval mode, no gradients): values in raw return units."""
        with torch.no_grad(), self._autocast():
            self.policy.train(False)
            self.value.train(False)
            processed = self._state_preprocessor(torch.cat([states, last_states.float()]))
            rollout_inputs = self._rollout_policy_inputs(processed[: len(states)])
            _, log_prob, _ = self.policy.act({**rollout_inputs, "taken_actions": actions}, role="policy")
            all_values, _, _ = self.value.act(self._rollout_value_inputs(processed), role="value")
            self.policy.train(True)
            self.value.train(True)
        all_values = self._value_preprocessor(all_values.float(), inverse=True)
        return log_prob.float(), all_values[: len(states)], all_values[len(states) :]

    def _stored_values(self, states: torch.Tensor, last_states: torch.Tensor) -> Tuple:
        """``(values, last_values)`` in raw return units, eval mode, no gradients: the acting pass's V(s) of the
        rollout (one shared model) or V(s) of its ``states`` evaluated here in one batch (separate models), and V(s)
        of the last next states."""
        stored = self._acting_values
        with torch.no_grad(), self._autocast():
            self.value.train(False)
            evaluated = last_states.float() if stored else torch.cat([states, last_states.float()])
            values, _, _ = self.value.act(self._model_inputs(self._state_preprocessor(evaluated)), role="value")
            self.value.train(True)
        if stored:
            values = torch.cat([self._rollout_rows("values"), values.float()])
        all_values = self._value_preprocessor(values.float(), inverse=True)
        return all_values[: len(states)], all_values[len(states) :]

    def _rollout_rows(self, name: str) -> torch.Tensor:
        """The memory's rollout tensor ``name`` as one row per sample (time-major): a view."""
        tensor = self.memory.get_tensor_by_name(name)
        return tensor.reshape(-1, *tensor.shape[2:])

    def _rollout_batch(self, timestep: int) -> RolloutBatch:
        """The memory's rollout with log pi_old, values (the acting pass's, :attr:`keeps_acting_pass`, or evaluated
        here), GAE returns and advantages, checked finite (naming the first quantity that is not, before anything
        changes) and preprocessed: the value preprocessor's statistics are updated with the values, then with the
        returns."""
        cfg = self.cfg
        memory = self.memory
        rollouts, num_envs = memory.get_tensor_by_name("states").shape[:2]
        samples = rollouts * num_envs
        states, actions = self._rollout_rows("states"), self._rollout_rows("actions")
        rewards = memory.get_tensor_by_name("rewards")
        last_states = memory.get_tensor_by_name("next_states")[-1]
        if self.keeps_acting_pass:
            log_prob = self._rollout_rows("log_prob")
            values, last_values = self._stored_values(states, last_states)
        else:
            log_prob, values, last_values = self._evaluate_rollout(states, actions, last_states)
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

    # -- the clipped-surrogate losses -------------------------------------------------------------------------------

    def _mini_batch_losses(
        self,
        inputs: dict,
        value_inputs: dict,
        actions: torch.Tensor,
        old_log_prob: torch.Tensor,
        old_values: torch.Tensor,
        returns: torch.Tensor,
        advantages: torch.Tensor,
    ) -> Tuple[torch.Tensor, ...]:
        """PPO's losses of one mini-batch (PPO, RPO, AMP): ``(policy_loss, value_loss, entropy_loss, log_ratio)``
        (``inputs``: the policy's, of preprocessed states; ``value_inputs``: the value model's)."""
        cfg = self.cfg
        _, log_prob, _ = self.policy.act({**inputs, "taken_actions": actions}, role="policy")
        log_ratio = log_prob - old_log_prob

        # clipped surrogate objective
        ratio = torch.exp(log_ratio)
        surrogate = advantages * ratio
        clipped_surrogate = advantages * torch.clip(ratio, 1.0 - cfg["ratio_clip"], 1.0 + cfg["ratio_clip"])
        policy_loss = -torch.min(surrogate, clipped_surrogate).mean()

        # entropy bonus
        if cfg["entropy_loss_scale"]:
            entropy_loss = -cfg["entropy_loss_scale"] * self.policy.get_entropy(role="policy").mean()
        else:
            entropy_loss = torch.zeros((), device=self.device)

        # value loss, predictions optionally clipped around the rollout's values
        predicted_values, _, _ = self.value.act(value_inputs, role="value")
        if cfg["clip_predicted_values"]:
            predicted_values = old_values + torch.clip(
                predicted_values - old_values, -cfg["value_clip"], cfg["value_clip"]
            )
        value_loss = cfg["value_loss_scale"] * F.mse_loss(returns, predicted_values.float())
        return policy_loss, value_loss, entropy_loss, log_ratio

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
