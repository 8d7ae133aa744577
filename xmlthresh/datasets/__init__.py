"""Dataset plugins: one module per source, registered by name in ``DATASETS``."""

from . import (  # noqa: F401  (registration side effect)
    hmc,
    mulan,
    ranked_list_files,
    score_files,
    synthetic,
    synthetic_large,
    synthetic_xmc,
    wikilshtc,
    xmlrepo,
)
from .base import Dataset
from .registry import DATASETS

__all__ = ["DATASETS", "Dataset"]
