"""Quality measures of a threshold vector: F-macro, macro-F, micro-F, mean precision and mean recall.

All functions take per-label counts (true positives ``tp``, predicted documents ``cut``, relevant
documents ``n_relevant`` = s_k) so that the same code scores ranked lists and score matrices.
Conventions (docs/theory.md#conventions): precision of an empty prediction (cut = 0) is 0; F_beta(0, 0) = 0;
labels with s_k = 0 are excluded from every average (callers drop them, ``evaluate`` checks it).

The bottom layer of the package: it imports nothing of xmlthresh but the input checks. The same metrics of a
cut vector on ranked lists are in :mod:`xmlthresh.data.evaluation`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xmlthresh._util.lazy_imports import lazy_module
from xmlthresh.validation import InputError, check_beta, check_labels, match_frames

sp = lazy_module("scipy.sparse")  # loaded on first use: ranked-list runs never need it

#: the objective of a strategy that maximises F-macro itself on the fit data (its bounds bracket its F-macro);
#: strategies that fit a modified objective (smoothed, capped, plug-in) name theirs
EMPIRICAL_OBJECTIVE = "empirical F-macro"


def safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0 where den == 0 (precision of an empty prediction is 0 by convention)."""
    out = np.zeros(np.shape(num), dtype=np.float64)
    np.divide(num, den, out=out, where=np.asarray(den) > 0)
    return out


def f_beta(precision, recall, beta: float = 1.0):
    """F_beta = (1 + b^2) p r / (b^2 p + r), elementwise, with F = 0 where p = r = 0.

    Parameters
    ----------
    precision, recall : float or array-like
        Precision and recall values (broadcast against each other).
    beta : float, default 1.0
        Recall weighs beta times as much as precision.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar inputs, else an array of the broadcast shape.

    Raises
    ------
    InputError
        A precision or recall outside [0, 1] or NaN, or a beta outside the range every entry point accepts.

    Examples
    --------
    >>> from xmlthresh.metrics import f_beta
    >>> f_beta(0.5, 1.0), f_beta(0.0, 0.0)
    (0.6666666666666666, 0.0)
    >>> f_beta([0.5, 1.0], [1.0, 1.0], beta=2.0)
    array([0.83333333, 1.        ])
    """
    precision, recall = _unit_interval(precision, "precision"), _unit_interval(recall, "recall")
    try:
        np.broadcast_shapes(np.shape(precision), np.shape(recall))
    except ValueError:
        raise InputError(f"precision and recall must have one shape (or one be a single number), got shapes "
                         f"{np.shape(precision)} and {np.shape(recall)}") from None
    return f_beta_raw(precision, recall, check_beta(beta))


