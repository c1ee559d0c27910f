"""The half that Q-learning and SARSA share (torch): construction checks, acting, keeping the step's transition for
the update (:attr:`TabularAgent.latest_transition`) and the vectorised table update; each algorithm supplies only :meth:`TabularAgent._next_actions`, the action whose value
its TD target bootstraps from.

The table is ``(num_envs, num_states, num_actions)``: one table per environment, all updated at once with advanced
indexing (row ``e`` of the batch indexes table ``e``).
"""

from typing import Any, Mapping, Optional, Tuple

import torch

from skrl_like.core.agents import tabular as neutral
from skrl_like.core.agents.schedule import OffPolicySchedule
from skrl_like.core.agents.transition import Transition
from skrl_like.torch.agents.base import Agent


class TabularAgent(Agent):
    """Base of the tabular agents: Q-learning and SARSA differ only in :meth:`_next_actions`.

    :param models: ``{"policy": ...}``: a ``TabularMixin`` model whose ``table()`` is the Q-table of shape
        ``(num_envs, observation_space.n, action_space.n)`` (floating point) and whose ``compute`` picks the
        behaviour actions (e.g. epsilon-greedy over the table).
    :param memory: optional; while training every transition is also added to it (the agent creates no tensors in
        it: only tensors the user created are filled), or a list of memories.
    :param observation_space: the ``gymnasium.spaces.Discrete`` observation space of one environment.
    :param action_space: the ``gymnasium.spaces.Discrete`` action space of one environment.
    :param device: device for the agent's computations (``None``: the default torch device).
    :param cfg: keys of the algorithm's default config; unknown keys raise ``ValueError`` with the closest key
        (except skrl's ignored ``alpha``, dropped with a warning).
    """

    switches_modes_at_update = False  # skrl switches no modes
    default_config: Mapping[str, Any] = {}
    _learning_rates = {"learning_rate": ("_learning_rate", None)}  # the step size of the table update
    ignored_config_keys = neutral.IGNORED_KEYS

    def _check_arguments(self, cfg: Mapping[str, Any], observation_space: Any, action_space: Any) -> None:
        name = type(self).__name__
        neutral.check_spaces(name, observation_space, action_space)

    def _setup(self) -> None:
        cfg = self.cfg
        self._require_models(("policy",))

        self.policy = self.models["policy"]
        self.checkpoint_modules["policy"] = self.policy
        table = self._check_table()
        self._env_ids = torch.arange(table.shape[0], device=table.device).view(-1, 1)

        self.schedule = OffPolicySchedule(cfg["learning_starts"], cfg["random_timesteps"])
        self._discount_factor = cfg["discount_factor"]
        self._learning_rate = cfg["learning_rate"]
        #: the step the next update learns from (the table learns from each step once, as it comes: this is its
        #: one-step memory, filled by :meth:`_store` and emptied by the update); ``None`` once learned
        self.latest_transition: Optional[Transition] = None

    def _apply_learning_rate(self, key: str, value: float) -> None:
        self._learning_rate = value

    def _check_table(self) -> torch.Tensor:
        """The policy's Q-table, checked now instead of failing (or indexing the wrong cells) at the first update."""
        name, model_name = type(self).__name__, type(self.policy).__name__
        if not callable(getattr(self.policy, "table", None)):
            raise ValueError(
                f"{name}: the 'policy' model ({model_name}) has no table() method: build it with TabularMixin "
                f"(class Policy(TabularMixin, Model)) and keep the Q-table in self.q_table"
            )
        try:
            table = self.policy.table()
        except AttributeError as error:
            raise ValueError(
                f"{name}: the 'policy' model's table() failed ({error}): create the Q-table in its __init__, e.g. "
                f"self.q_table = torch.zeros((num_envs, self.num_observations, self.num_actions))"
            ) from error
        if not isinstance(table, torch.Tensor) or not torch.is_floating_point(table):
            found = f"a {table.dtype} tensor" if isinstance(table, torch.Tensor) else f"a {type(table).__name__}"
            raise ValueError(
                f"{name}: the 'policy' model's table() returned {found}, but the update writes fractional values "
                f"into it in place: make it a floating-point torch tensor (e.g. dtype=torch.float32)"
            )
        num_envs = int(getattr(self.policy, "num_envs", table.shape[0] if table.ndim else 1))
        expected = (num_envs, int(self.observation_space.n), int(self.action_space.n))
        neutral.check_table_shape(name, model_name, tuple(int(size) for size in table.shape), expected)
        return table

    def act(self, states: torch.Tensor, timestep: int, timesteps: int) -> Tuple[torch.Tensor, None, dict]:
        """The policy's actions ``(N, 1)`` (random ones before ``random_timesteps`` while training); returns
        ``(actions, None, outputs)``. In eval running mode ``outputs["mean_actions"]`` (unless the policy sets it)
        holds the greedy actions of the table, which a trainer's deterministic evaluation plays."""
        if self.training and self.schedule.acts_randomly(timestep):
            return self.policy.random_act({"states": states}, role="policy")
        actions, _, outputs = self.policy.act({"states": states}, role="policy")
        if not self.training and "mean_actions" not in (outputs or {}):
            greedy = torch.argmax(self.policy.table()[self._env_ids, states.long().view(-1, 1)], dim=-1)
            outputs = {**(outputs or {}), "mean_actions": greedy.view(-1, 1)}
        return actions, None, outputs

    def _store(self, transition: Transition) -> None:
        """Add the step to the memory, if any, and keep it as :attr:`latest_transition` for the update."""
        neutral.check_batch_size(type(self).__name__, transition.states.shape[0], self._env_ids.shape[0])
        super()._store(transition)
        self.latest_transition = transition

    def _next_actions(self, q_table: torch.Tensor, next_states: torch.Tensor) -> torch.Tensor:
        """The actions ``(N, 1)`` at ``next_states`` whose values the TD target bootstraps from."""
        raise NotImplementedError

    def _update(self, timestep: int, timesteps: int) -> None:
        transition, self.latest_transition = self.latest_transition, None
        if transition is None:  # nothing recorded while training since the last update
            return
        q_table = self.policy.table()
        env_ids = self._env_ids
        states, actions = transition.states.long().view(-1, 1), transition.actions.long().view(-1, 1)
        rewards, next_states = transition.rewards.view(-1, 1), transition.next_states.long().view(-1, 1)
        # no bootstrap past an episode end, truncation included [compat]
        dones = torch.logical_or(transition.terminated, transition.truncated).view(-1, 1)

        # TD target, one environment's table per row
        next_actions = self._next_actions(q_table, next_states).long().view(-1, 1)
        next_values = q_table[env_ids, next_states, next_actions]
        targets = rewards + self._discount_factor * dones.logical_not() * next_values

        # move Q(s, a) a step of learning_rate toward the target, in every table at once
        q_values = q_table[env_ids, states, actions]
        q_table[env_ids, states, actions] = q_values + self._learning_rate * (targets - q_values)
