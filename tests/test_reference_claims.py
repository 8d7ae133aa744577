"""The reference work's claims as tests: Lemma 1, F-macro is monotone in every p_k and r_k
(docs/theory.md#shape-of-the-f-measure); Theorem 1, the population-optimal F-macro classifier thresholds the
posterior eta_k (docs/theory.md#thresholding-the-posterior); the error bound eps of Algorithm 2
(docs/theory.md#error-region); the jumps of ArgV against the labels with identical PR curves
(docs/theory.md#fixed-points-of-the-map-v).

``pytest -k lemma`` and ``pytest -k theorem`` select the first two."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import optimize, special

from test_linearization import _coordinatewise_maxima
from test_strategy_properties import small_instances
from xmlthresh.api import load_dataset
from xmlthresh.data.candidates import build_candidates
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.datasets.synthetic import generate_ranked_lists
from xmlthresh.datasets.synthetic_xmc_posterior import XmcPopulation
from xmlthresh.metrics import evaluate, f_beta
from xmlthresh.run.population_metrics import population_optimum
from xmlthresh.strategies import STRATEGIES
from xmlthresh.strategies.linearization import argv_jumps, count_vector_groups, pr_curve_groups
from xmlthresh.strategies.linearization_region import region_cells, region_spread, taylor_remainder_bound

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


# ---------------------------------------------------------------------------------------------- Alg. 2's region
def _window_edges(data, cells: int) -> tuple[np.ndarray, np.ndarray]:
    p_lo, p_hi = sorted(data.draw(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=2, unique=True)))
    r_lo, r_hi = sorted(data.draw(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=2, unique=True)))
    return np.linspace(p_lo, p_hi, cells + 1), np.linspace(r_lo, r_hi, cells + 1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(max_labels=3, max_docs=6), st.integers(1, 9), st.data())
def test_region_window_holds_every_coordinatewise_maximum(instance, cells, data):
    """The region on any window of cells (as ``benchmarks/region_rate.py`` zooms in) keeps every coordinate-wise
    maximum that lies in the window, and on the unit grid it is the strategy's own region."""
    lists, beta = instance
    if (lists.n_relevant == 0).any():
        lists = lists.with_relevant_only()[0]
    p_edges, r_edges = _window_edges(data, cells)
    region = region_cells(lists, p_edges, r_edges, beta)
    for P, R in _coordinatewise_maxima(lists, beta):
        inside_p = np.flatnonzero((p_edges[:-1] <= P) & (P <= p_edges[1:]))
        inside_r = np.flatnonzero((r_edges[:-1] <= R) & (R <= r_edges[1:]))
        if len(inside_p) and len(inside_r):
            assert region[np.ix_(inside_p, inside_r)].any(), (P, R)
    unit = np.arange(cells + 1) / cells
    model = STRATEGIES.get("linearization_region")(beta=beta, grid=cells).fit_lists(lists)
    own = model.grid_table()["cell_in_region"].to_numpy().reshape(cells + 1, cells + 1)[:cells, :cells]
    assert np.array_equal(region_cells(lists, unit, unit, beta), own)
    spread = region_spread(own, unit, unit, beta)
    assert spread["dF"] == model.info_["region_dF"]


def test_region_rests_on_eps_for_every_move_of_one_label():
    """What Algorithm 2's bound claims, measured on real moves: from any reference point (P0, R0) of the grid,
    the F of every threshold vector one label away from the linear best responses differs from its first-order
    value by at most eps (delta = 1/n); the region's spread itself is not bounded by eps (the README's rate
    table), so that is not asserted."""
    lists = generate_ranked_lists(n_labels=6, num_docs=12, signal=1.0, zipf_exponent=0.0, max_label_share=0.3,
                                  seed=2)
    n, beta = lists.n_labels, 1.0
    options = []
    for k in range(n):
        ranks = lists.relevant_rank[lists.label_ptr[k]:lists.label_ptr[k + 1]]
        cuts = np.arange(1, lists.num_docs + 1)
        tp = (ranks[None, :] <= cuts[:, None]).sum(axis=1)
        options.append((tp / cuts, tp / lists.n_relevant[k]))
    worst = 0.0
    for p0 in np.linspace(0.2, 1.0, 9):
        for r0 in np.linspace(0.2, 1.0, 9):
            weights = (r0 * r0, beta * beta * p0 * p0)
            best = [int(np.argmax(weights[0] * p + weights[1] * r)) for p, r in options]
            base_p = np.mean([p[b] for (p, _), b in zip(options, best)])
            base_r = np.mean([r[b] for (_, r), b in zip(options, best)])
            eps = float(taylor_remainder_bound(base_p, base_r, n, beta))
            d0 = beta * beta * base_p + base_r
            grad = (1 + beta * beta) / d0**2 * np.array([base_r**2, beta * beta * base_p**2])
            for k, (p, r) in enumerate(options):
                dp, dr = (p - p[best[k]]) / n, (r - r[best[k]]) / n
                remainder = np.abs(f_beta(base_p + dp, base_r + dr, beta) - f_beta(base_p, base_r, beta)
                                   - (grad[0] * dp + grad[1] * dr))
                assert np.all(remainder <= eps * (1 + 1e-9) + 1e-15)
                worst = max(worst, float(np.max(remainder / eps)))
    assert worst > 0.05  # the moves come close enough to the bound that the check can fail


