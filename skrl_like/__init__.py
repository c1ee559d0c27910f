"""skrl_like: modular reinforcement learning with mirrored PyTorch and JAX backends (skrl 1.4 API)."""

from importlib.metadata import PackageNotFoundError, version

from skrl_like._config import config
from skrl_like._logging import logger

try:
    __version__ = version("skrl_like")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "unknown"

__all__ = ["__version__", "config", "logger"]
