"""The synthetic generators: seeded, their closed-form true densities normalised and consistent with
their samplers, and their closed-form squared norms exact."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kstest

from xmlthresh.cde import CDE_DATASETS
from xmlthresh.cde.datasets import CDEData, relevance_summary

from .conftest import midpoint_grid

GENERATORS = {
    "surd-2d": ("surd", {}),
    "surd-1d": ("surd", {"nz": 1, "d": [0.3], "alpha": [0.5], "a": 0.05}),
    "surd-3d": ("surd", {"nz": 3, "d": [0.1, 1.0, 0.4], "alpha": [0.3, 0.3, -0.2], "a": 0.05}),
    "surd-noiseless": ("surd", {"a": 0.0}),
    "fork-2": ("fork", {}),
    "fork-3": ("fork", {"m": 3, "a": 0.5}),
}


def _make(key, **sizes):
    name, params = GENERATORS[key]
    return CDE_DATASETS.get(name)(**params, **sizes)


@pytest.mark.parametrize("key", sorted(GENERATORS))
def test_seeded_split_shapes_and_unpacking(key):
    gen = _make(key, n_train=50, n_test=20)
    data = gen.load(seed=4)
    X_train, Z_train, X_test, Z_test, true_density = data
    assert isinstance(data, CDEData) and true_density is not None
    assert X_train.shape == (50, 11) and X_test.shape == (20, 11)
    assert Z_train.shape[0] == 50 and Z_test.shape[0] == 20 and Z_train.shape[1] == data.n_targets
    again = gen.load(seed=4)
    np.testing.assert_array_equal(again.Z_train, Z_train)
    assert not np.array_equal(gen.load(seed=5).Z_train, Z_train)
    assert np.all(true_density(X_test, Z_test) > 0) or key == "surd-noiseless"


@pytest.mark.parametrize("key", ["surd-1d", "surd-2d", "surd-noiseless", "fork-2", "fork-3"])
def test_true_density_integrates_to_one_and_matches_its_squared_norm(key):
    gen = _make(key, n_train=10, n_test=10)
    X = np.random.default_rng(0).random((3, 11))
    d = gen.nz
    box = np.array([[-6.0, 6.0]] * d) if key.startswith("fork") else np.array([[-1.5, 1.5]] * d)
    grid, cell = midpoint_grid(box, 4000 if d == 1 else 600)
    dens = gen.true_density(np.repeat(X, len(grid), axis=0), np.tile(grid, (3, 1))).reshape(3, -1)
    np.testing.assert_allclose(dens.sum(axis=1) * cell, 1.0, atol=0.01)
    np.testing.assert_allclose((dens**2).sum(axis=1) * cell, gen.true_squared_norm(X), rtol=0.02)


@pytest.mark.parametrize("key", sorted(GENERATORS))
def test_sampler_agrees_with_the_density(key):
    """E_{Z ~ sampler}[f(Z | x)] = int f^2: the density and the sampler describe the same law."""
    gen = _make(key, n_train=10, n_test=10)
    x = np.random.default_rng(1).random((1, 11))
    X = np.repeat(x, 100_000, axis=0)
    Z = gen.sample_z(X, np.random.default_rng(2))
    values = gen.true_density(X, Z)
    expected = gen.true_squared_norm(x)[0]
    assert abs(values.mean() - expected) < 4 * values.std() / np.sqrt(len(values)) + 1e-9


def test_surd_geometry():
    """Noise-free SURD: z - shift lies in the box of half-widths d after rotating back by phi * s(x)."""
    gen = CDE_DATASETS.get("surd")(a=0.0, n_train=10, n_test=10)
    X = np.random.default_rng(3).random((2000, 11))
    Z = gen.sample_z(X, np.random.default_rng(4))
    s = relevance_summary(X, 10)
    shift = gen.alpha * (s - 0.5)[:, None]
    c, sn = np.cos(np.pi * s), np.sin(np.pi * s)
    V = Z - shift
    y = np.column_stack([c * V[:, 0] + sn * V[:, 1], -sn * V[:, 0] + c * V[:, 1]])
    assert np.all(np.abs(y) <= gen.d + 1e-12)
    assert np.abs(y).max(axis=0) == pytest.approx(gen.d, rel=0.02)


def test_irrelevant_features_do_not_matter():
    gen = CDE_DATASETS.get("fork")(ny=3, n_train=10, n_test=10)
    X = np.random.default_rng(5).random((4, 13))
    Y = X.copy()
    Y[:, 10:] = np.random.default_rng(6).random((4, 3))
    Z = np.random.default_rng(7).normal(size=(4, 2))
    np.testing.assert_array_equal(gen.true_density(X, Z), gen.true_density(Y, Z))


def test_relevance_summary_is_close_to_uniform():
    X = np.random.default_rng(8).random((20_000, 10))
    assert kstest(relevance_summary(X, 10), "uniform").statistic < 0.02  # normal approximation of Irwin–Hall
