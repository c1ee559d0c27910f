"""Adversarial Motion Priors (AMP), torch backend.

Peng et al., "AMP: Adversarial Motion Priors for Stylized Physics-Based Character Control", 2021. The update follows
skrl 1.4.3 (itself adapted from IsaacGymEnvs): a discriminator learns to tell reference-motion AMP observations
(label 1) from the policy's (label 0, this rollout's and a replay buffer of past ones); its logits give a style
reward ``-log(max(1 - sigmoid(D), 1e-4)) * discriminator_reward_scale`` that is mixed with the task reward; GAE over
the stored per-step next values; then PPO's clipped surrogate, value and entropy losses plus the discriminator loss,
one Adam over the policy, value and discriminator parameters.
"""

import math
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple, Union

import gymnasium
import torch
import torch.nn as nn
import torch.nn.functional as F

from skrl_like.core.agents import amp as neutral
from skrl_like.core.agents.checks import check_named_flags, check_rollout_memory, rollout_flag_names
from skrl_like.core.agents.config import with_backend_keys
from skrl_like.core.agents.schedule import mini_batch_slices
from skrl_like.core.agents.transition import Transition
from skrl_like.core.spaces import compute_space_size
from skrl_like.torch.agents.mechanics import (
    all_finite,
    compute_gae_with_next_values,
    optimizer_step,
    parameters_finite,
    step_scheduler,
)
from skrl_like.torch.agents.on_policy import OnPolicyAgent

AMP_DEFAULT_CONFIG = with_backend_keys(
    neutral.AMP_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)

#: the quantities of the rollout checked finite before the update changes anything, in this order
_ROLLOUT_QUANTITIES = ("rewards", "style rewards", "next values", "log_prob", "values", "returns", "advantages")


def style_reward(logits: torch.Tensor, scale: float) -> torch.Tensor:
    """AMP's style reward of discriminator ``logits``: ``-log(max(1 - sigmoid(logits), 1e-4)) * scale`` (high where
    the discriminator takes the motion for a reference one; at most ``-log(1e-4) * scale``)."""
    # sigmoid(-x) is 1 - sigmoid(x) without float32's cancellation for large logits
    return -torch.log(torch.clamp(torch.sigmoid(-logits), min=1e-4)) * scale


def discriminator_loss(
    discriminator: Any,
    logit_layer: Optional[nn.Linear],
    policy_states: torch.Tensor,
    replay_states: torch.Tensor,
    motion_states: torch.Tensor,
    logit_regularization_scale: float,
    gradient_penalty_scale: float,
    weight_decay_scale: float,
) -> torch.Tensor:
    """The discriminator's loss (before ``discriminator_loss_scale``) on preprocessed AMP observations.

    ``0.5 * (BCE(D(policy, replay), 0) + BCE(D(motion), 1))``, plus ``logit_regularization_scale * sum(W^2)`` of
    ``logit_layer`` (the layer that produces the logit), plus ``gradient_penalty_scale * mean(|dD/dx_motion|^2)``
    (kept in the graph, so the penalty itself is minimised), plus ``weight_decay_scale * sum(W^2)`` over the weights of
    every ``nn.Linear`` of the discriminator.
    """
    motion_states = motion_states.detach().requires_grad_(True)
    policy_logits, _, _ = discriminator.act({"states": policy_states}, role="discriminator")
    replay_logits, _, _ = discriminator.act({"states": replay_states}, role="discriminator")
    motion_logits, _, _ = discriminator.act({"states": motion_states}, role="discriminator")

    # prediction loss: the policy's (and replayed) motions are fake, the reference motions real
    fake_logits = torch.cat([policy_logits, replay_logits], dim=0)
    loss = 0.5 * (
        F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
        + F.binary_cross_entropy_with_logits(motion_logits, torch.ones_like(motion_logits))
    )
    # logit regularisation: small weights on the logit layer keep the logits (and the style reward) moderate
    if logit_regularization_scale:
        loss = loss + logit_regularization_scale * torch.sum(torch.square(logit_layer.weight))
    # gradient penalty on the reference motions: a smooth discriminator around the data
    if gradient_penalty_scale:
        (motion_gradient,) = torch.autograd.grad(
            motion_logits, motion_states, grad_outputs=torch.ones_like(motion_logits), create_graph=True
        )
        loss = loss + gradient_penalty_scale * torch.sum(torch.square(motion_gradient), dim=-1).mean()
    # weight decay over every linear layer
    if weight_decay_scale:
        weights = [module.weight.flatten() for module in discriminator.modules() if isinstance(module, nn.Linear)]
        loss = loss + weight_decay_scale * torch.sum(torch.square(torch.cat(weights)))
    return loss


