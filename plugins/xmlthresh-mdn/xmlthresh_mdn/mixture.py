"""Batches of Gaussian mixtures whose every query has its own weights, means and diagonal scales.

Query i has the density  f_i(u) = sum_k w[i, k] N(u; mu[i, k], diag(s[i, k]^2)): what a mixture density
network outputs for row x_i. The core's mixtures do not cover it (``DiagKernelMixture`` shares one bandwidth,
``FullGaussianMixture`` one covariance per component across queries). The squared L2 norm is in closed form,

    int f_i^2 du = sum_{j,k} w_ij w_ik N(mu_ij - mu_ik; 0, diag(s_ij^2 + s_ik^2)),

so the CDE loss is exact (no Monte Carlo) when the targets are not logit-transformed. All work is done in
blocks of queries (and points), so that the temporaries (queries x points x components x d) stay small.
"""

from __future__ import annotations

import numpy as np
from xmlthresh.cde.mixture import blocks, blocks2d, choose_components

_LOG_2PI = float(np.log(2.0 * np.pi))


class DiagGaussianMixture:
    """Weights (q, K), means (q, K, d), scales (q, K, d) > 0; ``q == 1`` is one mixture for every query."""

    def __init__(self, weights: np.ndarray, means: np.ndarray, scales: np.ndarray) -> None:
        self.weights = np.asarray(weights, dtype=np.float64)
        self.means = np.asarray(means, dtype=np.float64)
        self.scales = np.asarray(scales, dtype=np.float64)
        if self.means.shape != self.scales.shape or self.means.shape[:2] != self.weights.shape:
            raise ValueError(
                f"weights {self.weights.shape}, means {self.means.shape} and scales {self.scales.shape} do not match"
            )
        if not np.all(self.scales > 0):
            raise ValueError("mixture scales must be positive")

    @property
    def shared(self) -> bool:
        return self.weights.shape[0] == 1

    def pdf(self, U: np.ndarray) -> np.ndarray:
        """Density of mixture i at U[i, j] -> (rows, n); ``U`` (m or 1, n, d), one side may be shared."""
        U = np.asarray(U, dtype=np.float64)
        q, K, d = self.means.shape
        rows, n = max(q, U.shape[0]), U.shape[1]
        inv = 1.0 / self.scales
        # log of w_k N(.; mu_k, s_k) at the mean: log w_k - sum log s_k - d/2 log 2 pi  (q, K)
        with np.errstate(divide="ignore"):
            log_c = np.log(self.weights) - np.log(self.scales).sum(-1) - 0.5 * d * _LOG_2PI
        out = np.empty((rows, n))
        for sl, cols in blocks2d(rows, n, K * d):
            Uc = U[:, cols] if U.shape[0] == 1 else U[sl, cols]
            part = slice(None) if q == 1 else sl
            z = (Uc[:, :, None, :] - self.means[part][:, None]) * inv[part][:, None]  # (c, n, K, d)
            out[sl, cols] = np.exp(log_c[part][:, None, :] - 0.5 * (z * z).sum(-1)).sum(-1)
        return out

    def sample(self, n: int, rng: np.random.Generator, stratified: bool = False) -> np.ndarray:
        """``n`` draws from each mixture -> (q, n, d) (``stratified``: see ``choose_components``)."""
        comp = choose_components(self.weights, n, rng, stratified)[..., None]
        mu = np.take_along_axis(self.means, comp, axis=1)
        sd = np.take_along_axis(self.scales, comp, axis=1)
        return mu + rng.standard_normal(mu.shape) * sd

    def squared_norm(self) -> np.ndarray:
        """int f_i(u)^2 du for each mixture -> (q,), in closed form."""
        q, K, d = self.means.shape
        var = self.scales**2
        out = np.empty(q)
        for sl in blocks(q, K * K * d):
            pair = var[sl][:, :, None, :] + var[sl][:, None, :, :]  # (c, K, K, d)
            diff = self.means[sl][:, :, None, :] - self.means[sl][:, None, :, :]
            log_n = -0.5 * ((diff * diff) / pair + np.log(pair)).sum(-1) - 0.5 * d * _LOG_2PI
            w = self.weights[sl]
            out[sl] = np.einsum("cj,cjk,ck->c", w, np.exp(log_n), w)
        return out
