"""The PyTorch backend."""

from skrl_like.utils import seed_torch

seed_torch()  # a seed given to set_seed before torch was imported
