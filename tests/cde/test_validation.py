"""Bad input gives a clear ValueError naming the problem: NaNs, shapes, boxes, unknown names."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.cde import CDE_DATASETS, ESTIMATORS
from xmlthresh._util.registry import UnknownNameError

from .conftest import fast_params


@pytest.fixture(scope="module")
def xz():
    rng = np.random.default_rng(0)
    X = rng.random((60, 3))
    Z = np.column_stack([X[:, 0] + 0.1 * rng.standard_normal(60), rng.random(60)])
    return X, Z


@pytest.fixture(scope="module")
def fitted(xz):
    return ESTIMATORS.get("nnkcde")(**fast_params("nnkcde")).fit(*xz)


@pytest.mark.parametrize("name", sorted(ESTIMATORS.names()))
def test_nan_in_features_is_named(name, xz):
    X, Z = xz
    X = X.copy()
    X[[4, 7], 1] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN.*2 row\(s\) \(first: \[4, 7\]\).*impute"):
        ESTIMATORS.get(name)().fit(X, Z)


def test_nan_in_targets_and_queries(xz, fitted):
    X, Z = xz
    Zbad = Z.copy()
    Zbad[3, 0] = np.inf
    with pytest.raises(ValueError, match=r"Z contains NaN or infinite values"):
        ESTIMATORS.get("marginal")().fit(X, Zbad)
    Xq = X[:5].copy()
    Xq[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        fitted.predict_density(Xq, Z[:5])
    with pytest.raises(ValueError, match="Z_points contains NaN"):
        fitted.predict_density(X[:5], np.full((5, 2), np.nan))


@pytest.mark.parametrize("name", sorted(ESTIMATORS.names()))
def test_targets_outside_the_box_are_rejected(name, xz):
    X, Z = xz
    bounds = [[Z[:, 0].min() + 0.05, Z[:, 0].max() + 1], [-1, 2]]
    with pytest.raises(ValueError, match=r"on or outside the declared bounds.*coordinate\(s\) \[0\].*widen `bounds`"):
        ESTIMATORS.get(name)(bounds=bounds).fit(X, Z)


@pytest.mark.parametrize(
    "bounds, message",
    [
        ([[0, 1]], r"bounds must have shape \(2, 2\)"),
        ([[0, 1], [2, 1]], r"lo < hi .* coordinate\(s\) \[1\]"),
        ([[0, np.inf], [0, 1]], "bounds must be finite"),
    ],
)
def test_malformed_bounds(bounds, message, xz):
    with pytest.raises(ValueError, match=message):
        ESTIMATORS.get("marginal")(bounds=bounds).fit(*xz)


def test_wrong_shapes(xz, fitted):
    X, Z = xz
    est = ESTIMATORS.get("marginal")()
    with pytest.raises(ValueError, match=r"X is 1-D.*reshape\(-1, 1\)"):
        est.fit(X[:, 0], Z)
    with pytest.raises(ValueError, match="same number of rows"):
        est.fit(X, Z[:-1])
    with pytest.raises(ValueError, match="4 target columns.*1 to 3"):
        est.fit(X, np.hstack([Z, Z]))
    with pytest.raises(ValueError, match="at least 10 training samples"):
        est.fit(X[:5], Z[:5])
    with pytest.raises(ValueError, match="X has 2 features, but the estimator was fitted with 3"):
        fitted.predict_density(X[:4, :2], Z[:4])
    with pytest.raises(ValueError, match="Z_points has 1 target columns, but the estimator was fitted with 2"):
        fitted.predict_density(X[:4], Z[:4, 0])
    with pytest.raises(ValueError, match="same number of rows"):
        fitted.predict_density(X[:4], Z[:3])
    with pytest.raises(ValueError, match=r"grid must have shape \(n_points, 2\)"):
        fitted.density_on_grid(X[:4], np.zeros((10, 3)))
    with pytest.raises(ValueError, match="n_samples must be a positive integer"):
        fitted.quadrature(X[:4], n_samples=0)


def test_predict_before_fit_is_a_clear_error(xz):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="not fitted"):
        ESTIMATORS.get("ckde")().predict_density(*xz)


def test_unknown_names_list_the_known_ones():
    with pytest.raises(UnknownNameError, match="unknown estimator 'knn'; known: ") as raised:
        ESTIMATORS.get("knn")
    known = str(raised.value).split("known: ")[1].split(", ")  # the built-ins, and installed plugins' names
    assert {"ckde", "flexcode", "gmm", "marginal", "nnkcde", "rfcde"} <= set(known) and known == sorted(known)
    with pytest.raises(UnknownNameError, match="unknown cde_dataset 'mnist'; known: fork, surd, xanes"):
        CDE_DATASETS.get("mnist")


@pytest.mark.parametrize(
    "cls, kwargs, message",
    [
        ("surd", {"nz": 4}, "nz must be 1, 2 or 3"),
        ("surd", {"nz": 2, "d": [0.1, 0.2, 0.3]}, "one value per target coordinate"),
        ("surd", {"a": -1.0}, "noise std a must be >= 0"),
        ("surd", {"d": [0.0, 1.0]}, "half-widths d must be positive"),
        ("fork", {"m": 0}, "number of branches m must be a positive integer"),
        ("fork", {"a": 0.0}, "branch std a must be positive"),
        ("fork", {"nx": 0}, "nx must be an integer >= 1"),
        ("xanes", {"sample": "sample9"}, "unknown XANES sample 'sample9'; available: sample2, sample3"),
        ("xanes", {"targets": ["r1", "r1"]}, "1 to 3 distinct parameter names"),
    ],
)
def test_dataset_parameters_are_checked(cls, kwargs, message):
    with pytest.raises(ValueError, match=message):
        CDE_DATASETS.get(cls)(**kwargs)


def test_a_single_test_point_and_an_impossible_quadrature_are_refused_before_the_fit(monkeypatch):
    """``n_test=1`` reported a standard error of 0.0; ``cde.n_samples=10^11`` died in a 745 GiB allocation
    after the fit."""
    from xmlthresh.cde.benchmark import run_benchmark

    with pytest.raises(ValueError, match=r"^cde_dataset\.n_test must be an integer >= 2 \(the losses' standard "
                                         r"errors need two test points\), got 1$"):
        run_benchmark("marginal", "surd", 0, dataset_params={"n_test": 1})
    monkeypatch.setenv("XMLTHRESH_MAX_MEMORY", "16G")
    with pytest.raises(ValueError, match=r"^cde\.n_samples=100,000,000,000 nodes x 1,000 test points x 8 values "
                                         r"need about 6,400,000\.0 GB of memory"):
        run_benchmark("marginal", "surd", 0, n_samples=10**11)


def test_a_density_slice_beyond_the_memory_budget_is_refused_before_the_fit(monkeypatch):
    """``cde.slice_grid=100000`` died after the fit in a 74.5 GiB allocation (the G x G grid)."""
    from helpers import run_cli

    monkeypatch.setenv("XMLTHRESH_MAX_MEMORY", "16G")
    proc = run_cli(["task=cde", "cde_dataset=fork", "cde.density_at_x=[0.5]", "cde.slice_grid=100000",
                    "tracking.enabled=false", "warm_up=false", "plots=false"])
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "xmlthresh: error: cde.slice_grid=100000 needs about 640.0 GB of memory ((slice_grid + 1)^2 = 1e+10 grid points "
        "x 64 bytes), more than the 17.2 GB available"), proc.stderr
