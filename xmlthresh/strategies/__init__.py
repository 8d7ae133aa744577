"""Threshold strategies: one module per strategy, registered by name in ``STRATEGIES``."""

from . import coordinate, domain, independent  # noqa: F401  (registration side effect)
from .base import ThresholdStrategy
from .registry import STRATEGIES

__all__ = ["STRATEGIES", "ThresholdStrategy"]
