"""The estimator contract every threshold strategy follows (scikit-learn style).

Two families share :class:`BaseStrategy`:

* :class:`ThresholdStrategy` (domain, independent, coordinate, ...) works on ranked lists: ``fit_lists(lists)``
  chooses one cut per label (the number of top documents predicted) and sets fitted attributes ending in
  ``_``; ``evaluate_lists(lists)`` / ``score_lists(lists)`` measure those cuts. On score data, ``fit_scores(split)``
  fits on the split's ranking and turns the cuts into score thresholds that apply to any other split.
* :class:`ScoreStrategy` (rcut, pcut, scut) needs per-document scores: only ``fit_scores(split)``.

Both evaluate on a scored split with ``evaluate_scores(split)`` (through ``counts(split)``), and say with
``skip(data)`` when they cannot run on a kind of data (benchopt style: ``(True, reason)``). Parameters are
plain constructor arguments, so ``get_params``/``set_params``, ``clone`` and grid search work.

Shared conventions: labels with s_k = 0 are excluded (cut 0, counted in ``n_labels_dropped_``); the
candidates are the Pareto-reduced cuts of ``xmlthresh.data.candidates``; the reported ``f_macro_`` is
always recomputed from the returned cuts, never taken from an optimiser's running value.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, clone

from ..data.candidates import Candidates, build_candidates
from ..data.ranked_lists import RankedLists
from ..data.scores import ScoredSplit
from ..metrics import evaluate, evaluate_cuts


def tiny_scored_split() -> ScoredSplit:
    """A 4 x 3 scored split with ties, used to warm up kernels."""
    scores = np.array([[0.9, 0.1, 0.5], [0.5, 0.5, 0.2], [0.5, 0.7, 0.9], [0.2, 0.7, 0.1]])
    labels = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 0], [0, 0, 1]], dtype=bool)
    return ScoredSplit(scores, labels, name="warm-up")


class BaseStrategy(BaseEstimator):
    """What every strategy offers: beta, parameter checks, scored-split evaluation, skip, warm-up, report."""

    #: registry name (set by the ``@STRATEGIES.register`` decorator)
    registry_name: ClassVar[str] = ""
    #: whether the strategy reports certified lower and upper bounds on the optimum
    certified: ClassVar[bool] = False
    #: whether the strategy needs per-document scores (cannot run on ranked lists)
    requires_scores: ClassVar[bool] = False
    #: what kind of method it is: "deterministic", "randomized", or "uses test scores" (it looks at the
    #: scores of the split it is evaluated on, which a fair comparison must state)
    kind: ClassVar[str] = "deterministic"

    def __init__(self, beta: float = 1.0) -> None:
        self.beta = beta

    def skip(self, data: Any) -> tuple[bool, str]:
        """``(True, reason)`` when the strategy cannot run on ``data`` (a RankedLists or ScoreData)."""
        if self.requires_scores and isinstance(data, RankedLists):
            return True, (
                f"{self.registry_name or type(self).__name__} needs per-document scores; "
                f"data set {data.name!r} provides ranked lists only"
            )
        return False, ""

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        """(true positives, predicted documents) per label of the fitted rule on ``split``."""
        raise NotImplementedError

    def evaluate_scores(self, split: ScoredSplit) -> dict[str, float]:
        """Metrics of the fitted rule on a scored split (labels without relevant documents excluded)."""
        self._check_fitted()
        if split.n_labels != len(self.kept_labels_):
            raise ValueError(f"fitted on {len(self.kept_labels_)} labels, got a split with {split.n_labels}")
        tp, predicted = self.counts(split)
        kept = split.n_relevant > 0
        return evaluate(tp[kept], predicted[kept], split.n_relevant[kept], self.beta)

    def report(self) -> dict[str, Any]:
        """What the strategy knows about its result: metrics, bounds and strategy-specific diagnostics."""
        self._check_fitted()
        return {
            **self.metrics_,
            "lower_bound": self.lower_bound_,
            "upper_bound": self.upper_bound_,
            "n_candidates": getattr(self, "n_candidates_", None),
            "n_labels_dropped": self.n_labels_dropped_,
            **self.info_,
        }

    def warm_up(self) -> None:
        """Take one-off costs (JIT compilation) out of the timing of ``fit``; nothing by default."""
        clone(self).fit_scores(tiny_scored_split())

    def _check_params(self) -> None:
        if not (isinstance(self.beta, (int, float)) and self.beta > 0 and np.isfinite(self.beta)):
            raise ValueError(f"beta must be a positive finite number, got {self.beta!r}")

    def _check_fitted(self) -> None:
        if not hasattr(self, "metrics_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted yet; call fit first")


class ScoreStrategy(BaseStrategy):
    """A rule that needs per-document scores (RCut, PCut, SCut): subclasses implement ``fit_scores`` (set
    ``metrics_`` on the fit split, ``kept_labels_``, ``info_``) and ``counts``."""

    requires_scores = True

    def fit(self, data: Any) -> "ScoreStrategy":
        if isinstance(data, ScoredSplit):
            return self.fit_scores(data)
        raise TypeError(self.skip(data)[1] or f"{type(self).__name__} needs a ScoredSplit")

    def fit_scores(self, split: ScoredSplit) -> "ScoreStrategy":
        raise NotImplementedError

    def _set_fit_results(self, split: ScoredSplit) -> None:
        """Common fitted attributes once the rule is fixed: metrics on the fit split, no bounds."""
        self.kept_labels_ = split.n_relevant > 0
        self.n_labels_dropped_ = int(np.count_nonzero(~self.kept_labels_))
        self.lower_bound_ = None
        self.upper_bound_ = None
        self.metrics_ = {}  # marks the strategy as fitted for evaluate_scores
        self.metrics_ = self.evaluate_scores(split)
        self.f_macro_ = self.metrics_["f_macro"]


class ThresholdStrategy(BaseStrategy):
    """Base class: subclasses implement ``_choose(candidates, lists)`` -> candidate index per label.

    ``lists`` are the ranked lists of the kept labels (s_k > 0), in the order of ``candidates``; strategies
    that need every cut position (not only the Pareto candidates) read them from there.
    """

    # ------------------------------------------------------------------ public API
    def fit_lists(self, lists: RankedLists) -> "ThresholdStrategy":
        """Choose the cuts on ``lists``; sets ``cuts_``, ``metrics_``, ``f_macro_``, bounds and ``info_``."""
        self._check_params()
        kept = lists.n_relevant > 0
        kept_lists = lists if kept.all() else lists.select_labels(kept)
        candidates = build_candidates(kept_lists)
        self.lower_bound_: float | None = None
        self.upper_bound_: float | None = None
        self.info_: dict[str, Any] = {}
        choice = self._choose(candidates, kept_lists)
        cuts = np.zeros(lists.n_labels, dtype=np.int64)
        cuts[kept] = candidates.cut[choice]
        self.cuts_ = cuts
        self.fit_lists_ = lists  # a reference (for plots and diagnostics), not a copy
        self.kept_labels_ = kept
        self.n_labels_dropped_ = int(np.count_nonzero(~kept))
        self.n_candidates_ = candidates.n_candidates
        self.metrics_ = evaluate(candidates.tp[choice], candidates.cut[choice], candidates.n_relevant, self.beta)
        self.f_macro_ = self.metrics_["f_macro"]
        self._after_fit(candidates, choice)
        return self

    def evaluate_lists(self, lists: RankedLists) -> dict[str, float]:
        """Metrics of the fitted cuts on ``lists`` (same labels as in fit)."""
        self._check_fitted()
        if lists.n_labels != len(self.cuts_):
            raise ValueError(f"fitted on {len(self.cuts_)} labels, got {lists.n_labels}")
        kept = self.kept_labels_ & (lists.n_relevant > 0)
        return evaluate_cuts(lists.select_labels(kept), self.cuts_[kept], self.beta)

    def score_lists(self, lists: RankedLists) -> float:
        """F-macro of the fitted cuts on ``lists`` (higher is better)."""
        return self.evaluate_lists(lists)["f_macro"]

    def fit_scores(self, split: ScoredSplit) -> "ThresholdStrategy":
        """Fit on the ranking of a scored split; ``score_thresholds_`` reproduce the cuts as score thresholds
        (predict score >= threshold; -inf = predict all, +inf = predict nothing) for use on other splits."""
        ranking = split.ranking()
        self.fit_lists(ranking.lists)
        self.score_thresholds_ = ranking.thresholds_for_cuts(self.cuts_)
        return self

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        if not hasattr(self, "score_thresholds_"):
            raise RuntimeError(f"{type(self).__name__} was fitted on ranked lists; use fit_scores for score data")
        return split.counts_at(self.score_thresholds_)

    def predict(self, split: ScoredSplit):
        """0/1 predictions (documents x labels, CSR) of the fitted score thresholds on ``split``."""
        self._check_fitted()
        return split.predict(self.score_thresholds_)

    def warm_up(self) -> None:
        """Compile the numba kernels on a tiny instance so that timing ``fit`` excludes JIT cost."""
        tiny = RankedLists.from_relevance_lists([[1, 0, 1, 0], [0, 1, 1, 0], [0, 0, 0, 1]], [2, 3, 1], num_docs=5)
        clone(self).fit_lists(tiny)
        clone(self).fit_scores(tiny_scored_split())

    # ------------------------------------------------------------------ subclass hooks
    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        raise NotImplementedError

    def _after_fit(self, candidates: Candidates, choice: np.ndarray) -> None:
        """Hook for strategies that derive bounds from the recomputed metrics."""
