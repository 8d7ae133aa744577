"""The estimator contract every threshold strategy follows (scikit-learn style).

``fit(lists)`` chooses one cut per label (the number of top documents predicted) and sets fitted
attributes ending in ``_``; ``evaluate(lists)`` / ``score(lists)`` measure those cuts. Parameters are
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
from ..metrics import evaluate, evaluate_cuts


class ThresholdStrategy(BaseEstimator):
    """Base class: subclasses implement ``_choose(candidates, lists)`` -> candidate index per label.

    ``lists`` are the ranked lists of the kept labels (s_k > 0), in the order of ``candidates``; strategies
    that need every cut position (not only the Pareto candidates) read them from there.
    """

    #: registry name (set by the ``@STRATEGIES.register`` decorator)
    registry_name: ClassVar[str] = ""
    #: whether the strategy reports certified lower and upper bounds on the optimum
    certified: ClassVar[bool] = False

    def __init__(self, beta: float = 1.0) -> None:
        self.beta = beta

    # ------------------------------------------------------------------ public API
    def fit(self, lists: RankedLists) -> "ThresholdStrategy":
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
        self.kept_labels_ = kept
        self.n_labels_dropped_ = int(np.count_nonzero(~kept))
        self.n_candidates_ = candidates.n_candidates
        self.metrics_ = evaluate(candidates.tp[choice], candidates.cut[choice], candidates.n_relevant, self.beta)
        self.f_macro_ = self.metrics_["f_macro"]
        self._after_fit(candidates, choice)
        return self

    def evaluate(self, lists: RankedLists) -> dict[str, float]:
        """Metrics of the fitted cuts on ``lists`` (same labels as in fit)."""
        self._check_fitted()
        if lists.n_labels != len(self.cuts_):
            raise ValueError(f"fitted on {len(self.cuts_)} labels, got {lists.n_labels}")
        kept = self.kept_labels_ & (lists.n_relevant > 0)
        return evaluate_cuts(lists.select_labels(kept), self.cuts_[kept], self.beta)

    def score(self, lists: RankedLists) -> float:
        """F-macro of the fitted cuts on ``lists`` (higher is better, as scikit-learn expects)."""
        return self.evaluate(lists)["f_macro"]

    def warm_up(self) -> None:
        """Compile the numba kernels on a tiny instance so that timing ``fit`` excludes JIT cost."""
        tiny = RankedLists.from_relevance_lists([[1, 0, 1, 0], [0, 1, 1, 0], [0, 0, 0, 1]], [2, 3, 1], num_docs=5)
        clone(self).fit(tiny)

    def report(self) -> dict[str, Any]:
        """What the strategy knows about its result: metrics, bounds and strategy-specific diagnostics."""
        self._check_fitted()
        return {
            **self.metrics_,
            "lower_bound": self.lower_bound_,
            "upper_bound": self.upper_bound_,
            "n_candidates": self.n_candidates_,
            "n_labels_dropped": self.n_labels_dropped_,
            **self.info_,
        }

    # ------------------------------------------------------------------ subclass hooks
    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        raise NotImplementedError

    def _after_fit(self, candidates: Candidates, choice: np.ndarray) -> None:
        """Hook for strategies that derive bounds from the recomputed metrics."""

    def _check_params(self) -> None:
        if not (isinstance(self.beta, (int, float)) and self.beta > 0 and np.isfinite(self.beta)):
            raise ValueError(f"beta must be a positive finite number, got {self.beta!r}")

    def _check_fitted(self) -> None:
        if not hasattr(self, "cuts_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted yet; call fit(lists) first")
