"""The declared result of a fitted strategy: one typed object instead of probing attributes.

Every strategy returns a :class:`FittedRule` from ``fitted()``; the job writes ``thresholds.csv`` and
``grid.csv`` from it, the plots draw from it (they never refit a strategy), and the population metrics read
its score thresholds. A field a strategy does not have is ``None``:

* ``cuts`` / ``fit_lists`` -- the number of top documents predicted per label and the ranked lists they
  refer to (strategies that choose cuts: domain, independent, coordinate, linearization, ...); ``fit_lists``
  is a reference to the data, not a copy;
* ``score_thresholds`` -- one score threshold per label (predict score >= t; -inf = all, +inf = none), when
  the rule was fitted on scores and is a threshold per label;
* ``grid`` -- ``linearization_region``'s grid (one row per grid point: P0, R0, V, rectangle, in_own_rectangle, cell_in_region);
* ``fan`` -- ``domain_fast``'s directions, support points (the inner polygon H_a), outer polygon chain, lower
  and upper points and the boundary of the region where F exceeds the lower bound;
* ``lower_bound`` / ``upper_bound`` -- the certificate on the optimum of the fit data (certified strategies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from xmlthresh.data.ranked_lists import RankedLists


@dataclass(frozen=True)
class FittedRule:
    """What a fitted strategy has (see module docstring)."""

    strategy: str
    kind: str
    beta: float
    metrics: Mapping[str, float]
    kept_labels: np.ndarray
    lower_bound: float | None = None
    upper_bound: float | None = None
    cuts: np.ndarray | None = None
    fit_lists: RankedLists | None = None
    score_thresholds: np.ndarray | None = None
    grid: Any = None  # a pandas DataFrame (linearization_region), else None
    fan: Mapping[str, Any] | None = None  # domain_fast's polygons and region (arrays), else None
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def f_macro(self) -> float:
        return float(self.metrics["f_macro"])

    @property
    def certified(self) -> bool:
        return self.upper_bound is not None
