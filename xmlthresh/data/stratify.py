"""Stratified splits of multi-label data: iterative stratification (Sechidis, Tsoumakas & Vlahavas,
"On the stratification of multi-label data", ECML PKDD 2011, Algorithm 1).

Random splits of multi-label data leave rare labels without any example in a small fold. Iterative
stratification distributes the examples label by label, rarest label first:

1. every fold j wants ``c_j = r_j * n`` examples in total and ``c_j^i = r_j * n_i`` examples of label i;
2. take the label l with the fewest examples still unassigned (ties: a random order of the labels); hand
   each of its unassigned examples (in a random order) to the fold that wants label l most (ties: the fold
   that wants the most examples overall; then random), and lower that fold's wishes for every label of the
   example and for its total;
3. repeat until every labelled example is assigned; examples without labels go, one by one in a random
   order, to the fold that wants the most examples (ties: random).

All randomness is drawn up front from ``numpy.random.default_rng(seed)`` (an order of the examples, an order
of the labels, one uniform number per assignment for ties): the same labels and seed always give the same
split. The loop is one numba kernel over CSR/CSC arrays; the label with the fewest unassigned examples comes
from an indexed binary heap (decrease-key when an example is assigned), so the cost is O(nnz log L) for nnz
label entries and L labels.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp
from xmlthresh._util.jit import cached_njit


def iterative_stratification(labels: sp.spmatrix | np.ndarray, proportions: Sequence[float],
                             seed: int = 0) -> np.ndarray:
    """The fold (0 .. len(proportions)-1) of every row of ``labels`` (documents x labels, 0/1)."""
    ratio = _check_proportions(proportions)
    problem = StratificationProblem.build(labels, seed)
    return _stratify(problem.row_ptr, problem.row_labels, problem.label_ptr, problem.label_docs, ratio,
                     problem.label_priority, problem.unlabelled, problem.tie_draw)


def stratified_holdout(labels: sp.spmatrix | np.ndarray, fraction: float,
                       seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Split rows into (kept, held out) -- about ``fraction`` of them held out -- by iterative stratification.

    Both index arrays are sorted (the documents keep their order inside each part)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"the held-out fraction must lie strictly between 0 and 1, got {fraction}")
    fold = iterative_stratification(labels, [1.0 - fraction, fraction], seed=seed)
    return np.flatnonzero(fold == 0), np.flatnonzero(fold == 1)


def _check_proportions(proportions: Sequence[float]) -> np.ndarray:
    ratio = np.asarray(proportions, dtype=np.float64)
    if ratio.ndim != 1 or len(ratio) < 2 or np.any(ratio < 0) or not np.isclose(ratio.sum(), 1.0):
        raise ValueError(f"proportions must be >= 2 non-negative numbers summing to 1, got {list(proportions)}")
    return ratio


class StratificationProblem:
    """The inputs of the kernel: labels as CSR (rows) and CSC (each label's documents in the random order of
    the examples), the random label order, the unlabelled documents in random order, the tie draws."""

    def __init__(self, row_ptr, row_labels, label_ptr, label_docs, label_priority, unlabelled, tie_draw):
        self.row_ptr, self.row_labels = row_ptr, row_labels
        self.label_ptr, self.label_docs = label_ptr, label_docs
        self.label_priority, self.unlabelled, self.tie_draw = label_priority, unlabelled, tie_draw

    @classmethod
    def build(cls, labels: sp.spmatrix | np.ndarray, seed: int) -> "StratificationProblem":
        rows = sp.csr_matrix(labels, dtype=bool)
        rows.sum_duplicates()
        rows.eliminate_zeros()
        rows.sort_indices()
        n_docs, n_labels = rows.shape
        rng = np.random.default_rng(seed)
        doc_rank = rng.permutation(n_docs)
        label_priority = rng.permutation(n_labels).astype(np.int64)
        tie_draw = rng.random(n_docs)
        columns = rows.tocsc()
        label_of_entry = np.repeat(np.arange(n_labels), np.diff(columns.indptr))
        order = np.lexsort((doc_rank[columns.indices], label_of_entry))
        unlabelled = np.flatnonzero(np.diff(rows.indptr) == 0)
        unlabelled = unlabelled[np.argsort(doc_rank[unlabelled], kind="stable")]
        return cls(rows.indptr.astype(np.int64), rows.indices.astype(np.int64), columns.indptr.astype(np.int64),
                   columns.indices[order].astype(np.int64), label_priority, unlabelled.astype(np.int64), tie_draw)


@cached_njit
def _before(a, b, remaining, priority):
    """Heap order: fewer unassigned examples first, then the random label order."""
    return remaining[a] < remaining[b] or (remaining[a] == remaining[b] and priority[a] < priority[b])


@cached_njit
def _sift_up(heap, position, i, remaining, priority):
    while i > 0:
        parent = (i - 1) // 2
        if not _before(heap[i], heap[parent], remaining, priority):
            break
        heap[i], heap[parent] = heap[parent], heap[i]
        position[heap[i]] = i
        position[heap[parent]] = parent
        i = parent


@cached_njit
def _sift_down(heap, position, i, size, remaining, priority):
    while True:
        smallest = i
        for child in (2 * i + 1, 2 * i + 2):
            if child < size and _before(heap[child], heap[smallest], remaining, priority):
                smallest = child
        if smallest == i:
            break
        heap[i], heap[smallest] = heap[smallest], heap[i]
        position[heap[i]] = i
        position[heap[smallest]] = smallest
        i = smallest


@cached_njit
def _choose_fold(wish, wish_total, draw):
    """The fold that wants the label most; ties -> the one that wants the most examples; then ``draw``."""
    k = len(wish)
    best_wish = wish.max()
    best_total = -np.inf
    for j in range(k):
        if wish[j] == best_wish and wish_total[j] > best_total:
            best_total = wish_total[j]
    n_best = 0
    for j in range(k):
        if wish[j] == best_wish and wish_total[j] == best_total:
            n_best += 1
    pick = min(int(draw * n_best), n_best - 1)
    for j in range(k):
        if wish[j] == best_wish and wish_total[j] == best_total:
            if pick == 0:
                return j
            pick -= 1
    return 0


@cached_njit
def _stratify(row_ptr, row_labels, label_ptr, label_docs, ratio, priority, unlabelled, tie_draw):
    n_docs = len(row_ptr) - 1
    n_labels = len(label_ptr) - 1
    k = len(ratio)
    remaining = np.empty(n_labels, dtype=np.int64)
    for label in range(n_labels):
        remaining[label] = label_ptr[label + 1] - label_ptr[label]
    wish_total = ratio * n_docs
    wish_label = np.empty((n_labels, k))
    for label in range(n_labels):
        for j in range(k):
            wish_label[label, j] = ratio[j] * remaining[label]
    fold = np.full(n_docs, -1, dtype=np.int64)
    heap = np.empty(n_labels, dtype=np.int64)
    position = np.full(n_labels, -1, dtype=np.int64)
    size = 0
    for label in range(n_labels):
        if remaining[label] > 0:
            heap[size] = label
            position[label] = size
            size += 1
            _sift_up(heap, position, size - 1, remaining, priority)
    n_assigned = 0
    while size > 0:
        label = heap[0]
        position[label] = -1
        size -= 1
        if size > 0:
            heap[0] = heap[size]
            position[heap[0]] = 0
            _sift_down(heap, position, 0, size, remaining, priority)
        if remaining[label] == 0:
            continue
        for t in range(label_ptr[label], label_ptr[label + 1]):
            doc = label_docs[t]
            if fold[doc] >= 0:
                continue
            target = _choose_fold(wish_label[label], wish_total, tie_draw[n_assigned])
            n_assigned += 1
            fold[doc] = target
            wish_total[target] -= 1.0
            for e in range(row_ptr[doc], row_ptr[doc + 1]):
                other = row_labels[e]
                wish_label[other, target] -= 1.0
                remaining[other] -= 1
                if position[other] >= 0:
                    _sift_up(heap, position, position[other], remaining, priority)
    for doc in unlabelled:
        target = _choose_fold(wish_total, wish_total, tie_draw[n_assigned])
        n_assigned += 1
        fold[doc] = target
        wish_total[target] -= 1.0
    return fold
