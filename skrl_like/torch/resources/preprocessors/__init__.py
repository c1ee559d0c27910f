"""Preprocessors (torch): ``RunningStandardScaler``."""

from skrl_like.torch.resources.preprocessors.running_standard_scaler import RunningStandardScaler

__all__ = ["RunningStandardScaler"]
