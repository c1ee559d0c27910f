"""When and on what an agent learns: the on-policy rollout counter and the off-policy warm-up / gradient-step cadence.

Plain rules with no tensors, called explicitly from an algorithm's ``act`` and ``post_interaction`` so that
each algorithm file still reads top to bottom. The tests on a timestep (:meth:`Schedule.acts_randomly`,
:meth:`OffPolicySchedule.updates`) use only comparisons, ``%`` and ``&``: on a Python int they give a bool, on a traced
JAX integer a traced bool, so the JAX ``CompiledTrainer`` applies the same rules inside its compiled run.
"""


class Schedule:
    """The warm-up every agent shares: uniform random actions before ``random_timesteps``.

    :param random_timesteps: act with ``random_act`` before this timestep.
    """

    def __init__(self, random_timesteps: int = 0) -> None:
        self.random_timesteps = random_timesteps

    def acts_randomly(self, timestep: object) -> object:
        """Whether ``act(timestep)`` plays uniform random actions (host int or traced)."""
        return timestep < self.random_timesteps


class RolloutSchedule(Schedule):
    """On-policy: an update is due after every ``rollouts`` collected steps, once ``timestep >= learning_starts``.

    :param rollouts: steps collected between updates (the memory's size).
    :param learning_starts: no update before this timestep.
    :param random_timesteps: act with ``random_act`` before this timestep.
    """

    def __init__(self, rollouts: int, learning_starts: int = 0, random_timesteps: int = 0) -> None:
        super().__init__(random_timesteps)
        self.rollouts = rollouts
        self.learning_starts = learning_starts
        self.collected = 0

    def updates(self, timestep: int) -> bool:
        """Count one collected step; ``True`` when the update is due now."""
        self.collected += 1
        return self.collected % self.rollouts == 0 and timestep >= self.learning_starts


class OffPolicySchedule(Schedule):
    """Off-policy: random actions during warm-up, then an update (of ``gradient_steps`` gradient steps, each on a
    freshly sampled batch) at every ``update_interval``-th timestep once ``timestep >= learning_starts``.

    :param learning_starts: no update before this timestep (the replay memory fills first).
    :param random_timesteps: act with ``random_act`` before this timestep.
    :param update_interval: timesteps between updates (DQN's ``update_interval``; 1 for the actor-critic agents).
    """

    def __init__(self, learning_starts: int = 0, random_timesteps: int = 0, update_interval: int = 1) -> None:
        super().__init__(random_timesteps)
        self.learning_starts = learning_starts
        self.update_interval = update_interval

    def updates(self, timestep: object) -> object:
        """Whether ``post_interaction(timestep)`` is due an update (host int or traced)."""
        return (timestep >= self.learning_starts) & (timestep % self.update_interval == 0)


def mini_batch_slices(samples: int, mini_batches: int) -> list:
    """Contiguous mini-batches of ``samples // mini_batches`` rows each, the remainder left out (skrl's torch layout;
    equal sizes keep a compiled update's shapes static)."""
    size = samples // mini_batches
    return [slice(index * size, (index + 1) * size) for index in range(mini_batches)]
