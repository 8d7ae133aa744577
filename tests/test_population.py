"""The closed-form population of dense synthetic_xmc against large samples of its generator."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.datasets import DATASETS
from xmlthresh.run.population_metrics import population_optimum
from xmlthresh.strategies import STRATEGIES


def _dataset(**params):
    base = dict(n_labels=20, num_docs=60_000, num_validation_docs=100, labels_per_doc=3.0, zipf_exponent=1.1,
                signal=2.0, top_k=None, seed=4)
    return DATASETS.get("synthetic_xmc")(**{**base, **params})


def test_population_matches_a_large_sample():
    dataset = _dataset()
    population = dataset.population()
    test = dataset.load().splits["test"]
    # label priors: the share of documents relevant to each label
    assert test.n_relevant / test.n_docs == pytest.approx(population.prior, abs=4e-3)
    thresholds = np.linspace(-1.0, 3.0, 20)
    tp, predicted = test.counts_at(thresholds)
    precision, recall = population.precision_recall(thresholds)
    assert tp / predicted == pytest.approx(precision, abs=0.03)
    assert tp / test.n_relevant == pytest.approx(recall, abs=0.03)


def test_true_eta_is_the_posterior():
    dataset = _dataset(num_docs=200_000, n_labels=3)
    population = dataset.population()
    test = dataset.load().splits["test"]
    eta = population.eta(test.scores)
    labels = test.labels.toarray()
    for k in range(3):
        bins = np.digitize(eta[:, k], [0.2, 0.4, 0.6, 0.8])
        for b in range(5):
            inside = bins == b
            if inside.sum() > 2000:
                assert labels[inside, k].mean() == pytest.approx(eta[inside, k].mean(), abs=0.02)


def test_population_optimum_dominates_every_strategy_and_is_certified():
    dataset = _dataset(num_docs=100)
    population = dataset.population()
    best = population_optimum(population)
    assert best["upper_bound"] - best["f_macro"] < 1e-4
    validation = _dataset(num_validation_docs=5000).load().splits["validation"]
    for name in ("independent", "domain", "pu"):
        model = STRATEGIES.get(name)().fit_scores(validation)
        assert population.f_macro(model.score_thresholds_) <= best["upper_bound"] + 1e-12


def test_no_population_for_top_k_scores():
    assert _dataset(top_k=5).population() is None


def test_population_optimum_with_a_saturating_recall():
    """With signal >= 2.3 the recall of the lowest grid thresholds rounds to exactly 1; the sweep still needs a
    strictly increasing recall per label and the optimum must not fall below a threshold vector's value."""
    from xmlthresh.datasets.synthetic_xmc_posterior import XmcPopulation

    population = XmcPopulation(prior=np.array([0.5, 0.1]), signal=4.0)
    t, candidates = population.grid_candidates(2001)
    for k in range(population.n_labels):
        recall = candidates.recall[candidates.cand_ptr[k]:candidates.cand_ptr[k + 1]]
        assert np.all(np.diff(recall) > 0)
    best = population_optimum(population, grid_points=2001)
    assert best["f_macro"] >= population.f_macro(np.array([2.0, 2.0]))
    assert best["upper_bound"] - best["f_macro"] < 1e-4
