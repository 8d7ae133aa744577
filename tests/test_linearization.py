"""``linearization`` (Algorithm 1) and ``linearization_region`` (Algorithm 2), docs/theory.md#linearisation.

Reference grids of the original program (every K), acceptance numbers on ESP Game and Example, properties
against brute force and ``domain`` on random small instances, per-position oracles, parameter validation.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import example as known_case
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from helpers import PACKAGE_CONF
from oracle import brute_force, label_options
from oracle import f_beta as oracle_f_beta
from test_strategy_properties import small_instances
from xmlthresh.data.candidates import build_candidates
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.datasets import DATASETS
from xmlthresh.data.evaluation import evaluate_cuts
from xmlthresh.strategies import STRATEGIES
from xmlthresh.strategies.linearization import LinearizedMap
from xmlthresh.strategies.linearization_region import GRID_COLUMNS, taylor_remainder_bound, taylor_slack

TOL = 1e-12
GRID_SIZES = (2, 3, 4, 6, 9, 10)  # the reference grids result_ESPGameNN_1000_KxK.txt
ESP_OPTIMUM = 0.5685122
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONF = PACKAGE_CONF / "strategy"


def example_like() -> RankedLists:
    # The published Example.txt: 80 identical labels "3 | 1 0 0 0 1 1 0" over 7 documents.
    return RankedLists.from_relevance_lists([[1, 0, 0, 0, 1, 1, 0]] * 80, [3] * 80, num_docs=7)


def fit(name: str, lists: RankedLists, **params):
    return STRATEGIES.get(name)(**params).fit_lists(lists)


def recomputed_f(model, lists: RankedLists, beta: float) -> float:
    kept = lists.n_relevant > 0
    return evaluate_cuts(lists.select_labels(kept), model.cuts_[kept], beta)["f_macro"]


# ---------------------------------------------------------------------------------------------- real data
_LOADED: dict[str, RankedLists] = {}


def _load(name: str, path: str, num_docs: int) -> RankedLists:
    if name not in _LOADED:
        _LOADED[name] = DATASETS.get("ranked_lists")(path=path, num_docs=num_docs, name=name,
                                                     allow_duplicate_ids=name == "example").load()
    return _LOADED[name]


@pytest.fixture
def espgame(real_data):
    return _load("espgame", "berger/ESPGameNN.txt", 2080)


@pytest.fixture
def example(real_data):
    return _load("example", "berger/Example.txt", 7)


def test_every_reference_grid_is_covered(real_data):
    found = sorted(p.name for p in (real_data / "berger" / "grids").glob("result_ESPGameNN_*.txt"))
    assert found == sorted(f"result_ESPGameNN_1000_{k}x{k}.txt" for k in GRID_SIZES)


@pytest.mark.parametrize("k", GRID_SIZES)
def test_region_grid_reproduces_reference_program(espgame, real_data, k):
    reference = np.loadtxt(real_data / "berger" / "grids" / f"result_ESPGameNN_1000_{k}x{k}.txt")
    model = fit("linearization_region", espgame, grid=k)
    table = model.grid_table()
    assert list(table.columns[: len(GRID_COLUMNS)]) == list(GRID_COLUMNS)
    assert len(table) == len(reference) == (k + 1) ** 2
    mine = table[list(GRID_COLUMNS)].to_numpy()
    np.testing.assert_allclose(mine[:, :2], reference[:, :2], atol=1e-6)  # same layout: P0 outer, R0 inner
    origin = (reference[:, 0] == 0) & (reference[:, 1] == 0)
    assert origin.tolist() == [True] + [False] * (len(reference) - 1)
    assert np.all(np.isnan(mine[origin, 2:]))  # the reference prints 0 0 -nan 0 0 0 0 there
    assert np.abs(mine[~origin] - reference[~origin]).max() <= 1e-5
    assert model.info_["region_points"] == int(table["in_own_rectangle"].sum())


def test_espgame_bisection_reaches_the_optimum(espgame):
    model = fit("linearization", espgame)
    domain = fit("domain", espgame)
    assert model.fixed_point_exists_ == domain.fixed_point_exists_
    if model.fixed_point_exists_:
        assert model.f_macro_ == pytest.approx(ESP_OPTIMUM, abs=1e-6)
        assert model.upper_bound_ == model.lower_bound_ == model.f_macro_
    else:  # within the reported error
        assert model.lower_bound_ - 1e-6 <= ESP_OPTIMUM <= model.upper_bound_ + 1e-6
        assert model.info_["gap"] == pytest.approx(model.upper_bound_ - model.lower_bound_)
    assert model.f_macro_ == pytest.approx(ESP_OPTIMUM, abs=1e-6)
    assert model.upper_bound_ == pytest.approx(0.5685124, abs=1e-7)
    assert model.f_macro_ == pytest.approx(recomputed_f(model, espgame, 1.0), abs=TOL)
    grid = fit("linearization", espgame, search="grid")
    np.testing.assert_array_equal(grid.cuts_, model.cuts_)
    assert grid.info_["angle"] == model.info_["angle"]


@pytest.mark.parametrize("beta, optimum", [(0.25, 0.700583), (2.0, 0.626090)])
def test_espgame_fixed_point_is_the_exact_optimum(espgame, beta, optimum):
    model = fit("linearization", espgame, beta=beta)
    assert model.fixed_point_exists_ is True
    assert model.f_macro_ == pytest.approx(optimum, abs=1e-6)
    assert model.upper_bound_ == model.lower_bound_
    assert model.f_macro_ == pytest.approx(fit("domain", espgame, beta=beta).f_macro_, abs=TOL)


def test_example_has_no_fixed_point(example):
    for search in ("bisection", "grid"):
        model = fit("linearization", example, search=search)
        assert model.fixed_point_exists_ is False
        assert model.info_["jump_labels"] == 80
        assert model.f_macro_ == pytest.approx(0.7179654, abs=1e-6)
        assert model.upper_bound_ == pytest.approx(0.7179677, abs=1e-6)


# ---------------------------------------------------------------------------------------------- synthetic
def test_example_like_returns_the_best_point_of_the_jump():
    model = fit("linearization", example_like())
    assert model.fixed_point_exists_ is False
    # the two sides of the jump give 2/3 (all at (1, 1/3) or all at (1/2, 1)); partial switches do better
    assert np.count_nonzero(model.cuts_ == 6) == 53 and np.count_nonzero(model.cuts_ == 1) == 27
    assert model.f_macro_ == pytest.approx(0.7179654, abs=1e-7)
    assert model.upper_bound_ == pytest.approx(0.7179677, abs=1e-7)


def test_counterexample_fixed_point_is_the_global_optimum():
    # docs/theory.md#two-label-counterexample: coordinate ascent can stop at 0.75; the optimum 0.7895 is at
    # cuts (1, 3)
    lists = RankedLists.from_relevance_lists([[1, 0, 0, 1], [1, 0, 1, 0]], [2, 2], num_docs=4)
    model = fit("linearization", lists)
    truth = brute_force(lists)["f_macro"]
    assert model.f_macro_ <= truth + TOL <= model.upper_bound_ + 2 * TOL
    if model.fixed_point_exists_:
        assert model.f_macro_ == pytest.approx(truth, abs=TOL)


def test_exact_ties_go_to_the_first_maximiser():
    # s = 12, no predict-all: cut 2 (p 1, r 1/6) and cut 12 (p 7/12, r 7/12) tie for p + r (P0 = R0); in
    # floating point 0.7^2 p + 0.7^2 r prefers cut 12, the exact first maximiser is cut 2 (the reference).
    lists = RankedLists.from_relevance_lists(
        [[1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]], [12], num_docs=30, include_predict_all=False
    )
    table = fit("linearization_region", lists, grid=10).grid_table()
    row = table[(table["P0"] == 0.7) & (table["R0"] == 0.7)].iloc[0]
    assert row["VP"] == 1.0 and row["VR"] == pytest.approx(2 / 12)


def test_weight_on_precision_only_takes_the_smallest_cut_over_every_position():
    # cuts 1 and 2 both have p = 1: at P0 = 0 the first maximiser is cut 1 (r = 1/2), as in the reference
    lists = RankedLists.from_relevance_lists([[1, 1, 0]], [2], num_docs=3)
    table = fit("linearization_region", lists, grid=4).grid_table()
    axis = table[(table["P0"] == 0) & (table["R0"] > 0)]
    assert np.all(axis["VP"] == 1.0) and np.all(axis["VR"] == 0.5)


@pytest.mark.parametrize("name", ["linearization", "linearization_region"])
def test_configs_build_the_registered_strategies(name):
    params = yaml.safe_load((CONF / f"{name}.yaml").read_text())
    assert params.pop("name") == name
    model = STRATEGIES.get(name)(**params).fit_lists(example_like())
    assert model.get_params()["grid"] == 100
    assert model.f_macro_ <= 0.7179677


def test_grid_table_needs_a_fit():
    with pytest.raises(NotFittedError, match="not fitted"):
        STRATEGIES.get("linearization_region")().grid_table()


def test_scored_split_with_ties_fits():
    from xmlthresh.strategies.base import tiny_scored_split

    for name in ("linearization", "linearization_region"):
        model = STRATEGIES.get(name)(grid=5).fit_scores(tiny_scored_split())
        assert 0.0 <= model.f_macro_ <= 1.0


@pytest.mark.parametrize(
    "name, params, message",
    [
        ("linearization", {"grid": -1}, "grid must be an integer >= 1"),
        ("linearization", {"grid": 0}, "grid must be an integer >= 1"),
        ("linearization", {"grid": 2.5}, "grid must be an integer >= 1"),
        ("linearization", {"grid": True}, "grid must be an integer >= 1"),
        ("linearization", {"search": "newton"}, "search must be one of 'bisection', 'grid'"),
        ("linearization", {"tol": -1e-3}, r"tol must be a finite number >= 0"),
        ("linearization", {"tol": float("nan")}, r"tol must be a finite number >= 0"),
        ("linearization", {"tol": float("inf")}, r"tol must be a finite number >= 0"),
        ("linearization", {"beta": -1.0}, "beta must be a number in"),
        ("linearization_region", {"grid": -3}, "grid must be an integer >= 1"),
        ("linearization_region", {"grid": 0}, "grid must be an integer >= 1"),
        ("linearization_region", {"grid": "10"}, "grid must be an integer >= 1"),
        ("linearization_region", {"beta": 0.0}, "beta must be a number in"),
    ],
)
def test_bad_parameters_are_rejected(name, params, message):
    with pytest.raises(ValueError, match=message):
        STRATEGIES.get(name)(**params).fit_lists(example_like())


# ---------------------------------------------------------------------------------------------- properties
#: a label whose hull chain has two collinear edges (cuts 3 -> 6 -> 8 of label 0): domain's turning-group sweep
#: once took the shorter edge first and returned a worse state than linearization's (0.70946 vs 0.71047)
COLLINEAR_CHAIN = (RankedLists(relevant_rank=np.array([1, 2, 3, 5, 6, 8, 2, 1]), label_ptr=np.array([0, 6, 7, 8]),
                               list_length=np.array([8, 2, 1]), n_relevant=np.array([6, 4, 2]), num_docs=8,
                               include_predict_all=False), 0.5)


@SETTINGS
@given(small_instances(), st.sampled_from(["bisection", "grid"]), st.integers(1, 12))
@known_case(COLLINEAR_CHAIN, "bisection", 1)
def test_linearization_against_brute_force_and_domain(instance, search, grid):
    lists, beta = instance
    truth = brute_force(lists, beta)["f_macro"]
    model = fit("linearization", lists, beta=beta, search=search, grid=grid)
    assert model.f_macro_ <= truth + TOL
    assert truth <= model.upper_bound_ + TOL
    assert model.f_macro_ == pytest.approx(recomputed_f(model, lists, beta), abs=TOL)
    domain = fit("domain", lists, beta=beta, polish="none")  # the sweep itself, not its polish
    if model.fixed_point_exists_:  # a fixed point of V is the exact global optimum
        assert model.f_macro_ == pytest.approx(truth, abs=TOL)
        assert model.upper_bound_ == model.lower_bound_
    # the best point of the jump is the best state of the exact sweep
    assert model.f_macro_ == pytest.approx(domain.f_macro_, abs=TOL)
    assert model.upper_bound_ == pytest.approx(domain.upper_bound_, abs=1e-9)


@SETTINGS
@given(small_instances(), st.integers(1, 30), st.sampled_from([0.0, 1e-12, 1e-3, 0.3, 2.0]))
def test_bisection_and_grid_agree(instance, grid, tol):
    lists, beta = instance
    bisection = fit("linearization", lists, beta=beta, tol=tol)
    on_grid = fit("linearization", lists, beta=beta, search="grid", grid=grid)
    np.testing.assert_array_equal(bisection.cuts_, on_grid.cuts_)
    assert bisection.fixed_point_exists_ == on_grid.fixed_point_exists_
    assert bisection.upper_bound_ == on_grid.upper_bound_
    assert on_grid.info_["grid_best_f"] <= on_grid.f_macro_ + TOL


def _exact_first_maximiser(options, s, weight_p, weight_r):
    """(p, r) of the first option maximising weight_p p + weight_r r, in exact rational arithmetic."""
    best, best_pr = None, None
    for cut, tp in options:
        p = Fraction(tp, cut) if cut else Fraction(0)
        r = Fraction(tp, s)
        score = weight_p * p + weight_r * r
        if best is None or score > best:
            best, best_pr = score, (p, r)
    return best_pr


def _region_oracle(lists: RankedLists, k: int, beta: float) -> np.ndarray:
    """Reference columns of Algorithm 2, one position at a time (label_options: every cut + predict-all)."""
    kept = [q for q in range(lists.n_labels) if lists.n_relevant[q] > 0]
    n = len(kept)
    b2 = beta * beta
    rows = []
    for i in range(k + 1):
        for j in range(k + 1):
            p0, r0 = i / k, j / k
            if i == 0 and j == 0:
                rows.append([p0, r0] + [np.nan] * 7)
                continue
            slack = float(taylor_slack(p0, r0, n, beta))
            sums = np.zeros(6)
            for q in kept:
                options = label_options(lists, q)
                s = int(lists.n_relevant[q])
                p = np.array([tp / cut if cut else 0.0 for cut, tp in options])
                r = np.array([tp / s for cut, tp in options])
                score = (r0 * r0) * p + (b2 * (p0 * p0)) * r
                near = score >= score.max() - slack
                vp, vr = _exact_first_maximiser(options, s, Fraction(j * j), Fraction(b2) * i * i)
                sums += [float(vp), float(vr), p[near].min(), p[near].max(), r[near].min(), r[near].max()]
            vp, vr = sums[0] / n, sums[1] / n
            f = (1 + b2) * vp * vr / (b2 * vp + vr) if b2 * vp + vr > 0 else 0.0
            rows.append([p0, r0, vp, vr, f, *(sums[2:] / n)])
    return np.array(rows)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(), st.integers(1, 6))
def test_region_grid_matches_per_position_oracle(instance, k):
    lists, beta = instance
    model = fit("linearization_region", lists, beta=beta, grid=k)
    mine = model.grid_table()[list(GRID_COLUMNS)].to_numpy()
    np.testing.assert_allclose(mine, _region_oracle(lists, k, beta), atol=1e-12, equal_nan=True)
    assert model.f_macro_ <= brute_force(lists, beta)["f_macro"] + TOL
    assert model.f_macro_ == pytest.approx(model.info_["grid_best_f"], abs=TOL)


@SETTINGS
@given(small_instances(), st.floats(0.01, 100.0))
def test_linearized_map_is_the_first_maximiser_of_the_linear_score(instance, ratio):
    """At any weight ratio t, V through the hull chains = per label first maximiser of p + t r (Pareto)."""
    lists, beta = instance
    kept = lists.select_labels(lists.n_relevant > 0)
    candidates = build_candidates(kept)
    vmap = LinearizedMap.build(candidates, beta)
    choice = vmap.choice(int(vmap.state_at_ratio(ratio)))
    t = Fraction(ratio)
    for q in range(candidates.n_labels):
        lo, hi = candidates.cand_ptr[q], candidates.cand_ptr[q + 1]
        options = list(zip(candidates.cut[lo:hi].tolist(), candidates.tp[lo:hi].tolist()))
        s = int(candidates.n_relevant[q])
        best = _exact_first_maximiser(options, s, Fraction(1), t)
        chosen = (candidates.precision[choice[q]], candidates.recall[choice[q]])
        # the map works in floating point: at a ratio where two options tie to rounding (0.8 is stored as
        # 0.8000000000000000444), either is a first maximiser of p + t r; otherwise it must be the exact one
        scores = [(Fraction(tp, cut) if cut else Fraction(0)) + t * Fraction(tp, s) for cut, tp in options]
        top = max(scores)
        near = [(float(Fraction(tp, cut) if cut else 0), tp / s) for (cut, tp), score in zip(options, scores)
                if float(top - score) <= 1e-12 * float(1 + abs(top))]
        if len(near) == 1:
            assert chosen == pytest.approx((float(best[0]), float(best[1])), abs=TOL)
        else:
            assert any(chosen == pytest.approx(option, abs=TOL) for option in near)


def test_tie_groups_of_relevant_documents_cannot_be_split():
    # list of 6: relevant documents at ranks 2 and 4, both in the tie group of positions 3..5 (end 5)
    # besides rank 2 in its own group; admissible cuts: 1, 2, 5, 6 (3 and 4 would split the group).
    lists = RankedLists(np.array([2, 4]), np.array([0, 2]), np.array([6]), np.array([2]), 6,
                        tie_end=np.array([2, 5]), include_predict_all=False)
    table = fit("linearization_region", lists, grid=1).grid_table()  # (0,1), (1,0), (1,1): slack infinite
    positions_p = [0 / 1, 1 / 2, 2 / 5, 2 / 6]
    positions_r = [0.0, 0.5, 1.0, 1.0]
    for _, row in table.iloc[1:].iterrows():
        assert row["Pmin"] == min(positions_p) and row["Pmax"] == max(positions_p)
        assert row["Rmin"] == min(positions_r) and row["Rmax"] == max(positions_r)


@settings(max_examples=300, deadline=None)
@given(
    st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.integers(1, 60), st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0]),
    st.floats(-1.0, 1.0), st.floats(-1.0, 1.0),
)
def test_taylor_bound_holds_and_is_the_reference_formula_at_beta_1(p0, r0, n, beta, dp, dr):
    eps = float(taylor_remainder_bound(p0, r0, n, beta))
    b2 = beta * beta
    if np.isfinite(eps):
        def f(p, r):
            return (1 + b2) * p * r / (b2 * p + r)

        d0 = b2 * p0 + r0
        grad = (1 + b2) / d0**2 * np.array([r0 * r0, b2 * p0 * p0])
        delta = np.array([dp, dr]) / n
        remainder = f(p0 + delta[0], r0 + delta[1]) - f(p0, r0) - grad @ delta
        assert abs(remainder) <= eps * (1 + 1e-9) + 1e-15
    if beta == 1.0:
        d, delta = p0 + r0, 1.0 / n
        expected = 2 * delta**2 * (d + 2 * delta) ** 2 / (d - 2 * delta) ** 3 if d > 2 * delta else np.inf
        assert eps == pytest.approx(expected, rel=1e-12)
        slack = float(taylor_slack(p0, r0, n, 1.0))
        assert slack == (pytest.approx(n * expected * d * d, rel=1e-12) if np.isfinite(expected) else np.inf)


def _coordinatewise_maxima(lists: RankedLists, beta: float) -> list[tuple[float, float]]:
    """(P, R) of every threshold vector (every admissible position) that no single label can improve."""
    import itertools

    kept = [k for k in range(lists.n_labels) if lists.n_relevant[k] > 0]
    options = []
    for k in kept:
        opts = label_options(lists, k)
        options.append([(tp / cut if cut else 0.0, tp / lists.n_relevant[k]) for cut, tp in opts])
    n = len(kept)
    maxima = []
    for combo in itertools.product(*[range(len(o)) for o in options]):
        P = sum(options[i][c][0] for i, c in enumerate(combo)) / n
        R = sum(options[i][c][1] for i, c in enumerate(combo)) / n
        f = float(oracle_f_beta(P, R, beta))
        improvable = False
        for i, c in enumerate(combo):
            for alt in range(len(options[i])):
                if alt != c:
                    P2 = P + (options[i][alt][0] - options[i][c][0]) / n
                    R2 = R + (options[i][alt][1] - options[i][c][1]) / n
                    if float(oracle_f_beta(P2, R2, beta)) > f + 1e-12:
                        improvable = True
                        break
            if improvable:
                break
        if not improvable:
            maxima.append((P, R))
    return maxima


@SETTINGS
@given(small_instances(max_labels=3, max_docs=6), st.integers(1, 12))
def test_every_coordinatewise_maximum_lies_in_a_region_cell(instance, k):
    """The sound error region: whatever the grid, every coordinate-wise maximum found by brute force (and so
    the fixed point of V when there is one) lies in a cell of the region."""
    from xmlthresh.strategies.linearization_region import _in_cells

    lists, beta = instance
    model = fit("linearization_region", lists, beta=beta, grid=k)
    table = model.grid_table()
    cells = table["cell_in_region"].to_numpy().reshape(k + 1, k + 1)[:k, :k]
    assert model.info_["region_cells"] == int(cells.sum())
    for P, R in _coordinatewise_maxima(lists.with_relevant_only()[0] if (lists.n_relevant == 0).any() else lists, beta):
        assert _in_cells(cells, k, P, R), (P, R)
    if model.info_["region_contains_fixed_point"] is not None:
        assert model.info_["region_contains_fixed_point"]
