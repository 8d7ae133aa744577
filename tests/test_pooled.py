"""The recommended transfer rule ``pooled`` and its parts: the cap on documents predicted per fit positive
(xmlthresh.data.objective.with_predicted_cap), the ``top`` fallback for labels without a fit positive, and the
transfer study's achievable reference (xmlthresh.run.references)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xmlthresh
from xmlthresh.data.candidates import Candidates
from xmlthresh.data.objective import check_predicted_cap, with_predicted_cap
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.run.references import achievable_f_macro
from xmlthresh.strategies import STRATEGIES
from xmlthresh.strategies.pooled import (DEFAULT_FALLBACK, DEFAULT_MAX_PREDICTED_PER_POSITIVE, DEFAULT_SMOOTHING,
                                         PooledStrategy)
from xmlthresh.strategies.pooling import top_document_thresholds

CAPPED = ("domain", "independent", "coordinate")


def _scores(seed: int, n_docs: int = 150, n_labels: int = 25):
    rng = np.random.default_rng(seed)
    rates = np.linspace(0.01, 0.4, n_labels)
    labels = rng.random((n_docs, n_labels)) < rates
    scores = labels * rng.uniform(0.0, 0.8, n_labels) + rng.random((n_docs, n_labels))
    return scores, labels


def test_the_cap_keeps_cuts_of_at_most_ratio_times_the_positives_and_gives_an_emptied_label_the_cap():
    # label 0: s = 2, candidates at cuts 1, 5, 9; label 1: s = 1, its positive at rank 7 (cut 7), 10 documents
    candidates = Candidates(np.array([0, 3, 4]), np.array([1, 2, 2, 1]), np.array([1, 5, 9, 7]), np.array([2, 1]), 10)
    capped = with_predicted_cap(candidates, 3.0, np.array([10, 10]))
    assert capped.cand_ptr.tolist() == [0, 2, 3]
    assert capped.cut.tolist() == [1, 5, 3] and capped.tp.tolist() == [1, 2, 0]
    assert with_predicted_cap(candidates, np.inf, np.array([10, 10])) is candidates


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), True, "20"])
def test_a_nonsense_cap_is_one_clear_error(value):
    with pytest.raises(ValueError, match="max_predicted_per_positive must be a number > 0"):
        check_predicted_cap(value)
    with pytest.raises(ValueError, match="max_predicted_per_positive must be a number > 0"):
        xmlthresh.fit_thresholds(*_scores(0), strategy="domain", max_predicted_per_positive=value)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), name=st.sampled_from(CAPPED), ratio=st.sampled_from([1.0, 2.5, 8.0]),
       smoothing=st.sampled_from([0.0, 5.0]))
def test_a_capped_fit_predicts_at_most_ratio_documents_per_fit_positive(seed, name, ratio, smoothing):
    scores, labels = _scores(seed)
    result = xmlthresh.fit_thresholds(scores, labels, strategy=name, smoothing=smoothing,
                                      max_predicted_per_positive=ratio)
    predicted = (scores >= result.thresholds).sum(axis=0)
    positives = labels.sum(axis=0)
    assert np.all(predicted <= np.maximum(np.floor(ratio * positives), 1) * (positives > 0))
    # so in total: micro precision >= micro recall / ratio on the fit documents
    tp = (labels & (scores >= result.thresholds)).sum()
    assert tp / max(predicted.sum(), 1) >= tp / positives.sum() / ratio - 1e-12


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), name=st.sampled_from(CAPPED))
def test_no_cap_is_the_rule_of_today_bit_for_bit(seed, name):
    scores, labels = _scores(seed)
    plain = xmlthresh.fit_thresholds(scores, labels, strategy=name)
    for off in (None, float("inf")):
        same = xmlthresh.fit_thresholds(scores, labels, strategy=name, max_predicted_per_positive=off)
        assert np.array_equal(plain.thresholds, same.thresholds) and plain.f_macro == same.f_macro


def test_fallback_top_predicts_from_the_best_fit_document_unless_the_scores_tie_there():
    scores, labels = _scores(1)
    labels[:, 0] = labels[:, 1] = False
    scores[:, 1] = 0.25  # a ranker that gives a label without training positives one constant score
    result = xmlthresh.fit_thresholds(scores, labels, strategy="independent", fallback="top")
    assert result.thresholds[0] == scores[:, 0].max()
    assert result.thresholds[1] == np.inf
    assert result.report()["n_labels_fallback"] == 1
    plain = xmlthresh.fit_thresholds(scores, labels, strategy="independent")
    assert np.array_equal(plain.thresholds[2:], result.thresholds[2:])


def test_top_document_thresholds_on_a_ranking():
    split = ScoredSplit(scores=np.array([[0.9, 0.5, 0.1], [0.3, 0.5, 0.2], [0.1, 0.4, 0.7]]),
                        labels=np.zeros((3, 3), bool), name="t")
    assert top_document_thresholds(split.ranking()).tolist() == [0.9, np.inf, 0.7]


def test_fallback_top_needs_score_space():
    with pytest.raises(ValueError, match="fallback=top gives a score threshold"):
        xmlthresh.fit_thresholds(*_scores(0), strategy="domain", fallback="top", pooling_space="rank")


def test_pooled_is_domain_with_its_documented_defaults():
    assert STRATEGIES.get("pooled") is PooledStrategy
    params = PooledStrategy().get_params()
    assert (params["smoothing"], params["max_predicted_per_positive"], params["fallback"]) == (
        DEFAULT_SMOOTHING, DEFAULT_MAX_PREDICTED_PER_POSITIVE, DEFAULT_FALLBACK)
    scores, labels = _scores(4)
    labels[:, 0] = False
    pooled = xmlthresh.fit_thresholds(scores, labels, strategy="pooled")
    domain = xmlthresh.fit_thresholds(scores, labels, strategy="domain", smoothing=DEFAULT_SMOOTHING,
                                      max_predicted_per_positive=DEFAULT_MAX_PREDICTED_PER_POSITIVE,
                                      fallback=DEFAULT_FALLBACK)
    assert np.array_equal(pooled.thresholds, domain.thresholds) and pooled.f_macro == domain.f_macro
    assert np.isfinite(pooled.thresholds[0])


def test_the_yaml_preset_equals_the_class_defaults():
    from pathlib import Path

    import yaml

    preset = yaml.safe_load((Path(xmlthresh.__file__).parent / "conf" / "strategy" / "pooled.yaml").read_text())
    defaults = PooledStrategy().get_params()
    for key in ("smoothing", "max_predicted_per_positive", "fallback"):
        assert preset[key] == defaults[key]


def test_the_achievable_reference_follows_the_seed_and_leaves_the_strategy_unfitted():
    scores, labels = _scores(5, n_docs=200)
    split = ScoredSplit(scores=scores, labels=labels, name="test")
    strategy = STRATEGIES.build("independent", {})
    first = achievable_f_macro(strategy, split, seed=3)
    assert first == achievable_f_macro(strategy, split, seed=3)
    assert first["achievable_f_macro"] != achievable_f_macro(strategy, split, seed=4)["achievable_f_macro"]
    assert 0.0 < first["achievable_f_macro"] < 1.0 and first["achievable_f_macro_se"] > 0
    assert not hasattr(strategy, "cuts_")
    # fitted on half of the documents and scored on the other half: below the in-sample optimum
    assert first["achievable_f_macro"] < STRATEGIES.build("domain", {}).fit_scores(split).f_macro_
