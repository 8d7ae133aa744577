"""Slow, obvious reference implementations used as test oracles (never used by the package)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import strategies as st

from xmlthresh.data.ranked_lists import RankedLists


def label_options(lists: RankedLists, k: int) -> list[tuple[int, int]]:
    """Every admissible (cut, tp) of label k: cut = 1..L_k (tp counted in the list) and, when allowed,
    "predict all" (cut = m, tp = s_k). No reduction of any kind."""
    ranks = lists.relevant_rank[lists.label_ptr[k]:lists.label_ptr[k + 1]]
    options = [(cut, int(np.count_nonzero(ranks <= cut))) for cut in range(1, lists.list_length[k] + 1)]
    if lists.include_predict_all:
        options = [o for o in options if o[0] != lists.num_docs] + [(lists.num_docs, int(lists.n_relevant[k]))]
    if not options:
        options = [(0, 0)]
    return options


def f_beta(p, r, beta):
    b2 = beta * beta
    den = b2 * p + r
    return np.where(den > 0, (1 + b2) * p * r / np.where(den > 0, den, 1), 0.0)


def brute_force(lists: RankedLists, beta: float = 1.0) -> dict:
    """Max F-macro and max macro-F over every threshold vector (labels with s_k = 0 excluded)."""
    kept = [k for k in range(lists.n_labels) if lists.n_relevant[k] > 0]
    per_label = []
    for k in kept:
        opts = label_options(lists, k)
        s = lists.n_relevant[k]
        p = np.array([tp / cut if cut else 0.0 for cut, tp in opts])
        r = np.array([tp / s for cut, tp in opts])
        per_label.append((p, r))
    n = len(kept)
    best_f_macro, best_cuts = -1.0, None
    for combo in itertools.product(*[range(len(p)) for p, _ in per_label]):
        P = sum(per_label[i][0][c] for i, c in enumerate(combo)) / n
        R = sum(per_label[i][1][c] for i, c in enumerate(combo)) / n
        f = float(f_beta(P, R, beta))
        if f > best_f_macro:
            best_f_macro, best_cuts = f, combo
    macro_f = float(np.mean([np.max(f_beta(p, r, beta)) for p, r in per_label]))
    return {"f_macro": best_f_macro, "macro_f": macro_f, "combo": best_cuts}


@st.composite
def small_instances(draw, max_labels: int = 4, max_docs: int = 8):
    """(lists, beta): up to ``max_labels`` labels over up to ``max_docs`` documents, full or truncated lists
    with sizes consistent with them, with or without "predict all", beta in {0.5, 1, 2}."""
    num_docs = draw(st.integers(1, max_docs))
    n_labels = draw(st.integers(1, max_labels))
    relevance, sizes = [], []
    for _ in range(n_labels):
        length = draw(st.integers(1, num_docs))
        bits = draw(st.lists(st.integers(0, 1), min_size=length, max_size=length))
        hidden = draw(st.integers(0, num_docs - length))  # relevant documents below a truncated list
        relevance.append(bits)
        sizes.append(sum(bits) + hidden)
    if not any(sizes):
        sizes[0], relevance[0][0] = 1, 1
    predict_all = draw(st.booleans())
    beta = draw(st.sampled_from([0.5, 1.0, 2.0]))
    lists = RankedLists.from_relevance_lists(relevance, sizes, num_docs, include_predict_all=predict_all)
    return lists, beta
