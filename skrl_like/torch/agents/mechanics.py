"""Mechanics shared by the torch algorithms, one function each: GAE, the optimizer step (mixed precision, distributed
reduction, gradient clipping), scheduler steps, finite flags."""

from typing import Any, Iterable, Optional, Sequence, Tuple

import torch

from skrl_like import config
from skrl_like.torch.resources.schedulers import KLAdaptiveLR
from skrl_like.torch.utils.distributed import average_gradients, mean_over_processes, moments


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
    return _accumulate_advantages(deltas, decays, values)


def compute_gae_with_next_values(
    rewards: torch.Tensor,
    dones: torch.Tensor,
    values: torch.Tensor,
    next_values: torch.Tensor,
    discount_factor: float = 0.99,
    lambda_coefficient: float = 0.95,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimation from a value estimate of every step's next state (AMP's variant):
    ``adv[t] = r[t] - V[t] + gamma * (next_V[t] + lam * (1 - done[t]) * adv[t + 1])``.

    :param next_values: ``(T, N, 1)`` ``V(s_{t+1})`` of each step, already zero where the episode terminated
        (so a truncation bootstraps from its terminal observation's value while ``dones`` still ends the sum).
    :return: ``(returns, advantages)`` as :func:`compute_gae`.
    """
    not_dones = dones.logical_not().to(values.dtype)
    deltas = rewards + discount_factor * next_values - values
    decays = discount_factor * lambda_coefficient * not_dones
    return _accumulate_advantages(deltas, decays, values)


def _accumulate_advantages(
    deltas: torch.Tensor, decays: torch.Tensor, values: torch.Tensor
) -> Tuple[torch.Tensor, torch.Tensor]:
    """``adv[t] = delta[t] + decay[t] * adv[t + 1]`` backwards in time; returns ``adv + values`` and the normalised
    advantages."""
    advantages = torch.empty_like(deltas)
    advantage = torch.zeros_like(deltas[0])
    for step in reversed(range(deltas.shape[0])):
        advantage = deltas[step] + decays[step] * advantage
        advantages[step] = advantage
    returns = advantages + values
    return returns, normalize_advantages(advantages)


def td_targets(
    rewards: torch.Tensor, dones: torch.Tensor, next_values: torch.Tensor, discount_factor: float
) -> torch.Tensor:
    """One-step TD targets ``r + gamma * (1 - done) * V(s')``; ``dones`` (bool or 0/1) cut the bootstrap (off-policy
    agents pass ``terminated`` only: a truncated step bootstraps from the terminal observation it stored; skrl's
    targets end the bootstrap at a truncation too)."""
    return rewards + discount_factor * (1 - dones.to(rewards.dtype)) * next_values


def normalize_advantages(advantages: torch.Tensor) -> torch.Tensor:
    """Zero mean and unit (unbiased) std; a single sample has no spread and becomes 0 (its std would be NaN).

    In a distributed run the mean and std are those of every process's advantages together, so the update of the
    processes together is that of one process holding all their rollouts.
    """
    if config.torch.is_distributed:
        _, mean, variance = moments(advantages, tuple(range(advantages.dim())))
        return (advantages - mean) / (torch.sqrt(variance) + 1e-8)
    centred = advantages - advantages.mean()
    if advantages.numel() < 2:
        return centred
    return centred / (advantages.std() + 1e-8)


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
    """Step a learning-rate scheduler once: ``KLAdaptiveLR`` gets the mean KL, any other scheduler none.

    In a distributed run the mean KL is averaged over the processes, so every process adapts its learning rate
    alike."""
    if scheduler is None:
        return
    if isinstance(scheduler, KLAdaptiveLR):
        scheduler.step(mean_over_processes(torch.stack(kl_divergences).mean()) if kl_divergences else None)
    else:
        scheduler.step()


def optimizer_step(
    loss: torch.Tensor,
    optimizer: torch.optim.Optimizer,
    parameters: Sequence[torch.nn.Parameter],
    grad_norm_clip: float,
    scaler: torch.amp.GradScaler,
    update_scaler: bool = True,
) -> None:
    """One optimisation step of ``loss``: backward through the (mixed-precision) scaler, clipping of ``parameters``
    to ``grad_norm_clip`` (``<= 0`` disables), the step. The step of every torch agent goes through here.

    In a distributed run the gradients of ``parameters`` are averaged over the processes first (one all-reduce), so
    every process takes the same step: pass every parameter the optimizer steps.

    :param update_scaler: ``False`` when more optimizers step in the same round: the last one updates the scaler.

    A loss with no gradient path to any parameter (DDPG/TD3's policy loss through a critic that ignores the actions,
    its own weights frozen for the step) has a zero gradient: the step is skipped, leaving the parameters and the
    optimizer as they are, as skrl's step does with no gradients (and JAX's zero-gradient Adam step).
    """
    optimizer.zero_grad(set_to_none=True)
    if not loss.requires_grad:
        return
    scaler.scale(loss).backward()
    if config.torch.is_distributed:
        average_gradients(parameters)
    if grad_norm_clip > 0:
        scaler.unscale_(optimizer)
        clip_gradients(parameters, grad_norm_clip)
    scaler.step(optimizer)
    if update_scaler:
        scaler.update()


def unique_parameters(*models: Any) -> list:
    """The parameters of ``models``, each model once (a model shared by two roles is not counted twice)."""
    seen, parameters = set(), []
    for model in models:
        if id(model) not in seen:
            seen.add(id(model))
            parameters.extend(model.parameters())
    return parameters


def all_finite(tensors: Iterable[torch.Tensor]) -> torch.Tensor:
    """One bool per tensor, stacked on the device (read them with a single host transfer)."""
    return torch.stack([torch.isfinite(tensor).all() for tensor in tensors])


@torch.no_grad()
def parameters_finite(parameters: Sequence[torch.nn.Parameter]) -> torch.Tensor:
    """A device bool: every parameter is finite (one fused norm per tensor: cheap enough for every step; outside
    autograd, which would otherwise record the norms of the trainable parameters)."""
    return torch.isfinite(torch.stack(torch._foreach_norm(list(parameters)))).all()
