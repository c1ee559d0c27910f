"""``ExponentialLR``: a learning rate multiplied by a constant factor at every scheduler step."""

from typing import Any, Callable


def ExponentialLR(gamma: float) -> Callable[[Any], float]:
    """Build a schedule that multiplies the learning rate by ``gamma`` at every scheduler step, as torch's
    ``torch.optim.lr_scheduler.ExponentialLR`` does: after ``n`` steps the rate is ``learning_rate * gamma ** n`` in
    both backends.

    skrl's JAX agents multiply their rate by the schedule's value at each step (``lr *= schedule(timestep)``), so the
    schedule is the constant per-step factor. Name it from a configuration file as
    ``learning_rate_scheduler: ExponentialLR`` with ``learning_rate_scheduler_kwargs: {gamma: ...}``.

    :param gamma: the factor per step, in ``(0, 1]`` to decay (``gamma = final_ratio ** (1 / steps)`` reaches
        ``final_ratio`` of the rate after ``steps`` scheduler steps).
    """
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0 < gamma:
        raise ValueError(
            f"ExponentialLR: gamma must be a positive number (the learning rate's factor per scheduler step), got "
            f"{gamma!r}: e.g. 0.01 ** (1 / steps) reaches 1% of the rate after that many steps"
        )
    factor = float(gamma)

    def schedule(count: Any) -> float:
        return factor

    return schedule
