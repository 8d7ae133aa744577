"""``sklearn_tuned``: scikit-learn's decision-threshold tuning, one label at a time.

For every label k, :class:`sklearn.model_selection.TunedThresholdClassifierCV` with ``cv="prefit"`` and
``refit=False`` tunes the threshold of a prefit "classifier" whose decision function is label k's score
column of the fit split, scoring F_beta of the label (``make_scorer``). The chosen threshold predicts the
documents with score >= threshold (scikit-learn's rule and ours), so it applies unchanged to other splits.
Deterministic. Candidate thresholds: ``thresholds`` = an integer n (scikit-learn's default: n equally
spaced values between the label's smallest and largest score, 100) or ``"all"`` (every distinct score of the
label: the exact per-label optimum, as ``scut`` finds it; ties go to the lowest threshold, scikit-learn's
argmax over ascending thresholds).

``scorer="counts"`` (default) scores with F_beta computed from the counts (tp, predicted, relevant) -- the
same number as ``sklearn.metrics.fbeta_score(y, y_pred, beta=beta, zero_division=0)`` on 0/1 input (tested),
with identical thresholds and much faster (the plugin's README has the timings); ``scorer="sklearn"`` uses
``make_scorer(fbeta_score, beta=beta, zero_division=0.0)`` itself. Labels without relevant documents in the
fit split never predict; a label whose scores are all equal (no threshold to tune) predicts all documents.
Sparse top-k scores are read one label column at a time (``ScoreColumns``: the unscored documents share a
score below every scored one), never densified: memory O(nnz + documents). Time is a Python loop over the
labels, O(documents) each, so ``skip`` refuses problems beyond ``max_labels`` labels (default 5000; the time
grows with the number of labels, see the plugin's README): use ``scut`` for the same per-label optimum at any
scale.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies.base import ScoreStrategy
from xmlthresh.strategies.registry import STRATEGIES

from ._common import MissingDependencyError
from ._platt import unscored_fill

SCORERS = ("counts", "sklearn")
SKLEARN_HINT = "pip install 'scikit-learn>=1.5'"


class ScoreColumn(ClassifierMixin, BaseEstimator):
    """A prefit binary 'classifier' whose decision function is the first column of X (a label's scores)."""

    def fit(self, X=None, y=None) -> "ScoreColumn":
        self.classes_ = np.array([0, 1])
        return self

    def decision_function(self, X) -> np.ndarray:
        return np.asarray(X, dtype=np.float64)[:, 0]


def fbeta_from_counts(y_true, y_pred, beta: float = 1.0) -> float:
    """F_beta of binary 0/1 predictions; 0 when nothing relevant is predicted (= fbeta_score, zero_division=0)."""
    y_true = np.asarray(y_true) == 1
    y_pred = np.asarray(y_pred) == 1
    tp = np.count_nonzero(y_true & y_pred)
    if tp == 0:
        return 0.0
    b2 = beta * beta
    return float((1.0 + b2) * tp / ((1.0 + b2) * tp + b2 * (np.count_nonzero(y_true) - tp)
                                    + (np.count_nonzero(y_pred) - tp)))


class ScoreColumns:
    """Label k's scores over all documents, one label at a time: a dense matrix's column, or for CSR scores
    the stored entries of column k with the unscored documents at ``unscored_fill`` (below every scored
    one). Memory O(nnz + documents): the (documents x labels) matrix is never built."""

    def __init__(self, scores) -> None:
        self.sparse = sp.issparse(scores)
        self.scores = sp.csc_matrix(scores) if self.sparse else np.asarray(scores, dtype=np.float64)
        self.fill = unscored_fill(scores) if self.sparse else -np.inf

    def column(self, k: int) -> np.ndarray:
        if not self.sparse:
            return self.scores[:, k]
        start, end = self.scores.indptr[k], self.scores.indptr[k + 1]
        x = np.full(self.scores.shape[0], self.fill)
        x[self.scores.indices[start:end]] = self.scores.data[start:end]
        return x


@STRATEGIES.register("sklearn_tuned")
class SklearnTunedThreshold(ScoreStrategy):
    """Per-label ``TunedThresholdClassifierCV(cv="prefit")`` on the fit split's score columns."""

    kind: ClassVar[str] = "deterministic"

    def __init__(self, beta: float = 1.0, thresholds: int | str = 100, scorer: str = "counts",
                 max_labels: int = 5000) -> None:
        super().__init__(beta=beta)
        self.thresholds = thresholds
        self.scorer = scorer
        self.max_labels = max_labels

    @staticmethod
    def unavailable_reason() -> str | None:
        try:
            from sklearn.model_selection import TunedThresholdClassifierCV  # noqa: F401  (scikit-learn >= 1.5)
        except ImportError:
            import sklearn

            return (f"needs scikit-learn >= 1.5 (TunedThresholdClassifierCV), found {sklearn.__version__}; "
                    f"{SKLEARN_HINT}")
        return None

    def skip(self, data: Any) -> tuple[bool, str]:
        skipped, reason = super().skip(data)
        if skipped:
            return skipped, reason
        n_labels = next(iter(data.splits.values())).n_labels if isinstance(data, ScoreData) else 0
        if n_labels > self.max_labels:
            return True, (f"{self.registry_name} tunes one scikit-learn estimator per label in a Python loop; "
                          f"{n_labels} labels exceed max_labels={self.max_labels} (use scut for the same "
                          "per-label optimum at any scale)")
        return False, ""

    def _check_params(self) -> None:
        super()._check_params()
        if not (self.thresholds == "all" or (isinstance(self.thresholds, int) and self.thresholds >= 2)):
            raise ValueError(f"thresholds must be an integer >= 2 or 'all', got {self.thresholds!r}")
        if self.scorer not in SCORERS:
            raise ValueError(f"scorer must be one of {SCORERS}, got {self.scorer!r}")
        if not (isinstance(self.max_labels, int) and self.max_labels >= 1):
            raise ValueError(f"max_labels must be an integer >= 1, got {self.max_labels!r}")

    def fit_scores(self, split: ScoredSplit) -> "SklearnTunedThreshold":
        self._check_params()
        reason = self.unavailable_reason()
        if reason:
            raise MissingDependencyError(reason)
        from sklearn.metrics import fbeta_score, make_scorer
        from sklearn.model_selection import TunedThresholdClassifierCV

        beta = float(self.beta)
        scoring = (make_scorer(fbeta_from_counts, beta=beta) if self.scorer == "counts"
                   else make_scorer(fbeta_score, beta=beta, zero_division=0.0))
        columns = ScoreColumns(split.scores)
        labels = split.labels.tocsc()
        column = ScoreColumn().fit()
        thresholds = np.full(split.n_labels, np.inf)  # no relevant document: never predict
        constant = 0
        for k in range(split.n_labels):
            relevant = labels.indices[labels.indptr[k]:labels.indptr[k + 1]]
            if len(relevant) == 0:
                continue
            x = columns.column(k)
            low, high = x.min(), x.max()
            if low == high:  # nothing to tune: every document or none; predict all (recall 1 beats 0)
                thresholds[k] = low if split.include_predict_all else np.inf
                constant += 1
                continue
            y = np.zeros(split.n_docs, dtype=np.int64)
            y[relevant] = 1
            # the candidates scikit-learn would use (an integer n: np.linspace(min, max, n)), made explicit so
            # that "predict all" (threshold = the smallest score) can be left out when the data forbid it
            grid = np.linspace(low, high, self.thresholds) if self.thresholds != "all" else np.unique(x)
            if not split.include_predict_all:
                grid = grid[grid > low]
            if len(grid) == 1 or np.isclose(grid[0], grid[-1]):  # scikit-learn refuses a degenerate grid
                values = [fbeta_from_counts(y, (x >= t).astype(int), beta) for t in grid]
                thresholds[k] = grid[int(np.argmax(values))]
                continue
            tuned = TunedThresholdClassifierCV(column, scoring=scoring, response_method="decision_function",
                                               thresholds=grid, cv="prefit", refit=False)
            thresholds[k] = tuned.fit(x[:, None], y).best_threshold_
        if sp.issparse(split.scores):  # at or below the unscored fill value: every document, scored or not
            thresholds[thresholds <= columns.fill] = -np.inf
        self.score_thresholds_ = thresholds
        self.info_ = {"kind": self.kind, "thresholds": self.thresholds, "scorer": self.scorer,
                      "n_constant_labels": constant}
        self._set_fit_results(split)
        return self

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        return split.counts_at(self.score_thresholds_)
