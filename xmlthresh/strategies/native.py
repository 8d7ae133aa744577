"""``native``: the scores' own decision threshold for every label -- what the ranker's classifier predicts
without any threshold fitted (decision value > 0 for a margin, probability > 0.5 for a probability).

The baseline every fitted rule has to beat: LibMultiLabel's and scikit-learn's ``predict``. A label predicts
the documents scored strictly above the native threshold, as those libraries do. The threshold comes from
the scores (``ScoredSplit.native_threshold``: declared by the ranker, a score file or ``fit_thresholds``'
``native_threshold``), or from ``threshold``, which wins when given; without either the fit is refused. Nothing is fitted, so the rule is the same
under every protocol; labels without a relevant fit document keep the native threshold too (counted in
``info_['n_labels_fallback']``, as ``fallback="native"`` would give them), not +inf.
"""

from __future__ import annotations

import numpy as np

from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies.base import ScoreStrategy
from xmlthresh.strategies.registry import STRATEGIES


@STRATEGIES.register("native")
class NativeThreshold(ScoreStrategy):
    """Every label at the scores' native decision threshold, or ``threshold`` (strictly above it predicts)."""

    def __init__(self, beta: float = 1.0, threshold: float | None = None) -> None:
        super().__init__(beta=beta)
        self.threshold = threshold

    def _check_params(self) -> None:
        super()._check_params()
        if self.threshold is not None and not np.isfinite(self.threshold):
            raise ValueError(f"strategy.threshold must be a finite number or null (the scores' own), got "
                             f"{self.threshold!r}")

    def fit_scores(self, split: ScoredSplit) -> "NativeThreshold":
        self._check_params()
        native = self.threshold if self.threshold is not None else split.native_threshold
        if native is None:
            raise ValueError("strategy=native needs a decision threshold: scores that declare one (a ranker's, "
                             "a score file's key native_threshold, fit_thresholds(..., native_threshold=0.5)) or "
                             "strategy.threshold; these scores declare none")
        above = np.nextafter(float(native), np.inf)  # strictly above, as predict does
        self.score_thresholds_ = np.full(split.n_labels, above)
        # labels without a relevant fit document keep it too, as fallback="native" gives them elsewhere
        self.info_ = {"native_threshold": float(native),
                      "n_labels_fallback": int(np.count_nonzero(split.n_relevant == 0))}
        self._set_fit_results(split)
        return self

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        return split.counts_at(self.score_thresholds_)
