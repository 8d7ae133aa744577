"""Exact validation CDE loss of Gaussian-kernel estimators, for a whole grid of hyper-parameters at once.

For a kernel estimate  f^(u | x_i) = sum_k w_ik N(u; mu_ik, diag(b^2 s^2))  the CDE loss on a validation
point (x_i, u_i) is, up to a constant that does not depend on the estimator,

    l_i = int f^(u | x_i)^2 du - 2 f^(u_i | x_i)
        = sum_{j,k} w_ij w_ik N(mu_ij - mu_ik; 0, 2 b^2 s^2) - 2 sum_k w_ik N(u_i - mu_ik; 0, b^2 s^2),

in closed form (the integral of a product of two Gaussians). Its mean over the validation set estimates the
integrated squared error E_X int (f^ - f)^2 minus a constant, so minimising it over the grid of weight sets
(neighbour counts, x-bandwidths) and bandwidth factors b tunes the estimator without any numerical
integration. ``s`` is a per-coordinate scale (the std of the targets).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from xmlthresh.cde.mixture import _pairwise_sq, blocks


def kernel_cde_losses(
    weight_sets: np.ndarray, means: np.ndarray, U_val: np.ndarray, scale: np.ndarray, factors: Sequence[float]
) -> np.ndarray:
    """Mean validation loss for every (weight set, bandwidth factor) -> array (S, B).

    ``weight_sets`` (S, q, K): S candidate weightings of the K component means ``means`` (q, K, d), where
    q = 1 (the same mixture for every validation point, e.g. the marginal KDE) or q = m = len(U_val).
    """
    W = np.asarray(weight_sets, dtype=np.float64)
    S, q, K = W.shape
    m, d = U_val.shape
    factors = np.asarray(factors, dtype=np.float64)
    Ms, Us = means / scale, U_val / scale
    log_scale = np.log(scale).sum()
    c_pair = np.exp(-0.5 * d * np.log(4.0 * np.pi * factors**2) - log_scale)  # N(.; 0, 2 b^2 s^2) at 0
    c_val = np.exp(-0.5 * d * np.log(2.0 * np.pi * factors**2) - log_scale)  # N(.; 0, b^2 s^2) at 0
    total = np.zeros((S, factors.size))
    if q == 1:
        Wt = W[:, 0, :]  # (S, K)
        for sl in blocks(m, K):
            D_val = _pairwise_sq(Us[None, sl], Ms)[0]  # (c, K)
            for ib, b in enumerate(factors):
                cross = np.exp(-D_val / (2 * b * b)) @ Wt.T * c_val[ib]  # (c, S)
                total[:, ib] -= 2.0 * cross.sum(axis=0)
        for rows in blocks(K, K):  # the K x K pair kernel in row tiles: O(K) memory
            D_pair = _pairwise_sq(Ms[:, rows], Ms)[0]  # (r, K)
            for ib, b in enumerate(factors):
                A = np.exp(-D_pair / (4 * b * b)) * c_pair[ib]
                total[:, ib] += m * np.einsum("sk,kl,sl->s", Wt[:, rows], A, Wt)
        return total / m
    Wq = np.ascontiguousarray(np.moveaxis(W, 0, -1), dtype=np.float32)  # (m, K, S)
    Ms32, Us32 = Ms.astype(np.float32), Us.astype(np.float32)
    for sl in blocks(m, K * K):
        D_pair = _pairwise_sq(Ms32[sl], Ms32[sl])  # (c, K, K)
        D_val = ((Us32[sl, None, :] - Ms32[sl]) ** 2).sum(-1)  # (c, K)
        Wc = Wq[sl]
        for ib, b in enumerate(factors):
            A = np.exp(D_pair * np.float32(-1.0 / (4 * b * b)))
            sq = ((A @ Wc) * Wc).sum(axis=1, dtype=np.float64) * c_pair[ib]  # (c, S)
            kv = np.exp(D_val * np.float32(-1.0 / (2 * b * b)))
            cross = (kv[:, :, None] * Wc).sum(axis=1, dtype=np.float64) * c_val[ib]
            total[:, ib] += (sq - 2.0 * cross).sum(axis=0)
    return total / m


def knn_cde_losses(
    means: np.ndarray, U_val: np.ndarray, scale: np.ndarray, ks: Sequence[int], factors: Sequence[float]
) -> np.ndarray:
    """Mean validation loss of uniform weights over the first k of K sorted neighbours -> (len(ks), B).

    Same loss as ``kernel_cde_losses`` with w_ij = 1/k for j < k, but the double sum is read off the
    leading k x k blocks of one kernel matrix per bandwidth, so all k cost little more than the largest.
    Kernels are evaluated in float32, like in ``kernel_cde_losses``.
    """
    m, K, d = means.shape
    ks = np.asarray(ks, dtype=np.int64)
    factors = np.asarray(factors, dtype=np.float64)
    Ms, Us = (means / scale).astype(np.float32), (U_val / scale).astype(np.float32)
    log_scale = np.log(scale).sum()
    c_pair = np.exp(-0.5 * d * np.log(4.0 * np.pi * factors**2) - log_scale)
    c_val = np.exp(-0.5 * d * np.log(2.0 * np.pi * factors**2) - log_scale)
    total = np.zeros((ks.size, factors.size))
    for sl in blocks(m, K * K):
        D_pair = _pairwise_sq(Ms[sl], Ms[sl])
        D_val = ((Us[sl, None, :] - Ms[sl]) ** 2).sum(-1)
        for ib, b in enumerate(factors):
            A = np.exp(D_pair * np.float32(-1.0 / (4 * b * b)))
            kv = np.cumsum(np.exp(D_val * np.float32(-1.0 / (2 * b * b))), axis=1, dtype=np.float64)
            for s, k in enumerate(ks):
                sq = A[:, :k, :k].sum(axis=(1, 2), dtype=np.float64) / (k * k) * c_pair[ib]
                cross = kv[:, k - 1] / k * c_val[ib]
                total[s, ib] += (sq - 2.0 * cross).sum()
    return total / m


def best_cell(losses: np.ndarray) -> tuple[int, ...]:
    """Index of the smallest finite loss in a grid of losses."""
    flat = np.where(np.isfinite(losses), losses, np.inf)
    return tuple(int(i) for i in np.unravel_index(int(np.argmin(flat)), losses.shape))


def grid_search(grids: Sequence[Sequence[Any]], fit_one: Callable[..., tuple[Any, float]]
                ) -> tuple[tuple[int, ...], Any, np.ndarray]:
    """Fit one candidate per cell of the product of ``grids`` (one list of values per hyper-parameter, in
    order) with ``fit_one(*values) -> (candidate, validation loss)``; returns the best cell (:func:`best_cell`),
    its candidate and the grid of losses. The estimators that train a network per cell (the mdn and flow
    plugins) share it, so they visit the cells and break ties the same way."""
    losses = np.full([len(grid) for grid in grids], np.inf)
    candidates = {}
    for cell in itertools.product(*(range(len(grid)) for grid in grids)):
        candidates[cell], losses[cell] = fit_one(*(grid[i] for grid, i in zip(grids, cell)))
    cell = best_cell(losses)
    return cell, candidates[cell], losses


def minibatch_rows(n: int, batch_size: int, max_batches: int | None) -> int:
    """Rows per mini-batch for ``n`` fit rows: ``batch_size``, raised so that an epoch has at most
    ``max_batches`` of them (a large training split gets large batches: the per-step overhead, not the
    arithmetic, dominates a small network's epoch), and at most ``n``."""
    batch = int(batch_size)
    if max_batches is not None:
        batch = max(batch, -(-n // int(max_batches)))
    return min(batch, n)
