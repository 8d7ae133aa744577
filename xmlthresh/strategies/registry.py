"""The registry of threshold strategies (name -> estimator class), discovered from this package's modules."""

from xmlthresh._util.registry import Registry

STRATEGIES: Registry = Registry("strategy", package="xmlthresh.strategies")
