"""``native``: the scores' own decision threshold for every label -- what the ranker's classifier predicts
without any threshold fitted (decision value > 0 for a margin, probability > 0.5 for a probability).

The baseline every fitted rule has to beat: LibMultiLabel's and scikit-learn's ``predict``. A label predicts
the documents scored strictly above the native threshold, as those libraries do. The threshold comes from
the scores (``ScoredSplit.native_threshold``: declared by the ranker, a score file or ``fit_thresholds``'
``native_threshold``); scores that declare none are refused. Nothing is fitted, so the rule is the same
under every protocol.
"""

from __future__ import annotations

import numpy as np

from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies.base import ScoreStrategy
from xmlthresh.strategies.registry import STRATEGIES


@STRATEGIES.register("native")
class NativeThreshold(ScoreStrategy):
    """Every label at the scores' native decision threshold (strictly above it predicts)."""

    def fit_scores(self, split: ScoredSplit) -> "NativeThreshold":
        self._check_params()
        if split.native_threshold is None:
            raise ValueError("strategy=native needs scores that declare their decision threshold (a ranker's, "
                             "a score file's key native_threshold, or fit_thresholds(..., native_threshold=0.5)); "
                             "these declare none")
        above = np.nextafter(float(split.native_threshold), np.inf)  # strictly above, as predict does
        self.score_thresholds_ = np.full(split.n_labels, above)
        self.info_ = {"native_threshold": float(split.native_threshold)}
        self._set_fit_results(split)
        return self

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        return split.counts_at(self.score_thresholds_)
