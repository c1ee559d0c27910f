"""Learning-rate schedulers (torch): ``KLAdaptiveLR`` and its alias ``KLAdaptiveRL``."""

from skrl_like.torch.resources.schedulers.kl_adaptive import KLAdaptiveLR, KLAdaptiveRL

__all__ = ["KLAdaptiveLR", "KLAdaptiveRL"]