def f_beta_raw(precision, recall, beta: float = 1.0):
    """:func:`f_beta` without its checks, for values the package computed itself: counts it made, and grids
    that reach past [0, 1] on purpose (a picture's level lines), where the checks would refuse what is meant
    or cost as much as the formula."""
    precision = np.asarray(precision, dtype=np.float64)
    recall = np.asarray(recall, dtype=np.float64)
    b2 = beta * beta
    den = b2 * precision + recall
    num = (1.0 + b2) * precision * recall
    out = np.zeros(np.broadcast(precision, recall).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out if out.ndim else float(out)


def _unit_interval(values: Any, what: str) -> np.ndarray:
    """``values`` as float64, refused unless every one lies in [0, 1] (a rounding excess of 1e-12 is allowed:
    a mean of ones can come out a hair above 1)."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number or an array of numbers in [0, 1], got {values!r}") from None
    bad = ~((array >= 0.0) & (array <= 1.0 + 1e-12))  # NaN fails both comparisons
    if bad.any():
        first = array[bad].flat[0] if array.ndim else float(array)
        raise InputError(f"{what} must lie in [0, 1]: {int(np.count_nonzero(bad))} value(s) outside, "
                         f"first {first!r}; precision and recall are fractions, not counts or percentages")
    return array


def per_label_precision_recall(tp: np.ndarray, cut: np.ndarray, n_relevant: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p_k = tp_k / cut_k (0 for an empty prediction) and r_k = tp_k / s_k."""
    tp = np.asarray(tp, dtype=np.int64)
    return safe_ratio(tp, np.asarray(cut, dtype=np.int64)), tp / np.asarray(n_relevant, dtype=np.float64)


def evaluate(tp: np.ndarray, cut: np.ndarray, n_relevant: np.ndarray, beta: float = 1.0) -> dict[str, float]:
    """All metrics of one threshold vector, from per-label counts.

    Parameters
    ----------
    tp : array-like of int, shape (labels,)
        True positives of each label at its threshold.
    cut : array-like of int, shape (labels,)
        Documents predicted for each label (0: an empty prediction, precision 0).
    n_relevant : array-like of int, shape (labels,)
        Relevant documents of each label, s_k; every one must be positive.
    beta : float, default 1.0
        The beta of F_beta.

    Returns
    -------
    dict
        ``f_macro`` = F_beta(P, R) with P, R the mean per-label precision and recall, ``macro_f`` = mean_k
        F_beta(p_k, r_k), ``micro_f`` = F_beta(sum tp / sum cut, sum tp / sum s), ``precision`` = P and
        ``recall`` = R.

    Raises
    ------
    InputError
        A label without a relevant document (drop such labels first), counts of different lengths, negative
        counts, or more true positives than predicted or relevant documents.

    Examples
    --------
    >>> from xmlthresh.metrics import evaluate
    >>> metrics = evaluate(tp=[1, 2], cut=[2, 2], n_relevant=[1, 4])
    >>> metrics["precision"], metrics["recall"], round(metrics["f_macro"], 4), round(metrics["macro_f"], 4)
    (0.75, 0.75, 0.75, 0.6667)
    """
    tp, cut, n_relevant = (np.asarray(values) for values in (tp, cut, n_relevant))
    if not tp.shape == cut.shape == n_relevant.shape or tp.ndim != 1:
        raise InputError(f"tp, cut and n_relevant must be 1-D with one entry per label, got shapes {tp.shape}, "
                         f"{cut.shape} and {n_relevant.shape}")
    for what, counts in (("tp", tp), ("cut", cut), ("n_relevant", n_relevant)):
        whole = counts.dtype.kind in "iu" or (counts.dtype.kind == "f" and bool(np.all(np.isfinite(counts)))
                                             and bool(np.all(counts == np.round(counts))))
        if not whole:  # a fractional count was truncated by the cast to integers, with no word
            raise InputError(f"{what} must hold whole counts of documents (integers), got {counts[:5].tolist()}"
                             f"{' ...' if counts.size > 5 else ''} ({counts.dtype})")
    if np.any(n_relevant <= 0):
        raise InputError("metrics are defined over labels with at least one relevant document; drop the others")
    tp, cut, n_relevant = tp.astype(np.int64), cut.astype(np.int64), n_relevant.astype(np.int64)
    if np.any(tp < 0) or np.any(tp > cut) or np.any(tp > n_relevant):
        bad = int(np.flatnonzero((tp < 0) | (tp > cut) | (tp > n_relevant))[0])
        raise InputError(f"counts that cannot be: label {bad} has tp {tp[bad]}, cut {cut[bad]} and n_relevant "
                         f"{n_relevant[bad]}; 0 <= tp <= min(cut, n_relevant) holds for every label")
    p, r = per_label_precision_recall(tp, cut, n_relevant)
    mean_p, mean_r = float(np.mean(p)), float(np.mean(r))
    total_cut = int(cut.sum())
    micro_p = tp.sum() / total_cut if total_cut else 0.0
    micro_r = tp.sum() / n_relevant.sum()
    beta = check_beta(beta)
    return {  # the counts were checked above: every ratio lies in [0, 1]
        "f_macro": f_beta_raw(mean_p, mean_r, beta),
        "macro_f": float(np.mean(f_beta_raw(p, r, beta))),
        "micro_f": f_beta_raw(micro_p, micro_r, beta),
        "precision": mean_p,
        "recall": mean_r,
    }


def f_macro_score(y_true: Any, y_pred: Any, *, beta: float = 1.0) -> float:
    """F-macro = F_beta(mean precision, mean recall) of 0/1 predictions against 0/1 labels.

    The measure every strategy optimises, in scikit-learn's ``metric(y_true, y_pred)`` form
    (``make_scorer(f_macro_score, beta=2.0)``, or :func:`xmlthresh.f_macro_scorer`). The means run over the
    labels with at least one relevant document; an empty prediction has precision 0.

    Parameters
    ----------
    y_true : array-like or scipy.sparse matrix, shape (documents, labels)
        The true labels, 0/1 or bool.
    y_pred : array-like or scipy.sparse matrix, shape (documents, labels)
        The predicted labels, 0/1 or bool.
    beta : float, default 1.0
        The beta of F_beta (recall weighs beta times as much as precision).

    Returns
    -------
    float
        F-macro, in [0, 1].

    Raises
    ------
    InputError
        Shapes that differ, values that are not 0/1, or no label with a relevant document.

    Examples
    --------
    >>> import numpy as np, xmlthresh
    >>> y_true = np.array([[1, 0], [1, 1], [0, 1]])
    >>> y_pred = np.array([[1, 1], [0, 1], [0, 1]])
    >>> xmlthresh.f_macro_score(y_true, y_pred)  # mean precision 5/6, mean recall 3/4
    0.7894736842105263
    """
    beta = check_beta(beta)
    y_true, y_pred = _matched_by_name(y_true, y_pred)
    truth = check_labels(y_true, np.shape(y_true) if not sp.issparse(y_true) else y_true.shape, what="y_true")
    pred = check_labels(y_pred, truth.shape, what="y_pred", shape_of="y_true")
    n_relevant = np.asarray(truth.sum(axis=0)).ravel().astype(np.int64)
    kept = n_relevant > 0
    if not kept.any():
        raise InputError("F-macro is undefined: no label has a relevant document in y_true")
    tp = np.asarray(truth.multiply(pred).sum(axis=0)).ravel().astype(np.int64)
    predicted = np.asarray(pred.sum(axis=0)).ravel().astype(np.int64)
    return evaluate(tp[kept], predicted[kept], n_relevant[kept], beta)["f_macro"]


def _matched_by_name(y_true: Any, y_pred: Any) -> tuple[Any, Any]:
    """Two pandas DataFrames paired by their column names and row index, as pandas users expect (columns in
    another order gave another F-macro without a word); names that do not match are an :class:`InputError`.
    Anything else is returned as it is, paired by position."""
    if not all(type(given).__module__.startswith("pandas") and hasattr(given, "columns") for given in (y_true, y_pred)):
        return y_true, y_pred
    matched = match_frames(y_true, y_pred, ("y_true", "y_pred"), ("y_true's", "y_pred's"))
    return y_true.to_numpy(), matched.to_numpy()
