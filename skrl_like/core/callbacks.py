"""Callbacks and custom metrics: user code the trainer calls around episodes, updates and results.

Written once for both backends and every agent: the trainer (``core/trainer.py``) drives these hooks, so an agent
needs no code of its own to support them. A run with no callbacks takes the loop it always took: the trainer picks
its stepping path once at the start of ``train()``/``eval()``, so no per-step call is added when they are off.

Hook order within one training step::

    act -> env.step -> record_transition
        -> for each sub-environment i, in index order: on_episode_step(i)
           [-> on_episode_end(i) (its custom metrics are tracked) -> on_episode_start(i), when its episode ended]
        -> post_interaction: [on_sample_end -> on_update_start -> the update -> on_update_end, when the agent's
           schedule updates], then the checkpoint and the results row [-> on_train_result] at their intervals

So the custom metrics of an episode that ends at a write step are in that step's results row, as its return is.
"""

import numbers
from typing import Any, Dict, List, Optional, Sequence

#: the hooks that need per-step, per-sub-environment bookkeeping (and one host transfer of rewards and done flags
#: per step); a run whose callbacks override none of them pays nothing per step
EPISODE_HOOKS = ("on_episode_start", "on_episode_step", "on_episode_end")
UPDATE_HOOKS = ("on_sample_end", "on_update_start", "on_update_end")


class Episode:
    """One sub-environment's episode in progress, handed to the episode callbacks.

    :ivar env_index: the sub-environment it runs in (its row in the trainer's vectorised env).
    :ivar length: steps taken so far (0 in ``on_episode_start``).
    :ivar total_reward: the undiscounted sum of its rewards so far.
    :ivar last_reward: the reward of its latest step (``None`` before the first).
    :ivar last_observation: the observation its latest step returned for it, as the env wrapper gives it (a row of
        the backend's array); at the episode's last step, the terminal observation.
    :ivar user_data: a dict for the callbacks' own per-episode data (e.g. values summed in ``on_episode_step``).
    :ivar custom_metrics: ``{name: number}``; when the episode ends each entry is tracked as
        ``Custom / <name> (mean)``, ``(min)`` and ``(max)``, reduced over the episodes of each write interval.
    """

    def __init__(self, env_index: int) -> None:
        self.env_index = env_index
        self.length = 0
        self.total_reward = 0.0
        self.last_reward: Optional[float] = None
        self.last_observation: Any = None
        self.user_data: Dict[str, Any] = {}
        self.custom_metrics: Dict[str, float] = {}

    def __repr__(self) -> str:
        return (
            f"Episode(env_index={self.env_index}, length={self.length}, total_reward={self.total_reward}, "
            f"custom_metrics={self.custom_metrics})"
        )


class Callbacks:
    """Base class of user callbacks (RLlib's ``DefaultCallbacks``): override the hooks you need.

    Give a subclass, an instance, or a list of them (called in list order) as the trainer's ``cfg["callbacks"]``.
    Every hook takes keyword arguments only and returns nothing; the default does nothing.
    """

    def on_episode_start(self, *, trainer: Any, env_index: int, episode: Episode) -> None:
        """A sub-environment began an episode (after the run's first reset, and after each of its episodes ends)."""

    def on_episode_step(self, *, trainer: Any, env_index: int, episode: Episode) -> None:
        """A sub-environment took a step (its last one included), recorded by the agents, before they learn from it."""

    def on_episode_end(self, *, trainer: Any, env_index: int, episode: Episode) -> None:
        """A sub-environment's episode ended (terminated or truncated); ``episode.custom_metrics`` is tracked next."""

    def on_sample_end(self, *, trainer: Any, agent: Any, timestep: int) -> None:
        """The agent's samples for its next update are collected (its memory holds them), right before it learns."""

    def on_update_start(self, *, trainer: Any, agent: Any, timestep: int) -> None:
        """The agent is about to run one update (after :meth:`on_sample_end`)."""

    def on_update_end(self, *, trainer: Any, agent: Any, timestep: int) -> None:
        """The agent finished one update."""

    def on_train_result(self, *, trainer: Any, result: Dict[str, Any]) -> None:
        """A results row was written (one per write interval: the row of ``results.jsonl``, as a dict)."""

    def on_checkpoint(self, *, trainer: Any, path: str) -> None:
        """A full-state checkpoint was written to ``path``."""

    def overrides(self, hook: str) -> bool:
        """Whether this object's class overrides ``hook`` (the trainer skips the work a hook nobody uses needs)."""
        return getattr(type(self), hook) is not getattr(Callbacks, hook)


