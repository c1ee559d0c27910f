"""``LinearLR``: a learning rate scaled linearly from one factor of its base to another over a number of steps."""

from typing import Any, Callable

import jax.numpy as jnp


def LinearLR(start_factor: float = 1.0 / 3, end_factor: float = 1.0, total_iters: int = 5) -> Callable[[Any], Any]:
    """Build the schedule of torch's ``torch.optim.lr_scheduler.LinearLR``: the rate starts at
    ``learning_rate * start_factor``, moves linearly to ``learning_rate * end_factor`` over ``total_iters`` scheduler
    steps and stays there, so after ``n`` steps it is
    ``learning_rate * (start_factor + (end_factor - start_factor) * min(n, total_iters) / total_iters)`` in both
    backends (PureJaxRL's annealing to 0 over a run: ``start_factor=1, end_factor=0``, ``total_iters`` the run's
    scheduler steps).

    ``schedule(n)`` is torch's factor of its step ``n`` (the rate after it over the rate before it; step 0 is the
    construction): under skrl's multiplicative JAX rule an agent multiplies its rate by ``schedule(0)`` when built and
    by ``schedule(n)`` at its ``n``-th scheduler step, counting the steps in its learner state (so a compiled run and
    a resumed one keep the schedule). Name it from a configuration file as ``learning_rate_scheduler: LinearLR`` with
    ``learning_rate_scheduler_kwargs: {start_factor: ..., end_factor: ..., total_iters: ...}``.

    :param start_factor: the rate's factor before the first step, in ``(0, 1]``.
    :param end_factor: the rate's factor from step ``total_iters`` on, in ``[0, 1]``.
    :param total_iters: the scheduler steps the ramp takes (PPO steps once per epoch, A2C once per update, the
        off-policy agents once per gradient step).
    """
    for name, value, low_open in (("start_factor", start_factor, True), ("end_factor", end_factor, False)):
        number = not isinstance(value, bool) and isinstance(value, (int, float))
        if not number or not (0 < value <= 1 if low_open else 0 <= value <= 1):
            interval = "(0, 1]" if low_open else "[0, 1]"
            raise ValueError(
                f"LinearLR: {name} must be a number in {interval} (the learning rate's factor), got {value!r}: "
                "e.g. start_factor=1, end_factor=0 anneals the rate to 0"
            )
    if isinstance(total_iters, bool) or not isinstance(total_iters, int) or total_iters < 1:
        raise ValueError(
            f"LinearLR: total_iters must be a positive integer (the scheduler steps of the ramp), got "
            f"{total_iters!r}: e.g. the run's updates times learning_epochs for PPO"
        )
    start, slope = float(start_factor), float(end_factor) - float(start_factor)

    def schedule(step: Any) -> Any:
        step = jnp.asarray(step, jnp.float32)
        # the factor before the step over the factor after it: start + slope * n / total_iters at n and n - 1
        ramp_step = jnp.clip(step, 1, total_iters)
        ramp = 1 + slope / (total_iters * start + (ramp_step - 1) * slope)
        return jnp.where(step == 0, start, jnp.where(step > total_iters, 1.0, ramp))

    return schedule
