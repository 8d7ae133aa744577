"""``ckde`` — conditional kernel density estimation with separate x and z bandwidths.

f^(z | x) = sum_j w_j(x) N(u(z); u_j, diag(h_z^2)),  w_j(x) ∝ exp(-|x - x_j|^2 / (2 h_x^2))

(Nadaraya–Watson weights in standardised x times a Gaussian kernel in working-space z). The weights are
restricted to the ``n_neighbors`` nearest training points — a truncated Gaussian kernel: for the x
bandwidths that win the tuning the farther points carry negligible weight, and the truncation keeps time
and memory linear in the training size. h_x is a factor times the median distance to the
``n_neighbors``-th neighbour (so the grid adapts to the feature dimension); h_x and h_z are tuned jointly
on a validation split by the exact closed-form CDE loss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import StandardScaler

from xmlthresh.cde.base import DEFAULT_BANDWIDTHS, MixtureCDE, TunedCDE, capped_subset, target_scale
from xmlthresh.cde.mixture import DiagKernelMixture
from xmlthresh.cde.registry import ESTIMATORS
from xmlthresh.cde.tuning import best_cell, kernel_cde_losses


def nadaraya_watson_weights(dist: np.ndarray, x_bandwidth: float) -> np.ndarray:
    """Normalised Gaussian weights from sorted neighbour distances (m, K) -> (m, K)."""
    logw = -(dist**2 - dist[:, :1] ** 2) / (2.0 * x_bandwidth**2)
    w = np.exp(logw)
    return w / w.sum(axis=1, keepdims=True)


@ESTIMATORS.register("ckde")
@dataclass(eq=False, repr=False)
class CKDE(MixtureCDE, TunedCDE):
    """Conditional KDE with Nadaraya–Watson weights in x.

    Parameters: ``n_neighbors`` (kernel truncation), ``x_bandwidth_grid`` (factors of the typical
    ``n_neighbors``-th neighbour distance), ``bandwidth_grid`` (factors of the target std), and the tuning
    parameters of ``TunedCDE`` (``val_fraction``, ``max_val``, ``tune`` (False: no validation split, each
    grid holds the one factor used; the x unit is then measured on at most ``max_val`` training points
    against the others), ``bounds``, ``random_state``).
    Fitted: ``x_bandwidth_``, ``bandwidth_``, ``tuning_losses_``.
    """

    n_neighbors: int = 150
    x_bandwidth_grid: Sequence[float] = (0.05, 0.1, 0.15, 0.2, 0.3, 0.45, 0.7, 1.0, 3.0)
    bandwidth_grid: Sequence[float] = DEFAULT_BANDWIDTHS

    tuned_grids = ("x_bandwidth_grid", "bandwidth_grid")
    count_params = ("n_neighbors",)
    positive_grids = ("x_bandwidth_grid", "bandwidth_grid")

    def _fit(self, X: np.ndarray, U: np.ndarray) -> None:
        self.scaler_ = StandardScaler().fit(X)
        Xs = self.scaler_.transform(X)
        scale = target_scale(U)
        self.n_neighbors_ = self.capped_counts("n_neighbors", [self.n_neighbors], len(U), "the training rows")[0]
        self.neighbors_ = NearestNeighbors(n_neighbors=self.n_neighbors_).fit(Xs)
        if not self.tune:
            rng = np.random.default_rng(self.random_state)
            probe = capped_subset(np.arange(len(U)), self.max_val, rng)
            K = min(int(self.n_neighbors) + 1, len(U))
            dist, _ = NearestNeighbors(n_neighbors=K).fit(Xs).kneighbors(Xs[probe])  # itself first
            x_unit = float(np.median(dist[:, -1])) or 1.0
            self.x_bandwidth_ = float(self.fixed("x_bandwidth_grid")) * x_unit
            self.bandwidth_ = float(self.fixed("bandwidth_grid")) * scale
        else:
            self._tune(Xs, U, scale)
        self.targets_ = U.copy()

    def _tune(self, Xs: np.ndarray, U: np.ndarray, scale: np.ndarray) -> None:
        """(h_x, h_z) by the exact validation CDE loss."""
        fit_idx, val_idx = self._validation_split(len(U))
        K = min(int(self.n_neighbors), fit_idx.size)
        dist, idx = NearestNeighbors(n_neighbors=K).fit(Xs[fit_idx]).kneighbors(Xs[val_idx])
        x_unit = float(np.median(dist[:, -1])) or 1.0
        sets = np.stack([nadaraya_watson_weights(dist, f * x_unit) for f in self.x_bandwidth_grid])
        self.tuning_losses_ = kernel_cde_losses(sets, U[fit_idx][idx], U[val_idx], scale, self.bandwidth_grid)
        ix, ib = best_cell(self.tuning_losses_)
        self.x_bandwidth_ = float(self.x_bandwidth_grid[ix]) * x_unit
        self.bandwidth_ = float(self.bandwidth_grid[ib]) * scale

    def _mixture(self, X: np.ndarray) -> DiagKernelMixture:
        dist, idx = self.neighbors_.kneighbors(self.scaler_.transform(X))
        return DiagKernelMixture(nadaraya_watson_weights(dist, self.x_bandwidth_), self.targets_[idx], self.bandwidth_)
