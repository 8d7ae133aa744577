"""Data sets with multi-dimensional targets: one module per data set, registered by name in
:data:`xmlthresh.cde.registry.CDE_DATASETS` (discovered on first use)."""

from xmlthresh.cde.datasets.base import CDEData, SyntheticCDE, relevance_summary

__all__ = ["CDEData", "SyntheticCDE", "relevance_summary"]
