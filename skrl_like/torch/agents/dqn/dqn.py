"""Deep Q-Network (DQN), torch backend.

Mnih et al., "Human-level control through deep reinforcement learning", 2015. The update follows skrl 1.4.3:
``gradient_steps`` steps per update, each on a freshly sampled replay batch: the TD target
``y = r + gamma * (1 - done) * max_a Q_target(s', a)``, the loss ``MSE(Q(s, a), y)``, one Adam step, and on
timesteps that are multiples of ``target_update_interval`` a polyak blend of the target toward the online network.
DDQN (:mod:`.ddqn`) is this class with another :meth:`DQN._next_values`.
"""

from typing import Any, Mapping, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F

from skrl_like.core.agents import dqn as neutral
from skrl_like.core.agents.checks import check_named_flags, non_finite_note
from skrl_like.core.agents.config import with_backend_keys
from skrl_like.core.agents.off_policy import check_action_space, check_batch_size, gradient_step_flag_names
from skrl_like.core.agents.schedule import OffPolicySchedule
from skrl_like.core.agents.transition import TRANSITION_NAMES
from skrl_like.torch.agents.base import Agent
from skrl_like.torch.agents.mechanics import all_finite, optimizer_step, parameters_finite, td_targets
from skrl_like.torch.agents.off_policy import create_replay_tensors, epsilon_greedy, init_target, sample_batch

DQN_DEFAULT_CONFIG = with_backend_keys(
    neutral.DQN_DEFAULT_CONFIG,
    mixed_precision=False,  # enable automatic mixed precision for higher performance
)


