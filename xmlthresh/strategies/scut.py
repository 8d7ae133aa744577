"""``scut``: per-label score thresholds maximising each label's own F_beta on the fit split (Yang 2001),
with the fbr heuristic of Fan & Lin (2007).

On the fit split SCut chooses exactly what ``independent`` chooses; the difference is the transfer: the
chosen cut becomes the score of its last predicted document and is applied to new documents. When a
label's best F on the fit split is below ``fbr`` (rare labels, unreliable thresholds), the threshold falls
back to the label's top score on the fit split (``fbr_fallback="top"``, SCutFBR.1) or to never predicting
(``fbr_fallback="none"``, SCutFBR.0). ``fbr = 0`` switches the heuristic off.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.scores import ScoredSplit
from xmlthresh.metrics import f_beta_raw, safe_ratio
from xmlthresh.strategies.base import ScoreStrategy
from xmlthresh.strategies.independent import IndependentStrategy
from xmlthresh.strategies.registry import STRATEGIES

FALLBACKS = ("top", "none")


@STRATEGIES.register("scut")
class SCutStrategy(ScoreStrategy):
    """Per-label score thresholds; ``fbr`` in [0, 1], ``fbr_fallback`` in {'top', 'none'}."""

    def __init__(self, beta: float = 1.0, fbr: float = 0.0, fbr_fallback: str = "top") -> None:
        super().__init__(beta=beta)
        self.fbr = fbr
        self.fbr_fallback = fbr_fallback

    def _check_params(self) -> None:
        super()._check_params()
        if not 0.0 <= self.fbr <= 1.0:
            raise ValueError(f"fbr must lie in [0, 1], got {self.fbr!r}")
        if self.fbr_fallback not in FALLBACKS:
            raise ValueError(f"fbr_fallback must be one of {FALLBACKS}, got {self.fbr_fallback!r}")

    def fit_scores(self, split: ScoredSplit) -> "SCutStrategy":
        self._check_params()
        per_label = IndependentStrategy(beta=self.beta).fit_scores(split)
        thresholds = per_label.score_thresholds_.copy()
        tp, predicted = split.counts_at(thresholds)
        n_relevant = split.n_relevant
        best_f = f_beta_raw(safe_ratio(tp, predicted), safe_ratio(tp, n_relevant), self.beta)
        below = best_f < self.fbr
        thresholds[below] = _top_scores(split)[below] if self.fbr_fallback == "top" else np.inf
        self.score_thresholds_ = thresholds
        self.info_ = {"n_fbr_fallbacks": int(np.count_nonzero(below))}
        self._set_fit_results(split)
        return self

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        return split.counts_at(self.score_thresholds_)


def _top_scores(split: ScoredSplit) -> np.ndarray:
    """Highest score of every label on the split (+inf for a label without any score: never predict)."""
    if sp.issparse(split.scores):
        csc = split.scores.tocsc()
        top = np.full(split.n_labels, np.inf)
        has = np.diff(csc.indptr) > 0
        top[has] = np.maximum.reduceat(csc.data, csc.indptr[:-1][has])
        return top
    return split.scores.max(axis=0)
