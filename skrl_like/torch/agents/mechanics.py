"""Mechanics shared by the torch algorithms, one function each: GAE, gradient clipping, scheduler steps."""

from typing import Any, Iterable, Optional, Tuple

import torch

from skrl_like.torch.resources.schedulers import KLAdaptiveLR


def compute_gae(
    rewards: torch.Tensor,
    dones: torch.Tensor,
    values: torch.Tensor,
    next_values: torch.Tensor,
    discount_factor: float = 0.99,
    lambda_coefficient: float = 0.95,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimation over a time-major rollout.

    :param rewards: ``(T, N, 1)`` rewards.
    :param dones: ``(T, N, 1)`` ``terminated | truncated`` (bool or 0/1): no bootstrap across an episode end.
    :param values: ``(T, N, 1)`` value estimates of the visited states.
    :param next_values: ``(N, 1)`` value estimate of the state after the last step.
    :return: ``(returns, advantages)``, advantages normalised to zero mean and unit (unbiased) std.
    """
    not_dones = dones.logical_not().to(values.dtype)
    next_values = torch.cat((values[1:], next_values.unsqueeze(0)), dim=0)
    # TD errors for every step at once; only the discounted accumulation below is sequential
    deltas = rewards + discount_factor * not_dones * next_values - values
    decays = discount_factor * lambda_coefficient * not_dones
    advantages = torch.empty_like(rewards)
    advantage = torch.zeros_like(deltas[0])
    for step in reversed(range(rewards.shape[0])):
        advantage = deltas[step] + decays[step] * advantage
        advantages[step] = advantage
    returns = advantages + values
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    return returns, advantages


def clip_gradients(parameters: Iterable[torch.nn.Parameter], max_norm: float) -> None:
    """Scale the gradients so that their joint L2 norm is at most ``max_norm`` (``<= 0`` disables).

    The same rule as ``torch.nn.utils.clip_grad_norm_`` in four fused ops, without its per-call grouping of
    tensors by device and dtype (which costs more than the clipping itself for small networks); the
    parameters of one agent's optimizer share a device and dtype.
    """
    if max_norm <= 0:
        return
    grads = [parameter.grad for parameter in parameters if parameter.grad is not None]
    if not grads:
        return
    total_norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    torch._foreach_mul_(grads, torch.clamp(max_norm / (total_norm + 1e-6), max=1.0))


def step_scheduler(scheduler: Optional[Any], kl_divergences: list) -> None:
    """Step a learning-rate scheduler once: ``KLAdaptiveLR`` gets the mean KL, any other scheduler none."""
    if scheduler is None:
        return
    if isinstance(scheduler, KLAdaptiveLR):
        scheduler.step(torch.stack(kl_divergences).mean() if kl_divergences else None)
    else:
        scheduler.step()
