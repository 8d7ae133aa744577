"""Dataset plugins: one module per source, registered by name in ``DATASETS``."""

from . import hmc, mulan, ranked_list_files, score_files, synthetic, synthetic_xmc, wikilshtc, xmlrepo  # noqa: F401
from .base import Dataset
from .registry import DATASETS

__all__ = ["DATASETS", "Dataset"]
