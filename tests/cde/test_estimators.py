"""Every estimator: densities integrate to 1 (+-1%) in 1, 2 and 3 dimensions, with and without a box,
its API is consistent (grid vs points, closed-form vs Monte Carlo squared norm) and scikit-learn-clean."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from xmlthresh.cde.base import MixtureCDE
from xmlthresh.cde import ESTIMATORS

from .conftest import ESTIMATOR_NAMES, fast_params, midpoint_grid, padded_box

#: cells per coordinate of the reference midpoint grid, per target dimension (3-D only here, in a test)
CELLS = {1: 2000, 2: 160, 3: 36}


def _fit(name, data, bounds=None, **extra):
    return ESTIMATORS.get(name)(**fast_params(name), bounds=bounds, **extra).fit(data.X_train, data.Z_train)


def support_box(est, data) -> np.ndarray:
    """A box holding (almost) all the mass: the declared / FlexCode box, else the data range widened."""
    if est.bounds_ is not None:
        return est.bounds_
    return est.box_ if hasattr(est, "box_") else padded_box(data.Z_train, 0.6)


@pytest.fixture(scope="module")
def fitted(small_data):
    """Every estimator fitted on every small problem, unbounded and bounded (box = range widened by 10%)."""
    cache = {}

    def get(name, d, bounded):
        key = (name, d, bounded)
        if key not in cache:
            data = small_data[d]
            bounds = padded_box(data.Z_train, 0.1) if bounded else None
            cache[key] = _fit(name, data, bounds)
        return cache[key]

    return get


@pytest.mark.parametrize("bounded", [False, True], ids=["unbounded", "bounded"])
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_density_integrates_to_one(name, d, bounded, fitted, small_data):
    est = fitted(name, d, bounded)
    data = small_data[d]
    box = support_box(est, data)
    grid, cell = midpoint_grid(box, CELLS[d])
    mass = est.density_on_grid(data.X_test[:3], grid).sum(axis=1) * cell
    np.testing.assert_allclose(mass, 1.0, atol=0.01)


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_no_mass_outside_the_box(name, fitted, small_data):
    est = fitted(name, 2, True)
    X = small_data[2].X_test[:4]
    lo, hi = est.bounds_[:, 0], est.bounds_[:, 1]
    outside = np.array([[lo[0] - 0.1, 0.5 * (lo[1] + hi[1])], [0.5 * (lo[0] + hi[0]), hi[1] + 1e-9], lo, hi])
    assert np.all(est.predict_density(X, outside) == 0.0)
    quad = est.quadrature(X, n_samples=64, random_state=0)
    pts = np.broadcast_to(quad.points, (4,) + quad.points.shape[1:])
    assert np.all((pts >= lo) & (pts <= hi))
    assert np.all(np.isfinite(quad.density)) and np.all(quad.density >= 0)


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_points_and_grid_agree(name, fitted, small_data):
    est = fitted(name, 2, False)
    data = small_data[2]
    X, Z = data.X_test[:6], data.Z_test[:6]
    on_grid = est.density_on_grid(X, Z)  # every x against every z
    np.testing.assert_allclose(est.predict_density(X, Z), np.diag(on_grid), rtol=1e-10, atol=1e-12)
    assert on_grid.shape == (6, 6)


@pytest.mark.parametrize("bounded", [False, True], ids=["unbounded", "bounded"])
@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_squared_norm_matches_the_grid(name, bounded, fitted, small_data):
    """int f^2 (closed form, midpoint rule or Monte Carlo) against a fine grid."""
    est = fitted(name, 2, bounded)
    data = small_data[2]
    X = data.X_test[:3]
    grid, cell = midpoint_grid(support_box(est, data), 200)
    reference = (est.density_on_grid(X, grid) ** 2).sum(axis=1) * cell
    quad = est.quadrature(X, n_samples=4000, random_state=1)
    exact = est._squared_norm_exact(X) is not None  # Gaussian closed form / FlexCode's midpoint rule
    assert exact == (not bounded or name == "flexcode")
    np.testing.assert_allclose(est.squared_norm(X, quadrature=quad), reference, rtol=0.01 if exact else 0.05)
    np.testing.assert_allclose(quad.squared_norm(), reference, rtol=0.05)  # Monte Carlo


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_quadrature_reproduces_moments(name, fitted, small_data):
    """The weighted nodes integrate z like the density does (mean of z from a fine grid)."""
    est = fitted(name, 2, False)
    data = small_data[2]
    X = data.X_test[:3]
    grid, cell = midpoint_grid(support_box(est, data), 200)
    dens = est.density_on_grid(X, grid) * cell
    mean_grid = dens @ grid
    quad = est.quadrature(X, n_samples=4000, random_state=2)
    pts = np.broadcast_to(quad.points, (3,) + quad.points.shape[1:])
    mean_quad = np.einsum("mn,mnd->md", quad.weights, pts)
    np.testing.assert_allclose(mean_quad, mean_grid, atol=0.1)


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_sklearn_contract(name, small_data):
    est = ESTIMATORS.get(name)(**fast_params(name))
    params = est.get_params()
    assert clone(est).get_params() == params
    assert not [k for k in vars(est) if k.endswith("_")], "__init__ must only store parameters"
    data = small_data[1]
    assert est.fit(data.X_train, data.Z_train) is est
    assert est.n_features_in_ == data.X_train.shape[1] and est.n_targets_ == 1
    dens = est.predict_density(data.X_test, data.Z_test[:, 0])  # 1-D targets are accepted as d = 1
    assert dens.shape == (len(data.X_test),) and np.all(dens >= 0)
    again = ESTIMATORS.get(name)(**fast_params(name)).fit(data.X_train, data.Z_train)
    np.testing.assert_array_equal(again.predict_density(data.X_test, data.Z_test), dens)  # seeded


@pytest.mark.parametrize("name", [name for name in ESTIMATOR_NAMES if issubclass(ESTIMATORS.get(name), MixtureCDE)])
def test_mixture_samples_follow_the_density(name, fitted, small_data):
    est = fitted(name, 2, True)
    X = small_data[2].X_test[:2]
    draws = est.sample(X, n_samples=3000, random_state=0)
    assert draws.shape == (2, 3000, 2)
    grid, cell = midpoint_grid(est.bounds_, 160)
    mean_grid = (est.density_on_grid(X, grid) * cell) @ grid
    np.testing.assert_allclose(draws.mean(axis=1), mean_grid, atol=0.08)


def test_marginal_ignores_x(small_data):
    data = small_data[2]
    est = _fit("marginal", data)
    z = np.repeat(data.Z_test[:1], 5, axis=0)
    dens = est.predict_density(data.X_test[:5], z)
    np.testing.assert_allclose(dens, dens[0])


def test_tuned_values_are_on_their_grids(small_data):
    data = small_data[2]
    nn = _fit("nnkcde", data)
    assert nn.k_ in (10, 40) and nn.tuning_losses_.shape == (2, 4)
    fc = _fit("flexcode", data)
    assert fc.n_basis_ in (6, 10) and fc.k_ in (20, 40)
    gm = _fit("gmm", data)
    assert gm.n_components_ in (2, 4) and gm.n_pca_ == data.X_train.shape[1]
