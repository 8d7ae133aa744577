"""Batches of Gaussian mixtures: the conditional densities of the kernel and mixture estimators.

Query i has the density  f_i(u) = sum_k w[i, k] N(u; mu[i, k], S_k)  in working space. Two flavours:

* ``DiagKernelMixture`` — every component has the same diagonal covariance diag(h^2) (kernel density
  estimates: marginal, nnkcde, ckde, rfcde; the component means are training targets);
* ``FullGaussianMixture`` — component k has a full covariance S_k shared by all queries (conditioned GMM).

A batch whose leading dimension is 1 is *shared*: the same mixture for every query (the marginal KDE).
Besides evaluation and sampling, both give the squared L2 norm in closed form,

    int f_i^2 du = sum_{j,k} w_ij w_ik N(mu_ij - mu_ik; 0, S_j + S_k),

because the integral of a product of two Gaussians is a Gaussian in the difference of their means. This
is what makes the CDE loss of these estimators exact and cheap to tune on.
Work is done in blocks of queries and points so that temporary (queries x points x components) arrays
stay small.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

_LOG_2PI = float(np.log(2.0 * np.pi))
#: element budget of one temporary block (about 32 MB of float64)
_BLOCK = 4_000_000


def blocks(n_rows: int, cost_per_row: int) -> Iterator[slice]:
    """Consecutive row slices whose temporaries hold at most ``_BLOCK`` elements."""
    size = max(1, _BLOCK // max(1, cost_per_row))
    for start in range(0, n_rows, size):
        yield slice(start, min(n_rows, start + size))


def blocks2d(n_rows: int, n_cols: int, cost: int) -> Iterator[tuple[slice, slice]]:
    """(row, column) slices tiling an n_rows x n_cols task whose temporaries hold ``cost`` per cell."""
    for rows in blocks(n_rows, n_cols * cost):
        width = max(1, _BLOCK // max(1, cost * (rows.stop - rows.start)))
        for start in range(0, n_cols, width):
            yield rows, slice(start, min(n_cols, start + width))


def choose_components(weights: np.ndarray, n: int, rng: np.random.Generator, stratified: bool = False) -> np.ndarray:
    """For each row of ``weights`` (q, K), ``n`` component indices drawn with those probabilities.

    ``stratified`` draws one uniform per stratum [j/n, (j+1)/n) instead of n independent ones (systematic
    sampling): every draw still has the right distribution, so Monte Carlo averages stay unbiased, but
    each component gets within one draw of its expected count, which removes most of the variance that
    comes from picking components. The draws are then sorted by component, not independent.
    """
    q, K = weights.shape
    cum = np.cumsum(weights, axis=1)
    cum /= cum[:, -1:]
    offsets = np.arange(q, dtype=np.float64)[:, None]
    flat = (cum + offsets).ravel()
    uniforms = (np.arange(n) + rng.random((q, n))) / n if stratified else rng.random((q, n))
    draws = (uniforms + offsets).ravel()
    pos = np.searchsorted(flat, draws, side="right").reshape(q, n) - np.arange(q)[:, None] * K
    return np.clip(pos, 0, K - 1)


def _pairwise_sq(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """|a - b|^2 for a in A (c, n, d), b in B (c, K, d) -> (c, n, K) (broadcasts a leading 1)."""
    sq = (A * A).sum(-1)[..., :, None] + (B * B).sum(-1)[..., None, :] - 2.0 * A @ np.swapaxes(B, -1, -2)
    return np.maximum(sq, 0.0, out=sq)


def gaussian_pair_sum(M: np.ndarray, w: np.ndarray, scale: float) -> float:
    """sum_{j,k} w_j w_k exp(-|m_j - m_k|^2 / (2 scale^2)) for means M (K, d), in tiles of ``_BLOCK`` pairs.

    O(K) memory whatever K (the K x K kernel matrix is never formed); time stays O(K^2), so callers keep
    K moderate (the marginal KDE caps its centres).
    """
    total = 0.0
    for rows in blocks(M.shape[0], M.shape[0]):
        D = _pairwise_sq(M[None, rows], M[None])[0]
        total += float(w[rows] @ (np.exp(D * (-0.5 / scale**2)) @ w))
    return total


class DiagKernelMixture:
    """Mixtures with a common diagonal bandwidth: weights (q, K), means (q, K, d), bandwidth (d,)."""

    def __init__(self, weights: np.ndarray, means: np.ndarray, bandwidth: np.ndarray) -> None:
        self.weights = np.asarray(weights, dtype=np.float64)
        self.means = np.asarray(means, dtype=np.float64)
        self.bandwidth = np.asarray(bandwidth, dtype=np.float64)
        if self.means.shape[:2] != self.weights.shape:
            raise ValueError(f"means {self.means.shape} do not match weights {self.weights.shape}")

    @property
    def shared(self) -> bool:
        return self.weights.shape[0] == 1

    def pdf(self, U: np.ndarray) -> np.ndarray:
        """Density of mixture i at U[i, j] -> (rows, n). ``U`` (m or 1, n, d); one side may be shared."""
        U = np.asarray(U, dtype=np.float64)
        q, K, d = self.means.shape
        if q == 1 and U.shape[0] > 1:  # one mixture for all queries: evaluate every point at once
            m, n, _ = U.shape
            return self.pdf(U.reshape(1, m * n, d)).reshape(m, n)
        rows, n = max(q, U.shape[0]), U.shape[1]
        inv = 1.0 / self.bandwidth
        log_norm = -0.5 * d * _LOG_2PI - np.log(self.bandwidth).sum()
        Us, Ms = U * inv, self.means * inv
        out = np.empty((rows, n))
        for sl, cols in blocks2d(rows, n, K):
            Uc = Us[:, cols] if U.shape[0] == 1 else Us[sl, cols]
            Mc, Wc = (Ms, self.weights) if q == 1 else (Ms[sl], self.weights[sl])
            kern = np.exp(-0.5 * _pairwise_sq(Uc, Mc))
            out[sl, cols] = (kern @ Wc[:, :, None])[..., 0]
        return out * np.exp(log_norm)

    def sample(self, n: int, rng: np.random.Generator, stratified: bool = False) -> np.ndarray:
        """``n`` draws from each mixture -> (q, n, d) (``stratified``: see ``choose_components``)."""
        comp = choose_components(self.weights, n, rng, stratified)
        mu = np.take_along_axis(self.means, comp[..., None], axis=1)
        return mu + rng.standard_normal(mu.shape) * self.bandwidth

    def squared_norm(self) -> np.ndarray:
        """int f_i(u)^2 du for each mixture -> (q,), in closed form."""
        q, K, d = self.means.shape
        scale = np.sqrt(2.0) * self.bandwidth  # N(mu_j - mu_k; 0, 2 h^2)
        Ms = self.means / scale
        log_norm = -0.5 * d * _LOG_2PI - np.log(scale).sum()
        out = np.empty(q)
        if K * K > _BLOCK:  # large mixtures (a marginal KDE): tile the K x K pairs, one mixture at a time
            for i in range(q):
                out[i] = gaussian_pair_sum(Ms[i], self.weights[i], 1.0)
            return out * np.exp(log_norm)
        for sl in blocks(q, K * K):
            A = np.exp(-0.5 * _pairwise_sq(Ms[sl], Ms[sl]))
            w = self.weights[sl]
            out[sl] = ((A @ w[:, :, None])[..., 0] * w).sum(-1)
        return out * np.exp(log_norm)


class FullGaussianMixture:
    """Mixtures with full component covariances: weights (m, K), means (m, K, d), covariances (K, d, d)."""

    def __init__(self, weights: np.ndarray, means: np.ndarray, covariances: np.ndarray) -> None:
        self.weights = np.asarray(weights, dtype=np.float64)
        self.means = np.asarray(means, dtype=np.float64)
        self.covariances = np.asarray(covariances, dtype=np.float64)
        self._chol = np.linalg.cholesky(self.covariances)
        self._chol_inv = np.linalg.inv(self._chol)
        self._log_det = 2.0 * np.log(np.diagonal(self._chol, axis1=-2, axis2=-1)).sum(-1)

    @property
    def shared(self) -> bool:
        return self.weights.shape[0] == 1

    def pdf(self, U: np.ndarray) -> np.ndarray:
        """Density of mixture i at U[i, j] -> (rows, n); ``U`` (m or 1, n, d)."""
        U = np.asarray(U, dtype=np.float64)
        q, K, d = self.means.shape
        rows, n = max(q, U.shape[0]), U.shape[1]
        out = np.empty((rows, n))
        log_c = -0.5 * d * _LOG_2PI - 0.5 * self._log_det  # (K,)
        for sl, cols in blocks2d(rows, n, K * d):
            Uc = U[:, cols] if U.shape[0] == 1 else U[sl, cols]
            Mc, Wc = (self.means, self.weights) if q == 1 else (self.means[sl], self.weights[sl])
            diff = Uc[:, :, None, :] - Mc[:, None, :, :]  # (c, n, K, d)
            y = np.einsum("cnkd,ked->cnke", diff, self._chol_inv)
            dens = np.exp(log_c - 0.5 * (y * y).sum(-1))  # (c, n, K)
            out[sl, cols] = (dens @ Wc[:, :, None])[..., 0]
        return out

    def sample(self, n: int, rng: np.random.Generator, stratified: bool = False) -> np.ndarray:
        """``n`` draws from each mixture -> (q, n, d) (``stratified``: see ``choose_components``)."""
        comp = choose_components(self.weights, n, rng, stratified)
        mu = np.take_along_axis(self.means, comp[..., None], axis=1)
        eps = rng.standard_normal(mu.shape)
        return mu + np.einsum("qnde,qne->qnd", self._chol[comp], eps)

    def squared_norm(self) -> np.ndarray:
        """int f_i(u)^2 du for each mixture -> (q,), in closed form."""
        q, K, d = self.means.shape
        pair_cov = self.covariances[:, None] + self.covariances[None, :]  # (K, K, d, d)
        chol = np.linalg.cholesky(pair_cov)
        chol_inv = np.linalg.inv(chol)
        log_c = -0.5 * d * _LOG_2PI - np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)  # (K, K)
        out = np.empty(q)
        for sl in blocks(q, K * K * d):
            diff = self.means[sl][:, :, None, :] - self.means[sl][:, None, :, :]  # (c, K, K, d)
            y = np.einsum("cjkd,jked->cjke", diff, chol_inv)
            A = np.exp(log_c - 0.5 * (y * y).sum(-1))
            w = self.weights[sl]
            out[sl] = np.einsum("cj,cjk,ck->c", w, A, w)
        return out