def test_region_rate_benchmark_smoke(capsys):
    """``benchmarks/region_rate.py`` on a tiny case: one row per n, the spread falls from n = 60 to n = 240, and
    the fitted exponents are printed."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "region_rate.py"
    spec = importlib.util.spec_from_file_location("region_rate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--labels", "60,240", "--seeds", "1", "--docs", "60", "--coarse", "12", "--cells", "16",
                        "--zooms", "1"]) == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines() if line.startswith("| 60 ") or line.startswith("| 240 ")]
    assert len(rows) == 2
    spread = [float(row.split("|")[3]) for row in rows]
    assert spread[1] < spread[0]
    assert "exponent of spread dF against n" in table


# ---------------------------------------------------------------------------------------------- ArgV's jumps
# A: s = 2, relevant at ranks 1 and 3: Pareto points (1, 1/2), (2/3, 1), one hull edge of key 2/3.
# B: s = 3, relevant at ranks 1, 2, 5: (1, 2/3), (3/5, 1), one edge of key 6/5.
# D: s = 2, relevant at 2 and 12: (1/2, 1/2), (1/6, 1): another curve, the same edge (-1/3, 1/2) as A.
# E: s = 4, relevant at 1, 6, 7, 8: (1, 1/4), (1/2, 1): another curve and edge (-1/2, 3/4), the same key 2/3.
LABEL_A = [1, 0, 1, 0]
LABEL_B = [1, 1, 0, 0, 1]
LABEL_D = [0, 1] + [0] * 9 + [1]
LABEL_E = [1, 0, 0, 0, 0, 1, 1, 1]
SIZES = {"A": 2, "B": 3, "D": 2, "E": 4}


def _jump_lists(names: str) -> RankedLists:
    relevance = {"A": LABEL_A, "B": LABEL_B, "D": LABEL_D, "E": LABEL_E}
    return RankedLists.from_relevance_lists([relevance[name] for name in names], [SIZES[name] for name in names], 12)


@pytest.mark.parametrize("beta", [1.0, 2.0])
def test_argv_jumps_of_two_tie_groups(beta):
    """Two clusters of identical labels (A three times, B twice, interleaved): exactly two jumps of ArgV, at
    the angles of their keys, each switching exactly one whole cluster."""
    lists = _jump_lists("ABABA")
    jumps = argv_jumps(build_candidates(lists), beta, lists)
    assert len(jumps) == 2
    by_labels = {tuple(jump.labels.tolist()): jump for jump in jumps}
    assert set(by_labels) == {(0, 2, 4), (1, 3)}
    assert by_labels[(0, 2, 4)].key == pytest.approx(2 / 3) and by_labels[(1, 3)].key == pytest.approx(6 / 5)
    assert by_labels[(0, 2, 4)].angle == pytest.approx(np.arctan2(beta, np.sqrt(2 / 3)))
    for jump in jumps:
        assert jump.one_tie_group and jump.pr_groups == jump.count_groups == jump.edge_groups == 1
        assert jump.size > 0
    # ArgV between the jumps is V's angle with the switched clusters moved along their edges
    assert jumps[0].argv_below == pytest.approx(jumps[1].argv_above)
    groups = pr_curve_groups(build_candidates(lists))
    assert groups.tolist() == [0, 1, 0, 1, 0] and count_vector_groups(lists).tolist() == [0, 1, 0, 1, 0]


def test_argv_jump_shared_by_different_curves():
    """A jump is a set of labels with an edge of one key, not always one cluster of identical curves: D (same
    edge as A, another curve) and E (another edge of the same key) switch with A."""
    lists = _jump_lists("ABABADE")
    jumps = argv_jumps(build_candidates(lists), 1.0, lists)
    assert len(jumps) == 2
    shared = next(jump for jump in jumps if 0 in jump.labels)
    assert shared.labels.tolist() == [0, 2, 4, 5, 6]
    assert not shared.one_tie_group
    assert (shared.pr_groups, shared.count_groups, shared.edge_groups) == (3, 3, 2)
    other = next(jump for jump in jumps if 1 in jump.labels)
    assert other.one_tie_group and other.labels.tolist() == [1, 3]


def test_argv_jumps_mark_the_crossing_of_example(real_data):
    """Example (the reference's own data, all 80 labels with one PR curve): one jump, one cluster of all 80
    labels, and it is where ArgV crosses the identity (no fixed point)."""
    lists = load_dataset("example")
    jumps = argv_jumps(build_candidates(lists), 1.0, lists)
    assert len(jumps) == 1 and jumps[0].crossing and jumps[0].one_tie_group
    assert len(jumps[0].labels) == lists.n_labels == 80
