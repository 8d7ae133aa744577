"""Metrics of a cut vector on ranked lists: true positives at each label's cut, and all metrics of
:mod:`xmlthresh.metrics` from them.

A cut ``cut[k]`` predicts the top ``cut[k]`` documents of label k's list; ``cut[k] == num_docs`` predicts
every document ("predict all", valid for truncated lists too).
"""

from __future__ import annotations

import numpy as np

from xmlthresh.metrics import evaluate
from xmlthresh.data.ranked_lists import RankedLists


def true_positives_at_cuts(lists: RankedLists, cut: np.ndarray) -> np.ndarray:
    """tp_k: relevant documents among the top ``cut[k]`` of label k's list.

    ``cut[k] == num_docs`` means "predict all" (tp = s_k, valid for truncated lists too); otherwise the cut
    must lie within the known list (0 <= cut <= L_k): beyond a truncated list the relevance is unknown.
    """
    cut = np.asarray(cut, dtype=np.int64)
    if cut.shape != (lists.n_labels,):
        raise ValueError(f"need one cut per label ({lists.n_labels}), got shape {cut.shape}")
    predict_all = cut == lists.num_docs
    unknown = ~predict_all & ((cut < 0) | (cut > lists.list_length))
    if np.any(unknown):
        k = int(np.flatnonzero(unknown)[0])
        raise ValueError(
            f"cut {cut[k]} of label {lists.label_ids[k]!r} lies outside its known list of "
            f"{lists.list_length[k]} documents (and is not 'predict all' = {lists.num_docs})"
        )
    # Count ranks <= cut per label in one searchsorted over label-offset keys (ranks are sorted per label).
    stride = lists.num_docs + 1
    counts = np.diff(lists.label_ptr)
    keys = np.repeat(np.arange(lists.n_labels, dtype=np.int64) * stride, counts) + lists.relevant_rank
    upto = np.searchsorted(keys, np.arange(lists.n_labels, dtype=np.int64) * stride + cut, side="right")
    tp = upto - lists.label_ptr[:-1]
    return np.where(predict_all, lists.n_relevant, tp)


def evaluate_cuts(lists: RankedLists, cut: np.ndarray, beta: float = 1.0) -> dict[str, float]:
    """Metrics of the cut vector ``cut`` on ranked lists (all labels must have s_k > 0)."""
    return evaluate(true_positives_at_cuts(lists, cut), cut, lists.n_relevant, beta)
