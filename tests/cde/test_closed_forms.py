"""The closed forms the estimators are tuned with: Gaussian-mixture squared norms, the validation CDE
loss of kernel estimates, Gaussian conditioning, the cosine basis and the logit transform."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from xmlthresh.cde.basis import cosine_1d, low_degree_features, tensor_features, tensor_on_grid
from xmlthresh.cde.estimators.gmm import condition_mixture
from xmlthresh.cde.mixture import DiagKernelMixture, FullGaussianMixture, choose_components
from xmlthresh.cde.transform import TargetTransform
from xmlthresh.cde.tuning import kernel_cde_losses, knn_cde_losses

from .conftest import midpoint_grid

BOX = np.array([[-7.0, 7.0], [-7.0, 7.0]])


@pytest.fixture(scope="module")
def grid():
    return midpoint_grid(BOX, 300)


def _random_full_mixture(rng, m=3, K=3):
    A = rng.normal(size=(K, 2, 2))
    covs = A @ np.swapaxes(A, 1, 2) * 0.1 + 0.2 * np.eye(2)
    w = rng.random((m, K))
    return FullGaussianMixture(w / w.sum(1, keepdims=True), rng.normal(size=(m, K, 2)), covs)


def test_mixture_densities_norms_and_samples(grid):
    pts, cell = grid
    rng = np.random.default_rng(0)
    w = rng.random((3, 5))
    diag = DiagKernelMixture(w / w.sum(1, keepdims=True), rng.normal(size=(3, 5, 2)), np.array([0.4, 0.7]))
    for mix in (diag, _random_full_mixture(rng)):
        dens = mix.pdf(pts[None])  # one grid shared by the three mixtures
        np.testing.assert_allclose(dens.sum(axis=1) * cell, 1.0, atol=1e-6)
        np.testing.assert_allclose(mix.squared_norm(), (dens**2).sum(axis=1) * cell, rtol=1e-6)
        draws = mix.sample(200_000, np.random.default_rng(1))
        np.testing.assert_allclose(draws.mean(axis=1), (dens * cell) @ pts, atol=0.02)


def test_choose_components_follows_the_weights():
    w = np.array([[0.0, 0.25, 0.75], [1.0, 0.0, 0.0]])
    comp = choose_components(w, 100_000, np.random.default_rng(2))
    np.testing.assert_allclose(np.bincount(comp[0], minlength=3) / 1e5, w[0], atol=0.01)
    assert np.all(comp[1] == 0)


@pytest.mark.parametrize("shared", [True, False])
def test_kernel_loss_matches_numerical_integration(shared, grid):
    pts, cell = grid
    rng = np.random.default_rng(3)
    m, K = 4, 6
    q = 1 if shared else m
    means = rng.normal(size=(q, K, 2))
    sets = rng.random((2, q, K))
    sets /= sets.sum(axis=2, keepdims=True)
    U_val = rng.normal(size=(m, 2))
    scale, factors = np.array([0.8, 1.3]), [0.3, 0.6]
    losses = kernel_cde_losses(sets, means, U_val, scale, factors)
    for s in range(2):
        for ib, b in enumerate(factors):
            mix = DiagKernelMixture(sets[s], means, b * scale)
            sq = (mix.pdf(pts[None]) ** 2).sum(axis=1) * cell
            at_val = mix.pdf(U_val[:, None, :])[:, 0]
            assert losses[s, ib] == pytest.approx(np.mean(sq - 2 * at_val), rel=1e-4)


def test_knn_loss_equals_the_general_one():
    rng = np.random.default_rng(4)
    means, U_val = rng.normal(size=(7, 12, 3)), rng.normal(size=(7, 3))
    ks, factors, scale = [1, 4, 12], [0.2, 0.5, 1.0], np.array([1.0, 0.5, 2.0])
    sets = np.zeros((3, 7, 12))
    for s, k in enumerate(ks):
        sets[s, :, :k] = 1.0 / k
    general = kernel_cde_losses(sets, means, U_val, scale, factors)
    np.testing.assert_allclose(knn_cde_losses(means, U_val, scale, ks, factors), general, rtol=1e-4)


def test_gaussian_conditioning():
    """One joint Gaussian over (x, u): the textbook conditional mean and covariance."""
    rng = np.random.default_rng(5)
    A = rng.normal(size=(4, 4))
    cov = A @ A.T + np.eye(4)
    mean = rng.normal(size=4)
    x = rng.normal(size=(3, 2))
    w, cm, cc = condition_mixture(np.array([1.0]), mean[None], cov[None], x)
    Sxx, Sxu, Suu = cov[:2, :2], cov[:2, 2:], cov[2:, 2:]
    np.testing.assert_allclose(w, 1.0)
    np.testing.assert_allclose(cm[:, 0], mean[2:] + (x - mean[:2]) @ np.linalg.solve(Sxx, Sxu))
    np.testing.assert_allclose(cc[0], Suu - Sxu.T @ np.linalg.solve(Sxx, Sxu))
    # two components: the responsibilities are pi_k N(x; mu_x, S_xx) normalised
    w2, _, _ = condition_mixture(np.array([0.3, 0.7]), np.stack([mean, -mean]), np.stack([cov, cov]), x)

    p = np.column_stack(
        [0.3 * multivariate_normal(mean[:2], Sxx).pdf(x), 0.7 * multivariate_normal(-mean[:2], Sxx).pdf(x)]
    )
    np.testing.assert_allclose(w2, p / p.sum(axis=1, keepdims=True))


def test_cosine_basis_is_orthonormal_and_tensorised():
    t = (np.arange(4000) + 0.5) / 4000
    B = cosine_1d(t, 6)
    np.testing.assert_allclose(B.T @ B / t.size, np.eye(6), atol=1e-10)
    T2 = np.column_stack([t[:50], t[::-1][:50]])
    F = tensor_features(T2, 3)
    assert F.shape == (50, 9)
    np.testing.assert_allclose(F[:, 1 * 3 + 2], cosine_1d(T2[:, 0], 3)[:, 1] * cosine_1d(T2[:, 1], 3)[:, 2])
    assert low_degree_features(T2, 2).shape == (50, 5)  # (0,1) (0,2) (1,0) (1,1) (2,0)
    C = np.random.default_rng(6).normal(size=(2, 3, 3))
    g = (np.arange(5) + 0.5) / 5
    on_grid = tensor_on_grid(C, [cosine_1d(g, 3), cosine_1d(g, 3)])
    G1, G2 = np.meshgrid(g, g, indexing="ij")
    direct = C.reshape(2, -1) @ tensor_features(np.column_stack([G1.ravel(), G2.ravel()]), 3).T
    np.testing.assert_allclose(on_grid.reshape(2, -1), direct)


def test_logit_transform_jacobian():
    tr = TargetTransform(np.array([[1.0, 3.0], [-1.0, 0.0]]))
    Z = np.array([[1.5, -0.2], [2.9, -0.999]])
    U = tr.forward(Z)
    np.testing.assert_allclose(tr.inverse(U), Z)
    eps = 1e-6  # |du/dz| by finite differences, coordinate-wise
    fd = np.prod((tr.forward(Z + eps) - tr.forward(Z - eps)) / (2 * eps), axis=1)
    np.testing.assert_allclose(np.exp(tr.log_jacobian_u(U)), fd, rtol=1e-6)
    assert list(tr.inside(np.array([[1.0, -0.5], [2.0, -0.5], [3.5, -0.5]]))) == [False, True, False]
    assert TargetTransform(None).is_identity
