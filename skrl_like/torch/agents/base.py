"""The torch ``Agent`` base: the neutral bookkeeping plus what touches tensors (devices, state dicts)."""

import collections
import contextlib
import copy
from typing import Any, BinaryIO, List, Optional, Sequence, Tuple

import gymnasium
import numpy as np
import torch

from skrl_like import config
from skrl_like.core.agents.base import AgentCore
from skrl_like.core.agents.recurrent import zero_state_shapes
from skrl_like.torch import models
from skrl_like.torch.agents.off_policy import sample_batch
from skrl_like.torch.agents.tracking import EpisodeTracker
from skrl_like.torch.utils.spaces import flatten_tensorized_space, tensorize_space


class Agent(AgentCore):
    __doc__ = AgentCore.__doc__

    checkpoint_extension = ".pt"

    def _parse_device(self, device: Any) -> torch.device:
        return config.torch.parse_device(device)

    def _place_models(self) -> None:
        for model in self.models.values():
            if model is not None:
                model.to(model.device)

    def _broadcast_models(self) -> None:
        if config.torch.is_distributed:
            for model in {id(model): model for model in self.models.values() if model is not None}.values():
                model.broadcast_parameters()

    def _get_internal_value(self, module: Any) -> Any:
        return module.state_dict() if hasattr(module, "state_dict") else module

    def _copy_state(self, state: Any) -> Any:
        return copy.deepcopy(state)

    def _write_states(self, states: Any, file: BinaryIO) -> None:
        torch.save(states, file)

    def _read_states(self, path: str) -> Any:
        return torch.load(path, map_location=self.device, weights_only=False)

    def _check_state(self, name: str, module: Any, state: Any) -> Any:
        if not hasattr(module, "load_state_dict"):
            raise NotImplementedError(f"The '{name}' module ({type(module).__name__}) cannot load a state")
        if isinstance(module, torch.nn.Module):
            problems = models.base.state_dict_mismatches(module, state)
        elif isinstance(module, torch.optim.Optimizer):
            problems = _optimizer_mismatches(module, state)
        else:  # e.g. a scheduler: its own load_state_dict is all the checking there is
            problems = [] if isinstance(state, dict) else [f"a {type(state).__name__} in the checkpoint, not a dict"]
        if problems:
            raise ValueError("; ".join(problems))
        return state

    def _restore_state(self, name: str, module: Any, state: Any) -> None:
        module.load_state_dict(state)
        if hasattr(module, "eval"):
            module.eval()

    def _is_array(self, value: Any) -> bool:
        return isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter)

    def _assign_attribute(self, owner: Any, name: str, value: Any) -> None:
        current = getattr(owner, name, None)
        if (
            isinstance(current, torch.Tensor)
            and isinstance(value, torch.Tensor)
            and current.shape == value.shape
            and current.dtype == value.dtype
        ):
            with torch.no_grad():
                current.copy_(value)  # in place: views of it (and references to it) stay valid
        else:
            object.__setattr__(owner, name, value)

    def _stateful_attributes(self) -> dict:
        # learning-rate schedulers (skrl does not checkpoint them: a resumed LinearLR would start over)
        return {
            name: value
            for name, value in vars(self).items()
            if callable(getattr(value, "state_dict", None))
            and callable(getattr(value, "load_state_dict", None))
            and not isinstance(value, type)
        }

    # the usual layout of a learning rate: one optimizer, one scheduler (agents with others declare them)
    _learning_rates = {"learning_rate": ("optimizer", "scheduler")}

    def _has_learning_rate(self, key: str) -> bool:
        return key in self._learning_rates and getattr(self, self._learning_rates[key][0], None) is not None

    def _apply_learning_rate(self, key: str, value: float) -> None:
        # the rate of every parameter group, and the scheduler's view of it: its base rates (what a closed-form
        # step recomputes from) and last rates (tracked); a chainable schedule (LinearLR, KLAdaptiveLR) continues
        # from the groups' rate
        optimizer_name, scheduler_name = self._learning_rates[key]
        optimizer = getattr(self, optimizer_name)
        for group in optimizer.param_groups:
            group["lr"] = value
            if "initial_lr" in group:
                group["initial_lr"] = value
        scheduler = getattr(self, scheduler_name, None) if scheduler_name else None
        if scheduler is not None:
            scheduler.base_lrs = [value] * len(optimizer.param_groups)
            scheduler._last_lr = [value] * len(optimizer.param_groups)

    def _acting_inputs(self, states: torch.Tensor) -> dict:
        """The policy's inputs when acting on ``states``: the preprocessed states (a recurrent agent adds the
        carried hidden states)."""
        return {"states": self._state_preprocessor(states)}

    def _replay_batch(self, names: Sequence[str]) -> Tuple[list, dict]:
        """A fresh replay batch of ``cfg["batch_size"]`` rows, one tensor per name, and what every model of the
        update reads beside its states (nothing here; a recurrent agent's hidden states and episode ends)."""
        return sample_batch(self.memory, names, self.cfg["batch_size"]), {}

    def _autocast(self) -> Any:
        """``torch.autocast`` on the agent's device when ``self._mixed_precision`` (set by agents with the
        ``mixed_precision`` key) is on, else a no-op context: wrap forward passes in it."""
        if getattr(self, "_mixed_precision", False):
            return torch.autocast(device_type=self.device.type, enabled=True)
        return contextlib.nullcontext()

    def _kept_scalar(self, value: Any) -> Any:
        # detached (a loss keeps no graph), and copied out when it is an element of a larger buffer (so that the
        # buffer can be freed); both without reading the value
        if isinstance(value, torch.Tensor):
            value = value.detach()
            if value.untyped_storage().nbytes() > value.element_size():
                value = value.clone()
        return value

    def _read_scalars(self, values: List[Any]) -> List[float]:
        numbers: List[Any] = [float(value) if not isinstance(value, torch.Tensor) else None for value in values]
        alike = collections.defaultdict(list)  # one transfer per device and dtype
        for index, value in enumerate(values):
            if isinstance(value, torch.Tensor):
                alike[value.device, value.dtype].append(index)
        for indices in alike.values():
            read = torch.stack([values[index].reshape(()) for index in indices]).cpu().tolist()
            for index, number in zip(indices, read):
                numbers[index] = float(number)
        return numbers

    def _read_arrays(self, arrays: List[Any]) -> List[np.ndarray]:
        if len({(array.device, array.dtype) for array in arrays}) != 1:
            return [array.detach().cpu().numpy() for array in arrays]
        read = torch.cat([array.detach().reshape(-1) for array in arrays]).cpu().numpy()  # one transfer
        bounds = np.cumsum([0] + [array.numel() for array in arrays])
        return [read[start:stop].reshape(array.shape) for start, stop, array in zip(bounds, bounds[1:], arrays)]

    def _make_tracker(self, capacity: int) -> EpisodeTracker:
        return EpisodeTracker(capacity)

    def _observations_to_backend(self, space: gymnasium.Space, observations: Any) -> torch.Tensor:
        return flatten_tensorized_space(tensorize_space(space, observations, device=self.device))

    def _inference(self) -> Any:
        return torch.no_grad()

    def _actions_to_numpy(self, actions: torch.Tensor) -> np.ndarray:
        if actions.dtype == torch.bfloat16:  # NumPy has no bfloat16
            actions = actions.float()
        return actions.detach().cpu().numpy()

    def _is_distributed_worker(self) -> bool:
        return config.torch.is_distributed and config.torch.rank != 0

    _policy_distributions = (
        (models.CategoricalMixin, "categorical"),
        (models.MultiCategoricalMixin, "multicategorical"),
        (models.GaussianMixin, "gaussian"),
        (models.MultivariateGaussianMixin, "gaussian"),
    )

    def _run_on_zeros(
        self, model: Any, role: str, width: int, action_width: Optional[int] = None, action_value: float = 0.0
    ) -> torch.Tensor:
        inputs = {"states": torch.zeros(2, width, device=model.device)}
        if shapes := zero_state_shapes(model, 2):  # a recurrent model: one acting step from zero hidden states
            inputs["rnn"] = [torch.zeros(shape, device=model.device) for shape in shapes]
        if action_width is not None:
            inputs["taken_actions"] = torch.full((2, action_width), action_value, device=model.device)
        was_training = model.training
        try:  # eval mode: no statistics change (a lazy layer is materialised here, as by the first step)
            model.train(False)
            with torch.no_grad():
                return model.compute(inputs, role)[0]
        finally:
            model.train(was_training)


def _optimizer_mismatches(optimizer: torch.optim.Optimizer, state: Any) -> list[str]:
    """What ``Optimizer.load_state_dict`` would refuse: another number of parameter groups or of parameters in one.

    (The per-parameter tensors follow the parameters' shapes, which the models' own checks compare.)
    """
    if not isinstance(state, dict) or not isinstance(state.get("param_groups"), list) or "state" not in state:
        return [f"a {type(state).__name__} in the checkpoint, not an optimizer's state dict"]
    saved, current = state["param_groups"], optimizer.param_groups
    if len(saved) != len(current):
        return [f"{len(saved)} parameter groups in the checkpoint, {len(current)} here"]
    return [
        f"parameter group {index}: {len(old.get('params', ()))} parameters in the checkpoint, {len(new['params'])} here"
        for index, (old, new) in enumerate(zip(saved, current))
        if len(old.get("params", ())) != len(new["params"])
    ]
