"""Dataset plugins: one module per source, registered by name in ``DATASETS`` (discovered on first use)."""

from .base import Dataset
from .registry import DATASETS

__all__ = ["DATASETS", "Dataset"]
