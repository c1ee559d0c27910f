"""When and on what an agent learns: the on-policy rollout counter and the off-policy warm-up / gradient-step cadence.

Plain counters with no tensors, called explicitly from an algorithm's ``act`` and ``post_interaction`` so that
each algorithm file still reads top to bottom.
"""


class RolloutSchedule:
    """On-policy: an update is due after every ``rollouts`` collected steps, once ``timestep >= learning_starts``.

    :param rollouts: steps collected between updates (the memory's size).
    :param learning_starts: no update before this timestep.
    """

    def __init__(self, rollouts: int, learning_starts: int = 0) -> None:
        self.rollouts = rollouts
        self.learning_starts = learning_starts
        self.collected = 0

    def step(self, timestep: int) -> bool:
        """Count one collected step; ``True`` when the update is due now."""
        self.collected += 1
        return self.collected % self.rollouts == 0 and timestep >= self.learning_starts


class OffPolicySchedule:
    """Off-policy: random actions during warm-up, then ``gradient_steps`` updates per step once learning starts,
    and a target-network update every ``target_update_interval`` gradient steps.

    :param learning_starts: no update before this timestep (the replay memory fills first).
    :param random_timesteps: act with ``random_act`` before this timestep.
    :param gradient_steps: gradient steps per environment step once learning has started.
    :param target_update_interval: gradient steps between target-network updates (1: after every step).
    """

    def __init__(
        self,
        learning_starts: int = 0,
        random_timesteps: int = 0,
        gradient_steps: int = 1,
        target_update_interval: int = 1,
    ) -> None:
        self.learning_starts = learning_starts
        self.random_timesteps = random_timesteps
        self.gradient_steps = gradient_steps
        self.target_update_interval = target_update_interval
        self.gradient_steps_taken = 0

    def acts_randomly(self, timestep: int) -> bool:
        return timestep < self.random_timesteps

    def learns(self, timestep: int) -> bool:
        return timestep >= self.learning_starts

    def updates_target(self) -> bool:
        """Count one gradient step; ``True`` when the target networks are due an update after it."""
        self.gradient_steps_taken += 1
        return self.gradient_steps_taken % self.target_update_interval == 0


def mini_batch_slices(samples: int, mini_batches: int) -> list:
    """Contiguous mini-batches of ``samples // mini_batches`` rows each, the remainder left out (skrl's torch layout;
    equal sizes keep a compiled update's shapes static)."""
    size = samples // mini_batches
    return [slice(index * size, (index + 1) * size) for index in range(mini_batches)]
