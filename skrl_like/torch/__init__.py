"""The PyTorch backend."""

from skrl_like import config
from skrl_like.core.seeding import seed_torch

seed_torch()  # a seed given to set_seed before torch was imported
config.torch.init_process_group()  # under torchrun: join the group before the first collective
