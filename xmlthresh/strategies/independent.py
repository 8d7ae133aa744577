"""``independent``: T_b, every label at its own F_beta optimum -- the exact optimum of macro-F.

Each label takes the first (smallest-cut) candidate maximising F_beta(p_k, r_k). It ignores the coupling
of F-macro through the averages P and R, which is why it is the baseline the other strategies beat.
"""

from __future__ import annotations

import numpy as np

from ..data.candidates import Candidates
from ..data.ranked_lists import RankedLists
from ._kernels import independent_argmax
from .registry import STRATEGIES
from .base import ThresholdStrategy


@STRATEGIES.register("independent")
class IndependentStrategy(ThresholdStrategy):
    """Per-label F_beta maximisation (exact macro-F optimum); reports its macro-F and its F-macro."""

    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        return independent_argmax(candidates.cand_ptr, candidates.precision, candidates.recall, self.beta**2)