class DQN(Agent):
    """Deep Q-Network.

    :param models: ``{"q_network": ..., "target_q_network": ...}``: two deterministic models of the same
        architecture with one output per discrete action (the target is frozen and starts as a copy).
    :param memory: a replay memory (e.g. ``RandomMemory(memory_size=..., num_envs=...)``) of at least
        ``cfg["batch_size"]`` rows, or a list of memories (the first one is used for learning).
    :param action_space: the ``gymnasium.spaces.Discrete`` action space of one environment.
    :param cfg: keys of ``DQN_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.torch.agents.base.Agent`).
    """

    samples_memory_at_random = True  # a replay: agents may share one (skrl's shared-memory example)
    switches_modes_at_update = False  # as skrl's torch DQN

    default_config = DQN_DEFAULT_CONFIG

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        name = type(self).__name__
        neutral.check_exploration(name, cfg["exploration"])
        check_action_space(name, action_space, "Discrete")

    def _setup(self) -> None:
        cfg = self.cfg
        name = type(self).__name__
        self._require_models(("q_network", "target_q_network"))
        self._check_q_outputs(("q_network", "target_q_network"))
        check_batch_size(name, cfg["batch_size"], self.memory)

        self.q_network = self.models["q_network"]
        self.target_q_network = self.models["target_q_network"]
        self.checkpoint_modules["q_network"] = self.q_network
        self.checkpoint_modules["target_q_network"] = self.target_q_network
        init_target(name, self.models, "target_q_network", "q_network")

        self.schedule = OffPolicySchedule(cfg["learning_starts"], cfg["random_timesteps"], cfg["update_interval"])
        self._mixed_precision = bool(cfg["mixed_precision"])
        self.scaler = torch.amp.GradScaler(device=self.device.type, enabled=self._mixed_precision)

        self._trainable_parameters = list(self.q_network.parameters())
        self.optimizer = torch.optim.Adam(self._trainable_parameters, lr=cfg["learning_rate"], fused=True)
        self.checkpoint_modules["optimizer"] = self.optimizer
        scheduler = cfg["learning_rate_scheduler"]
        self.scheduler = scheduler(self.optimizer, **cfg["learning_rate_scheduler_kwargs"]) if scheduler else None

        self._state_preprocessor = self._build_preprocessor("state_preprocessor")

    def _check_q_outputs(self, roles: Tuple[str, ...]) -> None:
        """One Q-value per discrete action, checked now instead of failing (or indexing wrongly) at the first step."""
        for role in roles:
            _, size = self._output_size(self.models[role], role)
            if size is not None and size != self.action_space.n:
                raise ValueError(
                    f"{type(self).__name__}: the '{role}' model ({type(self.models[role]).__name__}) produces {size} "
                    f"outputs per sample, but the action space {self.action_space} needs one Q-value per action: "
                    f"give its last layer {self.action_space.n} outputs"
                )

    def init(self, trainer_cfg: Optional[Mapping[str, Any]] = None) -> None:
        """Create the replay memory's tensors and the experiment's writer (called once, by the trainer)."""
        super().init(trainer_cfg)
        create_replay_tensors(self.memory, self.observation_space, self.action_space, torch.int64)

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, None, dict]:
        """Epsilon-greedy actions ``(N, 1)``; returns ``(actions, None, outputs)`` where ``outputs["mean_actions"]``
        holds the greedy actions (what a trainer's deterministic evaluation plays)."""
        inputs = {"states": self._state_preprocessor(states)}
        epsilon = neutral.exploration_epsilon(timestep, self.cfg["exploration"])
        acts_randomly = epsilon is not None and self.schedule.acts_randomly(timestep)
        if acts_randomly and self.training:  # warm-up: no Q-values needed
            return self.q_network.random_act(inputs, role="q_network")[0], None, {}

        with torch.no_grad(), self._autocast():
            q_values, _, outputs = self.q_network.act(inputs, role="q_network")
        greedy_actions = torch.argmax(q_values, dim=1, keepdim=True)
        outputs = {**outputs, "mean_actions": greedy_actions}
        if epsilon is None:
            return greedy_actions, None, outputs
        random_actions = self.q_network.random_act(inputs, role="q_network")[0]
        if acts_randomly:
            return random_actions, None, outputs
        self.track_data("Exploration / Exploration epsilon", epsilon)
        return epsilon_greedy(random_actions, greedy_actions, epsilon), None, outputs

    def _next_values(self, next_states: torch.Tensor) -> torch.Tensor:
        """DQN's bootstrap value: the target network's best Q-value, ``max_a Q_target(s', a)``."""
        next_q_values, _, _ = self.target_q_network.act({"states": next_states}, role="target_q_network")
        return torch.max(next_q_values, dim=-1, keepdim=True).values

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        update_target = neutral.target_update_due(timestep, cfg["target_update_interval"])
        losses, targets, flags = [], [], []
        for _ in range(cfg["gradient_steps"]):
            states, actions, rewards, next_states, terminated, truncated = sample_batch(
                self.memory, TRANSITION_NAMES, cfg["batch_size"]
            )
            with self._autocast():
                # statistics updated twice per step, with the states and the next states [compat]
                states = self._state_preprocessor(states, train=True)
                next_states = self._state_preprocessor(next_states, train=True)

                # TD target, no bootstrap past a termination (a truncated step bootstraps from the state it reached)
                with torch.no_grad():
                    next_values = self._next_values(next_states)
                    target_values = td_targets(rewards, terminated, next_values, cfg["discount_factor"])

                # Q-value of the taken action
                q_values, _, _ = self.q_network.act({"states": states}, role="q_network")
                q_values = torch.gather(q_values, dim=1, index=actions.long())
                q_network_loss = F.mse_loss(q_values.float(), target_values.float())

            optimizer_step(q_network_loss, self.optimizer, self._trainable_parameters, 0, self.scaler)
            if update_target:
                self.target_q_network.update_parameters(self.q_network, polyak=cfg["polyak"])
            if self.scheduler is not None:
                self.scheduler.step()

            losses.append(q_network_loss.detach().float())
            targets.append(target_values.detach().float())
            checked = (states, next_states, rewards, target_values, q_network_loss)  # neutral.STEP_QUANTITIES
            flags.append(torch.cat([all_finite(checked), parameters_finite(self._trainable_parameters)[None]]))
        self._keep_report(timestep, torch.cat(flags))  # read at the next write or checkpoint step

        targets = torch.cat(targets)
        self.track_data("Loss / Q-network loss", torch.stack(losses).mean())
        self.track_data("Target / Target (max)", targets.max())
        self.track_data("Target / Target (min)", targets.min())
        self.track_data("Target / Target (mean)", targets.mean())
        if self.scheduler is not None:
            self.track_data("Learning / Learning rate", self.scheduler.get_last_lr()[0])

    def _handle_report(self, timestep: int, flags: np.ndarray) -> None:
        """Raise naming the first non-finite quantity of the update at ``timestep``, gradient step by step (its finite
        flags are read at the next write or checkpoint step, or at once with writing off: ``_keep_report``)."""
        if flags.all():
            return
        note = non_finite_note(self._non_finite())
        names = gradient_step_flag_names(self.cfg["gradient_steps"], neutral.STEP_QUANTITIES, note)
        check_named_flags(type(self).__name__, timestep, names, flags.tolist())

    def _non_finite(self) -> list:
        return [
            f"parameter '{name}' of the q_network model"
            for name, parameter in self.q_network.named_parameters()
            if not torch.isfinite(parameter).all()
        ]
