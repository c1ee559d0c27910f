"""Tabular models (Q-learning, SARSA): the "parameters" are plain tensor attributes such as ``q_table``."""

from typing import Any, Mapping

import torch

from skrl_like.torch.models.base import ActOutput, bad_compute_output, require_model_initialised


class TabularMixin:
    """Return ``compute``'s actions as they are, and treat tensor attributes as the model state.

    The user stores tables as tensor attributes (by convention ``self.q_table`` of shape
    ``(num_envs, num_states, num_actions)``) and writes ``compute`` returning ``(actions (N, 1), {})``.
    Because tables are not ``nn.Parameter``\\ s, this mixin extends ``to``, ``state_dict``, ``load_state_dict``,
    ``save`` and ``load`` to them.

    :param num_envs: number of environments, i.e. how many independent tables the model keeps.
    :param role: role served by this mixin (informative).
    """

    def __init__(self, num_envs: int = 1, role: str = "") -> None:
        require_model_initialised(self, "TabularMixin")
        self.num_envs = num_envs

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}("]
        for name, tensor in self._tensor_attributes().items():
            lines.append(f"  ({name}): {type(tensor).__name__}(shape={list(tensor.shape)})")
        lines.append(")")
        return "\n".join(lines)

    def _tensor_attributes(self) -> dict[str, torch.Tensor]:
        return {
            name: value
            for name, value in sorted(vars(self).items())
            if not name.startswith("__") and isinstance(value, torch.Tensor)
        }

    def act(self, inputs: Mapping[str, Any], role: str = "") -> ActOutput:
        """Return the actions chosen by ``compute`` (e.g. epsilon-greedy over the table).

        :param inputs: ``{"states": ...}``.
        :param role: role passed to ``compute``.
        :return: ``(actions, None, outputs)``.
        """
        result = self.compute(inputs, role)
        try:
            if isinstance(result, torch.Tensor):  # a bare tensor would unpack along its batch axis
                raise TypeError
            actions, outputs = result
        except (TypeError, ValueError):
            raise bad_compute_output(self, "TabularMixin", role, result, "(actions, outputs)") from None
        return actions, None, outputs

    def table(self) -> torch.Tensor:
        """The Q-table (``self.q_table``)."""
        return self.q_table

    def to(self, *args: Any, **kwargs: Any) -> "TabularMixin":
        """``nn.Module.to`` plus moving/casting every tensor attribute."""
        module = torch.nn.Module.to(self, *args, **kwargs)
        for name, tensor in self._tensor_attributes().items():
            setattr(self, name, tensor.to(*args, **kwargs))
        return module

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The tensor attributes, then the regular module state merged in."""
        state = dict(self._tensor_attributes())
        state.update(torch.nn.Module.state_dict(self, *args, **kwargs))
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, **kwargs: Any) -> Any:
        """Load module state (non-strictly) and replace the tensor attributes in place.

        :param state_dict: as produced by :meth:`state_dict`.
        :param strict: kept for signature compatibility; tensor entries are always checked strictly.
        """
        result = torch.nn.Module.load_state_dict(self, state_dict, strict=False, **kwargs)
        module_keys = set(torch.nn.Module.state_dict(self).keys())
        self._load_tensor_attributes({k: v for k, v in state_dict.items() if k not in module_keys})
        return result

    def _load_tensor_attributes(self, tensors: Mapping[str, Any]) -> None:
        current = self._tensor_attributes()
        for name, value in tensors.items():
            if name not in current:
                raise ValueError(
                    f"Cannot load {name!r} into {type(self).__name__}: it has no tensor attribute of that name "
                    f"(tensor attributes: {', '.join(current) or 'none'})"
                )
            target = current[name]
            if not isinstance(value, torch.Tensor) or value.shape != target.shape or value.dtype != target.dtype:
                found = f"{list(value.shape)} {value.dtype}" if isinstance(value, torch.Tensor) else repr(value)
                raise ValueError(
                    f"Cannot load {name!r} into {type(self).__name__}: expected a tensor of shape "
                    f"{list(target.shape)} and dtype {target.dtype}, got {found}"
                )
            with torch.no_grad():
                target.copy_(value)

    def save(self, path: str, state_dict: Any = None) -> None:
        """Save the tensor attributes (``state_dict`` is ignored, as in skrl).

        :param path: file to write.
        :param state_dict: ignored.
        """
        torch.save(self._tensor_attributes(), path)

    def load(self, path: str, module: str | None = None) -> None:
        """Load tensor attributes saved by :meth:`save` (checked for name, shape and dtype), or the state of module
        ``module`` (e.g. ``"policy"``) of an agent checkpoint.

        :param path: file to read.
        :param module: the module of an agent checkpoint to read (a file of :meth:`save` needs none).
        """
        state = self._read_checkpoint(path, module)
        if module is None:
            self._load_tensor_attributes(state)
        else:
            self.load_state_dict(state)