class CallbacksList(Callbacks):
    """Several callbacks as one: each hook calls every member's, in list order.

    :param callbacks: ``Callbacks`` instances.
    """

    def __init__(self, callbacks: Sequence[Callbacks]) -> None:
        self.callbacks = list(callbacks)

    def overrides(self, hook: str) -> bool:
        return any(callback.overrides(hook) for callback in self.callbacks)

    def on_episode_start(self, **kwargs: Any) -> None:
        for callback in self.callbacks:
            callback.on_episode_start(**kwargs)

    def on_episode_step(self, **kwargs: Any) -> None:
        for callback in self.callbacks:
            callback.on_episode_step(**kwargs)

    def on_episode_end(self, **kwargs: Any) -> None:
        for callback in self.callbacks:
            callback.on_episode_end(**kwargs)

    def on_sample_end(self, **kwargs: Any) -> None:
        for callback in self.callbacks:
            callback.on_sample_end(**kwargs)

    def on_update_start(self, **kwargs: Any) -> None:
        for callback in self.callbacks:
            callback.on_update_start(**kwargs)

    def on_update_end(self, **kwargs: Any) -> None:
        for callback in self.callbacks:
            callback.on_update_end(**kwargs)

    def on_train_result(self, **kwargs: Any) -> None:
        for callback in self.callbacks:
            callback.on_train_result(**kwargs)

    def on_checkpoint(self, **kwargs: Any) -> None:
        for callback in self.callbacks:
            callback.on_checkpoint(**kwargs)


def _one_callbacks(value: Any, where: str) -> Callbacks:
    if isinstance(value, type) and issubclass(value, Callbacks):
        try:
            return value()
        except TypeError as error:
            raise TypeError(
                f"{where}: {value.__name__}() could not be created without arguments ({error}); pass an instance, "
                f"e.g. {value.__name__}(...)"
            ) from error
    if isinstance(value, Callbacks):
        return value
    raise TypeError(
        f"{where} must be a Callbacks subclass or instance (skrl_like.core.callbacks.Callbacks), or a list of them; "
        f"got {value!r} ({type(value).__name__}): subclass Callbacks and override the hooks you need"
    )


def make_callbacks(value: Any, where: str = "cfg['callbacks']") -> Optional[Callbacks]:
    """The trainer's ``cfg["callbacks"]`` as one ``Callbacks`` object, or ``None`` when none are set.

    :param value: ``None``, a ``Callbacks`` subclass (instantiated without arguments) or instance, or a list/tuple
        of them (chained in order by :class:`CallbacksList`).
    :raises TypeError: anything else, naming the entry.
    """
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        members = [_one_callbacks(item, f"{where}[{index}]") for index, item in enumerate(value)]
        return CallbacksList(members) if members else None
    return _one_callbacks(value, where)


class AgentHooks:
    """What a trainer runs inside its agents, at the two points every agent has: around each update
    (``AgentCore._update_when_due``) and before each results row (``AgentCore.write_tracking_data``).

    The trainer sets it on each agent (``agent.set_trainer_hooks``, the agent's documented extension point) while
    it trains, only when its configuration needs it (a callback that overrides an update hook, or evaluation during
    training); otherwise the agent's ``trainer_hooks`` stays ``None`` and it calls nothing. Both points run at
    updates and writes only, never at every step.

    :param trainer: the trainer (handed to the callbacks).
    :param callbacks: the run's callbacks, when one overrides an update hook (``None`` otherwise).
    :param evaluation: the trainer's :class:`~skrl_like.core.evaluation.Evaluation` (``None`` without one).
    """

    def __init__(self, trainer: Any, callbacks: Optional[Callbacks], evaluation: Any) -> None:
        self.trainer = trainer
        self.callbacks = callbacks
        self.evaluation = evaluation

    def update_start(self, agent: Any, timestep: int) -> None:
        """``on_sample_end`` then ``on_update_start``: the agent's samples are in its memory, its update follows."""
        callbacks = self.callbacks
        if callbacks is not None:
            callbacks.on_sample_end(trainer=self.trainer, agent=agent, timestep=timestep)
            callbacks.on_update_start(trainer=self.trainer, agent=agent, timestep=timestep)

    def update_end(self, agent: Any, timestep: int) -> None:
        if self.callbacks is not None:
            self.callbacks.on_update_end(trainer=self.trainer, agent=agent, timestep=timestep)

    def before_write(self, agent: Any, timestep: int) -> None:
        """Evaluate when due (the evaluated agent is the trainer's only one), so the results land in this row and
        describe the policy the row does; not at the rows of a ``StepTrainer``'s eval steps."""
        if self.evaluation is not None and agent.training and self.evaluation.due(timestep):
            self.evaluation.run(timestep)


