"""``independent``: T_b, every label at its own F_beta optimum -- the exact optimum of macro-F.

Each label takes the first (smallest-cut) candidate maximising F_beta(p_k, r_k). It ignores the coupling
of F-macro through the averages P and R, which is why it is the baseline the other strategies beat.
"""

from __future__ import annotations

import numpy as np

from xmlthresh.data.candidates import Candidates
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.strategies._kernels import independent_argmax
from xmlthresh.strategies.registry import STRATEGIES
from xmlthresh.strategies.base import PoolingMixin, PrecisionControlMixin, ThresholdStrategy


@STRATEGIES.register("independent")
class IndependentStrategy(PoolingMixin, PrecisionControlMixin, ThresholdStrategy):
    """Per-label F_beta maximisation (exact macro-F optimum); reports its macro-F and its F-macro.

    ``min_precision`` / ``smoothing``: see :class:`PrecisionControlMixin`; ``pooling`` / ``fallback`` (on
    scores): see :class:`PoolingMixin`."""

    def __init__(self, beta: float = 1.0, min_precision: float = 0.0, smoothing: float = 0.0,
                 pooling: float | str = 0.0, fallback: str = "never", pooling_space: str = "score", max_predicted_per_positive: float | None = None) -> None:
        super().__init__(beta=beta)
        self.min_precision = min_precision
        self.smoothing = smoothing
        self.max_predicted_per_positive = max_predicted_per_positive
        self.pooling = pooling
        self.fallback = fallback
        self.pooling_space = pooling_space

    def _check_params(self) -> None:
        super()._check_params()
        self._check_precision_control()
        self._check_pooling()

    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        return independent_argmax(candidates.cand_ptr, candidates.precision, candidates.recall, self.beta**2)
