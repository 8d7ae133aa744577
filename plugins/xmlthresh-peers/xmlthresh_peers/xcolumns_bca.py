"""``xcolumns_bca``: xCOLUMNs' block coordinate ascent (``xcolumns.block_coordinate.predict_using_bc_with_0approx``;
Schultheis et al., "Generalized test utilities for long-tail performance in extreme multi-label
classification", NeurIPS 2023) -- a *transductive* rule: it chooses the predictions of the split it predicts
by maximising the expected metric under eta on that split's scores **jointly** (no labels, but all test
scores at once), one document (block) at a time. Hence ``kind = "uses test scores"``: under
``protocol=holdout`` the fit split only calibrates scores to probabilities (per-label Platt scaling,
``_platt``), and the test predictions come from the test scores. Sparse top-k scores stay CSR end to end
(xCOLUMNs' CSR path; memory O(nnz + labels)): BCA chooses among the stored entries, an unscored entry is
never predicted, and the expected counts (relevant = sum of eta) run over the stored entries.

The general function optimises metrics that decompose over labels (a per-label utility of the expected
tp, fp, fn, averaged). ``objective="macro_f"`` passes the per-label F_beta. F-macro does not decompose, so
``objective="f_macro"`` (default) goes through its linearisation (docs/theory.md#linearisation): for a direction
(w_P, w_R) = (1 - t, t), BCA maximises the mean of w_P p_k + w_R r_k (decomposable); the direction sought is
the fixed point where the gradient of F_beta at the expected (P, R) of BCA's result points back along
(1 - t, t). That map is non-increasing in t, so t is found by bisection (warm-started BCA runs, at most
``max_outer`` of at most ``round_max_iter`` passes each; the predictions with the best expected F-macro are kept,
as a jump may leave no fixed point).
Predictions are chosen per document, not as cuts of a ranking, so the data set's ``include_predict_all``
does not apply. ``info`` says which objective ran and how (``objective``, ``objective_method``, ``bca_*``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies.registry import STRATEGIES

from ._common import (
    PlattCalibration,
    XColumnsStrategy,
    binary_fbeta,
    binary_linearised_f_macro,
    f_beta_gradient,
    f_beta_value,
    import_xcolumns,
    xcolumns_scores,
)

@STRATEGIES.register("xcolumns_bca")
class XColumnsBlockCoordinate(XColumnsStrategy):
    """Block coordinate ascent on the expected F-macro / macro-F of the predicted split (optional: xcolumns)."""

    kind: ClassVar[str] = "uses test scores"

    def __init__(self, beta: float = 1.0, objective: str = "f_macro", max_iter: int = 30, tolerance: float = 1e-6,
                 max_outer: int = 20, outer_tolerance: float = 1e-4, round_max_iter: int = 3,
                 seed: int = 0) -> None:
        super().__init__(beta=beta)
        self.objective = objective
        self.max_iter = max_iter
        self.tolerance = tolerance
        self.max_outer = max_outer
        self.outer_tolerance = outer_tolerance
        self.round_max_iter = round_max_iter
        self.seed = seed

    def _check_params(self) -> None:
        super()._check_params()
        for name in ("max_iter", "max_outer", "round_max_iter"):
            value = getattr(self, name)
            if not (isinstance(value, int) and value >= 1):
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not (self.tolerance > 0 and self.outer_tolerance > 0):
            raise ValueError("tolerance and outer_tolerance must be positive")

    def fit_scores(self, split: ScoredSplit) -> "XColumnsBlockCoordinate":
        """Calibrate scores on ``split``; the predictions themselves are chosen on each predicted split."""
        self._check_params()
        import_xcolumns("block_coordinate")  # fail here, with the install hint, not later
        self.calibration_ = PlattCalibration().fit(xcolumns_scores(split.scores), split.labels)
        self.info_ = {
            "kind": self.kind,
            "objective": self.objective,
            "objective_method": ("linearised F-macro: bisection for the fixed point of BCA best responses"
                                 if self.objective == "f_macro" else "per-label F_beta, mean over labels"),
            "calibration": "platt per label (fit split)",
            "seed": int(self.seed),
        }
        self._set_fit_results(split)
        self.info_.update({f"bca_{key}": value for key, value in self.last_run_.items()})  # of the fit split
        return self

    def rule_state(self) -> dict:
        return self.calibration_.state()

    def restore_rule(self, state: dict, n_labels: int) -> "XColumnsBlockCoordinate":
        self.calibration_ = PlattCalibration.from_state(state)
        self.n_features_in_ = n_labels
        return self

    def predict_split(self, split: ScoredSplit) -> np.ndarray:
        """0/1 predictions (documents x labels) chosen by block coordinate ascent on ``split``'s scores: the
        rule re-optimises on whatever scores it is given (``kind = "uses test scores"``)."""
        if not hasattr(self, "calibration_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")
        block = import_xcolumns("block_coordinate")
        eta = self.calibration_.transform(xcolumns_scores(split.scores))
        if self.objective == "macro_f":
            pred, meta = self._bca(block, eta, binary_fbeta(float(self.beta)), init=_above_half(eta),
                                   max_iter=self.max_iter)
            self.last_run_ = {"iterations": int(meta["iters"]), "outer_rounds": 1,
                              "expected_objective": float(meta["utilities"][-1])}
            return pred
        return self._linearised_f_macro(block, eta)

    # ------------------------------------------------------------------ internals
    def _bca(self, block, eta, utility, init, max_iter: int):
        return block.predict_using_bc_with_0approx(
            eta, utility, 0, metric_aggregation="mean", maximize=True, tolerance=self.tolerance,
            init_y_pred=init, max_iter=max_iter, shuffle_order=True, skip_tn=True, return_meta=True,
            seed=int(self.seed),
        )

    def _linearised_f_macro(self, block, eta: np.ndarray) -> np.ndarray:
        """Bisection on the direction t (weight of recall, w_P = 1 - t, w_R = t) for the fixed point
        t = dF/dR / (dF/dP + dF/dR) at the expected (P, R) of BCA's best response to t. That map is
        non-increasing in t (more weight on recall -> more recall, less precision), so plain iteration
        oscillates and bisection converges (docs/theory.md#fixed-points-of-the-map-v). Each round runs at most
        ``round_max_iter`` BCA passes, warm-started from the previous round's predictions: BCA on the
        linearised objective rarely meets ``tolerance`` (its precision terms keep trading single documents), so
        rounds of ``max_iter`` passes each took ~25 passes on average (346 passes at 1500 documents x 20,000
        labels, against 2 passes for macro-F); the bound is ``max_outer * round_max_iter`` passes."""
        beta = float(self.beta)
        pred = _above_half(eta)
        low, high = 0.0, 1.0
        best_pred, best_f, rounds, iterations = pred, -1.0, 0, 0
        for rounds in range(1, self.max_outer + 1):
            t = 0.5 * (low + high)
            pred, meta = self._bca(block, eta, binary_linearised_f_macro(1.0 - t, t), init=pred.copy(),
                                   max_iter=self.round_max_iter)
            iterations += int(meta["iters"])
            precision, recall = _expected_precision_recall(eta, pred)
            value = f_beta_value(precision, recall, beta)
            if value > best_f:
                best_pred, best_f = pred.copy(), value
            if f_beta_gradient(precision, recall, beta)[1] > t:
                low = t
            else:
                high = t
            if high - low < self.outer_tolerance:
                break
        self.last_run_ = {"iterations": iterations, "outer_rounds": rounds, "expected_objective": best_f,
                          "recall_weight": 0.5 * (low + high)}
        return best_pred


def _above_half(eta):
    """0/1 float64 predictions where eta > 1/2 (the initial BCA solution; CSR for CSR eta)."""
    if sp.issparse(eta):
        pred = eta.copy()
        pred.data = (pred.data > 0.5).astype(np.float64)
        pred.eliminate_zeros()
        return pred
    return (eta > 0.5).astype(np.float64)


def _column_sums(matrix) -> np.ndarray:
    return np.asarray(matrix.sum(axis=0), dtype=np.float64).ravel()


def _expected_precision_recall(eta: np.ndarray, pred: np.ndarray) -> tuple[float, float]:
    """Mean over labels of the expected-count precision and recall of ``pred`` under ``eta``."""
    etp = _column_sums(eta.multiply(pred) if sp.issparse(eta) else eta * pred)
    predicted = _column_sums(pred)
    relevant = _column_sums(eta)  # of CSR eta: the stored entries (an unscored one is never predicted)
    precision = np.divide(etp, predicted, out=np.zeros_like(etp), where=predicted > 0)
    recall = np.divide(etp, relevant, out=np.zeros_like(etp), where=relevant > 0)
    return float(precision.mean()), float(recall.mean())
