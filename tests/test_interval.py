"""The interval for the F-macro of fitted thresholds on new documents (xmlthresh.strategies.interval): it
follows the seed bit for bit, it widens when the fit split shrinks, bad settings are one clear error, and a
holdout job reports it."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies.interval import check_interval, out_of_bootstrap_interval
from xmlthresh.strategies.registry import STRATEGIES


def _split(n_docs: int, seed: int = 0) -> ScoredSplit:
    rng = np.random.default_rng(seed)
    labels = rng.random((n_docs, 25)) < np.linspace(0.03, 0.3, 25)
    return ScoredSplit(labels * 0.4 + rng.random((n_docs, 25)), labels)


@pytest.mark.parametrize("name", ["independent", "domain"])
def test_the_same_seed_gives_the_same_interval_bit_for_bit_and_another_seed_another(name):
    strategy = STRATEGIES.build(name, {"beta": 1.0})
    split = _split(300)
    first = out_of_bootstrap_interval(strategy, split, seed=3)
    assert first == out_of_bootstrap_interval(strategy, split, seed=3)
    assert first["f_macro_interval"] != out_of_bootstrap_interval(strategy, split, seed=4)["f_macro_interval"]
    low, high = first["f_macro_interval"]
    assert 0 <= low < high <= 1 and first["interval_level"] == 0.9 and first["interval_resamples"] == 30


def test_the_interval_widens_when_the_fit_split_shrinks():
    strategy = STRATEGIES.build("domain", {"beta": 1.0})
    widths = []
    for n_docs in (1600, 400, 100):
        low, high = out_of_bootstrap_interval(strategy, _split(n_docs, seed=1), seed=0)["f_macro_interval"]
        widths.append(high - low)
    assert widths[0] < widths[1] < widths[2], widths


def test_a_higher_level_gives_a_wider_interval_from_the_same_refits():
    strategy = STRATEGIES.build("independent", {"beta": 1.0})
    narrow = out_of_bootstrap_interval(strategy, _split(300), level=0.5, seed=0)["f_macro_interval"]
    wide = out_of_bootstrap_interval(strategy, _split(300), level=0.95, seed=0)["f_macro_interval"]
    assert wide[0] <= narrow[0] and narrow[1] <= wide[1]


@pytest.mark.parametrize("level, resamples, message", [
    (0, 30, "level must be a number in"), (1.0, 30, "level must be a number in"), ("high", 30, "level must be"),
    (0.9, 1, "resamples must be an integer >= 2"), (0.9, 2.5, "resamples must be an integer"),
    (0.9, True, "resamples must be an integer"),
])
def test_bad_interval_settings_are_one_clear_error(level, resamples, message):
    with pytest.raises(ValueError, match=message):
        check_interval(level, resamples)


def test_the_seen_label_share_follows_good_turing():
    from xmlthresh.strategies.interval import seen_label_share

    assert seen_label_share(np.array([3, 5, 1, 2]), 100, 100) == 1.0  # every label seen: nothing unseen occurs
    assert seen_label_share(np.array([0, 0, 5, 2]), 100, 100) == 1.0  # nothing seen once: no unseen mass
    few, many = (seen_label_share(np.array([0, 0, 0, 1, 1, 4]), 50, n_new) for n_new in (10, 1000))
    assert 0 < many < few < 1  # more new documents: more of the unseen labels occur
    # two labels seen once in 50 documents, three unseen: 2 * 1000 / (50 * 3) occurrences each expected
    expected_unseen = 3 * (1 - np.exp(-2 * 1000 / (50 * 3)))
    expected_seen = 2 * (1 - (1 - 1 / 50) ** 1000) + (1 - (1 - 4 / 50) ** 1000)
    assert many == pytest.approx(expected_seen / (expected_seen + expected_unseen), rel=1e-12)


def test_a_holdout_fit_reports_the_interval_when_asked_and_not_by_default():
    from xmlthresh.data.multilabel import ScoreData
    from xmlthresh.run.protocols import fit_and_evaluate

    fit, test = _split(200, seed=2), _split(300, seed=3)
    data = ScoreData(name="toy", splits={"validation": fit, "test": test})
    strategy = STRATEGIES.build("independent", {"beta": 1.0})
    assert "f_macro_interval" not in fit_and_evaluate(strategy, data, protocol="holdout")
    result = fit_and_evaluate(strategy, data, protocol="holdout", interval={"level": 0.8, "resamples": 10})
    low, high = result["f_macro_interval"]
    assert (result["f_macro_interval_low"], result["f_macro_interval_high"]) == (low, high) and low < high
    assert result["interval_level"] == 0.8 and result["interval_resamples"] == 10 and result["interval_seconds"] > 0


def _f_macro_on(strategy, test: ScoredSplit) -> float:
    from xmlthresh.metrics import evaluate

    present = test.n_relevant > 0
    tp, predicted = strategy.counts(test)
    return evaluate(tp[present], predicted[present], test.n_relevant[present], strategy.beta)["f_macro"]


@pytest.mark.parametrize("name", ["independent", "pooled"])
def test_the_interval_covers_the_test_f_macro_when_test_documents_follow_the_fit_distribution(name):
    """Fit and test splits drawn from the same generator: a 0.9 interval from the fit split alone holds the test
    F-macro in most repetitions, and a test split with weaker scores falls outside it (so the check can fail)."""
    inside = outside_when_shifted = 0
    for repetition in range(20):
        fit, test = _split(200, seed=repetition), _split(200, seed=1000 + repetition)
        strategy = STRATEGIES.build(name, {"beta": 1.0}).fit_scores(fit)
        low, high = out_of_bootstrap_interval(strategy, fit, seed=repetition, new_documents=200)["f_macro_interval"]
        inside += low <= _f_macro_on(strategy, test) <= high
        labels = test.labels.toarray()
        weaker = ScoredSplit(np.asarray(test.scores) - 0.2 * labels, labels)
        outside_when_shifted += not low <= _f_macro_on(strategy, weaker) <= high
    assert inside >= 16 and outside_when_shifted >= 16
