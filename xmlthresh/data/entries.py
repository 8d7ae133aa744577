"""A score matrix as its scored (document, label) entries grouped by label, the layout calibration and the
plug-in candidates work on: CSC order, one segment per label (a dense matrix: every document of every label).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from xmlthresh._util.jit import cached_njit


@dataclass(frozen=True)
class LabelEntries:
    """The scored (document, label) entries of a split grouped by label (CSC order): scores and 0/1 truth."""

    label_ptr: np.ndarray  # int64 (n + 1)
    doc: np.ndarray  # int64: document of every entry
    score: np.ndarray  # float64
    n_docs: int

    @property
    def n_labels(self) -> int:
        return len(self.label_ptr) - 1

    @property
    def label_of(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_labels), np.diff(self.label_ptr))


def label_entries(scores: np.ndarray | sp.spmatrix) -> LabelEntries:
    """Every scored entry grouped by label (a dense matrix: every document of every label)."""
    if sp.issparse(scores):
        csc = sp.csc_matrix(scores)
        csc.sort_indices()
        return LabelEntries(csc.indptr.astype(np.int64), csc.indices.astype(np.int64),
                            csc.data.astype(np.float64), scores.shape[0])
    m, n = scores.shape
    return LabelEntries(np.arange(n + 1, dtype=np.int64) * m, np.tile(np.arange(m, dtype=np.int64), n),
                        np.asarray(scores, dtype=np.float64).T.ravel(), m)


def entry_truth(entries: LabelEntries, labels: sp.csr_matrix) -> np.ndarray:
    """0/1 truth of every entry (float64), from the label matrix."""
    csc = sp.csc_matrix(labels, dtype=bool)
    csc.sort_indices()
    return _truth_of_entries(entries.label_ptr, entries.doc, csc.indptr.astype(np.int64),
                             csc.indices.astype(np.int64), entries.n_docs)



@cached_njit
def _truth_of_entries(label_ptr, doc, rel_indptr, rel_indices, n_docs):
    n = len(label_ptr) - 1
    truth = np.zeros(len(doc), dtype=np.float64)
    mark = np.zeros(n_docs, dtype=np.bool_)
    for k in range(n):
        for j in range(rel_indptr[k], rel_indptr[k + 1]):
            mark[rel_indices[j]] = True
        for i in range(label_ptr[k], label_ptr[k + 1]):
            if mark[doc[i]]:
                truth[i] = 1.0
        for j in range(rel_indptr[k], rel_indptr[k + 1]):
            mark[rel_indices[j]] = False
    return truth
