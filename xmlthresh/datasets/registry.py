"""The registry of dataset plugins (name -> loader class with ``load() -> RankedLists``)."""

from ..registry import Registry

DATASETS: Registry = Registry("dataset")
