"""What the peer strategies share: the optional-dependency guard, dense score matrices, calibration of scores
to probabilities, and the F-macro / macro-F objectives written on confusion-matrix entries.

Calibration (xCOLUMNs wants conditional probabilities eta in [0, 1]): **per-label Platt scaling fitted on
the fit split**. Scores of label k are standardised with the fit split's mean and standard deviation,
z = (s - mean_k) / sd_k, and eta = sigmoid(a_k z + b_k) with (a_k, b_k) maximising the log-likelihood of
Platt's smoothed targets (relevant documents (N+ + 1) / (N+ + 2), the others 1 / (N- + 2); finite even for
perfectly separated labels), by Newton's method with backtracking, all labels at once. The slope is kept
non-negative (a_k < 0 falls back to a_k = 0, b_k = logit(base rate)), so eta never reverses the ranker's
order. The same (mean, sd, a, b) map the scores of any other split. Unscored entries of sparse top-k scores
rank below every scored document: they get the score (smallest scored value - 1) before calibration.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies.base import ScoreStrategy

#: install hint shown by ``python -m xmlthresh list`` and raised by ``fit`` when xCOLUMNs is missing
XCOLUMNS_HINT = "pip install 'xcolumns==0.0.2' (or: pip install -e 'plugins/xmlthresh-peers[xcolumns]')"
#: score matrices of more (document x label) cells than this per split are refused (they are densified)
MAX_DENSE_CELLS = 20_000_000


class MissingDependencyError(ImportError):
    """An optional dependency of a peer strategy is not installed (the message says how to install it)."""


def xcolumns_unavailable_reason() -> str | None:
    """None when xcolumns and autograd can be imported, else why not and how to install them.

    Uses ``find_spec`` (no import, no side effects: xcolumns configures the root logger on import)."""
    missing = [name for name in ("xcolumns", "autograd") if _find_spec(name) is None]
    if missing:
        return f"{' and '.join(missing)} not installed; {XCOLUMNS_HINT}"
    return None


def import_xcolumns(submodule: str) -> Any:
    """``xcolumns.<submodule>``, or a :class:`MissingDependencyError` with the install hint."""
    try:
        import autograd  # noqa: F401  (xcolumns' Frank-Wolfe differentiates the objective with it)

        return importlib.import_module(f"xcolumns.{submodule}")
    except ImportError as exc:
        raise MissingDependencyError(f"this strategy needs xCOLUMNs ({exc}); install it: {XCOLUMNS_HINT}") from exc


def _find_spec(name: str):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def too_large_reason(data: Any, name: str) -> str:
    """Why ``name`` refuses ``data`` (dense score matrices beyond ``MAX_DENSE_CELLS``), or ''."""
    if not isinstance(data, ScoreData):
        return ""
    for split_name, split in data.splits.items():
        cells = split.n_docs * split.n_labels
        if cells > MAX_DENSE_CELLS:
            return (f"{name} works on dense (documents x labels) matrices and is meant for Corel5k-sized problems; "
                    f"split {split_name!r} has {split.n_docs} x {split.n_labels} = {cells:,} cells "
                    f"(limit {MAX_DENSE_CELLS:,})")
    return ""


def dense_scores(split: ScoredSplit) -> np.ndarray:
    """The (documents x labels) score matrix; unscored sparse entries get (smallest scored value - 1)."""
    if not sp.issparse(split.scores):
        return split.scores
    fill = (split.scores.data.min() - 1.0) if split.scores.nnz else 0.0
    dense = np.full(split.scores.shape, fill)
    coo = split.scores.tocoo()
    dense[coo.row, coo.col] = coo.data
    return dense


def dense_labels(split: ScoredSplit) -> np.ndarray:
    return split.labels.toarray().astype(np.float64)


class PlattCalibration:
    """Per-label Platt scaling (see the module docstring); ``fit(scores, labels)``, ``transform(scores)``."""

    def __init__(self, max_iter: int = 100, ridge: float = 1e-6) -> None:
        self.max_iter = max_iter
        self.ridge = ridge

    def fit(self, scores: np.ndarray, labels: np.ndarray) -> "PlattCalibration":
        m = scores.shape[0]
        self.center_ = scores.mean(axis=0)
        sd = scores.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        z = (scores - self.center_) / self.scale_
        n_pos = labels.sum(axis=0)
        target = np.where(labels > 0, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (m - n_pos + 2.0))
        base = target.mean(axis=0)
        a = np.zeros(scores.shape[1])
        b = np.log(base / (1.0 - base))
        ridge = self.ridge * m
        loss = _platt_loss(z, target, a, b, ridge)
        for self.n_iter_ in range(1, self.max_iter + 1):
            eta = _sigmoid(z * a + b)
            w = eta * (1.0 - eta)
            residual = eta - target
            g_a = (residual * z).sum(axis=0) + ridge * a
            g_b = residual.sum(axis=0)
            h_aa = (w * z * z).sum(axis=0) + ridge
            h_ab = (w * z).sum(axis=0)
            h_bb = w.sum(axis=0) + 1e-12
            det = h_aa * h_bb - h_ab * h_ab
            step_a = (h_bb * g_a - h_ab * g_b) / det
            step_b = (h_aa * g_b - h_ab * g_a) / det
            # backtracking: halve the step of every label whose loss would grow (heavy-tailed scores make
            # plain Newton oscillate)
            factor = np.ones_like(a)
            for _ in range(60):
                new_a, new_b = a - factor * step_a, b - factor * step_b
                new_loss = _platt_loss(z, target, new_a, new_b, ridge)
                worse = new_loss > loss + 1e-12 * np.abs(loss)
                if not worse.any():
                    break
                factor[worse] *= 0.5
            accept = ~worse
            a[accept], b[accept], loss[accept] = new_a[accept], new_b[accept], new_loss[accept]
            if np.max(np.abs(factor * step_a) + np.abs(factor * step_b)) < 1e-9:
                break
        reversed_ = a < 0
        a[reversed_] = 0.0
        b[reversed_] = np.log(base[reversed_] / (1.0 - base[reversed_]))
        self.slope_, self.intercept_ = a, b
        self.n_reversed_ = int(np.count_nonzero(reversed_))
        return self

    def transform(self, scores: np.ndarray) -> np.ndarray:
        return _sigmoid((scores - self.center_) / self.scale_ * self.slope_ + self.intercept_)

    #: the fitted arrays that define the map (saved with a strategy's rule)
    STATE = ("center_", "scale_", "slope_", "intercept_")

    def state(self) -> dict[str, np.ndarray]:
        return {f"calibration_{name.rstrip('_')}": getattr(self, name) for name in self.STATE}

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> "PlattCalibration":
        calibration = cls()
        for name in cls.STATE:
            setattr(calibration, name, np.asarray(state[f"calibration_{name.rstrip('_')}"], dtype=np.float64))
        return calibration


def _platt_loss(z: np.ndarray, target: np.ndarray, a: np.ndarray, b: np.ndarray, ridge: float) -> np.ndarray:
    """Per-label cross-entropy of sigmoid(a z + b) against the smoothed targets, plus ridge a^2 / 2."""
    u = z * a + b
    return (target * np.logaddexp(0.0, -u) + (1.0 - target) * np.logaddexp(0.0, u)).sum(axis=0) + 0.5 * ridge * a * a


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free logistic


# ---------------------------------------------------------------------------------------------- objectives
# Written with autograd.numpy-compatible operations only (+, -, *, /, dot), on per-label confusion-matrix
# entries (tp, fp, fn, tn: vectors over labels, counts or rates). ``weights`` average over the labels that
# count (1 / n_kept on kept labels, 0 elsewhere). EPS guards empty predictions (precision 0/0 -> 0).

EPS = 1e-9


def f_macro_objective(weights: np.ndarray, beta: float) -> Callable:
    """F_beta(P, R) with P = sum_k w_k tp_k / (tp_k + fp_k), R = sum_k w_k tp_k / (tp_k + fn_k)."""
    b2 = beta * beta

    def f_macro(tp, fp, fn, tn):
        import autograd.numpy as anp

        precision = anp.dot(tp / (tp + fp + EPS), weights)
        recall = anp.dot(tp / (tp + fn + EPS), weights)
        return (1.0 + b2) * precision * recall / (b2 * precision + recall + EPS)

    return f_macro


def macro_f_objective(weights: np.ndarray, beta: float) -> Callable:
    """sum_k w_k F_beta(p_k, r_k), F_beta = (1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp).

    (xcolumns 0.0.2's ``binary_fbeta_score_on_conf_matrix`` swaps fn and fp, i.e. it is F_{1/beta}: equal
    for beta = 1, wrong otherwise; hence our own.)"""
    b2 = beta * beta

    def macro_f(tp, fp, fn, tn):
        import autograd.numpy as anp

        return anp.dot((1.0 + b2) * tp / ((1.0 + b2) * tp + b2 * fn + fp + EPS), weights)

    return macro_f


def binary_fbeta(beta: float) -> Callable:
    """Per-label F_beta on confusion-matrix vectors (for xCOLUMNs' block coordinate ascent)."""
    b2 = beta * beta

    def fbeta(tp, fp, fn, tn):
        return (1.0 + b2) * tp / ((1.0 + b2) * tp + b2 * fn + fp + EPS)

    return fbeta


def binary_linearised_f_macro(weight_p: float, weight_r: float) -> Callable:
    """Per-label linearisation of F-macro at a point (P0, R0): w_P p_k + w_R r_k, (w_P, w_R) = grad F (theory
    section 2): its mean over labels is the first-order change of F-macro, and it decomposes over labels."""

    def linearised(tp, fp, fn, tn):
        return weight_p * tp / (tp + fp + EPS) + weight_r * tp / (tp + fn + EPS)

    return linearised


def f_beta_gradient(precision: float, recall: float, beta: float) -> tuple[float, float]:
    """(dF/dP, dF/dR) of F_beta at (P, R), normalised to sum 1 (only the direction matters)."""
    b2 = beta * beta
    d_p, d_r = recall * recall, b2 * precision * precision
    total = d_p + d_r
    if total <= 0:
        return 0.5, 0.5
    return d_p / total, d_r / total


def f_beta_value(precision: float, recall: float, beta: float) -> float:
    b2 = beta * beta
    den = b2 * precision + recall
    return float((1.0 + b2) * precision * recall / den) if den > 0 else 0.0


OBJECTIVES = ("f_macro", "macro_f")


class XColumnsStrategy(ScoreStrategy):
    """What both xCOLUMNs peers share: the optional dependency, the size guard and the objective check."""

    objective: str

    @staticmethod
    def unavailable_reason() -> str | None:
        return xcolumns_unavailable_reason()

    def skip(self, data: Any) -> tuple[bool, str]:
        skipped, reason = super().skip(data)
        if skipped:
            return skipped, reason
        reason = too_large_reason(data, self.registry_name)
        return bool(reason), reason

    def _check_params(self) -> None:
        super()._check_params()
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
