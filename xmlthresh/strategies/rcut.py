"""``rcut``: rank cut (Yang 2001) -- every document gets its top-t labels by score.

t is given or tuned on the fit split (the value in 1..t_max maximising F-macro). Ties between a document's
label scores are broken by label index; a document with fewer than t scored labels (sparse top-k scores)
gets only its scored ones. Counts for every t at once come from one sort of each document's scores.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.scores import ScoredSplit
from xmlthresh.metrics import evaluate
from xmlthresh.strategies.base import ScoreStrategy
from xmlthresh.strategies.registry import STRATEGIES


@STRATEGIES.register("rcut")
class RCutStrategy(ScoreStrategy):
    """Top-t labels per document; ``t`` fixed or tuned in 1..``t_max``."""

    def __init__(self, beta: float = 1.0, t: int | None = None, t_max: int = 20) -> None:
        super().__init__(beta=beta)
        self.t = t
        self.t_max = t_max

    def _check_params(self) -> None:
        super()._check_params()
        if self.t is not None and not (isinstance(self.t, int) and self.t >= 1):
            raise ValueError(f"t must be an integer >= 1 (or null to tune it), got {self.t!r}")
        if not (isinstance(self.t_max, int) and self.t_max >= 1):
            raise ValueError(f"t_max must be an integer >= 1, got {self.t_max!r}")

    def fit_scores(self, split: ScoredSplit) -> "RCutStrategy":
        self._check_params()
        depth = self.t if self.t is not None else min(self.t_max, split.n_labels)
        tp_at, predicted_at = counts_by_rank_cut(split, depth)
        kept = split.n_relevant > 0
        if self.t is not None:
            best_t = self.t
        else:
            f = [evaluate(tp_at[i][kept], predicted_at[i][kept], split.n_relevant[kept], self.beta)["f_macro"]
                 for i in range(depth)]
            best_t = int(np.argmax(f)) + 1
        self.t_ = best_t
        self.info_ = {"t": best_t}
        self._set_fit_results(split)
        return self

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        tp_at, predicted_at = counts_by_rank_cut(split, self.t_)
        return tp_at[-1], predicted_at[-1]

    def rule_state(self) -> dict:
        return {"t": int(self.t_)}

    def restore_rule(self, state: dict, n_labels: int) -> "RCutStrategy":
        t = state.get("t")
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 1 <= t <= max(n_labels, 1):
            raise ValueError(f"rcut's rule 't' must be an integer in 1..{n_labels} (labels per document), got {t!r}")
        self.t_, self.n_features_in_ = int(t), n_labels
        return self

    def predict_split(self, split: ScoredSplit) -> sp.csr_matrix:
        """Every document's top-``t_`` labels (ties by label index; only scored labels of sparse scores)."""
        doc, label, _ = top_labels(split, self.t_)
        return sp.csr_matrix((np.ones(len(doc), dtype=bool), (doc, label)), shape=(split.n_docs, split.n_labels))


def top_labels(split: ScoredSplit, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(document, label, position) of every document's top ``depth`` labels by decreasing score (ties broken
    by label index; a document of a sparse split has at most its scored labels). Needs no labels."""
    n_docs, n_labels = split.n_docs, split.n_labels
    depth = max(1, min(depth, n_labels))
    if sp.issparse(split.scores):
        csr = split.scores
        row = np.repeat(np.arange(n_docs), np.diff(csr.indptr))
        order = np.lexsort((csr.indices, -csr.data, row))
        position = np.arange(len(order)) - csr.indptr[row[order]]
        take = position < depth
        doc, label, position = row[order][take], csr.indices[order][take], position[take]
    else:
        top = np.argsort(-split.scores, axis=1, kind="stable")[:, :depth]
        doc = np.repeat(np.arange(n_docs), top.shape[1])
        label = top.ravel()
        position = np.tile(np.arange(top.shape[1]), n_docs)
    return doc, label, position


def counts_by_rank_cut(split: ScoredSplit, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(tp, predicted) per label for t = 1..depth: arrays of shape (depth, n_labels)."""
    n_labels = split.n_labels
    depth = max(1, min(depth, n_labels))
    doc, label, position = top_labels(split, depth)
    # scipy's fancy indexing with no (doc, label) pair (sparse scores without a stored entry) gives no flat array
    relevant = np.asarray(split.labels[doc, label]).ravel().astype(bool) if len(doc) else np.zeros(0, dtype=bool)
    flat = position * n_labels + label
    predicted = np.bincount(flat, minlength=depth * n_labels).reshape(depth, n_labels).cumsum(axis=0)
    tp = np.bincount(flat[relevant], minlength=depth * n_labels).reshape(depth, n_labels).cumsum(axis=0)
    return tp.astype(np.int64), predicted.astype(np.int64)