class AMP(OnPolicyAgent):
    """Adversarial Motion Priors.

    :param models: ``{"policy": ..., "value": ..., "discriminator": ...}``: a Gaussian policy, a deterministic value
        model (one output) and a deterministic discriminator (one logit) built on ``amp_observation_space``.
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` (or a list of memories: the first one learns).
    :param action_space: action space of one environment (a ``Box``; or its shape/size).
    :param cfg: keys of ``AMP_DEFAULT_CONFIG``; ``observation_space`` and ``device`` as in
        :class:`~skrl_like.torch.agents.base.Agent`.
    :param amp_observation_space: space (or shape/size) of one AMP observation, the discriminator's input; the
        environment reports it each step in ``infos["amp_obs"]``.
    :param motion_dataset: a ``RandomMemory`` (``num_envs=1``) of reference-motion AMP observations: filled in
        :meth:`init` and topped up with ``amp_batch_size`` new motions before every update.
    :param reply_buffer: a ``RandomMemory`` (``num_envs=1``) of the policy's past AMP observations (skrl's spelling),
        filled after every update; the discriminator sees them as fakes, so it does not forget older policies.
    :param collect_reference_motions: ``f(num_samples) -> (num_samples, amp_size)`` tensor of reference motions.
    :param collect_observation: optional ``f() -> observations`` used instead of the trainer's states (called in
        :meth:`pre_interaction`, e.g. to read an environment's own observation buffer).
    """

    _privileged_state_roles = ()  # its value model reads the observations (next values included): refused clearly
    keeps_acting_pass = False  # the update evaluates the rollout itself, with the values of its own memory layout
    default_config = AMP_DEFAULT_CONFIG

    def __init__(
        self,
        models: Mapping[str, Any],
        memory: Any = None,
        observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        action_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        device: Optional[Union[str, torch.device]] = None,
        cfg: Optional[dict] = None,
        amp_observation_space: Optional[Union[int, Tuple[int], gymnasium.Space]] = None,
        motion_dataset: Any = None,
        reply_buffer: Any = None,
        collect_reference_motions: Optional[Callable[[int], torch.Tensor]] = None,
        collect_observation: Optional[Callable[[], torch.Tensor]] = None,
    ) -> None:
        self.amp_observation_space = amp_observation_space
        self.motion_dataset = motion_dataset
        self.reply_buffer = reply_buffer
        self.collect_reference_motions = collect_reference_motions
        self.collect_observation = collect_observation
        super().__init__(models, memory, observation_space, action_space, device, cfg)

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        _check_amp_arguments(
            self.amp_observation_space, self.motion_dataset, self.reply_buffer, self.collect_reference_motions
        )
        if isinstance(action_space, gymnasium.Space) and not isinstance(action_space, gymnasium.spaces.Box):
            raise ValueError(
                f"AMP: the action space is {action_space}, but AMP's Gaussian policy acts in a continuous Box "
                "space: use an environment with a Box action space (or PPO for discrete actions)"
            )
        self._amp_size = compute_space_size(self.amp_observation_space)

    def _setup(self) -> None:
        self._require_models(("policy", "value", "discriminator"))
        self._setup_on_policy()
        self.discriminator = self.models["discriminator"]
        self.checkpoint_modules["discriminator"] = self.discriminator
        self._logit_layer = self._check_discriminator()
        self._amp_state_preprocessor = self._build_preprocessor("amp_state_preprocessor")
        self._setup_joint_optimizer(self.policy, self.value, self.discriminator)
        if self.memory is not None:
            check_rollout_memory("AMP", self.memory, self.cfg["rollouts"], self.cfg["mini_batches"])
        self._current_states = None

    # -- construction checks ------------------------------------------------------------------------------------

    def _check_model_spaces(self) -> None:
        """The policy and value models are checked against the agent's spaces; the discriminator, whose input is an
        AMP observation, against ``amp_observation_space``."""
        models, discriminator = self.models, self.models.get("discriminator")
        self.models = {role: model for role, model in models.items() if role != "discriminator"}
        try:
            super()._check_model_spaces()
        finally:
            self.models = models
        space = getattr(discriminator, "observation_space", None)
        if space is not None and compute_space_size(space) != self._amp_size:
            raise ValueError(
                f"AMP: the 'discriminator' model was built for an observation space of size "
                f"{compute_space_size(space)}, but amp_observation_space has size {self._amp_size}: build the "
                "discriminator with observation_space=amp_observation_space"
            )

    def _check_discriminator(self) -> Optional[nn.Linear]:
        """Run the discriminator once on zero AMP observations: it must take ``amp_size`` inputs and give one logit.
        Returns the last ``nn.Linear`` that ran (the layer producing the logit, whose weights the logit
        regularisation penalises)."""
        discriminator, ran = self.discriminator, []
        hooks = [
            module.register_forward_hook(lambda module, *_: ran.append(module))
            for module in discriminator.modules()
            if isinstance(module, nn.Linear)
        ]
        try:
            logits = self._run_on_zeros(discriminator, "discriminator", self._amp_size)
        except Exception as error:
            raise ValueError(
                f"AMP: the 'discriminator' model ({type(discriminator).__name__}) does not run on AMP observations "
                f"of size {self._amp_size} (amp_observation_space): build it with "
                f"observation_space=amp_observation_space. It raised: {error}"
            ) from error
        finally:
            for hook in hooks:
                hook.remove()
        if logits.shape[-1] != 1:
            raise ValueError(
                f"AMP: the 'discriminator' model ({type(discriminator).__name__}) produces {logits.shape[-1]} outputs "
                "per sample, but AMP needs one logit: give its last layer 1 output"
            )
        if not ran and self.cfg["discriminator_logit_regularization_scale"]:
            raise ValueError(
                f"AMP: the 'discriminator' model ({type(discriminator).__name__}) has no torch.nn.Linear layer, so "
                "cfg['discriminator_logit_regularization_scale'] has no logit layer to regularise: end the "
                "discriminator with an nn.Linear, or set the scale to 0"
            )
        return ran[-1] if ran else None

    # -- collection ---------------------------------------------------------------------------------------------

    def init(self, trainer_cfg: Optional[Any] = None) -> None:
        """Create the memories' tensors and fill the motion dataset with reference motions (called by the trainer)."""
        super().init(trainer_cfg)
        if self.memory is not None:
            self.memory.create_tensor(name="amp_states", size=self.amp_observation_space, dtype=torch.float32)
            self.memory.create_tensor(name="next_values", size=1, dtype=torch.float32)
        self.motion_dataset.create_tensor(name="states", size=self.amp_observation_space, dtype=torch.float32)
        self.reply_buffer.create_tensor(name="states", size=self.amp_observation_space, dtype=torch.float32)
        batch_size = self.cfg["amp_batch_size"]
        for _ in range(math.ceil(self.motion_dataset.memory_size / batch_size)):
            self.motion_dataset.add_samples(states=self._reference_motions(batch_size))

    def pre_interaction(self, timestep: int, timesteps: int) -> None:
        """Read the observations to act on from ``collect_observation`` when it is given."""
        if self.collect_observation is not None:
            self._current_states = self.collect_observation()
        super().pre_interaction(timestep, timesteps)

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, torch.Tensor, dict]:
        """Sample actions from the policy (on ``collect_observation``'s states when it is given)."""
        if self._current_states is not None:
            states = self._current_states
        return super().act(states, timestep, timesteps)

    def transition_to_store(
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
    ) -> Transition:
        """The base's transition (on ``collect_observation``'s states when it is given) with its AMP observation
        (``infos["amp_obs"]``) and ``V(s_{t+1})``, zero where the episode terminated (``infos["terminate"]`` when
        the environment reports it, IsaacGymEnvs' convention; else ``terminated``)."""
        if self._current_states is not None:
            states = self._current_states
        amp_states = self._amp_observations(infos, len(states))
        transition = super().transition_to_store(
            states, actions, rewards, next_states, terminated, truncated, infos, timestep, timesteps
        )
        ended = infos["terminate"] if isinstance(infos, Mapping) and "terminate" in infos else terminated
        with torch.no_grad(), self._autocast():
            inputs = self._model_inputs(self._state_preprocessor(transition.next_states))
            next_values, _, _ = self.value.act(inputs, role="value")
        next_values = self._value_preprocessor(next_values.float(), inverse=True)
        next_values = next_values * torch.as_tensor(ended, device=self.device).reshape(-1, 1).logical_not()
        return transition.with_extras(amp_states=amp_states, next_values=next_values)

    def _amp_observations(self, infos: Any, num_envs: int) -> torch.Tensor:
        if not isinstance(infos, Mapping) or "amp_obs" not in infos:
            raise KeyError(
                "AMP.record_transition: infos has no 'amp_obs'; AMP stores each step's AMP observation from "
                "infos['amp_obs']: make the environment (or a wrapper around it) report it, one row per environment"
            )
        amp_states = torch.as_tensor(infos["amp_obs"], dtype=torch.float32, device=self.device)
        return amp_states.reshape(num_envs, self._amp_size)

    def _reference_motions(self, num_samples: int) -> torch.Tensor:
        motions = torch.as_tensor(self.collect_reference_motions(num_samples), dtype=torch.float32)
        if motions.shape != (num_samples, self._amp_size):
            raise ValueError(
                f"AMP: collect_reference_motions({num_samples}) returned shape {tuple(motions.shape)}, expected "
                f"({num_samples}, {self._amp_size}) (num_samples AMP observations of amp_observation_space)"
            )
        return motions.to(self.device)

    # -- the update ---------------------------------------------------------------------------------------------

    _loss_terms: Sequence[str] = ("policy", "value", "entropy", "discriminator")

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg, memory = self.cfg, self.memory
        self.motion_dataset.add_samples(states=self._reference_motions(cfg["amp_batch_size"]))

        rollouts, num_envs = memory.get_tensor_by_name("states").shape[:2]
        samples = rollouts * num_envs

        def rows(name: str) -> torch.Tensor:
            tensor = memory.get_tensor_by_name(name)
            return tensor.reshape(samples, *tensor.shape[2:])

        states, actions, amp_states = rows("states"), rows("actions"), rows("amp_states")
        old_log_prob, values, _ = self._evaluate_rollout(states, actions, memory.get_tensor_by_name("next_states")[-1])
        values = values.reshape(rollouts, num_envs, 1)

        # combined reward: the task's and the discriminator's style reward (with the statistics of collection)
        with torch.no_grad(), self._autocast():
            logits, _, _ = self.discriminator.act(
                {"states": self._amp_state_preprocessor(amp_states)}, role="discriminator"
            )
        style_rewards = style_reward(logits.float(), cfg["discriminator_reward_scale"]).reshape(rollouts, num_envs, 1)
        rewards = memory.get_tensor_by_name("rewards")
        combined_rewards = cfg["task_reward_weight"] * rewards + cfg["style_reward_weight"] * style_rewards

        # truncated steps already bootstrap from V(s_{t+1}) through next_values: time_limit_bootstrap adds nothing
        next_values = memory.get_tensor_by_name("next_values")
        dones = memory.get_tensor_by_name("terminated") | memory.get_tensor_by_name("truncated")
        returns, advantages = compute_gae_with_next_values(
            rewards=combined_rewards,
            dones=dones,
            values=values,
            next_values=next_values,
            discount_factor=cfg["discount_factor"],
            lambda_coefficient=cfg["lambda"],
        )
        quantities = (rewards, style_rewards, next_values, old_log_prob, values, returns, advantages)
        check_named_flags("AMP", timestep, rollout_flag_names(_ROLLOUT_QUANTITIES), all_finite(quantities).tolist())
        old_values = self._value_preprocessor(values, train=True).reshape(samples, 1)
        returns = self._value_preprocessor(returns, train=True).reshape(samples, 1)
        advantages = advantages.reshape(samples, 1)

        # AMP observations for the discriminator: the rollout's, reference motions and replayed past ones
        batches = mini_batch_slices(samples, cfg["mini_batches"])
        motion_batches = self.motion_dataset.sample(["states"], batch_size=samples, mini_batches=cfg["mini_batches"])
        if len(self.reply_buffer):
            replay_batches = self.reply_buffer.sample(["states"], batch_size=samples, mini_batches=cfg["mini_batches"])
        else:
            replay_batches = [[amp_states[batch]] for batch in batches]
        head = slice(cfg["discriminator_batch_size"] or None)

        losses, stepped_finite = [], []  # per step: (policy, value, entropy, discriminator) losses; parameters finite
        for _ in range(cfg["learning_epochs"]):
            kl_divergences = []
            for index, batch in enumerate(batches):
                with self._autocast():
                    # the state statistics are updated on every mini-batch of every epoch [compat]
                    inputs = self._model_inputs(self._state_preprocessor(states[batch], train=True))
                    policy_loss, value_loss, entropy_loss, log_ratio = self._mini_batch_losses(
                        inputs,
                        inputs,
                        actions[batch],
                        old_log_prob[batch],
                        old_values[batch],
                        returns[batch],
                        advantages[batch],
                    )
                    with torch.no_grad():
                        kl_divergences.append(((torch.exp(log_ratio) - 1) - log_ratio).mean())

                    # discriminator loss (the AMP preprocessor's statistics see all three sets)
                    amp_loss = discriminator_loss(
                        self.discriminator,
                        self._logit_layer,
                        self._amp_state_preprocessor(amp_states[batch][head], train=True),
                        self._amp_state_preprocessor(replay_batches[index][0][head], train=True),
                        self._amp_state_preprocessor(motion_batches[index][0][head], train=True),
                        cfg["discriminator_logit_regularization_scale"],
                        cfg["discriminator_gradient_penalty_scale"],
                        cfg["discriminator_weight_decay_scale"],
                    )
                    amp_loss = cfg["discriminator_loss_scale"] * amp_loss

                    loss = policy_loss + entropy_loss + value_loss + amp_loss

                optimizer_step(
                    loss,
                    self.optimizer,
                    self._trainable_parameters,
                    cfg["grad_norm_clip"],
                    self.scaler,
                )
                losses.append(torch.stack([policy_loss, value_loss, entropy_loss, amp_loss]).detach().float())
                stepped_finite.append(parameters_finite(self._trainable_parameters))

            step_scheduler(self.scheduler, kl_divergences)

        self._check_steps(timestep, losses, stepped_finite, cfg["mini_batches"])
        # the policy's AMP observations of this rollout become fakes the discriminator keeps seeing
        self.reply_buffer.add_samples(states=amp_states)

        totals = torch.stack(losses).mean(dim=0)
        self.track_data("Loss / Policy loss", totals[0])
        self.track_data("Loss / Value loss", totals[1])
        if cfg["entropy_loss_scale"]:
            self.track_data("Loss / Entropy loss", totals[2])
        self.track_data("Loss / Discriminator loss", totals[3])
        self.track_data("Reward / Style reward (mean)", style_rewards.mean())
        self.track_data("Reward / Combined reward (mean)", combined_rewards.mean())
        self.track_data("Policy / Standard deviation", self.policy.distribution(role="policy").stddev.mean().detach())
        if self.scheduler is not None:
            self.track_data("Learning / Learning rate", self.scheduler.get_last_lr()[0])


