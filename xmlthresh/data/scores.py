"""Score matrices: a ranker's scores and the true labels of one split, and the bridge to ranked lists.

A :class:`ScoredSplit` holds, for m documents and n labels, a score matrix (dense ``(m, n)`` floats, or a
sparse top-k CSR matrix whose missing entries are *unscored*) and a sparse 0/1 label matrix (``None`` for a
split that is only predicted: everything that needs relevance then says so). It converts to
the ranked-list model (per label: documents sorted by score) so every strategy works on both, and maps the
cuts a strategy chose back to **score thresholds** that apply to any other split of the same labels.

Conventions (explicit and tested):

* ties: a cut can only fall between distinct score values (``RankedLists.tie_end``);
* documents without a score for a label (sparse top-k) rank below every scored document: the label's list
  is truncated at its scored documents and only "predict all" reaches the rest;
* a threshold t predicts the documents with score >= t; cut 0 <-> t = +inf (nothing), "predict all" <->
  t = -inf (every document, scored or not);
* ``include_predict_all``: whether "predict all" is a candidate when fitting on the split -- a property of
  the problem, so it travels with the data (as in :class:`RankedLists`) instead of being passed to every fit.
* ``native_threshold``: the ranker's own decision threshold on these scores (0.5 for probabilities, 0 for
  margins; ``None`` when the producer declares none) -- what ``fallback=native`` gives a label without a fit
  positive. Rankers declare it (``Ranker.native_threshold``), score files carry it (key ``native_threshold``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from xmlthresh._util.lazy_imports import lazy_module
from xmlthresh.thresholds import apply_thresholds
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh._util.jit import cached_njit
from xmlthresh.validation import InputError, check_label_names

sp = lazy_module("scipy.sparse")  # loaded on first use: ranked-list runs never need it


class ScoreDataError(ValueError):
    """Inconsistent scores or labels (the message names the split, the label and the problem)."""


def check_native_threshold(value: object, where: str) -> float | None:
    """``value`` as a finite float, or None; a :class:`ScoreDataError` naming ``where`` otherwise."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value):
        raise ScoreDataError(f"{where}: native_threshold must be a finite number or null (none declared), "
                             f"got {value!r}")
    return float(value)