class EpisodeHooks:
    """The per-sub-environment bookkeeping behind the episode callbacks and custom metrics.

    :param trainer: the trainer (handed to the callbacks).
    :param callbacks: the run's callbacks.
    :param env_agents: for each sub-environment, the agent whose scope holds it (custom metrics are tracked on it).
    :param to_numpy: the backend's conversion of a device array to NumPy.
    """

    def __init__(self, trainer: Any, callbacks: Callbacks, env_agents: List[Any], to_numpy: Any) -> None:
        self.trainer = trainer
        self.callbacks = callbacks
        self.env_agents = env_agents
        self.to_numpy = to_numpy
        self.episodes: List[Episode] = []

    def start(self, running: Optional[List[Episode]] = None) -> None:
        """Begin an episode in every sub-environment (after the env's reset), or go on with the ``running`` ones of an
        earlier ``train()``/``eval()`` call when the env went on from where it was (a vector env resets only once)."""
        if running is not None and len(running) == len(self.env_agents):
            self.episodes = running
            return
        self.episodes = [Episode(index) for index in range(len(self.env_agents))]
        for index, episode in enumerate(self.episodes):
            self.callbacks.on_episode_start(trainer=self.trainer, env_index=index, episode=episode)

    def step(self, next_states: Any, rewards: Any, terminated: Any, truncated: Any, infos: Any) -> None:
        """Account one step of every sub-environment; end (and restart) the episodes that finished."""
        rewards = self.to_numpy(rewards).reshape(-1)
        done = (self.to_numpy(terminated) | self.to_numpy(truncated)).reshape(-1)
        final_states = infos.get("final_states") if isinstance(infos, dict) else None
        callbacks, trainer = self.callbacks, self.trainer
        for index, episode in enumerate(self.episodes):
            reward = float(rewards[index])
            episode.length += 1
            episode.total_reward += reward
            episode.last_reward = reward
            finished = bool(done[index])
            terminal = final_states is not None and finished
            episode.last_observation = final_states[index] if terminal else next_states[index]
            callbacks.on_episode_step(trainer=trainer, env_index=index, episode=episode)
            if finished:
                callbacks.on_episode_end(trainer=trainer, env_index=index, episode=episode)
                self._track_custom_metrics(episode)
                self.episodes[index] = episode = Episode(index)
                callbacks.on_episode_start(trainer=trainer, env_index=index, episode=episode)

    def _track_custom_metrics(self, episode: Episode) -> None:
        agent = self.env_agents[episode.env_index]
        for name, value in episode.custom_metrics.items():
            if not isinstance(value, numbers.Real) and not (hasattr(value, "__float__") and _is_scalar(value)):
                raise TypeError(
                    f"episode.custom_metrics[{name!r}] of sub-environment {episode.env_index} is {value!r} "
                    f"({type(value).__name__}), not a number: custom metrics are reduced to mean, min and max, so "
                    "store one number per episode (e.g. float(...))"
                )
            value = float(value)
            for reduction in ("mean", "min", "max"):
                agent.track_data(f"Custom / {name} ({reduction})", value)


def _is_scalar(value: Any) -> bool:
    size = getattr(value, "size", 1)
    return (size() if callable(size) else size) == 1
