"""The registered CDE datasets (importing this package registers them in CDE_DATASETS)."""

from .base import CDEData, SyntheticCDE, relevance_summary
from .fork import Fork
from .surd import SURD
from .xanes import XanesFeSiO4

__all__ = ["CDEData", "Fork", "SURD", "SyntheticCDE", "XanesFeSiO4", "relevance_summary"]
