"""``nnkcde`` — nearest-neighbour kernel CDE: a Gaussian KDE of the targets of the k nearest x.

f^(z | x) = (1/k) sum_{j in N_k(x)} N(u(z); u_j, diag(h^2)) in working space, with neighbours found in
standardised x. The pair (k, h) is tuned on a validation split by the exact closed-form Gaussian-kernel
CDE loss (``tuning.knn_cde_losses``): no numerical integration, so the whole grid costs little.
After tuning, the neighbours are searched in the full training set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import StandardScaler

from xmlthresh.cde.base import DEFAULT_BANDWIDTHS, MixtureCDE, TunedCDE, target_scale
from xmlthresh.cde.mixture import DiagKernelMixture
from xmlthresh.cde.registry import ESTIMATORS
from xmlthresh.cde.tuning import best_cell, knn_cde_losses


@ESTIMATORS.register("nnkcde")
@dataclass(eq=False, repr=False)
class NNKCDE(MixtureCDE, TunedCDE):
    """k-nearest-neighbour kernel conditional density estimator.

    Parameters: ``k_grid`` (neighbour counts tried), ``bandwidth_grid`` (factors of the target std), and the
    tuning parameters of ``TunedCDE`` (``val_fraction``, ``max_val``, ``tune`` (False: no validation split,
    each grid holds the one value used), ``bounds``, ``random_state``).
    Fitted: ``k_``, ``bandwidth_``, ``tuning_losses_`` (len(k_grid) x len(bandwidth_grid)).
    """

    k_grid: Sequence[int] = (5, 10, 20, 40, 80, 160, 320)
    bandwidth_grid: Sequence[float] = DEFAULT_BANDWIDTHS

    tuned_grids = ("k_grid", "bandwidth_grid")
    count_grids = ("k_grid",)
    positive_grids = ("bandwidth_grid",)

    def _fit(self, X: np.ndarray, U: np.ndarray) -> None:
        self.scaler_ = StandardScaler().fit(X)
        Xs = self.scaler_.transform(X)
        scale = target_scale(U)
        if not self.tune:
            self.k_ = self.capped_counts("k_grid", [self.fixed("k_grid")], len(U), "the training rows")[0]
            self.bandwidth_ = float(self.fixed("bandwidth_grid")) * scale
        else:
            self._tune(Xs, U, scale)
        self.neighbors_ = NearestNeighbors(n_neighbors=self.k_).fit(Xs)
        self.targets_ = U.copy()

    def _tune(self, Xs: np.ndarray, U: np.ndarray, scale: np.ndarray) -> None:
        """(k, bandwidth) by the exact validation CDE loss."""
        fit_idx, val_idx = self._validation_split(len(U))
        ks = np.array(self.capped_counts("k_grid", self.k_grid, fit_idx.size, "the rows the grid is fitted on"))
        nn = NearestNeighbors(n_neighbors=int(ks[-1])).fit(Xs[fit_idx])
        idx = nn.kneighbors(Xs[val_idx], return_distance=False)  # sorted by distance
        self.tuning_losses_ = knn_cde_losses(U[fit_idx][idx], U[val_idx], scale, ks, self.bandwidth_grid)
        ik, ib = best_cell(self.tuning_losses_)
        self.k_grid_ = ks
        self.k_ = int(ks[ik])
        self.bandwidth_ = float(self.bandwidth_grid[ib]) * scale

    def _mixture(self, X: np.ndarray) -> DiagKernelMixture:
        idx = self.neighbors_.kneighbors(self.scaler_.transform(X), return_distance=False)
        return DiagKernelMixture(np.full(idx.shape, 1.0 / self.k_), self.targets_[idx], self.bandwidth_)
