"""``pcut``: proportional cut (Yang 2001) -- label k predicts its top round(x * prior_k * m) documents.

prior_k is the share of documents of the fit split that carry label k; x scales all labels at once and is
tuned on the fit split (the value maximising F-macro over a geometric grid) unless given. Applied to a split
of m' documents, label k predicts its top round(x * prior_k * m') documents in that split's score order
(ties broken by document order), clipped to the scored documents of sparse top-k scores.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.scores import ScoredSplit
from xmlthresh.data.evaluation import true_positives_at_cuts
from xmlthresh.metrics import evaluate
from xmlthresh.validation import check_int, check_size
from xmlthresh.strategies.base import ScoreStrategy
from xmlthresh.strategies.registry import STRATEGIES

#: memory per value of the grid of x: the geomspace entry (8 bytes) and its F-macro in a Python list
#: (an 8-byte pointer and a 24-byte float)
BYTES_PER_X = 40


@STRATEGIES.register("pcut")
class PCutStrategy(ScoreStrategy):
    """Proportional cut; ``x`` fixed or tuned over ``n_grid`` geometric values in [x_min, x_max]."""

    def __init__(self, beta: float = 1.0, x: float | None = None, x_min: float = 0.05, x_max: float = 20.0,
                 n_grid: int = 200) -> None:
        super().__init__(beta=beta)
        self.x = x
        self.x_min = x_min
        self.x_max = x_max
        self.n_grid = n_grid

    def _check_params(self) -> None:
        super()._check_params()
        if self.x is not None and not self.x > 0:
            raise ValueError(f"x must be > 0 (or null to tune it), got {self.x!r}")
        if not 0 < self.x_min < self.x_max:
            raise ValueError(f"need 0 < x_min < x_max, got x_min={self.x_min!r}, x_max={self.x_max!r}")
        if self.x is None:  # the grid of x is searched only when x is tuned
            check_size("strategy.n_grid", self.n_grid, BYTES_PER_X, 1, unit="grid value")
        else:
            check_int("strategy.n_grid", self.n_grid, 1)

    def fit_scores(self, split: ScoredSplit) -> "PCutStrategy":
        self._check_params()
        self.prior_ = split.n_relevant / split.n_docs
        lists = split.ranking(include_predict_all=False).lists
        kept = lists.n_relevant > 0
        if self.x is not None:
            best_x = float(self.x)
        else:
            grid = np.geomspace(self.x_min, self.x_max, self.n_grid)
            scores = [self._f_macro(lists, kept, x) for x in grid]
            best_x = float(grid[int(np.argmax(scores))])  # first maximiser: the smallest such x
        self.x_ = best_x
        self.info_ = {"x": best_x}
        self._set_fit_results(split)
        return self

    def _cuts(self, lists, x: float) -> np.ndarray:
        return np.minimum(np.rint(x * self.prior_ * lists.num_docs).astype(np.int64), lists.list_length)

    def _f_macro(self, lists, kept, x: float) -> float:
        cuts = self._cuts(lists, x)
        tp = true_positives_at_cuts(lists, cuts)
        return evaluate(tp[kept], cuts[kept], lists.n_relevant[kept], self.beta)["f_macro"]

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        lists = split.ranking(include_predict_all=False).lists
        cuts = self._cuts(lists, self.x_)
        return true_positives_at_cuts(lists, cuts), cuts

    def rule_state(self) -> dict:
        return {"x": float(self.x_), "prior": np.asarray(self.prior_, dtype=np.float64)}

    def restore_rule(self, state: dict, n_labels: int) -> "PCutStrategy":
        x, prior = state.get("x"), np.asarray(state.get("prior"))
        if isinstance(x, bool) or not isinstance(x, (int, float, np.number)) or not 0 < x < np.inf:
            raise ValueError(f"pcut's rule 'x' must be a positive number, got {x!r}")
        if prior.shape != (n_labels,) or prior.dtype.kind not in "iuf" or not np.all((prior >= 0) & (prior <= 1)):
            raise ValueError(f"pcut's rule 'prior' must hold one share in [0, 1] per label ({n_labels})")
        self.x_, self.prior_, self.n_features_in_ = float(x), prior.astype(np.float64), n_labels
        return self

    def predict_split(self, split: ScoredSplit) -> sp.csr_matrix:
        """Label k's top round(x * prior_k * m') documents of the split (ties in document order)."""
        return split.top_documents(np.rint(self.x_ * self.prior_ * split.n_docs).astype(np.int64))
