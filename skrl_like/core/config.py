"""Config merging with validation: unknown keys fail with the closest valid key suggested."""

import copy
import difflib
from collections.abc import Mapping
from typing import Any, Optional

from skrl_like import logger

# sub-dicts whose keys are validated against the default's keys (others, like *_kwargs, are free-form)
_VALIDATED_SUBDICTS = ("experiment", "exploration")


def did_you_mean(name: Any, candidates: Any, shown: Optional[Mapping[str, str]] = None) -> str:
    """``" Did you mean 'x'?"`` for the candidate closest to ``name`` (as ``shown[x]`` when given), else ``""``."""
    close = difflib.get_close_matches(str(name), [str(candidate) for candidate in candidates], n=1)
    if not close:
        return ""
    return f" Did you mean '{shown[close[0]] if shown else close[0]}'?"


def _unknown_key_error(key: str, valid: Any, where: str) -> ValueError:
    valid = sorted(valid)
    return ValueError(f"Unknown key '{key}' in {where}.{did_you_mean(key, valid)} Valid keys: {', '.join(valid)}")


def _copy_dicts(value: Any) -> Any:
    """Copy nested dicts; leave other values (devices, classes, callables) shared."""
    if isinstance(value, dict):
        return {k: _copy_dicts(v) for k, v in value.items()}
    return value


def merge_config(
    default: Mapping, user: Optional[Mapping], where: str, ignored: Optional[Mapping[str, str]] = None
) -> dict:
    """Return a copy of ``default`` updated with ``user`` (a shallow update, as in skrl).

    :param default: the ``*_DEFAULT_CONFIG`` dict (never modified).
    :param user: the user's cfg, or ``None``.
    :param where: what the cfg configures, used in error messages (e.g. ``"PPO cfg"``).
    :param ignored: keys that skrl 1.4.3's own published examples set although its agent never reads them, each
        with what to set instead: they are dropped with a warning (refusing them would break those scripts,
        honouring them would change skrl's numbers).
    :raises ValueError: a top-level key, or a key of ``experiment``/``exploration``, is unknown.
    :raises TypeError: ``user`` is not a mapping.
    """
    if user is None:
        user = {}
    if not isinstance(user, Mapping):
        raise TypeError(f"{where} must be a dict, got {type(user).__name__}")
    merged = _copy_dicts(dict(default))
    for key, value in user.items():
        if ignored and key in ignored and key not in default:
            logger.warning(
                f"{where}[{key!r}] = {value!r} is not a key of this agent and is ignored, as in skrl "
                f"1.4.3: {ignored[key]}"
            )
            continue
        if key not in default:
            raise _unknown_key_error(key, default.keys(), where)
        if key in _VALIDATED_SUBDICTS and isinstance(default[key], Mapping):
            if not isinstance(value, Mapping):
                raise TypeError(f"{where}['{key}'] must be a dict, got {type(value).__name__}")
            for sub_key in value:
                if sub_key not in default[key]:
                    raise _unknown_key_error(sub_key, default[key].keys(), f"{where}['{key}']")
        merged[key] = _copy_dicts(value)
    return merged


def deepcopy_default(default: Mapping) -> dict:
    """A deep copy of a default config (for modules that expose a fresh dict)."""
    return copy.deepcopy(dict(default))
