"""The plug-in strategy ``pu`` and its calibration, against brute force over the expected-count objective."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle import f_beta
from xmlthresh.strategies.calibration import ScoreCalibration
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies import STRATEGIES

PU = STRATEGIES.get("pu")


def expected_brute_force(scores: np.ndarray, eta: np.ndarray, beta: float, floor: float = 0.0) -> float:
    """Max of F_beta(mean E tp/E pred, mean E tp/E pos) over every per-label score threshold (every distinct
    score of the label), a label with no qualifying threshold predicting nothing; labels with E pos = 0 out."""
    per_label = []
    for k in range(scores.shape[1]):
        pos = eta[:, k].sum()
        if pos <= 0:
            continue
        options = []
        for t in np.unique(scores[:, k]):
            hit = scores[:, k] >= t
            tp, pred = eta[hit, k].sum(), hit.sum()
            if tp > 0 and tp / pred >= floor:
                options.append((tp / pred, tp / pos))
        per_label.append(options or [(0.0, 0.0)])
    n = len(per_label)
    return max(float(f_beta(sum(p for p, _ in c) / n, sum(r for _, r in c) / n, beta))
               for c in itertools.product(*per_label))


@st.composite
def probability_instances(draw):
    """Dense scores that are probabilities (calibration='none'), with ties, and labels drawn from them."""
    m = draw(st.integers(2, 6))
    n = draw(st.integers(1, 3))
    levels = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.8, 1.0])
    eta = np.array(draw(st.lists(levels, min_size=m * n, max_size=m * n))).reshape(m, n)
    labels = np.array(draw(st.lists(st.booleans(), min_size=m * n, max_size=m * n))).reshape(m, n)
    labels[0, 0] = True  # the calibration needs a positive somewhere
    eta[0, 0] = max(eta[0, 0], 0.1)
    beta = draw(st.sampled_from([0.5, 1.0, 2.0]))
    floor = draw(st.sampled_from([0.0, 0.3, 0.6]))
    return eta, labels, beta, floor


@settings(max_examples=200, deadline=None)
@given(probability_instances())
def test_pu_with_the_true_eta_brackets_the_expected_count_brute_force(instance):
    eta, labels, beta, floor = instance
    model = PU(beta=beta, calibration="none", min_precision=floor).fit_scores(ScoredSplit(eta, labels))
    brute = expected_brute_force(eta, eta, beta, floor)
    assert model.lower_bound_ <= brute + 1e-12
    assert brute <= model.upper_bound_ + 1e-12
    if model.upper_bound_ - model.lower_bound_ < 1e-13:
        assert model.lower_bound_ == pytest.approx(brute, abs=1e-12)
    # every chosen threshold meets the floor in expectation
    for k, t in enumerate(model.score_thresholds_):
        if np.isfinite(t):
            hit = eta[:, k] >= t
            assert eta[hit, k].sum() >= floor * hit.sum() - 1e-12


def test_pu_certifies_the_plugin_optimum_on_a_larger_instance():
    rng = np.random.default_rng(0)
    eta = rng.beta(0.5, 3.0, size=(400, 30))
    labels = rng.random(eta.shape) < eta
    model = PU(calibration="none").fit_scores(ScoredSplit(eta, labels))
    assert 0 <= model.upper_bound_ - model.lower_bound_ < 1.0 / 30**2  # the sweep's gap is O(1/n^2)
    assert model.info_["expected_precision"] > 0 and model.info_["expected_recall"] > 0


def _split(rng, m=300, n=12, sparse=False):
    z = rng.normal(size=(m, n))
    eta = 1.0 / (1.0 + np.exp(-(2.0 * z - 2.0)))
    labels = rng.random((m, n)) < eta
    scores = z
    if sparse:  # keep the top 5 labels of every document
        top = np.argsort(-scores, axis=1)[:, :5]
        rows = np.repeat(np.arange(m), 5)
        scores = sp.csr_matrix((scores[rows, top.ravel()], (rows, top.ravel())), shape=(m, n))
    return ScoredSplit(scores, labels)


@pytest.mark.parametrize("calibration", ["isotonic", "platt", "pooled"])
@pytest.mark.parametrize("sparse", [False, True])
def test_pu_fits_and_transfers(calibration, sparse):
    rng = np.random.default_rng(1)
    fit, test = _split(rng, sparse=sparse), _split(rng, sparse=sparse)
    model = PU(calibration=calibration).fit_scores(fit)
    assert model.score_thresholds_.shape == (12,)
    metrics = model.evaluate_scores(test)
    assert 0 < metrics["f_macro"] <= 1
    assert model.lower_bound_ <= model.upper_bound_
    again = PU(calibration=calibration).fit_scores(fit)
    assert np.array_equal(again.score_thresholds_, model.score_thresholds_)  # deterministic, bit for bit


def test_target_eval_optimises_on_the_predicted_split_without_its_labels():
    rng = np.random.default_rng(2)
    fit, test = _split(rng), _split(rng)
    model = PU(target="eval").fit_scores(fit)
    assert model.kind == "uses test scores"
    thresholds = model.thresholds_for(test)
    relabelled = ScoredSplit(test.scores, sp.csr_matrix(test.labels.shape, dtype=bool).toarray() | True)
    assert np.array_equal(thresholds, model.thresholds_for(relabelled))  # labels of the split play no part
    assert not np.array_equal(thresholds, model.thresholds_for(fit))
    assert "eval_objective_lower_bound" in model.info_
    assert PU(target="fit").kind == "deterministic"


def test_a_label_without_a_fit_positive_has_a_finite_threshold_where_its_scores_reach_the_pooled_map():
    rng = np.random.default_rng(3)
    split = _split(rng)
    labels = split.labels.toarray()
    labels[:, 4] = False
    model = PU().fit_scores(ScoredSplit(split.scores, labels))
    assert np.isfinite(model.score_thresholds_[4]) or model.score_thresholds_[4] == -np.inf
    assert model.calibration_.weight_[4] == 0.0


def _unseen_label_scored_below_every_positive(rng) -> tuple[ScoredSplit, ScoredSplit]:
    """Label 4 has no fit positive and scores below every fit positive of every label (as a ranker trained
    without a positive scores it), so its pooled-map probability is 0; it has positives on the test split."""
    splits = []
    for _ in range(2):
        split = _split(rng)
        scores, labels = np.asarray(split.scores, dtype=np.float64).copy(), split.labels.toarray()
        scores[:, 4] = 1e-4 * rng.random(len(scores)) - 10.0  # below every other score (z ~ N(0, 1))
        labels[:, 4] = False
        splits.append((scores, labels))
    (fit_scores, fit_labels), (test_scores, test_labels) = splits
    test_scores[0, 4] = -9.0  # above every fit score of the label
    test_labels[0, 4] = True
    return ScoredSplit(fit_scores, fit_labels), ScoredSplit(test_scores, test_labels, native_threshold=0.0)


def test_a_label_scored_below_the_pooled_map_predicts_nothing_unless_a_fallback_says_otherwise():
    fit, test = _unseen_label_scored_below_every_positive(np.random.default_rng(5))
    plain = PU().fit_scores(fit)
    assert plain.score_thresholds_[4] == np.inf and plain.info_["n_labels_fallback"] == 0
    fit = ScoredSplit(fit.scores, fit.labels, native_threshold=-0.5)
    for fallback, expected in [("never", np.inf), ("native", -0.5), ("top", fit.scores[:, 4].max())]:
        model = PU(fallback=fallback).fit_scores(fit)
        assert model.score_thresholds_[4] == expected
        np.testing.assert_array_equal(np.delete(model.score_thresholds_, 4), np.delete(plain.score_thresholds_, 4))
    pooled = PU(fallback="pooled").fit_scores(fit)
    assert np.isfinite(pooled.score_thresholds_[4]) and pooled.info_["n_labels_fallback"] == 1
    transductive = PU(target="eval", fallback="native").fit_scores(fit)
    assert transductive.thresholds_for(test)[4] == -0.5


def test_a_transductive_rule_keeps_its_fallback_through_save_and_load(tmp_path):
    import xmlthresh
    from xmlthresh.result import ThresholdResult

    fit, test = _unseen_label_scored_below_every_positive(np.random.default_rng(6))
    result = xmlthresh.fit_thresholds(np.asarray(fit.scores), fit.labels.toarray(), "pu", target="eval",
                                      fallback="top")
    loaded = ThresholdResult.load(result.save(tmp_path / "rule.json"))
    np.testing.assert_array_equal(loaded.predict(np.asarray(test.scores)).toarray(),
                                  result.predict(np.asarray(test.scores)).toarray())
    assert loaded.predict(np.asarray(test.scores)).toarray()[:, 4].sum() >= 1


def test_pu_skips_ranked_lists_with_a_reason():
    lists = RankedLists.from_relevance_lists([[1, 0]], [1], num_docs=2)
    skipped, reason = PU().skip(lists)
    assert skipped and "scores" in reason


@pytest.mark.parametrize("bad, match", [
    ({"calibration": "magic"}, "calibration"), ({"target": "test"}, "target"),
    ({"shrinkage": -1.0}, "shrinkage"), ({"min_precision": 2.0}, "min_precision"), ({"fallback": "all"}, "fallback"),
])
def test_bad_parameters_are_one_clear_error(bad, match):
    with pytest.raises(ValueError, match=match):
        PU(**bad).fit_scores(_split(np.random.default_rng(0)))


def test_a_calibration_that_cannot_be_fitted_is_a_clear_error():
    constant = ScoredSplit(np.ones((5, 2)), np.eye(5, 2, dtype=bool))
    with pytest.raises(ValueError, match="single distinct score"):
        PU().fit_scores(constant)
    with pytest.raises(ValueError, match="probabilities"):
        PU(calibration="none").fit_scores(ScoredSplit(np.full((3, 1), 2.0), np.ones((3, 1), bool)))


# ---------------------------------------------------------------------- calibration
def test_isotonic_calibration_is_monotone_per_label_and_shrunk_towards_pooled():
    rng = np.random.default_rng(4)
    split = _split(rng, m=2000)
    cal = ScoreCalibration("isotonic", shrinkage=10.0).fit(split)
    grid = np.repeat(np.linspace(-3, 3, 50)[:, None], 12, axis=1)
    eta = cal.transform(grid)
    assert np.all(np.diff(eta, axis=0) >= -1e-12)
    assert np.all((0 <= eta) & (eta <= 1))
    positives = np.asarray(split.labels.sum(axis=0)).ravel()
    assert np.allclose(cal.weight_, positives / (positives + 10.0))


def test_platt_calibration_recovers_a_logistic_truth():
    rng = np.random.default_rng(5)
    z = rng.normal(size=(20000, 2))
    eta = 1.0 / (1.0 + np.exp(-(2.0 * z - 2.0)))
    labels = rng.random(z.shape) < eta
    cal = ScoreCalibration("platt", shrinkage=0.0).fit(ScoredSplit(z, labels))
    assert cal.platt_a_ == pytest.approx([2.0, 2.0], abs=0.15)
    assert cal.platt_b_ == pytest.approx([-2.0, -2.0], abs=0.15)


def test_unscored_probability_of_sparse_scores():
    # label 0: 2 scored documents, 1 unscored positive out of 3 unscored documents
    scores = sp.csr_matrix(np.array([[0.9, 0.0], [0.1, 0.5], [0.0, 0.4], [0.0, 0.3], [0.0, 0.2]]))
    labels = np.array([[1, 0], [0, 1], [1, 0], [0, 0], [0, 1]], dtype=bool)
    cal = ScoreCalibration("isotonic", shrinkage=0.0).fit(ScoredSplit(scores, labels))
    assert cal.unscored_eta_[0] == pytest.approx(1 / 3)
    assert cal.unscored_eta_[1] == pytest.approx(0.0)


def test_cross_fitted_calibration_follows_the_seed():
    rng = np.random.default_rng(6)
    fit = _split(rng, m=400)
    a = PU(seed=0).fit_scores(fit)
    b = PU(seed=0).fit_scores(fit)
    c = PU(seed=1).fit_scores(fit)
    assert a.info_["calibration_cross_fitted"]
    assert np.array_equal(a.score_thresholds_, b.score_thresholds_)
    assert a.lower_bound_ != c.lower_bound_  # other folds, other out-of-fold probabilities
    plain = PU(calibration_folds=0).fit_scores(fit)
    assert not plain.info_["calibration_cross_fitted"]


@pytest.mark.parametrize("folds", [1, -2, 2.5, True])
def test_bad_calibration_folds(folds):
    with pytest.raises(ValueError, match="calibration_folds"):
        PU(calibration_folds=folds).fit_scores(_split(np.random.default_rng(0)))
