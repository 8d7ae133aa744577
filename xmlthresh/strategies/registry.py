"""The registry of threshold strategies (name -> estimator class)."""

from ..registry import Registry

STRATEGIES: Registry = Registry("strategy")
