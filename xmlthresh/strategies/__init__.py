"""Threshold strategies: one module per strategy, registered by name in ``STRATEGIES``."""

from . import coordinate, domain, domain_fast, independent  # noqa: F401  (registration side effect)
from . import pcut, rcut, scut  # noqa: F401  (score-based baselines)
from . import linearization, linearization_region  # noqa: F401  (linearised map: Algorithms 1, 2)
from . import pu  # noqa: F401  (plug-in optimum under calibrated probabilities)
from .base import BaseStrategy, ScoreStrategy, ThresholdStrategy
from .registry import STRATEGIES

__all__ = ["STRATEGIES", "BaseStrategy", "ScoreStrategy", "ThresholdStrategy"]
