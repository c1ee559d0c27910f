"""Proximal Policy Optimization (PPO), JAX backend.

The same algorithm as the torch backend (same config keys, same update rule), written the PureJaxRL way:
acting is one jitted call (the policy sample, one host transfer), and a whole update (the value of every stored
state and of the bootstrap state, GAE, every epoch and mini-batch, KL early stopping, the learning-rate schedule
and both Adam steps) is one jitted pure function of explicit state. Shapes are static, so nothing recompiles
after the first update.
"""

import functools
from typing import Any, Mapping, NamedTuple, Optional, Tuple, Union

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from skrl_like import config
from skrl_like.core.config import merge_config
from skrl_like.jax.agents.base import Agent
from skrl_like.jax.agents.mechanics import FunctionalPreprocessor, compute_gae, make_scheduler, step_scheduler
from skrl_like.jax.resources.optimizers import Adam

# fmt: off
PPO_DEFAULT_CONFIG = {
    "rollouts": 16,                 # number of rollouts before updating
    "learning_epochs": 8,           # number of learning epochs during each update
    "mini_batches": 2,              # number of mini batches during each learning epoch

    "discount_factor": 0.99,        # discount factor (gamma)
    "lambda": 0.95,                 # TD(lambda) coefficient (lam) for computing returns and advantages

    "learning_rate": 1e-3,                  # learning rate
    "learning_rate_scheduler": None,        # learning rate scheduler class (e.g. KLAdaptiveLR or an optax schedule)
    "learning_rate_scheduler_kwargs": {},   # learning rate scheduler's kwargs (e.g. {"step_size": 1e-3})

    "state_preprocessor": None,             # state preprocessor class (see skrl_like.jax.resources.preprocessors)
    "state_preprocessor_kwargs": {},        # state preprocessor's kwargs (e.g. {"size": env.observation_space})
    "value_preprocessor": None,             # value preprocessor class (see skrl_like.jax.resources.preprocessors)
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


class _LearningState(NamedTuple):
    """Everything an update changes, passed explicitly to the jitted update."""

    policy_params: Any
    value_params: Any
    policy_optimizer: Any
    value_optimizer: Any
    state_statistics: Any
    value_statistics: Any
    learning_rate: jax.Array


class PPO(Agent):
    """Proximal Policy Optimization.

    :param models: ``{"policy": ..., "value": ...}``, each with parameters (``model.init_state_dict(role)``).
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param observation_space: observation space (or shape/size) of one environment.
    :param action_space: action space (or shape/size) of one environment.
    :param device: JAX device for the agent's computations (``None``: the default device).
    :param cfg: keys of ``PPO_DEFAULT_CONFIG``; unknown keys raise ``ValueError`` with the closest key.
    """

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        action_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        device: Optional[Union[str, jax.Device]] = None,
        cfg: Optional[dict] = None,
    ) -> None:
        cfg = merge_config(PPO_DEFAULT_CONFIG, cfg, "PPO cfg")
        super().__init__(models, memory, observation_space, action_space, device, cfg)
        self._require_models(("policy", "value"))

        self.policy = self.models["policy"]
        self.value = self.models["value"]
        for role, model in (("policy", self.policy), ("value", self.value)):
            if not hasattr(model, "state_dict"):
                raise ValueError(
                    f"PPO: the '{role}' model has no parameters yet: call {role}.init_state_dict('{role}') "
                    "before creating the agent"
                )
        self.checkpoint_modules["policy"] = self.policy
        self.checkpoint_modules["value"] = self.value
        if config.jax.is_distributed:
            self.policy.broadcast_parameters()
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
        for key in ("rollouts", "learning_epochs", "mini_batches"):
            if not isinstance(cfg[key], int) or cfg[key] < 1:
                raise ValueError(f"PPO cfg['{key}'] must be an int >= 1, got {cfg[key]!r}")

        # two Adam optimizers, each clipping its own model's gradients; kept in checkpoint_modules (see base)
        self._scheduler = cfg["learning_rate_scheduler"]
        self._schedule = make_scheduler(self._scheduler, cfg["learning_rate_scheduler_kwargs"])
        for role, model in (("policy", self.policy), ("value", self.value)):
            self.checkpoint_modules[f"{role}_optimizer"] = Adam(
                model=model, lr=self._learning_rate, grad_norm_clip=self._grad_norm_clip, scale=self._schedule is None
            )

        self._state_preprocessor = self._empty_preprocessor
        self._value_preprocessor = self._empty_preprocessor
        state_preprocessor = value_preprocessor = None
        if cfg["state_preprocessor"]:
            state_preprocessor = cfg["state_preprocessor"](**cfg["state_preprocessor_kwargs"])
            self._state_preprocessor = state_preprocessor
            self.checkpoint_modules["state_preprocessor"] = state_preprocessor
        if cfg["value_preprocessor"]:
            value_preprocessor = cfg["value_preprocessor"](**cfg["value_preprocessor_kwargs"])
            self._value_preprocessor = value_preprocessor
            self.checkpoint_modules["value_preprocessor"] = value_preprocessor
        self._state_functional = FunctionalPreprocessor(state_preprocessor)
        self._value_functional = FunctionalPreprocessor(value_preprocessor)

    @property
    def policy_optimizer(self) -> Any:
        return self.checkpoint_modules["policy_optimizer"]

    @property
    def value_optimizer(self) -> Any:
        return self.checkpoint_modules["value_optimizer"]

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the memory tensors, the writer and the jitted functions (called once, by the trainer)."""
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
            self.memory.create_tensor(name="states", size=self.observation_space, dtype=jnp.float32)
            self.memory.create_tensor(name="actions", size=self.action_space, dtype=jnp.float32)
            self.memory.create_tensor(name="rewards", size=1, dtype=jnp.float32)
            self.memory.create_tensor(name="terminated", size=1, dtype=jnp.int8)
            self.memory.create_tensor(name="truncated", size=1, dtype=jnp.int8)
            self.memory.create_tensor(name="log_prob", size=1, dtype=jnp.float32)
            self.memory.create_tensor(name="values", size=1, dtype=jnp.float32)
            self.memory.create_tensor(name="returns", size=1, dtype=jnp.float32)
            self.memory.create_tensor(name="advantages", size=1, dtype=jnp.float32)
        self._rollout = 0
        self._current_log_prob = None
        self._current_next_states = None
        # this agent's own random stream, split off the run's key (set_seed makes it reproducible)
        config.jax.key, self._key = jax.random.split(config.jax.key)
        self._act_fn = jax.jit(self._sample)
        self._update_fn = jax.jit(self._learn)

    # -- acting -------------------------------------------------------------------------------------------------

    def _evaluate(self, value_params: Any, value_statistics: Any, states_statistics: Any, states: jax.Array) -> Any:
        """V(s) in raw return units (pure)."""
        _, processed = self._state_functional(states_statistics, states)
        values, _, _ = self.value.act({"states": processed}, role="value", params=value_params)
        return self._value_functional(value_statistics, values, inverse=True)[1]

    def _sample(self, policy_params: Any, state_statistics: Any, states: jax.Array, key: jax.Array) -> Tuple[Any, ...]:
        """One dispatch per step: sample actions (V(s) is estimated for the whole rollout at update time)."""
        key, subkey = jax.random.split(key)
        _, processed = self._state_functional(state_statistics, states)
        actions, log_prob, outputs = self.policy.act(
            {"states": processed, "key": subkey}, role="policy", params=policy_params
        )
        # one float32 array for what the host needs every step: a single transfer instead of two
        packed = jnp.concatenate([x.reshape(x.shape[0], -1).astype(jnp.float32) for x in (actions, log_prob)], axis=-1)
        return actions, log_prob, outputs, key, packed

    def act(self, states: Any, timestep: int, timesteps: int) -> Tuple[Any, Any, dict]:
        """Sample actions from the policy; returns ``(actions, log_prob, outputs)``."""
        if timestep < self._random_timesteps:
            # keep a valid log-probability for the update: that of the random action under the policy
            actions, _, outputs = self.policy.random_act({"states": states}, role="policy")
            processed = self._state_preprocessor(states)
            _, log_prob, _ = self.policy.act({"states": processed, "taken_actions": actions}, role="policy")
            if not self._jax:
                actions, log_prob = jax.device_get((actions, log_prob))
        else:
            actions, log_prob, outputs, self._key, packed = self._act_fn(
                self.policy.state_dict.params, self._state_functional.state, states, self._key
            )
            if not self._jax:  # the NumPy backend: one transfer, then views (outputs stay lazy device arrays)
                packed = np.asarray(packed)
                action_end = actions.shape[-1]
                actions = packed[:, :action_end].astype(actions.dtype, copy=False)
                log_prob = packed[:, action_end:]
        self._current_log_prob = log_prob
        return actions, log_prob, outputs

    def record_transition(
        self,
        states: Any,
        actions: Any,
        rewards: Any,
        next_states: Any,
        terminated: Any,
        truncated: Any,
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

    # -- learning -----------------------------------------------------------------------------------------------

    def _policy_loss(
        self, params: Any, states: jax.Array, actions: jax.Array, old_log_prob: jax.Array, advantages: jax.Array
    ) -> Tuple[jax.Array, Tuple[jax.Array, ...]]:
        # the key is unused (the log-probability of the taken actions is deterministic) but the mixin wants one
        _, log_prob, outputs = self.policy.act(
            {"states": states, "taken_actions": actions, "key": jax.random.PRNGKey(0)}, role="policy", params=params
        )
        log_ratio = log_prob - old_log_prob
        approx_kl = jax.lax.stop_gradient(((jnp.exp(log_ratio) - 1) - log_ratio).mean())
        if self._entropy_loss_scale:
            entropy_loss = -self._entropy_loss_scale * self.policy.get_entropy(outputs, role="policy").mean()
        else:
            entropy_loss = jnp.zeros(())
        ratio = jnp.exp(log_ratio)
        surrogate = advantages * ratio
        clipped_surrogate = advantages * jnp.clip(ratio, 1.0 - self._ratio_clip, 1.0 + self._ratio_clip)
        policy_loss = -jnp.minimum(surrogate, clipped_surrogate).mean()
        return policy_loss + entropy_loss, (policy_loss, entropy_loss, approx_kl, outputs["stddev"].mean())

    def _value_loss(self, params: Any, states: jax.Array, old_values: jax.Array, returns: jax.Array) -> jax.Array:
        predicted_values, _, _ = self.value.act({"states": states}, role="value", params=params)
        if self._clip_predicted_values:
            predicted_values = old_values + jnp.clip(predicted_values - old_values, -self._value_clip, self._value_clip)
        return self._value_loss_scale * jnp.mean((returns - predicted_values) ** 2)

    def _learn(
        self, state: _LearningState, rollout: dict, last_states: jax.Array, timestep: jax.Array
    ) -> Tuple[Any, ...]:
        """The whole update as one pure function: ``(new state, metrics, (values, returns, advantages))``."""
        # V(s_t) of every stored state, with the parameters and statistics the rollout was collected with
        rollout_shape = rollout["states"].shape[:2]
        flat_states = rollout["states"].reshape(rollout_shape[0] * rollout_shape[1], -1)
        evaluate = functools.partial(self._evaluate, state.value_params, state.value_statistics, state.state_statistics)
        raw_values = evaluate(flat_states).reshape(*rollout_shape, 1)
        last_values = evaluate(last_states)
        rewards = rollout["rewards"]
        if self._time_limit_bootstrap:
            rewards = rewards + self._discount_factor * raw_values * rollout["truncated"]
        dones = jnp.logical_or(rollout["terminated"], rollout["truncated"])
        returns, advantages = compute_gae(rewards, dones, raw_values, last_values, self._discount_factor, self._lambda)
        value_statistics, values = self._value_functional(state.value_statistics, raw_values, train=True)
        value_statistics, returns = self._value_functional(value_statistics, returns, train=True)

        # contiguous mini-batches of (T * N) // M rows, the same ones every epoch (skrl layout, as in torch)
        samples = rollout["states"].shape[0] * rollout["states"].shape[1]
        batch_size = samples // self._mini_batches

        def batches(array: jax.Array) -> jax.Array:
            flat = array.reshape(samples, -1)[: batch_size * self._mini_batches]
            return flat.reshape(self._mini_batches, batch_size, -1)

        mini_batches = tuple(
            batches(x)
            for x in (rollout["states"], rollout["actions"], rollout["log_prob"], values, returns, advantages)
        )
        zero = jnp.zeros(())

        def mini_batch_step(carry: Tuple[Any, ...], batch: Tuple[jax.Array, ...]) -> Tuple[Tuple[Any, ...], None]:
            learning, first_epoch, stopped, kl_sum, kl_count, losses = carry

            def learn(carry: Tuple[Any, ...]) -> Tuple[Any, ...]:
                learning, first_epoch, stopped, kl_sum, kl_count, losses = carry
                states, actions, old_log_prob, old_values, sampled_returns, sampled_advantages = batch
                # the state statistics are updated in the first epoch only
                state_statistics, states = self._state_functional(learning.state_statistics, states, train=first_epoch)
                (_, (policy_loss, entropy_loss, approx_kl, stddev)), policy_grad = jax.value_and_grad(
                    self._policy_loss, has_aux=True
                )(learning.policy_params, states, actions, old_log_prob, sampled_advantages)
                value_loss, value_grad = jax.value_and_grad(self._value_loss)(
                    learning.value_params, states, old_values, sampled_returns
                )
                policy_optimizer, policy_params = learning.policy_optimizer.update(
                    policy_grad, learning.policy_params, learning.learning_rate
                )
                value_optimizer, value_params = learning.value_optimizer.update(
                    value_grad, learning.value_params, learning.learning_rate
                )
                stepped = learning._replace(
                    policy_params=policy_params,
                    value_params=value_params,
                    policy_optimizer=policy_optimizer,
                    value_optimizer=value_optimizer,
                )
                # KL early stopping: no step for this mini-batch and none for the rest of the epoch
                stop = (approx_kl > self._kl_threshold) if self._kl_threshold else jnp.array(False)
                if self._kl_threshold:
                    kept = jax.tree_util.tree_map(lambda old, new: jnp.where(stop, old, new), learning, stepped)
                else:
                    kept = stepped
                kept = kept._replace(state_statistics=state_statistics)
                kept_losses = jax.tree_util.tree_map(
                    lambda total, loss: total + jnp.where(stop, 0.0, loss),
                    losses[:3],
                    (policy_loss, value_loss, entropy_loss),
                )
                new_losses = kept_losses + (jnp.where(stop, losses[3], stddev),)
                return kept, first_epoch, stop, kl_sum + approx_kl, kl_count + 1, new_losses

            if not self._kl_threshold:
                return learn(carry), None
            return jax.lax.cond(stopped, lambda carry: carry, learn, carry), None

        def epoch_step(carry: Tuple[Any, ...], epoch: jax.Array) -> Tuple[Tuple[Any, ...], None]:
            learning, losses = carry
            inner = (learning, epoch == 0, jnp.array(False), zero, zero, losses)
            (learning, _, _, kl_sum, kl_count, losses), _ = jax.lax.scan(mini_batch_step, inner, mini_batches)
            kl = kl_sum / jnp.maximum(kl_count, 1)
            learning_rate = step_scheduler(self._scheduler, self._schedule, learning.learning_rate, timestep, kl)
            return (learning._replace(learning_rate=jnp.asarray(learning_rate, jnp.float32)), losses), None

        start = state._replace(value_statistics=value_statistics)
        (state, losses), _ = jax.lax.scan(
            epoch_step, (start, (zero, zero, zero, zero)), jnp.arange(self._learning_epochs)
        )
        updates = self._learning_epochs * self._mini_batches
        metrics = {
            "Loss / Policy loss": losses[0] / updates,
            "Loss / Value loss": losses[1] / updates,
            "Loss / Entropy loss": losses[2] / updates,
            "Policy / Standard deviation": losses[3],
            "Learning / Learning rate": state.learning_rate,
        }
        return state, metrics, (values, returns, advantages)

    @staticmethod
    def _check_finite(timestep: int, name: str, array: Any) -> None:
        """Fail clearly if NaN/inf reached the rollout (from the networks or the rewards)."""
        if not np.isfinite(np.asarray(array)).all():
            raise FloatingPointError(
                f"PPO update at timestep {timestep}: the rollout's '{name}' contain NaN/inf "
                f"({'the environment or rewards_shaper' if name == 'rewards' else 'the networks'} produced them); "
                "lower the learning rate, keep grad_norm_clip > 0, or standardise inputs with "
                "state_preprocessor=RunningStandardScaler"
            )

    def _update(self, timestep: int, timesteps: int) -> None:
        names = ("states", "actions", "rewards", "terminated", "truncated", "log_prob")
        rollout = {name: self.memory.get_tensor_by_name(name) for name in names}
        for name in ("rewards", "log_prob"):
            self._check_finite(timestep, name, rollout[name])
        state = _LearningState(
            policy_params=self.policy.state_dict.params,
            value_params=self.value.state_dict.params,
            policy_optimizer=self.policy_optimizer,
            value_optimizer=self.value_optimizer,
            state_statistics=self._state_functional.state,
            value_statistics=self._value_functional.state,
            learning_rate=jnp.asarray(self._learning_rate, jnp.float32),
        )
        state, metrics, (values, returns, advantages) = self._update_fn(
            state, rollout, self._current_next_states, np.int32(timestep)
        )
        values, returns, advantages = (x if self._jax else np.asarray(x) for x in (values, returns, advantages))
        self._check_finite(timestep, "values", values)  # before anything is committed

        self.policy.state_dict = self.policy.state_dict.replace(params=state.policy_params)
        self.value.state_dict = self.value.state_dict.replace(params=state.value_params)
        self.checkpoint_modules["policy_optimizer"] = state.policy_optimizer
        self.checkpoint_modules["value_optimizer"] = state.value_optimizer
        self._state_functional.state = state.state_statistics
        self._value_functional.state = state.value_statistics
        self._learning_rate = state.learning_rate
        for name, array in (("values", values), ("returns", returns), ("advantages", advantages)):
            self.memory.set_tensor_by_name(name, array)

        # tracked as device scalars: converted only when written
        self.track_data("Loss / Policy loss", metrics["Loss / Policy loss"])
        self.track_data("Loss / Value loss", metrics["Loss / Value loss"])
        if self._entropy_loss_scale:
            self.track_data("Loss / Entropy loss", metrics["Loss / Entropy loss"])
        self.track_data("Policy / Standard deviation", metrics["Policy / Standard deviation"])
        if self._schedule is not None:
            self.track_data("Learning / Learning rate", metrics["Learning / Learning rate"])
