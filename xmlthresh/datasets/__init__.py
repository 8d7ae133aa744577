"""Dataset plugins: one module per source, registered by name in ``DATASETS`` (discovered on first use)."""

from xmlthresh.datasets.base import Dataset
from xmlthresh.datasets.registry import DATASETS

__all__ = ["DATASETS", "Dataset"]
