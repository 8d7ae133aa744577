"""``coordinate``: cyclic coordinate ascent on F-macro starting from T_b.

Labels are visited in order; each moves to its best candidate for F-macro with all others fixed. Passes
repeat until none changes anything. The result is a coordinate-wise maximum, which need not be the global
optimum (docs/theory.md#two-label-counterexample).
"""

from __future__ import annotations

import numpy as np

from xmlthresh.data.candidates import Candidates
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.strategies._kernels import coordinate_ascent, independent_argmax
from xmlthresh.strategies.registry import STRATEGIES
from xmlthresh.strategies.base import PoolingMixin, PrecisionControlMixin, ThresholdStrategy


@STRATEGIES.register("coordinate")
class CoordinateStrategy(PoolingMixin, PrecisionControlMixin, ThresholdStrategy):
    """Cyclic coordinate ascent; ``max_passes`` bounds the work, ``tol`` is the smallest accepted gain;
    ``pooling`` / ``fallback`` on scores: see :class:`PoolingMixin`."""

    def __init__(self, beta: float = 1.0, max_passes: int = 1000, tol: float = 1e-15, min_precision: float = 0.0,
                 smoothing: float = 0.0, pooling: float | str = 0.0, fallback: str = "never",
                 pooling_space: str = "score", max_predicted_per_positive: float | None = None) -> None:
        super().__init__(beta=beta)
        self.min_precision = min_precision
        self.smoothing = smoothing
        self.max_predicted_per_positive = max_predicted_per_positive
        self.pooling = pooling
        self.fallback = fallback
        self.pooling_space = pooling_space
        self.max_passes = max_passes
        self.tol = tol

    def _check_params(self) -> None:
        super()._check_params()
        self._check_precision_control()
        self._check_pooling()
        if not (isinstance(self.max_passes, int) and self.max_passes >= 1):
            raise ValueError(f"max_passes must be an integer >= 1, got {self.max_passes!r}")
        if not (self.tol >= 0):
            raise ValueError(f"tol must be >= 0, got {self.tol!r}")

    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        precision, recall = candidates.precision, candidates.recall
        b2 = self.beta**2
        current = independent_argmax(candidates.cand_ptr, precision, recall, b2)
        passes, converged = coordinate_ascent(
            candidates.cand_ptr, precision, recall, current, b2, self.max_passes, self.tol
        )
        self.info_["passes"] = int(passes)
        self.info_["converged"] = bool(converged)
        return current
