"""Candidate thresholds of every label after the exact Pareto reduction (docs/theory.md#pareto-reduction).

F-macro increases in every p_k and r_k, so for a fixed number of true positives the smallest cut is best:
the only useful cuts of label k are "just after its j-th relevant document" (j = 1..h_k) and, when allowed
and useful, "predict all m documents". Among those, r_k grows strictly with j, so a candidate whose
precision is not above that of some later candidate is dominated and dropped too (``pareto=True``).
Neither reduction can change the optimum of any metric that increases in p_k and r_k (F-macro, macro-F).

A label that can reach no relevant document (h_k = 0 and no predict-all candidate) keeps one candidate,
cut 0 ("predict nothing", p = r = 0): every cut scores p = r = 0 there, and this one adds no false positive.
It is the only use of cut 0, which is otherwise never a candidate.

Everything is stored flat: candidates of label k are ``[cand_ptr[k], cand_ptr[k+1])``, ordered by
increasing tp (so increasing recall and cut).

**The objective.** By default a strategy optimises the empirical (p, r) of the counts. A candidate set may
instead carry explicit ``objective_precision`` / ``objective_recall`` arrays (see
:mod:`xmlthresh.data.objective`: precision shrunk towards the label's prior, or expected counts under
calibrated probabilities): ``precision`` / ``recall`` then return those, every optimiser works on them
unchanged, and ``exact`` is False (hull edge keys are then computed in floating point).
``tp`` and ``n_relevant`` may be fractional (expected counts) in that case.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from xmlthresh.metrics import safe_ratio
from xmlthresh.data.ranked_lists import RankedLists, RankedListsError
from xmlthresh._util.jit import cached_njit


@dataclass(frozen=True)
class Candidates:
    """Per-label candidate cuts (number of top documents predicted) with their true-positive counts."""

    cand_ptr: np.ndarray  # int64 (n+1)
    tp: np.ndarray  # int64: true positives at each candidate cut
    cut: np.ndarray  # int64: number of top documents predicted (m = predict all, 0 = predict nothing)
    n_relevant: np.ndarray  # int64 (n): s_k
    num_docs: int
    objective_precision: np.ndarray | None = None  # float64: the p that is optimised (default tp / cut)
    objective_recall: np.ndarray | None = None  # float64: the r that is optimised (default tp / s_k)

    @property
    def exact(self) -> bool:
        """Whether (p, r) are ratios of integer counts (then hull edge keys are computed exactly)."""
        return (self.objective_precision is None and self.objective_recall is None
                and self.tp.dtype.kind in "iu" and np.asarray(self.n_relevant).dtype.kind in "iu")

    @property
    def n_labels(self) -> int:
        return len(self.n_relevant)

    @property
    def n_candidates(self) -> int:
        return len(self.tp)

    @cached_property
    def label_of(self) -> np.ndarray:
        """Label index of every candidate."""
        return np.repeat(np.arange(self.n_labels), np.diff(self.cand_ptr))

    @cached_property
    def precision(self) -> np.ndarray:
        if self.objective_precision is not None:
            return self.objective_precision
        return safe_ratio(self.tp, self.cut)

    @cached_property
    def recall(self) -> np.ndarray:
        if self.objective_recall is not None:
            return self.objective_recall
        return self.tp / self.n_relevant[self.label_of]

    @cached_property
    def empirical_precision(self) -> np.ndarray:
        """tp / cut whatever the objective (0 for an empty prediction)."""
        return safe_ratio(self.tp, self.cut)

    def subset(self, keep: np.ndarray) -> "Candidates":
        """The candidates where ``keep`` is true (every label must keep at least one), objective included."""
        counts = np.bincount(self.label_of[keep], minlength=self.n_labels)
        ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
        pick = (lambda a: None if a is None else a[keep])
        return Candidates(ptr, self.tp[keep], self.cut[keep], self.n_relevant, self.num_docs,
                          pick(self.objective_precision), pick(self.objective_recall))


def build_candidates(lists: RankedLists, pareto: bool = True) -> Candidates:
    """Candidate cuts of every label of ``lists`` (which must have s_k > 0 for every label).

    The result is cached on ``lists``: strategies fitted on the same lists share one candidate set (and,
    through :func:`xmlthresh.data.hulls.hull_chains`, one set of hull chains).
    """
    key = f"_candidates_pareto={pareto}"
    cached = lists.__dict__.get(key)
    if cached is not None:
        return cached
    if np.any(lists.n_relevant <= 0):
        raise RankedListsError(
            "candidates need every label to have at least one relevant document; "
            "call lists.with_relevant_only() first"
        )
    ptr, tp, cut = _tp_reduced_candidates(
        lists.cut_of_relevant,
        lists.label_ptr,
        lists.list_length,
        lists.n_relevant,
        lists.num_docs,
        lists.include_predict_all,
    )
    if pareto:
        ptr, tp, cut = _drop_dominated(ptr, tp, cut)
    candidates = Candidates(ptr, tp, cut, lists.n_relevant.copy(), lists.num_docs)
    object.__setattr__(lists, key, candidates)  # frozen dataclass: cache beside the fields
    return candidates


@cached_njit
def _tp_reduced_candidates(cut_of_relevant, label_ptr, list_length, n_relevant, num_docs, include_predict_all):
    """Cut just after each relevant document (after its tie group when scores tie: relevant documents of one
    group share that cut, which counts them all), plus predict-all when it adds true positives."""
    n = len(n_relevant)
    cand_ptr = np.zeros(n + 1, dtype=np.int64)
    for k in range(n):
        h = label_ptr[k + 1] - label_ptr[k]
        distinct = 0
        for j in range(label_ptr[k], label_ptr[k + 1]):
            if j + 1 == label_ptr[k + 1] or cut_of_relevant[j + 1] != cut_of_relevant[j]:
                distinct += 1
        extra = 1 if ((include_predict_all and h < n_relevant[k]) or h == 0) else 0
        cand_ptr[k + 1] = cand_ptr[k] + distinct + extra
    tp = np.empty(cand_ptr[n], dtype=np.int64)
    cut = np.empty(cand_ptr[n], dtype=np.int64)
    for k in range(n):
        out = cand_ptr[k]
        h = label_ptr[k + 1] - label_ptr[k]
        for j in range(h):
            i = label_ptr[k] + j
            if j + 1 < h and cut_of_relevant[i + 1] == cut_of_relevant[i]:
                continue  # the next relevant document shares this cut: emit the cut once, with all of them
            tp[out] = j + 1
            cut[out] = cut_of_relevant[i]
            out += 1
        if include_predict_all and h < n_relevant[k]:
            tp[out] = n_relevant[k]
            cut[out] = num_docs
        elif h == 0:  # nothing reachable: "predict nothing", p = r = 0
            tp[out] = 0
            cut[out] = 0
    return cand_ptr, tp, cut


@cached_njit
def _drop_dominated(cand_ptr, tp, cut):
    """Keep candidate j iff its precision beats every later candidate of its label (recall grows with j)."""
    n = len(cand_ptr) - 1
    keep = np.zeros(len(tp), dtype=np.bool_)
    new_ptr = np.zeros(n + 1, dtype=np.int64)
    for k in range(n):
        best_tp, best_cut = -1, 1  # precision of the best later candidate, as a fraction (-1 = none yet)
        kept = 0
        for i in range(cand_ptr[k + 1] - 1, cand_ptr[k] - 1, -1):
            # p_i > best  <=>  tp_i * best_cut > best_tp * cut_i   (exact in integers; cut 0 means p = 0)
            if best_tp < 0 or tp[i] * best_cut > best_tp * cut[i]:
                keep[i] = True
                kept += 1
                if cut[i] > 0:
                    best_tp, best_cut = tp[i], cut[i]
                else:
                    best_tp, best_cut = 0, 1
        new_ptr[k + 1] = new_ptr[k] + kept
    return new_ptr, tp[keep], cut[keep]
