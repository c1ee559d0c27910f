"""Learning-rate schedulers (torch): ``KLAdaptiveLR`` and its alias ``KLAdaptiveRL``, and torch's own
``ExponentialLR`` and ``LinearLR`` (re-exported so that a configuration file can name them in both backends, as the
JAX ones)."""

from torch.optim.lr_scheduler import ExponentialLR, LinearLR

from skrl_like.torch.resources.schedulers.kl_adaptive import KLAdaptiveLR, KLAdaptiveRL

__all__ = ["ExponentialLR", "KLAdaptiveLR", "KLAdaptiveRL", "LinearLR"]
