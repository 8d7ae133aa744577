"""Quality of a ranker's scores, before any threshold: precision at k and ranking loss.

Both are averaged over the documents that have at least one relevant label (a document without labels has
neither a top-k precision nor a ranking loss). Scores are dense ``(m, n)`` or sparse CSR; in a sparse matrix
a missing entry is *unscored* and ranks below every scored label of the document (the same convention as
``xmlthresh.data.scores``), unscored labels tie with each other.

* ``precision_at_k``: fraction of the k best-scored labels that are relevant (divided by k even when fewer
  than k labels are scored). Ties are broken towards the smaller label index.
* ``ranking_loss``: scikit-learn's ``label_ranking_loss`` -- per document the fraction of (relevant,
  irrelevant) label pairs with score(irrelevant) >= score(relevant) -- dense via scikit-learn in row blocks,
  sparse with an exact O(nnz log nnz) count that never builds the dense matrix.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import label_ranking_loss

from xmlthresh.rankers.base import BLOCK_CELLS, check_label_matrix, top_k_per_row


def precision_at_k(scores: np.ndarray | sp.csr_matrix, labels, ks: Iterable[int] = (1, 3, 5)) -> dict[int, float]:
    """P@k for every k in ``ks`` over the documents with at least one relevant label (NaN if there is none)."""
    ks = sorted({int(k) for k in ks})
    labels = check_label_matrix(labels)
    if scores.shape != labels.shape:
        raise ValueError(f"scores {scores.shape} and labels {labels.shape} differ in shape")
    m, n = labels.shape
    has_label = np.diff(labels.indptr) > 0
    n_eval = int(np.count_nonzero(has_label))
    if n_eval == 0:
        return {k: float("nan") for k in ks}
    k_max = max(ks)
    rows_per_block = max(1, BLOCK_CELLS // max(1, n))
    blocks = []
    for start in range(0, m, rows_per_block):
        stop = min(m, start + rows_per_block)
        top = top_k_per_row(scores[start:stop], k_max)
        blocks.append(_hits_in_rank_order(top, labels[start:stop], k_max))
    hits_by_rank = np.vstack(blocks)[has_label]  # (documents with labels, k_max) 0/1 in rank order
    cumulative = np.cumsum(hits_by_rank, axis=1)
    return {k: float(cumulative[:, k - 1].sum() / (k * n_eval)) for k in ks}


def _hits_in_rank_order(top: sp.csr_matrix, labels: sp.csr_matrix, k_max: int) -> np.ndarray:
    """(rows, k_max) 0/1: whether the label at each rank of the row's top list is relevant (0 past the end)."""
    counts = np.diff(top.indptr)
    row_of = np.repeat(np.arange(top.shape[0]), counts)
    order = np.lexsort((top.indices, -top.data, row_of))
    rank = np.arange(len(order)) - np.repeat(top.indptr[:-1], counts)
    n = top.shape[1]
    top_keys = row_of[order].astype(np.int64) * n + top.indices[order]
    lab = labels.tocoo()
    relevant_keys = np.sort(lab.row.astype(np.int64) * n + lab.col)
    hit = _is_member(top_keys, relevant_keys)
    out = np.zeros((top.shape[0], k_max))
    out[row_of[order], rank] = hit
    return out


def _is_member(keys: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Whether each of ``keys`` occurs in ``sorted_keys`` (sorted, unique)."""
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[pos] == keys


def ranking_loss(scores: np.ndarray | sp.csr_matrix, labels) -> float:
    """scikit-learn's label ranking loss over the documents with at least one relevant label (NaN if none)."""
    labels = check_label_matrix(labels)
    if scores.shape != labels.shape:
        raise ValueError(f"scores {scores.shape} and labels {labels.shape} differ in shape")
    has_label = np.diff(labels.indptr) > 0
    n_eval = int(np.count_nonzero(has_label))
    if n_eval == 0:
        return float("nan")
    if sp.issparse(scores):
        per_doc = _sparse_ranking_loss(sp.csr_matrix(scores, dtype=np.float64), labels)
        return float(per_doc[has_label].mean())
    scores = np.asarray(scores, dtype=np.float64)[has_label]
    labels = labels[has_label]
    rows_per_block = max(1, BLOCK_CELLS // max(1, labels.shape[1]))
    total = 0.0
    for start in range(0, n_eval, rows_per_block):
        stop = min(n_eval, start + rows_per_block)
        # int64 indicator: scikit-learn misreads narrow integer and sparse bool label matrices
        block_labels = labels[start:stop].toarray().astype(np.int64)
        total += label_ranking_loss(block_labels, scores[start:stop]) * (stop - start)
    return total / n_eval


def _sparse_ranking_loss(scores: sp.csr_matrix, labels: sp.csr_matrix) -> np.ndarray:
    """Per-document ranking loss with unscored entries tied below every scored one (exact, vectorised).

    Incorrect (relevant r, irrelevant f) pairs: both scored with score_f >= score_r; r unscored and f scored;
    both unscored (a tie). A document whose labels are all relevant (or none) has loss 0, as in scikit-learn.
    """
    m, n = scores.shape
    scores = scores.copy()
    scores.sort_indices()
    counts = np.diff(scores.indptr)
    row_of = np.repeat(np.arange(m), counts)
    order = np.lexsort((-scores.data, row_of))  # per row by decreasing score
    row_sorted = row_of[order]
    score_sorted = scores.data[order]
    keys = row_sorted.astype(np.int64) * n + scores.indices[order]
    lab = labels.tocoo()
    relevant = _is_member(keys, np.sort(lab.row.astype(np.int64) * n + lab.col))
    irrelevant = ~relevant
    # irrelevant scored entries with a score >= each entry: cumulative count up to the end of its tie group
    cum_irrelevant = np.cumsum(irrelevant)
    row_start = np.repeat(scores.indptr[:-1], counts)
    before_row = np.where(row_start > 0, cum_irrelevant[np.maximum(row_start - 1, 0)], 0)
    new_group = np.ones(len(order), dtype=bool)
    new_group[1:] = (row_sorted[1:] != row_sorted[:-1]) | (score_sorted[1:] != score_sorted[:-1])
    group_id = np.cumsum(new_group) - 1
    group_last = np.flatnonzero(np.append(new_group[1:], True))  # last position of each group
    ge_irrelevant = cum_irrelevant[group_last[group_id]] - before_row
    scored_pairs = np.bincount(row_sorted[relevant], weights=ge_irrelevant[relevant], minlength=m)

    n_relevant = np.diff(labels.indptr).astype(np.float64)
    scored_relevant = np.bincount(row_sorted[relevant], minlength=m).astype(np.float64)
    scored_irrelevant = counts - scored_relevant
    unscored_relevant = n_relevant - scored_relevant
    unscored_irrelevant = (n - counts) - unscored_relevant
    wrong = scored_pairs + unscored_relevant * (scored_irrelevant + unscored_irrelevant)
    pairs = n_relevant * (n - n_relevant)
    return np.divide(wrong, pairs, out=np.zeros(m), where=pairs > 0)
