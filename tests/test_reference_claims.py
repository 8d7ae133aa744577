"""The reference work's claims as tests (docs/theory.md): Lemma 1 (F-macro is monotone in every p_k and r_k),
Theorem 1 (the population-optimal F-macro classifier thresholds the posterior eta_k), the error bound eps of
Algorithm 2, and the jumps of ArgV against the labels with identical PR curves.

``pytest -k lemma`` and ``pytest -k theorem`` select the first two."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import optimize, special

from xmlthresh.datasets.synthetic_xmc_posterior import XmcPopulation
from xmlthresh.metrics import evaluate, f_beta
from xmlthresh.run.population_metrics import population_optimum

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: relative rounding allowance of one evaluation of F_beta(P, R)
ROUNDING = 1e-12

betas = st.one_of(st.sampled_from([0.5, 1.0, 2.0]), st.floats(0.1, 10.0))


# ---------------------------------------------------------------------------------------------- Lemma 1
@st.composite
def label_counts(draw, max_labels: int = 6, max_relevant: int = 12, max_docs: int = 40):
    """(tp, cut, s) per label: s_k >= 1 relevant documents, a cut of 0..m documents and 0 <= tp_k <=
    min(cut_k, s_k) -- empty predictions (p = r = 0) included."""
    n = draw(st.integers(1, max_labels))
    s = np.array(draw(st.lists(st.integers(1, max_relevant), min_size=n, max_size=n)))
    cut = np.array([draw(st.integers(0, max_docs)) for _ in range(n)])
    tp = np.array([draw(st.integers(0, min(c, r))) for c, r in zip(cut, s)])
    return tp, cut, s


def _f_macro(tp, cut, s, beta):
    return evaluate(tp, cut, s, beta)["f_macro"]


@SETTINGS
@given(label_counts(), betas, st.data())
def test_lemma1_f_macro_monotone_in_counts(counts, beta, data):
    """One more true positive of label k at the same cut raises p_k and r_k; a smaller cut with the same true
    positives raises p_k alone: neither lowers F-macro (the project's ``evaluate``)."""
    tp, cut, s = counts
    k = data.draw(st.integers(0, len(s) - 1))
    before = _f_macro(tp, cut, s, beta)
    if tp[k] < min(cut[k], s[k]):  # one more relevant document inside the same cut
        more = tp.copy()
        more[k] += 1
        assert _f_macro(more, cut, s, beta) >= before * (1 - ROUNDING)
    if cut[k] > max(tp[k], 1):  # drop one irrelevant document from the cut
        fewer = cut.copy()
        fewer[k] -= 1
        assert _f_macro(tp, fewer, s, beta) >= before * (1 - ROUNDING)


@SETTINGS
@given(st.integers(1, 8).flatmap(lambda n: st.tuples(
    st.lists(st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)), min_size=n, max_size=n),
    st.lists(st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)), min_size=n, max_size=n))),
    betas, st.data())
def test_lemma1_f_macro_monotone_in_each_precision_and_recall(pr, beta, data):
    """F_beta(mean_k p_k, mean_k r_k) never falls when one p_k or one r_k rises, zeros included (the project's
    ``f_beta``; F_beta(0, 0) = 0)."""
    p, r = np.array(pr[0]), np.array(pr[1])
    k = data.draw(st.integers(0, len(p) - 1))
    before = f_beta(p.mean(), r.mean(), beta)
    raised_p, raised_r = p.copy(), r.copy()
    raised_p[k] = data.draw(st.floats(float(p[k]), 1.0))
    raised_r[k] = data.draw(st.floats(float(r[k]), 1.0))
    assert f_beta(raised_p.mean(), r.mean(), beta) >= before * (1 - ROUNDING)
    assert f_beta(p.mean(), raised_r.mean(), beta) >= before * (1 - ROUNDING)
    assert f_beta(raised_p.mean(), raised_r.mean(), beta) >= before * (1 - ROUNDING)


# ---------------------------------------------------------------------------------------------- Theorem 1
# The closed-form population of dense synthetic_xmc: label k's score is s ~ N(mu y_k, 1), P(y_k = 1) = pi_k, and
# its posterior eta_k(s) = sigmoid(mu s - mu^2 / 2 + logit pi_k) increases in s, so "eta_k >= c" is "s >= t".
# A rule that sees the label's score predicts a set A of scores; here A is a union of intervals.

def _region_precision_recall(prior: float, signal: float, intervals: list[tuple[float, float]]):
    """Population precision, recall and predicted mass of the rule "predict when the score lies in one of the
    disjoint ``intervals``"."""
    lower = np.array([a for a, _ in intervals], dtype=np.float64)
    upper = np.array([b for _, b in intervals], dtype=np.float64)
    hit_pos = float(np.sum(special.ndtr(upper - signal) - special.ndtr(lower - signal)))
    hit_neg = float(np.sum(special.ndtr(upper) - special.ndtr(lower)))
    mass = prior * hit_pos + (1.0 - prior) * hit_neg
    return (prior * hit_pos / mass if mass > 0 else 0.0), hit_pos, mass


def _threshold_of_mass(prior: float, signal: float, mass: float) -> float:
    """The score threshold t (predict s >= t, i.e. eta_k above a level) that predicts the same mass."""
    if mass <= 0.0:
        return np.inf
    predicted = lambda t: prior * special.ndtr(signal - t) + (1.0 - prior) * special.ndtr(-t) - mass  # noqa: E731
    return float(optimize.brentq(predicted, -40.0, signal + 40.0, xtol=1e-14, rtol=1e-15))


