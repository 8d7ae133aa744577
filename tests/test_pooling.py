"""Partial pooling of score thresholds across labels of similar fit frequency (xmlthresh.strategies.pooling):
strength 0 is the per-label rule bit for bit, infinite strength the group references, fallback=never the
thresholds of today; the references, groups and the cross-fitted strength as documented."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xmlthresh
from xmlthresh.strategies.pooling import (MIN_GROUP, STRENGTH_GRID, check_pooling, cross_fitted_strength,
                                          frequency_groups, group_references, pool_thresholds)

POOLED_STRATEGIES = ("independent", "domain", "coordinate")


def _scores(seed: int, n_docs: int = 120, n_labels: int = 30):
    rng = np.random.default_rng(seed)
    rates = np.linspace(0.01, 0.3, n_labels)
    labels = rng.random((n_docs, n_labels)) < rates
    scores = labels * rng.uniform(0.1, 0.6, n_labels) + rng.random((n_docs, n_labels)) * rng.uniform(0.5, 2, n_labels)
    return scores, labels


def test_groups_are_powers_of_two_of_the_fit_positives():
    assert frequency_groups(np.array([0, 1, 2, 3, 4, 7, 8, 1000])).tolist() == [-1, 0, 1, 1, 2, 2, 3, 9]


def test_a_small_group_borrows_from_its_neighbours_and_infinite_thresholds_are_left_out():
    thresholds = np.array([1.0, 2.0, np.inf, 3.0, 4.0, 5.0, 6.0, -np.inf, 10.0])
    groups = np.array([0, 0, 0, 1, 1, 1, 1, 1, 5])
    references = group_references(thresholds, groups)
    assert references[0] == np.median([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])  # widened to groups -1..1: six finite
    assert references[1] == np.median([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert references[5] == np.median([3.0, 4.0, 5.0, 6.0, 10.0])  # groups 1..9: the first width with MIN_GROUP
    assert MIN_GROUP == 5


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), name=st.sampled_from(POOLED_STRATEGIES))
def test_strength_zero_and_fallback_never_is_the_per_label_rule_bit_for_bit(seed, name):
    scores, labels = _scores(seed)
    plain = xmlthresh.fit_thresholds(scores, labels, strategy=name)
    off = xmlthresh.fit_thresholds(scores, labels, strategy=name, pooling=0.0, fallback="never")
    assert np.array_equal(plain.thresholds, off.thresholds) and plain.f_macro == off.f_macro


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_infinite_strength_gives_every_label_with_a_finite_threshold_its_group_reference(seed):
    scores, labels = _scores(seed)
    plain = xmlthresh.fit_thresholds(scores, labels, strategy="independent").thresholds
    n_relevant = labels.sum(axis=0)
    pooled, info = pool_thresholds(plain, n_relevant, math.inf, "never")
    references = group_references(plain, frequency_groups(n_relevant))
    for k, (before, after) in enumerate(zip(plain, pooled)):
        if np.isfinite(before) and n_relevant[k] > 0:
            assert after == references[int(frequency_groups(n_relevant[k:k + 1])[0])]
        else:
            assert after == before or (np.isnan(after) and np.isnan(before))
    assert info["pooling_strength"] == math.inf


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), strength=st.floats(0.1, 100))
def test_a_finite_strength_moves_each_threshold_part_of_the_way_rare_labels_most(seed, strength):
    scores, labels = _scores(seed)
    plain = xmlthresh.fit_thresholds(scores, labels, strategy="independent").thresholds
    n_relevant = labels.sum(axis=0)
    pooled, _ = pool_thresholds(plain, n_relevant, strength, "never")
    full, _ = pool_thresholds(plain, n_relevant, math.inf, "never")
    moved = np.isfinite(plain) & (n_relevant > 0)
    weight = n_relevant[moved] / (n_relevant[moved] + strength)
    np.testing.assert_allclose(pooled[moved], weight * plain[moved] + (1 - weight) * full[moved], rtol=0, atol=1e-12)


def test_labels_without_a_fit_positive_get_their_fallback():
    thresholds = np.array([np.inf, 1.0, 2.0, 3.0, 4.0, 5.0])
    n_relevant = np.array([0, 1, 1, 2, 3, 40])
    assert pool_thresholds(thresholds, n_relevant, 0.0, "never")[0][0] == np.inf
    pooled, info = pool_thresholds(thresholds, n_relevant, 0.0, "pooled")
    assert pooled[0] == group_references(thresholds, frequency_groups(n_relevant))[0] and info["n_labels_fallback"] == 1
    assert np.array_equal(pooled[1:], thresholds[1:])
    assert pool_thresholds(thresholds, n_relevant, 0.0, "native", native=0.5)[0][0] == 0.5
    with pytest.raises(ValueError, match="fallback=native needs the ranker's own decision threshold"):
        pool_thresholds(thresholds, n_relevant, 0.0, "native")


def test_a_fit_with_fallback_pooled_predicts_labels_without_fit_positives_and_reports_it():
    scores, labels = _scores(3)
    labels[:, 0] = False  # no fit positive
    result = xmlthresh.fit_thresholds(scores, labels, strategy="independent", fallback="pooled")
    assert np.isfinite(result.thresholds[0])
    assert xmlthresh.fit_thresholds(scores, labels, strategy="independent").thresholds[0] == np.inf


def test_fallback_native_gives_labels_without_fit_positives_the_declared_threshold():
    scores, labels = _scores(4)
    labels[:, [0, 5]] = False
    for name in POOLED_STRATEGIES:
        result = xmlthresh.fit_thresholds(scores, labels, strategy=name, fallback="native", native_threshold=0.75)
        assert result.thresholds[0] == result.thresholds[5] == 0.75, name
        plain = xmlthresh.fit_thresholds(scores, labels, strategy=name)
        assert np.array_equal(result.thresholds[1:5], plain.thresholds[1:5]), name
    with pytest.raises(ValueError, match="fallback=native needs the ranker's own decision threshold"):
        xmlthresh.fit_thresholds(scores, labels, strategy="independent", fallback="native")
    with pytest.raises(ValueError, match="native_threshold must be a finite number or null"):
        xmlthresh.fit_thresholds(scores, labels, native_threshold="0.5")


@pytest.mark.parametrize("name", [*POOLED_STRATEGIES, "pooled", "pu"])
def test_a_strategy_with_fallback_native_warms_up_as_a_job_does(name):
    """A job warms the kernels up on a tiny split before the fit; that split declares a native threshold."""
    from xmlthresh.strategies import STRATEGIES

    STRATEGIES.build(name, {"beta": 1.0, "fallback": "native"}).warm_up(lists=False, scores=True)


@pytest.mark.parametrize("strength, fallback, message", [
    (-1, "never", "pooling must be a number >= 0"), ("strong", "never", "pooling must be a number >= 0"),
    (float("nan"), "never", "pooling must be a number >= 0"), (True, "never", "pooling must be a number >= 0"),
    (0, "all", "fallback must be one of never, pooled, native, top"),
])
def test_nonsense_pooling_settings_are_one_clear_error(strength, fallback, message):
    with pytest.raises(ValueError, match=message):
        check_pooling(strength, fallback)
    scores, labels = _scores(0)
    with pytest.raises(ValueError, match=message):
        xmlthresh.fit_thresholds(scores, labels, strategy="independent", pooling=strength, fallback=fallback)


def test_auto_strength_is_chosen_on_held_out_fit_documents_and_is_deterministic():
    scores, labels = _scores(11, n_docs=300)
    from xmlthresh.data.scores import ScoredSplit

    split = ScoredSplit(scores, labels)

    def fit(part):
        return xmlthresh.fit_thresholds(part.scores, part.labels.toarray(), strategy="independent").thresholds

    strength, means = cross_fitted_strength(fit, lambda part, t, lam: pool_thresholds(t, part.n_relevant, lam, "never")[0],
                                            split, 1.0)
    assert strength in STRENGTH_GRID and set(means) == set(STRENGTH_GRID)
    assert means[strength] == max(means.values())
    assert all(means[s] < means[strength] for s in STRENGTH_GRID if s < strength)  # the weakest of the best
    first = xmlthresh.fit_thresholds(scores, labels, strategy="independent", pooling="auto")
    again = xmlthresh.fit_thresholds(scores, labels, strategy="independent", pooling="auto")
    assert np.array_equal(first.thresholds, again.thresholds)


def test_rank_space_pooling_moves_the_cut_per_positive_and_leaves_extreme_cuts():
    from xmlthresh.strategies.pooling import pool_cuts

    n_relevant = np.array([1, 1, 1, 1, 1, 2, 0, 3])
    cuts = np.array([1, 2, 4, 8, 16, 0, 0, 100])  # label 5 predicts nothing, label 7 every document
    scored = np.full(8, 100)
    pooled, _ = pool_cuts(cuts, n_relevant, scored, 100, math.inf, "never")
    assert pooled[:5].tolist() == [4] * 5  # the median of log(cut / s) over the group of one positive
    assert pooled[5] == 0 and pooled[6] == 0 and pooled[7] == 100
    assert np.array_equal(pool_cuts(cuts, n_relevant, scored, 100, 0.0, "never")[0], cuts)
    with_fallback, _ = pool_cuts(cuts, n_relevant, scored, 100, 0.0, "pooled")
    assert with_fallback[6] == 4 and np.array_equal(np.delete(with_fallback, 6), np.delete(cuts, 6))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), strength=st.sampled_from([0.5, 4.0, math.inf, "auto"]))
def test_rank_space_pooling_fits_and_predicts_with_finite_or_extreme_thresholds(seed, strength):
    scores, labels = _scores(seed)
    result = xmlthresh.fit_thresholds(scores, labels, strategy="independent", pooling=strength, pooling_space="rank")
    assert result.thresholds.shape == (labels.shape[1],) and not np.isnan(result.thresholds).any()
    assert 0 <= result.f_macro <= 1


def test_rank_space_fallback_leaves_a_label_without_scored_documents_predicting_nothing():
    """A label with neither a fit positive nor a scored document (sparse top-k scores) keeps cut 0."""
    from xmlthresh.strategies.pooling import pool_cuts

    cuts, _ = pool_cuts(np.array([1, 2, 4, 8, 16, 0]), np.array([1, 1, 1, 1, 1, 0]), np.array([50, 50, 50, 50, 50, 0]),
                        100, 1.0, "pooled")
    assert cuts[5] == 0
    with pytest.raises(ValueError, match="fallback=native gives a score threshold"):
        check_pooling(1.0, "native", "rank")


def test_rank_space_fallback_on_sparse_top_k_scores_fits():
    import scipy.sparse as sp

    scores, labels = _scores(5)
    scores[:, -1] = 0.0
    labels[:, -1] = False  # no fit positive and, in the sparse matrix, no scored document
    result = xmlthresh.fit_thresholds(sp.csr_matrix(scores), labels, strategy="independent", pooling=2.0,
                                      pooling_space="rank", fallback="pooled")
    assert result.thresholds[-1] == np.inf
