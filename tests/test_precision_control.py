"""min_precision and smoothing of the label-based strategies, checked against brute force on tiny instances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle import f_beta, label_options, small_instances
from xmlthresh.data.candidates import build_candidates
from xmlthresh.data.objective import smoothed, with_precision_floor
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.data.evaluation import true_positives_at_cuts
from xmlthresh.strategies import STRATEGIES

FLOORS = st.sampled_from([0.0, 0.2, 0.34, 0.5, 0.75, 1.0])


def constrained_brute_force(lists: RankedLists, beta: float, floor: float, smoothing: float = 0.0) -> float:
    """Max over every threshold vector of F_beta(mean p~, mean r), where a label may use only cuts with
    p~ >= floor (p~: precision smoothed by ``smoothing`` pseudo-documents), or nothing if none qualifies.

    Cuts without a true positive are not candidates (convention: smoothing re-scores the candidate cuts of
    the empirical problem; it does not credit a prediction that found nothing with the prior)."""
    per_label = []
    for k in range(lists.n_labels):
        s = lists.n_relevant[k]
        if s == 0:
            continue
        prior = s / lists.num_docs
        options = []
        for cut, tp in label_options(lists, k):
            if tp == 0:
                continue
            p = (tp + smoothing * prior) / (cut + smoothing) if cut else 0.0
            if p >= floor:
                options.append((p, tp / s))
        per_label.append(options or [(0.0, 0.0)])
    n = len(per_label)
    best = -1.0
    for combo in itertools.product(*per_label):
        best = max(best, float(f_beta(sum(p for p, _ in combo) / n, sum(r for _, r in combo) / n, beta)))
    return best


@settings(max_examples=200, deadline=None)
@given(small_instances(), FLOORS)
def test_domain_with_floor_brackets_the_constrained_brute_force(instance, floor):
    lists, beta = instance
    model = _fit("domain", lists, beta=beta, min_precision=floor)
    brute = constrained_brute_force(lists, beta, floor)
    assert model.lower_bound_ <= brute + 1e-12
    assert brute <= model.upper_bound_ + 1e-12
    if model.upper_bound_ - model.lower_bound_ < 1e-13:
        assert model.lower_bound_ == pytest.approx(brute, abs=1e-12)


def _fit(name: str, lists: RankedLists, **params):
    model = STRATEGIES.get(name)(**params)
    return model.fit_lists(lists)


@settings(max_examples=200, deadline=None)
@given(small_instances(), FLOORS, st.sampled_from(["domain", "independent", "coordinate"]))
def test_no_chosen_cut_is_below_the_floor(instance, floor, name):
    lists, beta = instance
    model = _fit(name, lists, beta=beta, min_precision=floor)
    kept = lists.n_relevant > 0
    cuts = model.cuts_[kept]
    tp = true_positives_at_cuts(lists.select_labels(kept), cuts)
    chosen = cuts > 0
    assert np.all(tp[chosen] >= floor * cuts[chosen] - 1e-12)
    # a label predicts nothing only when none of its cuts with a true positive reaches the floor
    for k, cut in zip(np.flatnonzero(kept), cuts):
        if cut == 0:
            assert all(t < floor * c or t == 0 for c, t in label_options(lists, int(k)) if c > 0)


@settings(max_examples=150, deadline=None)
@given(small_instances(), st.sampled_from([0.5, 2.0, 10.0]), FLOORS)
def test_domain_with_smoothing_brackets_the_smoothed_brute_force(instance, strength, floor):
    lists, beta = instance
    model = _fit("domain", lists, beta=beta, smoothing=strength, min_precision=floor)
    brute = constrained_brute_force(lists, beta, floor, smoothing=strength)
    assert model.lower_bound_ <= brute + 1e-12
    assert brute <= model.upper_bound_ + 1e-12
    assert model.info_["objective_f_macro"] == model.lower_bound_


def test_floor_zero_and_smoothing_zero_change_nothing():
    lists = RankedLists.from_relevance_lists([[1, 0, 1, 0], [0, 1, 1, 0], [0, 0, 0, 1]], [2, 3, 1], num_docs=5)
    plain = _fit("domain", lists)
    controlled = _fit("domain", lists, min_precision=0.0, smoothing=0.0)
    assert np.array_equal(plain.cuts_, controlled.cuts_)
    assert plain.lower_bound_ == controlled.lower_bound_ and plain.upper_bound_ == controlled.upper_bound_


def test_floor_counts_and_predict_nothing():
    # label 0: 1,0,0,0 -> only cut 1 has p >= 0.6; label 1: 0,0,0,1 -> nothing reaches 0.6
    lists = RankedLists.from_relevance_lists([[1, 0, 0, 0], [0, 0, 0, 1]], [2, 1], num_docs=4)
    model = _fit("domain", lists, min_precision=0.6)
    assert model.cuts_[1] == 0
    assert model.info_["n_labels_floor_empty"] == 1
    assert model.info_["n_labels_predict_nothing"] == 1
    assert model.info_["n_labels_precision_one"] == 1


def test_smoothing_pulls_one_document_precision_towards_the_prior():
    lists = RankedLists.from_relevance_lists([[1, 0, 1, 1, 0, 1]], [4], num_docs=10)
    candidates = build_candidates(lists, pareto=False)
    shrunk = smoothed(candidates, 5.0)
    first = int(np.flatnonzero(candidates.cut == 1)[0])
    assert candidates.precision[first] == 1.0
    assert shrunk.precision[first] == pytest.approx((1 + 5 * 0.4) / (1 + 5))
    assert np.array_equal(shrunk.recall, candidates.recall)
    assert not shrunk.exact and candidates.exact


def test_floor_subset_keeps_the_objective():
    lists = RankedLists.from_relevance_lists([[1, 0, 1, 1, 0, 1], [0, 1, 0, 0, 0, 0]], [4, 1], num_docs=6)
    shrunk = smoothed(build_candidates(lists, pareto=False), 2.0)
    floored = with_precision_floor(shrunk, 0.5)
    assert np.all(floored.candidates.precision[floored.candidates.cut > 0] >= 0.5)
    assert floored.candidates.objective_precision is not None


@pytest.mark.parametrize("name", ["domain", "independent", "coordinate"])
@pytest.mark.parametrize("bad", [{"min_precision": -0.1}, {"min_precision": 1.5}, {"min_precision": "high"},
                                 {"min_precision": True}, {"smoothing": -1.0}, {"smoothing": float("inf")}])
def test_bad_controls_are_one_clear_error(name, bad):
    lists = RankedLists.from_relevance_lists([[1, 0]], [1], num_docs=2)
    with pytest.raises(ValueError, match="min_precision|smoothing"):
        _fit(name, lists, **bad)


def test_bnb_with_smoothing_is_rejected():
    lists = RankedLists.from_relevance_lists([[1, 0]], [1], num_docs=2)
    with pytest.raises(ValueError, match="bnb"):
        _fit("domain", lists, refine="bnb", smoothing=1.0)


def test_bnb_with_a_floor_certifies_the_constrained_optimum():
    rng = np.random.default_rng(3)
    relevance = [list(rng.integers(0, 2, size=8)) for _ in range(5)]
    for r in relevance:
        r[0] = 1 if sum(r) == 0 else r[0]
    sizes = [int(sum(r)) for r in relevance]
    lists = RankedLists.from_relevance_lists(relevance, sizes, num_docs=8)
    model = _fit("domain", lists, refine="bnb", min_precision=0.4)
    brute = constrained_brute_force(lists, 1.0, 0.4)
    assert model.lower_bound_ == pytest.approx(brute, abs=1e-12)
