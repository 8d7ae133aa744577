"""Dataset plugins: one module per source, registered by name in ``DATASETS``."""

from . import hmc, mulan, ranked_list_files, synthetic, wikilshtc, xmlrepo  # noqa: F401  (registration side effect)
from .base import Dataset
from .registry import DATASETS

__all__ = ["DATASETS", "Dataset"]
