"""What the peer strategies share: the optional-dependency guard, the memory estimate that replaces a size
limit, the matrices xCOLUMNs is given (CSR scores stay CSR: nothing of size documents x labels is built for
them), and the F-macro / macro-F objectives written on confusion-matrix entries. Calibration: ``_platt``.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies.base import ScoreStrategy

from ._platt import PlattCalibration  # noqa: F401  (re-exported: the strategies' calibration)

#: install hint shown by ``python -m xmlthresh list`` and raised by ``fit`` when xCOLUMNs is missing
XCOLUMNS_HINT = "pip install 'xcolumns==0.0.2' (or: pip install -e 'plugins/xmlthresh-peers[xcolumns]')"
#: a split whose memory estimate (``memory_estimate``) exceeds this is refused by ``skip``, with the estimate
MEMORY_LIMIT_BYTES = 3 * 2**30
#: the estimate's model: the calibration's flat samples and temporaries (~12 float64 arrays per entry), the
#: calibrated scores and predictions, per (document, label) cell of dense scores ...
DENSE_BYTES_PER_CELL = 12 * 8
#: ... or per stored entry of CSR scores (float64 value + int32 index of each copy) ...
SPARSE_BYTES_PER_ENTRY = 12 * 8 + 3 * 4
#: ... and per label (2 x 51 Frank-Wolfe rule vectors, confusion-matrix vectors, calibration)
BYTES_PER_LABEL = 120 * 8


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


def memory_estimate(split: ScoredSplit) -> int:
    """Bytes a peer needs for ``split`` (a rough, deliberately high model): dense scores
    ``DENSE_BYTES_PER_CELL`` per (document, label) cell; CSR scores ``SPARSE_BYTES_PER_ENTRY`` per stored
    score; both ``BYTES_PER_LABEL`` per label (Frank-Wolfe keeps 2 x (max_iters + 1) rule vectors over the
    labels: counted with 51 of them)."""
    per_label = split.n_labels * BYTES_PER_LABEL
    if sp.issparse(split.scores):
        return int(split.scores.nnz * SPARSE_BYTES_PER_ENTRY + per_label)
    return int(split.n_docs * split.n_labels * DENSE_BYTES_PER_CELL + per_label)


def too_large_reason(data: Any, name: str) -> str:
    """Why ``name`` refuses ``data`` (the memory estimate of a split exceeds ``MEMORY_LIMIT_BYTES``), or ''."""
    if not isinstance(data, ScoreData):
        return ""
    for split_name, split in data.splits.items():
        need = memory_estimate(split)
        if need > MEMORY_LIMIT_BYTES:
            kind = (f"{split.scores.nnz:,} stored scores (CSR)" if sp.issparse(split.scores)
                    else f"dense scores, {split.n_docs:,} x {split.n_labels:,} cells")
            return (f"{name} would need about {need / 2**30:.1f} GiB for split {split_name!r} ({kind}, "
                    f"{split.n_labels:,} labels), above the limit of {MEMORY_LIMIT_BYTES / 2**30:.0f} GiB "
                    "(xmlthresh_peers._common.MEMORY_LIMIT_BYTES); sparse top-k scores need far less")
    return ""


def xcolumns_labels(split: ScoredSplit):
    """The 0/1 labels in the type xCOLUMNs pairs with the scores: float64 CSR for CSR scores (it requires
    both of one type), a dense float64 matrix for dense scores."""
    if sp.issparse(split.scores):
        return sp.csr_matrix(split.labels, dtype=np.float64)
    return split.labels.toarray().astype(np.float64)


def xcolumns_scores(scores):
    """Scores as xCOLUMNs takes them: ``scipy.sparse.csr_matrix`` (it checks that class, csr_array fails) or
    a dense float64 matrix."""
    return sp.csr_matrix(scores) if sp.issparse(scores) else np.asarray(scores, dtype=np.float64)


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
    """Per-label linearisation of F-macro at a point (P0, R0): w_P p_k + w_R r_k, (w_P, w_R) = grad F
    (docs/theory.md#linearisation): its mean over labels is the first-order change of F-macro, and it decomposes
    over labels."""

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