def _check_amp_arguments(
    amp_observation_space: Any, motion_dataset: Any, reply_buffer: Any, collect_reference_motions: Any
) -> None:
    """AMP cannot learn without its AMP observation space, its two AMP memories and its source of reference motions:
    say which one is missing, and how to give it."""
    missing = {
        "amp_observation_space": (
            amp_observation_space,
            "the space (or size) of one AMP observation, e.g. amp_observation_space=env.amp_observation_space",
        ),
        "motion_dataset": (
            motion_dataset,
            "a memory of reference motions, e.g. motion_dataset=RandomMemory(memory_size=200000, device=device)",
        ),
        "reply_buffer": (
            reply_buffer,
            "a memory of past policy AMP observations, e.g. reply_buffer=RandomMemory(memory_size=1000000, "
            "device=device)",
        ),
        "collect_reference_motions": (
            collect_reference_motions,
            "a function num_samples -> (num_samples, amp_size) tensor of reference-motion AMP observations",
        ),
    }
    for keyword, (value, fix) in missing.items():
        if value is None:
            raise ValueError(f"AMP: no {keyword} given; AMP needs it to learn a motion style: pass {fix}")
    if not callable(collect_reference_motions):
        raise TypeError(
            f"AMP: collect_reference_motions is a {type(collect_reference_motions).__name__}, not a callable: pass "
            "a function num_samples -> (num_samples, amp_size) tensor of reference motions"
        )
    for keyword, memory in (("motion_dataset", motion_dataset), ("reply_buffer", reply_buffer)):
        if getattr(memory, "num_envs", 1) != 1 or not callable(getattr(memory, "sample", None)):
            raise ValueError(
                f"AMP: {keyword} must be a sampling memory with num_envs=1 (AMP adds whole batches of AMP "
                f"observations to it and samples from it), got {type(memory).__name__} with "
                f"num_envs={getattr(memory, 'num_envs', None)}: create it as RandomMemory(memory_size=..., "
                "num_envs=1, device=device)"
            )
