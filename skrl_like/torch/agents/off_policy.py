"""torch mechanics shared by the off-policy agents (DDPG, TD3, SAC, DQN, DDQN): target networks, replay batches,
exploration noise and epsilon-greedy actions. The neutral half (schedules, checks) is in
:mod:`skrl_like.core.agents.off_policy`; the optimizer step and TD targets are
:func:`skrl_like.torch.agents.mechanics.optimizer_step` and :func:`~skrl_like.torch.agents.mechanics.td_targets`.
"""

import contextlib
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

import torch
from torch.nn.parameter import UninitializedParameter

from skrl_like import logger
from skrl_like.core.agents.off_policy import check_memory_to_learn, identical_twins_warning, noise_scale
from skrl_like.torch.models.base import state_dict_mismatches


def init_target(algorithm: str, models: Mapping[str, Any], target_role: str, source_role: str) -> None:
    """Freeze ``models[target_role]`` and copy ``models[source_role]`` into it, after checking that both have the
    same architecture (a target of another architecture would be blended parameter by parameter with the wrong
    tensors, or fail at the first polyak update)."""
    target, source = models.get(target_role), models.get(source_role)
    if target is None or source is None:
        return
    problems = state_dict_mismatches(target, source.state_dict())
    if problems:
        raise ValueError(
            f"{algorithm}: the '{target_role}' model ({type(target).__name__}) does not have the architecture of "
            f"'{source_role}' ({type(source).__name__}): {'; '.join(problems)}. Build the target with the same class "
            f"and arguments as its online model"
        )
    target.freeze_parameters(True)
    target.update_parameters(source, polyak=1)


def warn_if_identical(algorithm: str, models: Mapping[str, Any], first: str, second: str) -> None:
    """Log :func:`~skrl_like.core.agents.off_policy.identical_twins_warning` if the two models' states are equal
    (lazy parameters not yet materialised hold no values to compare: such twins are not compared)."""
    one, two = models[first].state_dict(), models[second].state_dict()
    lazy = any(isinstance(tensor, UninitializedParameter) for tensor in (*one.values(), *two.values()))
    if not lazy and one.keys() == two.keys() and all(torch.equal(one[name], two[name]) for name in one):
        logger.warning(identical_twins_warning(algorithm, first, second))


def create_replay_tensors(memory: Any, observation_space: Any, action_space: Any, action_dtype: Any) -> None:
    """Create the replay memory's tensors: ``states``/``next_states`` (float32), ``actions`` (``action_dtype``),
    ``rewards`` (float32), ``terminated``/``truncated`` (bool); nothing without a memory."""
    if memory is None:
        return
    memory.create_tensor(name="states", size=observation_space, dtype=torch.float32)
    memory.create_tensor(name="next_states", size=observation_space, dtype=torch.float32)
    memory.create_tensor(name="actions", size=action_space, dtype=action_dtype)
    memory.create_tensor(name="rewards", size=1, dtype=torch.float32)
    memory.create_tensor(name="terminated", size=1, dtype=torch.bool)
    memory.create_tensor(name="truncated", size=1, dtype=torch.bool)


def sample_batch(memory: Any, names: Sequence[str], batch_size: int, sequence_length: int = 1) -> list:
    """A fresh uniform batch of ``batch_size`` transitions (or of ``batch_size`` sequences of ``sequence_length``
    consecutive steps of one environment, ``batch_size * sequence_length`` rows): one tensor per name (called once
    per gradient step)."""
    check_memory_to_learn("The agent", memory)  # a loop written by hand never set the running mode
    return memory.sample(names=names, batch_size=batch_size, sequence_length=sequence_length)[0]


@contextlib.contextmanager
def scoring_only(parameters: Sequence[torch.Tensor]) -> Iterator[None]:
    """Run the critics' forward pass inside an actor loss without recording their weights' gradients.

    The actor loss steps the policy only: the critics are differentiated through (toward the actions) but their own
    weight gradients would be computed and then discarded by the next ``zero_grad`` (skrl computes them). Skipping
    them saves one weight-gradient product per critic layer, about a tenth of a SAC gradient step's arithmetic,
    with the same numbers. The flags each parameter had are restored afterwards (the graph keeps what it recorded).
    """
    flags = [parameter.requires_grad for parameter in parameters]
    for parameter in parameters:
        parameter.requires_grad_(False)
    try:
        yield
    finally:
        for parameter, flag in zip(parameters, flags):
            parameter.requires_grad_(flag)


def exploration_act(
    actions: torch.Tensor,
    noise: Optional[Any],
    exploration: Mapping[str, Any],
    timestep: int,
    timesteps: int,
    low: torch.Tensor,
    high: torch.Tensor,
    track: Callable[[str, Any], None],
) -> torch.Tensor:
    """DDPG's and TD3's exploration: the policy's deterministic ``actions`` plus scaled noise, clipped to the bounds.

    :param actions: the policy's actions, ``(num_envs, action_size)``.
    :param noise: ``cfg["exploration"]["noise"]``, a ``Noise`` instance; ``None``: ``actions`` are returned as they
        are and nothing is tracked.
    :param exploration: ``cfg["exploration"]`` (``initial_scale``, ``final_scale``, ``timesteps``); a ``timesteps``
        of ``None`` means the trainer's ``timesteps`` (the dict is not changed).
    :param timestep: the current timestep.
    :param timesteps: the trainer's number of timesteps.
    :param low: the action space's lower bounds (a tensor on the actions' device).
    :param high: the action space's upper bounds.
    :param track: the agent's ``track_data``; it receives ``"Exploration / Exploration noise (max|min|mean)"``.
    :return: ``clip(actions + scale * noise, low, high)`` while ``timestep <= exploration["timesteps"]``, with the
        linearly decayed scale of :func:`skrl_like.core.agents.off_policy.noise_scale`; after the decay the actions
        unchanged, with the three tags tracked as 0 (skrl adds no noise at all then). The noise is sampled in both
        cases, so the noise's random stream does not depend on the decay.
    """
    if noise is None:
        return actions
    sampled = noise.sample(actions.shape).to(actions)
    if exploration["timesteps"] is None:
        exploration = {**exploration, "timesteps": timesteps}
    scale = noise_scale(timestep, exploration)
    if scale is None:
        for reduction in ("max", "min", "mean"):
            track(f"Exploration / Exploration noise ({reduction})", 0)
        return actions
    sampled = sampled * scale
    track("Exploration / Exploration noise (max)", torch.max(sampled).detach())
    track("Exploration / Exploration noise (min)", torch.min(sampled).detach())
    track("Exploration / Exploration noise (mean)", torch.mean(sampled).detach())
    return torch.clamp(actions + sampled, min=low, max=high)


def smoothed_target_actions(
    actions: torch.Tensor, noise: Optional[Any], clip: float, low: torch.Tensor, high: torch.Tensor
) -> torch.Tensor:
    """TD3's target policy smoothing: ``clip(a + clip(noise, -c, c), low, high)``; ``actions`` if no noise."""
    if noise is None:
        return actions
    sampled = torch.clamp(noise.sample(actions.shape), min=-clip, max=clip)
    return torch.clamp(actions + sampled, min=low, max=high)


def epsilon_greedy(random_actions: torch.Tensor, greedy_actions: torch.Tensor, epsilon: float) -> torch.Tensor:
    """Per row: the random action with probability ``epsilon``, else the greedy one (both ``(N, 1)``)."""
    explore = torch.rand(random_actions.shape[0], 1, device=random_actions.device) < epsilon
    return torch.where(explore, random_actions, greedy_actions)
