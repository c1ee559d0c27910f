"""``KLAdaptiveLR``: adapt the learning rate to the KL divergence between successive policies."""

from typing import List, Optional, Union

import torch
from torch.optim.lr_scheduler import _LRScheduler

# (major, minor) is enough to pick the parent's constructor signature
_TORCH_VERSION = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])


class KLAdaptiveLR(_LRScheduler):
    """Raise or lower the learning rate so that the policy's KL divergence per update stays near a target.

    After each update call ``scheduler.step(kl)``: a KL above ``kl_threshold * kl_factor`` means the policy moved
    too far, so the rate is divided by ``lr_factor`` (not below ``min_lr``); a KL below
    ``kl_threshold / kl_factor`` means it barely moved, so the rate is multiplied by ``lr_factor`` (not above
    ``max_lr``). ``step()`` without ``kl`` changes nothing.

    :param optimizer: the optimizer whose parameter groups are adapted.
    :param kl_threshold: target KL divergence.
    :param min_lr: lower bound of the learning rate.
    :param max_lr: upper bound of the learning rate.
    :param kl_factor: width of the dead band around the target (the rate changes outside
        ``[kl_threshold / kl_factor, kl_threshold * kl_factor]``).
    :param lr_factor: multiplicative change applied to the rate.
    :param last_epoch: index of the last epoch (``-1`` for a fresh schedule).
    :param verbose: forwarded to torch only where torch still accepts it (torch < 2.7).
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        kl_threshold: float = 0.008,
        min_lr: float = 1e-6,
        max_lr: float = 1e-2,
        kl_factor: float = 2,
        lr_factor: float = 1.5,
        last_epoch: int = -1,
        verbose: bool = False,
    ) -> None:
        self.kl_threshold = kl_threshold
        self.min_lr = min_lr
        self.max_lr = max_lr
        self._kl_factor = kl_factor
        self._lr_factor = lr_factor
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        if _TORCH_VERSION >= (2, 7):
            super().__init__(optimizer, last_epoch)
        elif _TORCH_VERSION >= (2, 2):
            super().__init__(optimizer, last_epoch, "deprecated")
        else:
            super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self) -> List[float]:
        """The current learning rate of every parameter group."""
        return [group["lr"] for group in self.optimizer.param_groups]

    def step(self, kl: Optional[Union[torch.Tensor, float]] = None, epoch: Optional[int] = None) -> None:
        """Apply the rule for ``kl`` (a float or a one-element tensor); ``kl=None`` leaves the rates unchanged.

        :param kl: KL divergence measured during the last update.
        :param epoch: unused (kept for the ``torch.optim.lr_scheduler`` signature).
        """
        if kl is not None:
            kl = float(kl.item() if isinstance(kl, torch.Tensor) else kl)
            for group in self.optimizer.param_groups:
                if kl > self.kl_threshold * self._kl_factor:
                    group["lr"] = max(group["lr"] / self._lr_factor, self.min_lr)
                elif kl < self.kl_threshold / self._kl_factor:
                    group["lr"] = min(group["lr"] * self._lr_factor, self.max_lr)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


# skrl's historical misspelling, kept as an alias of the same class
KLAdaptiveRL = KLAdaptiveLR
