"""Holdout for ranked lists: split every label's documents at random into a fit half and an eval half.

Ranked lists carry no document ids, so each label's m documents are split on their own (seeded):
exactly ``floor(fit_fraction * m)`` of them go to the fit half. Walking down the label's order, each run of
irrelevant documents sends a hypergeometric number of documents to the fit half and each relevant document
goes there with the probability of the remaining fit slots -- an exact uniform random split, drawn in
O(relevant documents) without materialising the m documents. The relevant documents beyond a truncated
list (s_k - h_k of them) are split hypergeometrically too.

A cut fitted on the fit half maps to the eval half through the original order: cutting the fit half after
its document at original position q predicts, in the eval half, its documents at original positions <= q
(q - cut_fit of them). "Predict all" maps to "predict all", "predict nothing" to "predict nothing".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh._util.jit import cached_njit


@dataclass(frozen=True)
class RankedListHoldout:
    """The two halves and, per relevant document of each half, its position in the original order."""

    fit: RankedLists
    eval: RankedLists
    fit_original_rank: np.ndarray  # parallel to fit.relevant_rank
    eval_original_rank: np.ndarray  # parallel to eval.relevant_rank

    def transfer_cuts(self, fit_cuts: np.ndarray) -> np.ndarray:
        """Cuts on the eval half equivalent to ``fit_cuts`` on the fit half (see module docstring)."""
        fit_cuts = np.asarray(fit_cuts, dtype=np.int64)
        return _transfer(fit_cuts, self.fit.relevant_rank, self.fit.label_ptr, self.fit_original_rank,
                         self.fit.num_docs, self.eval.num_docs, self.eval.list_length)


def split_ranked_lists(lists: RankedLists, seed: int = 0, fit_fraction: float = 0.5) -> RankedListHoldout:
    """Seeded random split of every label's documents into fit and eval halves."""
    if lists.tie_end is not None:
        raise ValueError("holdout of ranked lists with tied scores is not supported; split the scored documents")
    if not 0.0 < fit_fraction < 1.0:
        raise ValueError(f"fit_fraction must lie in (0, 1), got {fit_fraction}")
    m_fit = int(np.floor(fit_fraction * lists.num_docs))
    if m_fit < 1 or lists.num_docs - m_fit < 1:
        raise ValueError(f"cannot split {lists.num_docs} documents into two non-empty halves")
    (fit_rank, fit_ptr, fit_len, fit_s, fit_orig, ev_rank, ev_ptr, ev_len, ev_s, ev_orig) = _split(
        lists.relevant_rank, lists.label_ptr, lists.list_length, lists.n_relevant, lists.num_docs, m_fit, seed
    )
    common = dict(label_ids=lists.label_ids, include_predict_all=lists.include_predict_all)
    fit = RankedLists(fit_rank, fit_ptr, fit_len, fit_s, m_fit, name=f"{lists.name}[fit]", **common)
    ev = RankedLists(ev_rank, ev_ptr, ev_len, ev_s, lists.num_docs - m_fit, name=f"{lists.name}[eval]", **common)
    return RankedListHoldout(fit, ev, fit_orig, ev_orig)


@cached_njit
def _draw_to_fit(count, fit_left, total_left):
    """How many of ``count`` documents go to the fit half (hypergeometric without replacement)."""
    if count == 0 or fit_left == 0:
        return 0
    if fit_left == total_left:
        return count
    return np.random.hypergeometric(fit_left, total_left - fit_left, count)


@cached_njit
def _split(relevant_rank, label_ptr, list_length, n_relevant, num_docs, m_fit, seed):
    np.random.seed(seed)
    n = len(list_length)
    total = len(relevant_rank)
    fit_rank = np.empty(total, dtype=np.int64)
    fit_orig = np.empty(total, dtype=np.int64)
    ev_rank = np.empty(total, dtype=np.int64)
    ev_orig = np.empty(total, dtype=np.int64)
    fit_ptr = np.zeros(n + 1, dtype=np.int64)
    ev_ptr = np.zeros(n + 1, dtype=np.int64)
    fit_len = np.empty(n, dtype=np.int64)
    ev_len = np.empty(n, dtype=np.int64)
    fit_s = np.empty(n, dtype=np.int64)
    ev_s = np.empty(n, dtype=np.int64)
    nf = 0
    ne = 0
    for k in range(n):
        fit_left = m_fit
        total_left = num_docs
        seen_fit = 0  # documents of the fit half so far (in the original order)
        seen_ev = 0
        previous = 0  # original position of the last relevant document
        for j in range(label_ptr[k], label_ptr[k + 1]):
            q = relevant_rank[j]
            gap = q - previous - 1
            to_fit = _draw_to_fit(gap, fit_left, total_left)
            seen_fit += to_fit
            seen_ev += gap - to_fit
            fit_left -= to_fit
            total_left -= gap
            if np.random.random() * total_left < fit_left:
                seen_fit += 1
                fit_left -= 1
                fit_rank[nf] = seen_fit
                fit_orig[nf] = q
                nf += 1
            else:
                seen_ev += 1
                ev_rank[ne] = seen_ev
                ev_orig[ne] = q
                ne += 1
            total_left -= 1
            previous = q
        tail = list_length[k] - previous
        to_fit = _draw_to_fit(tail, fit_left, total_left)
        fit_len[k] = seen_fit + to_fit
        ev_len[k] = seen_ev + tail - to_fit
        fit_left -= to_fit
        total_left -= tail
        hidden = n_relevant[k] - (label_ptr[k + 1] - label_ptr[k])
        hidden_fit = _draw_to_fit(hidden, fit_left, total_left)
        fit_s[k] = nf - fit_ptr[k] + hidden_fit
        ev_s[k] = ne - ev_ptr[k] + hidden - hidden_fit
        fit_ptr[k + 1] = nf
        ev_ptr[k + 1] = ne
    return (fit_rank[:nf].copy(), fit_ptr, fit_len, fit_s, fit_orig[:nf].copy(),
            ev_rank[:ne].copy(), ev_ptr, ev_len, ev_s, ev_orig[:ne].copy())


@cached_njit
def _transfer(fit_cuts, fit_rank, fit_ptr, fit_orig, m_fit, m_eval, eval_length):
    n = len(fit_cuts)
    out = np.zeros(n, dtype=np.int64)
    for k in range(n):
        cut = fit_cuts[k]
        if cut == 0:
            out[k] = 0
        elif cut == m_fit:
            out[k] = m_eval
        else:
            q = -1
            for j in range(fit_ptr[k], fit_ptr[k + 1]):
                if fit_rank[j] == cut:
                    q = fit_orig[j]
                    break
            if q < 0:
                raise ValueError("fit cut is not just after a relevant document of the fit half")
            out[k] = min(q - cut, eval_length[k])
    return out
