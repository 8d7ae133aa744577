"""``domain`` with ``refine='bnb'``: the branch and bound that closes the hull gap exactly (brute force on
small instances, non-hull-vertex optima, node budget, ESP Game proved to 1e-9), and ``refine='none'``
unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from oracle import brute_force
from oracle import small_instances as shared_small_instances
from xmlthresh.data.candidates import build_candidates
from xmlthresh.data.hulls import hull_chains
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.datasets import DATASETS
from xmlthresh.data.evaluation import evaluate_cuts
from xmlthresh.strategies import STRATEGIES

TOL = 1e-12


def small_instances(max_labels=5, max_docs=8):
    """The shared random instances, up to 5 labels by default here."""
    return shared_small_instances(max_labels=max_labels, max_docs=max_docs)


def domain(**params):
    return STRATEGIES.get("domain")(**params)




# ------------------------------------------------------------------ parameters, default unchanged
@pytest.mark.parametrize(
    "params, message",
    [
        ({"refine": "exact"}, r"refine must be one of 'none', 'bnb'"),
        ({"refine": None}, r"refine must be one of"),
        ({"gap_tol": -1e-9}, r"gap_tol must be a finite number >= 0"),
        ({"gap_tol": float("nan")}, r"gap_tol must be a finite number >= 0"),
        ({"gap_tol": float("inf")}, r"gap_tol must be a finite number >= 0"),
        ({"gap_tol": "0"}, r"gap_tol must be a finite number >= 0"),
        ({"max_nodes": 0}, r"max_nodes must be an integer >= 1"),
        ({"max_nodes": 10.0}, r"max_nodes must be an integer >= 1"),
        ({"max_nodes": True}, r"max_nodes must be an integer >= 1"),
    ],
)
def test_parameters_are_validated(params, message):
    lists = RankedLists.from_relevance_lists([[1, 0, 1]], [2], num_docs=3)
    with pytest.raises(ValueError, match=message):
        domain(**{"refine": "bnb", **params}).fit_lists(lists)


def test_default_is_the_polished_sweep_without_branch_and_bound():
    assert domain().get_params() == {"beta": 1.0, "refine": "none", "gap_tol": 1e-9, "max_nodes": 100_000,
                                     "min_precision": 0.0, "smoothing": 0.0, "pooling": 0.0, "fallback": "never",
                                     "pooling_space": "score", "max_predicted_per_positive": None,
                                     "polish": "coordinate"}
    lists = RankedLists.from_relevance_lists([[0, 0, 0, 1, 0, 0], [1, 0, 1, 1, 0, 1]], [1, 4], num_docs=6)
    model = domain().fit_lists(lists)
    assert set(model.info_) == {
        "n_hull_edges", "best_step", "fixed_point_exists", "hull_argmax_precision", "hull_argmax_recall", "gap",
        "objective", "n_labels_predict_all", "n_labels_precision_one", "n_labels_predict_nothing",
        "polish_gain", "polish_source", "polish_skipped", "polish_passes",
    }
    assert model.info_["polish_source"] == "sweep_ascent" and model.info_["polish_gain"] > 0


# ------------------------------------------------------------------ exactness
def test_optimum_at_a_candidate_that_is_not_a_hull_vertex():
    # label 2 (1,0,1,1,0,1; s = 4): (p, r) = (1, 1/4) at cut 1, (3/4, 3/4) at cut 4, (2/3, 1) at cut 6; the
    # middle one lies below the hull edge of the other two, yet the optimum (7/11 at cuts (4, 4)) needs it.
    lists = RankedLists.from_relevance_lists([[0, 0, 0, 1, 0, 0], [1, 0, 1, 1, 0, 1]], [1, 4], num_docs=6)
    candidates = build_candidates(lists)
    middle = int(np.flatnonzero((candidates.label_of == 1) & (candidates.cut == 4))[0])
    assert middle not in hull_chains(candidates).chain
    plain = domain(polish="none").fit_lists(lists)
    assert plain.f_macro_ == pytest.approx(0.6285714285714286, abs=TOL)  # hull vertices only
    assert plain.upper_bound_ == pytest.approx(0.65, abs=TOL)
    polished = domain(polish="coordinate").fit_lists(lists)  # coordinate ascent from the sweep's state reaches the middle cut
    assert polished.f_macro_ == pytest.approx(7 / 11, abs=TOL) and polished.upper_bound_ == plain.upper_bound_
    model = domain(refine="bnb").fit_lists(lists)
    assert model.f_macro_ == pytest.approx(7 / 11, abs=TOL) == brute_force(lists)["f_macro"]
    np.testing.assert_array_equal(model.cuts_, [4, 4])
    assert model.info_["refine_status"] == "proved" and model.upper_bound_ - model.lower_bound_ <= 1e-9
    assert model.info_["root_upper_bound"] == pytest.approx(0.65, abs=TOL)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances())
def test_bnb_finds_the_brute_force_optimum(instance):
    lists, beta = instance
    truth = brute_force(lists, beta)["f_macro"]
    model = domain(beta=beta, refine="bnb", gap_tol=0.0).fit_lists(lists)
    assert model.info_["refine_status"] == "proved"
    assert model.f_macro_ == pytest.approx(truth, abs=TOL)
    assert model.lower_bound_ == model.f_macro_ and truth <= model.upper_bound_ + TOL
    assert model.upper_bound_ - model.lower_bound_ <= TOL
    plain = domain(beta=beta).fit_lists(lists)
    assert plain.lower_bound_ <= model.lower_bound_ + TOL and model.upper_bound_ <= plain.upper_bound_ + TOL
    kept = lists.n_relevant > 0
    recomputed = evaluate_cuts(lists.select_labels(kept), model.cuts_[kept], beta)["f_macro"]
    assert recomputed == pytest.approx(model.f_macro_, abs=TOL)
    # with the default tolerance the result is within gap_tol of the optimum
    loose = domain(beta=beta, refine="bnb").fit_lists(lists)
    assert truth - 1e-9 - TOL <= loose.f_macro_ <= truth + TOL and truth <= loose.upper_bound_ + TOL


@st.composite
def instances_with_twins(draw):
    """Up to 3 distinct labels over up to 6 documents, each repeated 1-3 times (at most 5 labels): identical
    labels are the case where branching on one label at a time cannot lower the bound (orbital branching)."""
    lists, beta = draw(small_instances(max_labels=3, max_docs=6))
    repeats = draw(st.lists(st.integers(1, 3), min_size=lists.n_labels, max_size=lists.n_labels))
    index = np.repeat(np.arange(lists.n_labels), repeats)[:5]
    order = draw(st.permutations(list(range(len(index)))))
    twins = lists.select_labels(index[np.array(order)])
    assume(np.any(twins.n_relevant > 0))
    return twins, beta


# three identical labels and a fourth: at the second branching the identical labels no longer share one
# range, so the orbit must hold only those with the same range (found by a mutation of that check)
TWINS_WITH_SPLIT_ORBIT = (
    RankedLists.from_relevance_lists(
        [[0, 1, 0, 0, 0, 1], [0, 1, 0, 0, 0, 1], [0, 1, 1, 1, 0, 1], [0, 1, 0, 0, 0, 1]], [2, 2, 4, 2], num_docs=6
    ),
    1.0,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances_with_twins())
@example(TWINS_WITH_SPLIT_ORBIT)
def test_bnb_with_identical_labels_finds_the_brute_force_optimum(instance):
    lists, beta = instance
    truth = brute_force(lists, beta)["f_macro"]
    model = domain(beta=beta, refine="bnb", gap_tol=0.0).fit_lists(lists)
    assert model.info_["refine_status"] == "proved"
    assert model.f_macro_ == pytest.approx(truth, abs=TOL)
    assert truth <= model.upper_bound_ + TOL and model.upper_bound_ - model.lower_bound_ <= TOL


def example_like(n_labels=80) -> RankedLists:
    # The published Example.txt: identical labels "3 | 1 0 0 0 1 1 0" over 7 documents; the hull maximiser
    # sits between 53 and 54 labels at (1/2, 1) (no fixed point), the rest at (1, 1/3).
    return RankedLists.from_relevance_lists([[1, 0, 0, 0, 1, 1, 0]] * n_labels, [3] * n_labels, num_docs=7)


def test_identical_labels_are_branched_as_one_orbit():
    model = domain(refine="bnb").fit_lists(example_like())
    assert model.info_["label_classes"] == 1
    assert model.info_["refine_status"] == "proved" and model.info_["nodes"] <= 100
    assert model.f_macro_ == pytest.approx(0.7179654, abs=1e-7)  # the sweep's state: 53 / 27 labels
    assert model.upper_bound_ - model.lower_bound_ <= 1e-9  # the hull bound was 0.7179677
    assert np.count_nonzero(model.cuts_ == 6) == 53 and np.count_nonzero(model.cuts_ == 1) == 27


def test_label_classes_compare_candidates_exactly():
    lists = RankedLists.from_relevance_lists(
        [[1, 0, 1], [1, 0, 1], [1, 1, 0], [1, 0, 1, 0], [1, 0, 1]], [2, 2, 2, 2, 3], num_docs=4
    )
    label_class = domain()._label_classes(build_candidates(lists))
    # labels 0, 1 and 3 have the same candidates (a truncated list of length 3 or a full one ending in 0);
    # label 4 differs only in s_k
    assert label_class[0] == label_class[1] == label_class[3]
    assert len({label_class[0], label_class[2], label_class[4]}) == 3


def test_budget_is_reported_with_valid_bounds():
    model = domain(refine="bnb", max_nodes=20).fit_lists(example_like())
    assert model.info_["refine_status"] == "budget" and model.info_["nodes"] <= 20
    assert model.lower_bound_ <= 0.7179654 <= model.upper_bound_
    assert model.upper_bound_ == pytest.approx(0.7179677, abs=1e-7)  # still the root's hull bound
    assert model.info_["gap"] == pytest.approx(model.upper_bound_ - model.lower_bound_)
    # one node: the root only
    lists = RankedLists.from_relevance_lists([[0, 0, 0, 1, 0, 0], [1, 0, 1, 1, 0, 1]], [1, 4], num_docs=6)
    model = domain(refine="bnb", max_nodes=1).fit_lists(lists)
    assert model.info_["refine_status"] == "budget" and model.info_["nodes"] == 1
    assert model.lower_bound_ <= 7 / 11 <= model.upper_bound_ and model.upper_bound_ == pytest.approx(0.65)


# ------------------------------------------------------------------ real data
@pytest.fixture
def espgame(real_data):
    return DATASETS.get("ranked_lists")(path="berger/ESPGameNN.txt", num_docs=2080, name="espgame").load()


@pytest.mark.realdata
@pytest.mark.parametrize(
    "beta, optimum",
    [
        (1.0, 0.5685122),  # docs/theory.md#reference-numbers: the sweep's state is optimal
        (0.5, 0.617180),
        # docs/theory.md#reference-numbers: the plain sweep's best state is 0.751677 (gap 7e-6 to its hull bound);
        # the proved optimum is higher
        (4.0, 0.7516782),
    ],
)
def test_espgame_optimum_is_proved(espgame, beta, optimum):
    plain = domain(beta=beta).fit_lists(espgame)
    model = domain(beta=beta, refine="bnb").fit_lists(espgame)
    assert model.info_["refine_status"] == "proved"
    assert model.upper_bound_ - model.lower_bound_ <= 1e-9
    assert model.f_macro_ == pytest.approx(optimum, abs=1e-7)
    assert evaluate_cuts(espgame, model.cuts_, beta)["f_macro"] == pytest.approx(model.f_macro_, abs=TOL)
    assert model.lower_bound_ >= plain.lower_bound_ and model.upper_bound_ <= plain.upper_bound_
    assert model.info_["root_upper_bound"] == pytest.approx(plain.upper_bound_, abs=1e-12)  # other summation order
    assert 1 <= model.info_["nodes"] <= 1000


@pytest.mark.realdata
def test_example_optimum_is_proved(real_data):
    example = DATASETS.get("ranked_lists")(path="berger/Example.txt", num_docs=7, name="example",
                                           allow_duplicate_ids=True).load()
    model = domain(refine="bnb").fit_lists(example)
    assert model.info_["refine_status"] == "proved" and model.upper_bound_ - model.lower_bound_ <= 1e-9
    assert model.f_macro_ == pytest.approx(0.7179654, abs=1e-7)
    assert model.fixed_point_exists_ is False  # a property of the hull, unchanged by the refinement
