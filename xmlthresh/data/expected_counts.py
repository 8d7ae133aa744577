"""Expected counts of score-threshold rules under probabilities eta: the plug-in (PU) candidates.

For label k and a set D of scored documents with (calibrated) probabilities eta_k(x), the rule "predict
the documents with score >= t" has E tp_k(t) = sum of eta over the documents scored >= t, E pred_k(t) =
their number, and E pos_k = sum of eta over all of D (docs/theory.md#plug-in-estimate). These curves need no labels
on D. Their candidates, one per distinct score (ties: a cut falls only between distinct scores), are a
:class:`~xmlthresh.data.candidates.Candidates` set with fractional ``tp`` and ``n_relevant``, so the exact
domain sweep, the precision floor and every other optimiser run on them unchanged.

Reductions (exact for any measure increasing in p and r): a cut that adds no expected true positive over
the previous kept cut is dropped (same E tp, more predictions). Documents without a score (sparse top-k)
rank below every scored one; they get the label's unscored probability and only "predict all" reaches them.
A label whose E pos is 0 (no probability mass anywhere) cannot be scored and is left out (``usable``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xmlthresh.data.candidates import Candidates
from xmlthresh.data.entries import LabelEntries
from xmlthresh._util.jit import cached_njit


@dataclass(frozen=True)
class ExpectedCandidates:
    """Plug-in candidates of the usable labels and the score threshold that realises each candidate."""

    candidates: Candidates  # over the usable labels only, in label order
    threshold: np.ndarray  # float64 per candidate: predict score >= threshold (-inf: all, +inf: nothing)
    usable: np.ndarray  # bool per label: E pos > 0


def expected_candidates(entries: LabelEntries, eta: np.ndarray, unscored_eta: np.ndarray,
                        include_predict_all: bool = True) -> ExpectedCandidates:
    """Plug-in candidates of every label from its scored entries and their probabilities ``eta``.

    ``unscored_eta[k]`` is the probability given to each of label k's unscored documents (0 for dense
    scores, where every document is scored)."""
    ptr, tp, cut, thr, expected_pos = _candidates_kernel(
        entries.label_ptr, entries.score, np.asarray(eta, dtype=np.float64),
        np.asarray(unscored_eta, dtype=np.float64), entries.n_docs, include_predict_all,
    )
    usable = expected_pos > 0
    counts = np.diff(ptr)
    if not usable.all():
        keep = np.repeat(usable, counts)
        tp, cut, thr = tp[keep], cut[keep], thr[keep]
        counts = counts[usable]
        ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    candidates = Candidates(ptr, tp, cut, expected_pos[usable], entries.n_docs)
    return ExpectedCandidates(candidates, thr, usable)


@cached_njit
def _candidates_kernel(label_ptr, score, eta, unscored_eta, n_docs, include_predict_all):
    n = len(label_ptr) - 1
    total = len(score) + n
    tp = np.empty(total, dtype=np.float64)
    cut = np.empty(total, dtype=np.int64)
    thr = np.empty(total, dtype=np.float64)
    ptr = np.zeros(n + 1, dtype=np.int64)
    expected_pos = np.zeros(n, dtype=np.float64)
    out = 0
    for k in range(n):
        lo, hi = label_ptr[k], label_ptr[k + 1]
        length = hi - lo
        order = np.argsort(-score[lo:hi], kind="mergesort")
        cum = 0.0
        last = 0.0
        for i in range(length):
            cum += eta[lo + order[i]]
            group_end = i + 1 == length or score[lo + order[i + 1]] != score[lo + order[i]]
            if group_end and cum > last:
                tp[out] = cum
                cut[out] = i + 1
                thr[out] = score[lo + order[i]]
                out += 1
                last = cum
        hidden = n_docs - length
        pos = cum + hidden * unscored_eta[k]
        expected_pos[k] = pos
        if include_predict_all and hidden > 0 and pos > last:
            tp[out] = pos
            cut[out] = n_docs
            thr[out] = -np.inf
            out += 1
        if out == ptr[k]:  # nothing reachable: "predict nothing"
            tp[out] = 0.0
            cut[out] = 0
            thr[out] = np.inf
            out += 1
        ptr[k + 1] = out
    return ptr, tp[:out].copy(), cut[:out].copy(), thr[:out].copy(), expected_pos
