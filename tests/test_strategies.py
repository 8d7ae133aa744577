"""Deterministic checks of the strategies on hand-made instances with known answers
(e.g. docs/theory.md#two-label-counterexample)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from oracle import brute_force
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh._util.registry import UnknownNameError
from xmlthresh.strategies import STRATEGIES


def two_label_counterexample() -> RankedLists:
    # docs/theory.md#two-label-counterexample: c1 = 1,0,0,1 and c2 = 1,0,1,0 (4 documents): coordinate-wise
    # maximum 0.75 at cuts (4, 1), global optimum 0.7895 at cuts (1, 3).
    return RankedLists.from_relevance_lists([[1, 0, 0, 1], [1, 0, 1, 0]], [2, 2], num_docs=4)


def example_like() -> RankedLists:
    # The published Example.txt: 80 identical labels "3 | 1 0 0 0 1 1 0" over 7 documents.
    return RankedLists.from_relevance_lists([[1, 0, 0, 0, 1, 1, 0]] * 80, [3] * 80, num_docs=7)


def test_counterexample_coordinate_wise_maximum_is_not_global():
    lists = two_label_counterexample()
    truth = brute_force(lists)
    assert truth["f_macro"] == pytest.approx(0.7894737, abs=1e-7)
    domain = STRATEGIES.get("domain")().fit_lists(lists)
    assert domain.f_macro_ == pytest.approx(truth["f_macro"], abs=1e-12)
    np.testing.assert_array_equal(domain.cuts_, [1, 3])
    # Coordinate ascent started at the coordinate-wise maximum (4, 1) cannot leave it.
    from xmlthresh.strategies._kernels import coordinate_ascent
    from xmlthresh.data.candidates import build_candidates

    cands = build_candidates(lists)
    start = np.array([
        np.flatnonzero((cands.label_of == 0) & (cands.cut == 4))[0],
        np.flatnonzero((cands.label_of == 1) & (cands.cut == 1))[0],
    ])
    coordinate_ascent(cands.cand_ptr, cands.precision, cands.recall, start, 1.0, 100, 1e-15)
    np.testing.assert_array_equal(cands.cut[start], [4, 1])


def test_example_has_no_fixed_point_and_exact_tie_handling():
    model = STRATEGIES.get("domain")().fit_lists(example_like())
    assert model.f_macro_ == pytest.approx(0.7179654, abs=1e-7)
    assert model.upper_bound_ == pytest.approx(0.7179677, abs=1e-7)
    assert model.fixed_point_exists_ is False
    # 53 labels at (p, r) = (1/2, 1) [cut 6] and 27 at (1, 1/3) [cut 1]
    assert np.count_nonzero(model.cuts_ == 6) == 53
    assert np.count_nonzero(model.cuts_ == 1) == 27


def test_certified_fixed_point_when_hull_optimum_is_a_vertex():
    lists = RankedLists.from_relevance_lists([[1, 1, 0, 0], [1, 0, 0, 0]], [2, 1], num_docs=4)
    model = STRATEGIES.get("domain")().fit_lists(lists)
    assert model.fixed_point_exists_ is True
    assert model.upper_bound_ - model.lower_bound_ <= 1e-15
    assert model.f_macro_ == pytest.approx(1.0)


def test_labels_without_relevant_documents_are_excluded_and_counted():
    lists = RankedLists.from_relevance_lists([[1, 0, 1], [0, 0, 0], [0, 1, 0]], [2, 0, 1], num_docs=3)
    model = STRATEGIES.get("domain")().fit_lists(lists)
    assert model.n_labels_dropped_ == 1
    assert model.cuts_[1] == 0
    reduced = lists.select_labels([0, 2])
    assert model.f_macro_ == pytest.approx(STRATEGIES.get("domain")().fit_lists(reduced).f_macro_)


def test_predict_all_uses_true_number_of_documents_on_truncated_lists():
    # one relevant document beyond a 2-document list; m = 10
    lists = RankedLists.from_relevance_lists([[0, 0]], [1], num_docs=10)
    model = STRATEGIES.get("independent")().fit_lists(lists)
    assert model.cuts_[0] == 10
    assert model.metrics_["precision"] == pytest.approx(0.1)
    assert model.metrics_["recall"] == 1.0
    without = STRATEGIES.get("independent")().fit_lists(
        RankedLists.from_relevance_lists([[0, 0]], [1], num_docs=10, include_predict_all=False)
    )
    assert without.cuts_[0] == 0 and without.f_macro_ == 0.0


def test_strategies_follow_the_estimator_contract():
    from xmlthresh.strategies.base import tiny_scored_split

    for name in STRATEGIES.names():
        cls = STRATEGIES.get(name)
        if callable(getattr(cls, "unavailable_reason", None)) and cls.unavailable_reason():
            continue  # an optional plugin whose dependency is missing: its own tests cover that path
        model = cls(beta=2.0)
        assert model.get_params()["beta"] == 2.0
        assert clone(model).get_params() == model.get_params()
        split = tiny_scored_split()
        with pytest.raises(NotFittedError, match="not fitted"):
            model.evaluate_scores(split)
        model.fit_scores(split)
        assert model.evaluate_scores(split)["f_macro"] == pytest.approx(model.f_macro_)
        if not cls.requires_scores:
            model = clone(model).fit_lists(example_like())
            assert model.score_lists(example_like()) == pytest.approx(model.f_macro_)


@pytest.mark.parametrize("beta", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_beta_is_rejected(beta):
    with pytest.raises(ValueError, match="beta"):
        STRATEGIES.get("domain")(beta=beta).fit_lists(example_like())


def test_unknown_strategy_lists_known_names():
    with pytest.raises(UnknownNameError, match="known: .*domain"):
        STRATEGIES.get("nope")
