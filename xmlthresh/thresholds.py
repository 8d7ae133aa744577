"""Applying per-label score thresholds: label k predicts the documents whose score is >= ``thresholds[k]``.

``+inf`` never predicts; ``-inf`` predicts every document -- for sparse top-k scores also the unscored ones
("predict all"). Sparse scores are never densified: the result holds the stored entries at or above their
label's threshold plus, for each "predict all" label, a full column (inherent in that prediction; with many
such labels prefer counting over materialising, :meth:`xmlthresh.data.scores.ScoredSplit.counts_at`).

Only numpy and scipy are imported here, so a saved :class:`xmlthresh.result.ThresholdResult` predicts
without loading the optimisation code.
"""

from __future__ import annotations

import numpy as np

from xmlthresh._util.lazy_imports import lazy_module

sp = lazy_module("scipy.sparse")  # loaded on first use: ranked-list runs never need it


def apply_thresholds(scores: np.ndarray | sp.csr_matrix, thresholds: np.ndarray) -> sp.csr_matrix:
    """Boolean CSR predictions (documents x labels, canonical format) of ``thresholds`` on ``scores``.

    ``scores``: a float dense array or a canonical CSR matrix without NaN (validated by the caller)."""
    thresholds = np.asarray(thresholds, dtype=np.float64)
    n_docs, n_labels = scores.shape
    if thresholds.shape != (n_labels,):
        raise ValueError(f"need one threshold per label ({n_labels}), got shape {thresholds.shape}")
    if not sp.issparse(scores):
        return sp.csr_matrix(scores >= thresholds[None, :])
    predict_all = thresholds == -np.inf
    keep = scores.data >= thresholds[scores.indices]
    if predict_all.any():
        keep &= ~predict_all[scores.indices]  # those columns are added whole below
    kept_before = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
    indptr = kept_before[scores.indptr]
    pred = sp.csr_matrix((np.ones(int(indptr[-1]), dtype=bool), scores.indices[keep], indptr),
                         shape=scores.shape)
    columns = np.flatnonzero(predict_all)
    if len(columns):
        full = sp.csr_matrix((np.ones(n_docs * len(columns), dtype=bool), np.tile(columns, n_docs),
                              np.arange(n_docs + 1, dtype=np.int64) * len(columns)), shape=scores.shape)
        pred = (pred + full).tocsr()  # disjoint entries: the sum is their union
    return pred
