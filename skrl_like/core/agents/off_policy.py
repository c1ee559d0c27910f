"""What the off-policy agents (DDPG, TD3, SAC, DQN, DDQN) share and what holds no tensors: the exploration
schedules, the default target entropy, the checks made at construction, and which next state a transition stores.

Each function is called explicitly from an algorithm file, so that the algorithm still reads top to bottom.
"""

import math
from typing import Any, Callable, List, Mapping, Optional, Sequence

import gymnasium
import numpy as np

#: what each algorithm family needs of the action space, and what to use instead
_ACTION_SPACES = {
    "Box": (gymnasium.spaces.Box, "continuous (Box) actions; for Discrete actions use DQN or DDQN"),
    "Discrete": (gymnasium.spaces.Discrete, "Discrete actions; for continuous (Box) actions use SAC, TD3 or DDPG"),
}


def check_action_space(algorithm: str, action_space: Any, kind: str) -> None:
    """Raise ``ValueError`` unless ``action_space`` is a gymnasium space of ``kind`` (``"Box"`` or ``"Discrete"``)."""
    space_class, needs = _ACTION_SPACES[kind]
    if not isinstance(action_space, space_class):
        raise ValueError(f"{algorithm} needs {needs}; the action space is {action_space!r}")


def check_batch_size(algorithm: str, batch_size: int, memory: Any) -> None:
    """A batch cannot be larger than the replay memory it is drawn from (``memory_size * num_envs`` rows)."""
    capacity = int(getattr(memory, "memory_size", 0)) * int(getattr(memory, "num_envs", 1))
    if memory is not None and capacity and batch_size > capacity:
        raise ValueError(
            f"{algorithm}: cfg['batch_size'] = {batch_size} is larger than the memory's {capacity} rows "
            f"(memory_size {memory.memory_size} x num_envs {memory.num_envs}): lower batch_size or enlarge the memory"
        )


def check_memory_to_learn(algorithm: str, memory: Any) -> None:
    """A replay agent learns from its memory: built with ``memory=None`` it can act and be evaluated (as in skrl), but
    not train. Raise ``ValueError`` saying so, instead of an ``AttributeError`` at the first update."""
    if memory is None:
        raise ValueError(
            f"{algorithm} was created with memory=None: it can act and be evaluated, but it learns from a replay "
            "memory. To train it, create it with memory=RandomMemory(memory_size=..., num_envs=env.num_envs)"
        )


def noise_decay_timesteps(exploration: Mapping[str, Any], trainer_cfg: Optional[Mapping[str, Any]]) -> Optional[int]:
    """The length of DDPG/TD3's noise decay, fixed when the trainer first initialises the agent:
    ``exploration["timesteps"]``, or when it is ``None`` the trainer's ``timesteps`` then (``None`` without a
    trainer: ``act``'s ``timesteps`` are used). The agents keep it as a plain attribute, part of their run state, so a
    run resumed (or continued) with more timesteps goes on with the decay it started with."""
    if exploration.get("timesteps") is not None:
        return exploration["timesteps"]
    timesteps = (trainer_cfg or {}).get("timesteps")
    return int(timesteps) if timesteps else None


def noise_scale(timestep: int, exploration: Mapping[str, Any]) -> Optional[float]:
    """The factor of DDPG/TD3's exploration noise at ``timestep``: linear from ``initial_scale`` to ``final_scale``
    over ``exploration["timesteps"]`` steps; ``None`` after them, when no noise is added at all (skrl's behaviour).

    ``exploration["timesteps"]`` must be set (agents fill ``None`` with the trainer's ``timesteps`` first)."""
    if timestep > exploration["timesteps"]:
        return None
    return decayed_noise_scale(timestep, exploration)


def decayed_noise_scale(timestep: Any, exploration: Mapping[str, Any]) -> Any:
    """The decay formula of :func:`noise_scale`, without its end: arithmetic only, so a compiled run evaluates it at
    a traced ``timestep`` (and chooses what happens after the decay with an array ``where``)."""
    decay = exploration["timesteps"]
    initial, final = exploration["initial_scale"], exploration["final_scale"]
    return (1 - timestep / decay) * (initial - final) + final if decay else final


def epsilon(timestep: Any, exploration: Mapping[str, Any], exp: Callable[[Any], Any] = math.exp) -> Any:
    """DQN's probability of a random action: ``final + (initial - final) * exp(-timestep / timesteps)``
    (exponential decay with time constant ``exploration["timesteps"]``, as skrl's); ``exp``: an array library's
    (``jnp.exp``) for a traced ``timestep``."""
    initial, final = exploration["initial_epsilon"], exploration["final_epsilon"]
    return final + (initial - final) * exp(-timestep / exploration["timesteps"])


def default_target_entropy(action_space: Any) -> float:
    """SAC's target entropy when ``cfg["target_entropy"]`` is ``None``: ``-prod(shape)`` for ``Box`` actions,
    ``-n`` for ``Discrete``, else 0."""
    if isinstance(action_space, gymnasium.spaces.Box):
        return -float(np.prod(action_space.shape, dtype=np.float32))
    if isinstance(action_space, gymnasium.spaces.Discrete):
        return -float(action_space.n)
    return 0.0


def identical_twins_warning(algorithm: str, first: str, second: str) -> str:
    """The warning for twin critics that start equal: stepped on the same batches toward the same targets they stay
    equal, and the minimum of the two is then no correction of over-estimation."""
    return (
        f"{algorithm}: '{first}' and '{second}' start with identical parameters: trained on the same batches they stay "
        f"identical and min({first}, {second}) corrects nothing. Initialise them differently (torch: build each "
        f"model anew; JAX: init_state_dict(role) without a key gives each model its own, or pass distinct keys)"
    )


def gradient_step_flag_names(gradient_steps: int, quantities: Sequence[str], parameters_note: str) -> List[str]:
    """The names of an update's finite flags, in the order both backends compute them: for each gradient step its
    ``quantities`` (the sampled batch first), then the parameters after its optimizer steps (``parameters_note`` says
    which are non-finite)."""
    names = []
    for step in range(gradient_steps):
        where = f"of gradient step {step}"
        names += [f"the {quantity} {where}" for quantity in quantities]
        names.append(f"the parameters after the optimizer steps {where} ({parameters_note})")
    return names


def stored_next_states(next_states: Any, infos: Any) -> Any:
    """The next states a replay transition stores: for a sub-environment of a vector env that finished at this
    step, its terminal observation (``infos["final_states"]``, set by the wrappers), not the first observation of
    its next episode, so that a truncated episode bootstraps from the state it really reached."""
    if isinstance(infos, Mapping):
        final_states = infos.get("final_states")
        if final_states is not None:
            return final_states
    return next_states
