"""Threshold strategies: one module per strategy (named like the strategy), registered by name in
``STRATEGIES``, which imports a strategy's module when it is first asked for it."""

from xmlthresh.strategies.base import BaseStrategy, ScoreStrategy, ThresholdStrategy
from xmlthresh.strategies.registry import STRATEGIES

__all__ = ["STRATEGIES", "BaseStrategy", "ScoreStrategy", "ThresholdStrategy"]
