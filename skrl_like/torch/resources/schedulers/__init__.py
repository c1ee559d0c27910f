"""Learning-rate schedulers (torch): ``KLAdaptiveLR`` and its alias ``KLAdaptiveRL``, and torch's own
``ExponentialLR`` (re-exported so that a configuration file can name it in both backends, as the JAX one)."""

from torch.optim.lr_scheduler import ExponentialLR

from skrl_like.torch.resources.schedulers.kl_adaptive import KLAdaptiveLR, KLAdaptiveRL

__all__ = ["ExponentialLR", "KLAdaptiveLR", "KLAdaptiveRL"]