@st.composite
def score_regions(draw, low: float = -4.0, high: float = 7.0):
    """A union of 1-3 disjoint score intervals, ends possibly at -inf / +inf: bands that predict a lower-eta
    range while skipping a higher one, gaps, and (sometimes) plain upper tails."""
    ends = sorted(draw(st.lists(st.floats(low, high), min_size=2, max_size=6, unique=True)))
    ends = ends[: len(ends) // 2 * 2]
    if draw(st.booleans()):
        ends[0] = -np.inf
    if draw(st.booleans()):
        ends[-1] = np.inf
    return [(ends[i], ends[i + 1]) for i in range(0, len(ends), 2)]


@st.composite
def populations_with_rules(draw, max_labels: int = 4):
    n = draw(st.integers(1, max_labels))
    prior = np.array(draw(st.lists(st.floats(0.01, 0.9), min_size=n, max_size=n)))
    signal = draw(st.floats(0.3, 3.0))
    rules = [draw(score_regions()) for _ in range(n)]
    return XmcPopulation(prior=prior, signal=signal), rules


def _threshold_rules_of_equal_mass(population: XmcPopulation, rules):
    """Per label: (p, r) of the rule, then the thresholds on eta_k that predict the same mass."""
    p, r, thresholds = [], [], []
    for prior, intervals in zip(population.prior, rules):
        precision, recall, mass = _region_precision_recall(prior, population.signal, intervals)
        p.append(precision)
        r.append(recall)
        thresholds.append(_threshold_of_mass(prior, population.signal, mass))
    return np.array(p), np.array(r), np.array(thresholds)


def test_theorem1_region_oracle_matches_the_closed_form():
    """The interval oracle agrees with XmcPopulation.precision_recall on upper tails (so it measures the same
    population the theorem is tested on)."""
    population = XmcPopulation(prior=np.array([0.05, 0.3, 0.7]), signal=1.5)
    thresholds = np.array([-1.0, 0.4, 2.5])
    precision, recall = population.precision_recall(thresholds)
    for k, t in enumerate(thresholds):
        p, r, _ = _region_precision_recall(population.prior[k], population.signal, [(t, np.inf)])
        assert (p, r) == pytest.approx((precision[k], recall[k]), rel=1e-12)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populations_with_rules(), betas)
def test_theorem1_threshold_on_eta_beats_every_rule_of_equal_mass(case, beta):
    """For any rule, thresholding eta_k at the same predicted mass has precision and recall at least as high
    for every label, hence an F-macro at least as high (Lemma 1)."""
    population, rules = case
    p, r, thresholds = _threshold_rules_of_equal_mass(population, rules)
    precision, recall = population.precision_recall(thresholds)
    assert np.all(precision >= p - 1e-9)
    assert np.all(recall >= r - 1e-9)
    assert population.f_macro(thresholds, beta) >= f_beta(p.mean(), r.mean(), beta) - 1e-9


def _best_threshold_rule(population: XmcPopulation, beta: float, grid_points: int) -> float:
    """The population-optimal F-macro over per-label score thresholds (= thresholds on eta_k), by brute force
    over a grid of thresholds per label (with "predict all" and "predict nothing") and a local refinement of
    the best grid point: for one or two labels only."""
    grid = np.r_[-np.inf, np.linspace(-8.0, population.signal + 8.0, grid_points), np.inf]
    mesh = np.stack([axis.ravel() for axis in np.meshgrid(*([grid] * population.n_labels), indexing="ij")], 1)
    hit_pos = special.ndtr(population.signal - mesh)
    hit_neg = special.ndtr(-mesh)
    predicted = population.prior * hit_pos + (1.0 - population.prior) * hit_neg
    precision = np.divide(population.prior * hit_pos, predicted, out=np.zeros_like(mesh), where=predicted > 0)
    values = f_beta(precision.mean(axis=1), hit_pos.mean(axis=1), beta)
    start = mesh[int(np.argmax(values))]
    best = float(values.max())
    if np.all(np.isfinite(start)):
        refined = optimize.minimize(lambda t: -population.f_macro(t, beta), start, method="Nelder-Mead",
                                    options={"xatol": 1e-10, "fatol": 1e-14})
        best = max(best, -float(refined.fun))
    return best


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populations_with_rules(max_labels=2), betas)
def test_theorem1_best_threshold_rule_is_never_beaten(case, beta):
    """The population-optimal threshold rule on eta_k is never beaten by a rule that is not a threshold on
    eta_k: against the brute-force best threshold vector and against the certified upper bound of the exact
    domain sweep over a fine threshold grid (:func:`population_optimum`)."""
    population, rules = case
    p, r, _ = _threshold_rules_of_equal_mass(population, rules)
    other = f_beta(p.mean(), r.mean(), beta)
    best = _best_threshold_rule(population, beta, grid_points=2001 if population.n_labels == 1 else 301)
    assert other <= best + 1e-9
    # the sweep's hull misses at most the bulge of the PR curve between neighbouring grid thresholds
    assert other <= population_optimum(population, beta, grid_points=2001)["upper_bound"] + 1e-6


def test_theorem1_skipping_the_top_scores_loses():
    """The band rule of the theorem's proof: predicting a lower-eta band while skipping the higher-eta scores
    above it is strictly worse than the upper tail of the same mass."""
    population = XmcPopulation(prior=np.array([0.2, 0.2]), signal=2.0)
    band = [[(0.5, 2.0)], [(1.0, np.inf)]]  # label 0 skips s > 2, label 1 thresholds
    p, r, thresholds = _threshold_rules_of_equal_mass(population, band)
    precision, recall = population.precision_recall(thresholds)
    assert thresholds[1] == pytest.approx(1.0, abs=1e-10)
    assert precision[0] > p[0] + 1e-3 and recall[0] > r[0] + 1e-3
    assert population.f_macro(thresholds) > f_beta(p.mean(), r.mean()) + 1e-3
