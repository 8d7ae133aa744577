"""Score matrices: conversion to ranked lists with ties, thresholds back to scores, brute force with ties."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle import f_beta
from xmlthresh.data.scores import ScoreDataError, ScoredSplit
from xmlthresh.metrics import evaluate
from xmlthresh.strategies import STRATEGIES

TOL = 1e-12


def brute_force_scores(split: ScoredSplit, include_predict_all: bool, beta: float) -> float:
    """Max F-macro over every per-label score threshold: each distinct score, -inf ("predict all") when
    allowed, and +inf (predict nothing, p = r = 0: never better, but the only option of an unscored label)."""
    keep = np.flatnonzero(split.n_relevant > 0)
    options = []
    dense = split.scores.toarray() if sp.issparse(split.scores) else split.scores
    scored = split.scores.toarray() != 0 if sp.issparse(split.scores) else np.ones_like(dense, bool)
    labels = split.labels.toarray()
    for k in keep:
        values = np.unique(dense[scored[:, k], k])
        ths = list(values) + ([-np.inf] if include_predict_all else []) + [np.inf]
        pr = []
        for t in ths:
            pred = (dense[:, k] >= t) & scored[:, k] if t > -np.inf else np.ones(split.n_docs, bool)
            tp = np.count_nonzero(pred & labels[:, k])
            pr.append((tp / pred.sum() if pred.sum() else 0.0, tp / labels[:, k].sum()))
        options.append(pr)
    best = 0.0
    for combo in itertools.product(*options):
        P = np.mean([c[0] for c in combo])
        R = np.mean([c[1] for c in combo])
        best = max(best, float(f_beta(P, R, beta)))
    return best


@st.composite
def score_splits(draw):
    m = draw(st.integers(2, 6))
    n = draw(st.integers(1, 3))
    scores = np.array(draw(st.lists(st.integers(1, 3), min_size=m * n, max_size=m * n)), float).reshape(m, n)
    labels = np.array(draw(st.lists(st.integers(0, 1), min_size=m * n, max_size=m * n))).reshape(m, n)
    if draw(st.booleans()):  # top-k sparse: drop some scores (unscored documents)
        drop = np.array(draw(st.lists(st.booleans(), min_size=m * n, max_size=m * n))).reshape(m, n)
        scores = sp.csr_matrix(np.where(drop, 0.0, scores))
    return ScoredSplit(scores, labels), draw(st.booleans()), draw(st.sampled_from([0.5, 1.0, 2.0]))


@settings(max_examples=300, deadline=None)
@given(score_splits())
def test_domain_on_scores_with_ties_brackets_brute_force(case):
    split, predict_all, beta = case
    if not np.any(split.n_relevant > 0):
        return
    ranking = split.ranking(include_predict_all=predict_all)
    model = STRATEGIES.get("domain")(beta=beta).fit_lists(ranking.lists)
    truth = brute_force_scores(split, predict_all, beta)
    assert model.lower_bound_ <= truth + TOL <= model.upper_bound_ + 2 * TOL
    # the score thresholds reproduce exactly the counts of the chosen cuts on the same split
    thresholds = ranking.thresholds_for_cuts(model.cuts_)
    tp, predicted = split.counts_at(thresholds)
    kept = split.n_relevant > 0
    assert evaluate(tp[kept], predicted[kept], split.n_relevant[kept], beta)["f_macro"] == pytest.approx(
        model.f_macro_, abs=TOL)
    np.testing.assert_array_equal(predicted[kept], model.cuts_[kept])
    # predict() agrees with counts_at()
    pred = split.predict(thresholds)
    np.testing.assert_array_equal(np.asarray(pred.sum(axis=0)).ravel(), predicted)


def test_ties_allow_cuts_only_between_distinct_scores():
    scores = np.array([[0.9], [0.5], [0.5], [0.2]])
    labels = np.array([[1], [0], [1], [0]])
    lists = ScoredSplit(scores, labels).ranking().lists
    np.testing.assert_array_equal(lists.relevant_rank, [1, 3])
    np.testing.assert_array_equal(lists.tie_end, [1, 3])
    from xmlthresh.data.candidates import build_candidates

    np.testing.assert_array_equal(build_candidates(lists, pareto=False).cut, [1, 3])


def test_unscored_documents_rank_below_all_scored_ones():
    scores = sp.csr_matrix(np.array([[0.0, 0.3], [0.8, 0.0], [0.1, 0.0]]))
    labels = np.array([[1, 0], [0, 1], [1, 0]])
    ranking = ScoredSplit(scores, labels).ranking()
    np.testing.assert_array_equal(ranking.lists.list_length, [2, 1])  # truncated at the scored documents
    np.testing.assert_array_equal(ranking.lists.relevant_rank, [2])  # doc 2 (0.1) after doc 1 (0.8)
    np.testing.assert_array_equal(ranking.lists.n_relevant, [2, 1])
    np.testing.assert_array_equal(ranking.thresholds_for_cuts(np.array([3, 1])), [-np.inf, 0.3])


def test_bad_scores_are_rejected():
    with pytest.raises(ScoreDataError, match="1 score\\(s\\) are NaN"):
        ScoredSplit(np.array([[np.nan, 1.0]]), np.array([[1, 0]]), name="valid")
    with pytest.raises(ScoreDataError, match="differ in shape"):
        ScoredSplit(np.zeros((2, 2)), np.zeros((2, 3)))