@dataclass(frozen=True)
class ScoredSplit:
    """Scores and true labels of one split (documents x labels); ``labels=None`` for a split to predict."""

    scores: np.ndarray | sp.csr_matrix
    labels: sp.csr_matrix | None = None
    name: str = ""
    label_names: np.ndarray | None = None
    include_predict_all: bool = True
    native_threshold: float | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "native_threshold", check_native_threshold(self.native_threshold, f"split {self.name!r}"))
        labels = None
        if self.labels is not None:
            labels = sp.csr_matrix(self.labels)
            values = labels.data
            if values.dtype != bool and values.size and not np.all((values == 0) | (values == 1)):
                bad = values[(values != 0) & (values != 1)]
                raise ScoreDataError(f"split {self.name!r}: labels must be 0/1 (relevant or not), found "
                                     f"{bad.size} other value(s), e.g. {bad[0].item()!r}; binarise them first, "
                                     "e.g. labels > 0 (or labels == 1 for -1/+1 labels)")
            labels = sp.csr_matrix(labels, dtype=bool)
            labels.eliminate_zeros()
            labels.sort_indices()
            set_(self, "labels", labels)
        if sp.issparse(self.scores):
            scores = sp.csr_matrix(self.scores, dtype=np.float64)
            scores.sort_indices()
            values = scores.data
        else:
            scores = np.asarray(self.scores, dtype=np.float64)
            if scores.ndim != 2:
                raise ScoreDataError(f"split {self.name!r}: scores must be 2-D (documents x labels), got {scores.ndim}-D")
            values = scores
        set_(self, "scores", scores)
        if labels is not None and scores.shape != labels.shape:
            raise ScoreDataError(f"split {self.name!r}: scores {scores.shape} and labels {labels.shape} differ in shape")
        bad = ~np.isfinite(values)
        if np.any(bad):
            raise ScoreDataError(
                f"split {self.name!r}: {int(np.count_nonzero(bad))} score(s) are NaN or infinite; "
                "clean the ranker output (unscored documents of a sparse matrix are simply left out)"
            )
        if self.label_names is not None:
            try:
                set_(self, "label_names", check_label_names(self.label_names, scores.shape[1]))
            except InputError as exc:
                raise ScoreDataError(f"split {self.name!r}: {exc}") from None

    @property
    def n_docs(self) -> int:
        return self.scores.shape[0]

    @property
    def n_labels(self) -> int:
        return self.scores.shape[1]

    @property
    def n_relevant(self) -> np.ndarray:
        return np.asarray(self._labels().sum(axis=0)).ravel().astype(np.int64)

    def _labels(self) -> sp.csr_matrix:
        if self.labels is None:
            raise ScoreDataError(f"split {self.name!r} has no labels: it can be predicted, not fitted or evaluated")
        return self.labels

    def with_predict_all(self, include_predict_all: bool) -> "ScoredSplit":
        """The same split with ``include_predict_all`` set (no copy of the matrices when it is unchanged)."""
        if bool(include_predict_all) == self.include_predict_all:
            return self
        return replace(self, include_predict_all=bool(include_predict_all))

    def with_native_threshold(self, native_threshold: float | None) -> "ScoredSplit":
        """The same split declaring ``native_threshold`` (no copy of the matrices)."""
        if native_threshold == self.native_threshold:
            return self
        return replace(self, native_threshold=native_threshold)

    def ranking(self, include_predict_all: bool | None = None) -> "ScoreRanking":
        """Per label the documents sorted by decreasing score, as ranked lists plus the sorted scores.

        ``include_predict_all`` overrides the split's own flag (None: the split's)."""
        if include_predict_all is None:
            include_predict_all = self.include_predict_all
        label_ptr, order_doc, order_score = _sorted_by_label(self.scores)
        labels_csc = self._labels().tocsc()
        labels_csc.sort_indices()
        relevant_rank, tie_end, rel_ptr = _relevance_in_order(
            label_ptr, order_doc, order_score, labels_csc.indptr.astype(np.int64),
            labels_csc.indices.astype(np.int64), self.n_docs,
        )
        lists = RankedLists(
            relevant_rank=relevant_rank,
            label_ptr=rel_ptr,
            list_length=np.diff(label_ptr),
            n_relevant=self.n_relevant,
            num_docs=self.n_docs,
            label_ids=self.label_names if self.label_names is not None else np.arange(self.n_labels),
            include_predict_all=include_predict_all,
            name=self.name,
            tie_end=tie_end,
        )
        return ScoreRanking(lists, label_ptr, order_score)

    def counts_at(self, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(tp, predicted) per label when label k predicts the documents with score >= thresholds[k]."""
        thresholds = np.asarray(thresholds, dtype=np.float64)
        if thresholds.shape != (self.n_labels,):
            raise ValueError(f"need one threshold per label ({self.n_labels}), got shape {thresholds.shape}")
        predict_all = thresholds == -np.inf
        if sp.issparse(self.scores):
            coo = self.scores.tocoo()
            hit = coo.data >= thresholds[coo.col]
            predicted = np.bincount(coo.col[hit], minlength=self.n_labels)
            rel_score, rel_label = _relevant_scores(self.scores, self._labels())
            tp = np.bincount(rel_label[rel_score >= thresholds[rel_label]], minlength=self.n_labels)
        else:
            hit = self.scores >= thresholds[None, :]
            predicted = hit.sum(axis=0)
            tp = np.asarray(self._labels().multiply(hit).sum(axis=0)).ravel()
        predicted = np.where(predict_all, self.n_docs, predicted).astype(np.int64)
        tp = np.where(predict_all, self.n_relevant, tp).astype(np.int64)
        return tp, predicted

    def predict(self, thresholds: np.ndarray) -> sp.csr_matrix:
        """Boolean CSR predictions (documents x labels) of the score thresholds (:mod:`xmlthresh.thresholds`).
        "Predict all" labels are full columns: for extreme label counts prefer :meth:`counts_at`."""
        return apply_thresholds(self.scores, thresholds)

    def counts_of(self, predictions) -> tuple[np.ndarray, np.ndarray]:
        """(tp, predicted) per label of a 0/1 prediction matrix (dense or sparse, documents x labels)."""
        pred = predictions if sp.issparse(predictions) else np.asarray(predictions)
        if pred.shape != self.scores.shape:
            raise ValueError(f"predictions of shape {pred.shape} for a split of shape {self.scores.shape}")
        pred = sp.csr_matrix(pred, dtype=bool)
        pred.eliminate_zeros()
        predicted = np.asarray(pred.sum(axis=0)).ravel().astype(np.int64)
        tp = np.asarray(self._labels().multiply(pred).sum(axis=0)).ravel().astype(np.int64)
        return tp, predicted

    def top_documents(self, cuts: np.ndarray) -> sp.csr_matrix:
        """Boolean CSR predictions where label k predicts its top ``cuts[k]`` documents by decreasing score
        (ties in document order, as in :meth:`ranking`), at most its scored documents. Needs no labels."""
        label_ptr, doc, _ = _sorted_by_label(self.scores)
        lengths = np.diff(label_ptr)
        cuts = np.minimum(np.asarray(cuts, dtype=np.int64), lengths)
        position = np.arange(len(doc), dtype=np.int64) - np.repeat(label_ptr[:-1], lengths)
        keep = position < np.repeat(cuts, lengths)
        label = np.repeat(np.arange(self.n_labels, dtype=np.int64), lengths)
        return sp.csr_matrix((np.ones(int(keep.sum()), dtype=bool), (doc[keep], label[keep])),
                             shape=self.scores.shape)


def _relevant_scores(scores: sp.csr_matrix, labels: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(score, label) of every relevant document that has a score (sparse scores)."""
    s = scores.tocoo()
    keys_scored = s.row.astype(np.int64) * scores.shape[1] + s.col
    lab = labels.tocoo()
    keys_rel = lab.row.astype(np.int64) * scores.shape[1] + lab.col
    mask = np.isin(keys_scored, keys_rel, assume_unique=True)
    return s.data[mask], s.col[mask]


@dataclass(frozen=True)
class ScoreRanking:
    """Ranked lists of a split plus, per label, its scores in decreasing order (CSR by ``score_ptr``)."""

    lists: RankedLists
    score_ptr: np.ndarray
    sorted_score: np.ndarray

    def thresholds_for_cuts(self, cuts: np.ndarray) -> np.ndarray:
        """Score threshold per label reproducing ``cuts`` (top-``cut`` documents) on this split."""
        cuts = np.asarray(cuts, dtype=np.int64)
        lengths = np.diff(self.score_ptr)
        predict_all = cuts == self.lists.num_docs
        inside = ~predict_all & (cuts > 0)
        if np.any(inside & (cuts > lengths)):
            k = int(np.flatnonzero(inside & (cuts > lengths))[0])
            raise ValueError(f"cut {cuts[k]} of label {k} lies beyond its {lengths[k]} scored documents")
        thresholds = np.full(len(cuts), np.inf)
        thresholds[predict_all] = -np.inf
        thresholds[inside] = self.sorted_score[self.score_ptr[:-1][inside] + cuts[inside] - 1]
        return thresholds


def _sorted_by_label(scores: np.ndarray | sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scored entries grouped by label, each group sorted by decreasing score (stable: ties keep doc order).

    Returns (label_ptr, doc, score) with label k's entries in [label_ptr[k], label_ptr[k+1]).
    """
    if sp.issparse(scores):
        csc = scores.tocsc()
        csc.sort_indices()  # documents in increasing order within each label: the stable sort keeps it on ties
        label_ptr = csc.indptr.astype(np.int64)
        doc, score = _sort_label_segments(label_ptr, csc.indices.astype(np.int64), csc.data)
        return label_ptr, doc, score
    m, n = scores.shape
    order = np.argsort(-scores.T, axis=1, kind="stable")  # (labels, docs)
    sorted_scores = np.take_along_axis(scores.T, order, axis=1)
    label_ptr = np.arange(n + 1, dtype=np.int64) * m
    return label_ptr, order.ravel().astype(np.int64), sorted_scores.ravel()


@cached_njit
def _sort_label_segments(label_ptr, doc, score):
    """Each label's entries (a segment of the CSC arrays) by decreasing score; stable, so ties keep the
    increasing document order. One small sort per label instead of a global 3-key lexsort over all entries."""
    order_doc = np.empty_like(doc)
    order_score = np.empty_like(score)
    for k in range(len(label_ptr) - 1):
        lo, hi = label_ptr[k], label_ptr[k + 1]
        if hi - lo == 0:
            continue
        perm = np.argsort(-score[lo:hi], kind="mergesort")
        for i in range(hi - lo):
            order_doc[lo + i] = doc[lo + perm[i]]
            order_score[lo + i] = score[lo + perm[i]]
    return order_doc, order_score


@cached_njit
def _relevance_in_order(label_ptr, order_doc, order_score, rel_indptr, rel_indices, n_docs):
    """Positions (1-based) of the relevant documents in every label's sorted order, the end of their tie
    group, and the CSR pointer over labels."""
    n = len(label_ptr) - 1
    is_relevant = np.zeros(n_docs, dtype=np.bool_)
    total = 0
    for k in range(n):
        total += rel_indptr[k + 1] - rel_indptr[k]
    ranks = np.empty(total, dtype=np.int64)
    tie_end = np.empty(total, dtype=np.int64)
    rel_ptr = np.zeros(n + 1, dtype=np.int64)
    out = 0
    for k in range(n):
        for j in range(rel_indptr[k], rel_indptr[k + 1]):
            is_relevant[rel_indices[j]] = True
        lo, hi = label_ptr[k], label_ptr[k + 1]
        count = 0
        for i in range(lo, hi):
            if is_relevant[order_doc[i]]:
                count += 1
        out += count
        # scan backwards so each position knows the (exclusive) end of its tie group
        w = out - 1
        group_end = hi
        for i in range(hi - 1, lo - 1, -1):
            if i + 1 < hi and order_score[i + 1] != order_score[i]:
                group_end = i + 1
            if is_relevant[order_doc[i]]:
                ranks[w] = i - lo + 1
                tie_end[w] = group_end - lo
                w -= 1
        rel_ptr[k + 1] = out
        for j in range(rel_indptr[k], rel_indptr[k + 1]):
            is_relevant[rel_indices[j]] = False
    return ranks[:out].copy(), tie_end[:out].copy(), rel_ptr
