"""``marginal`` — the baseline: an unconditional Gaussian KDE of z that ignores x.

Every conditional estimator should beat it; its CDE loss is the reference for "x carries information".
The bandwidth (a factor times the per-coordinate std of the working targets) is tuned on a validation
split by the exact closed-form CDE loss, so the baseline is as good as a KDE can be.

Scale: a KDE with n centres costs O(n) per evaluated point and its closed-form squared norm O(n^2), so
the centres are a seeded random subset of at most ``max_centres`` training targets (the tuning uses as
many); beyond a few thousand centres the loss of a marginal KDE hardly moves, and memory stays O(n)
(pair sums are tiled, never a full n x n matrix).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from xmlthresh.cde.base import DEFAULT_BANDWIDTHS, MixtureCDE, TunedCDE, capped_subset, check_cap, target_scale
from xmlthresh.cde.mixture import DiagKernelMixture
from xmlthresh.cde.registry import ESTIMATORS
from xmlthresh.cde.tuning import best_cell, kernel_cde_losses


@ESTIMATORS.register("marginal")
@dataclass(eq=False, repr=False)
class MarginalKDE(MixtureCDE, TunedCDE):
    """Unconditional KDE f^(z | x) = f^(z).

    Parameters: ``bandwidth_grid`` (factors of the target std tried on validation), ``max_centres``
    (cap on the kernel centres, None: every training target), and the tuning parameters of ``TunedCDE``
    (``val_fraction``, ``max_val`` (cap on validation points), ``tune`` (False: no validation split,
    ``bandwidth_grid`` holds the one factor used), ``bounds`` (optional target box), ``random_state``).
    Fitted: ``bandwidth_`` (per-coordinate, working space), ``tuning_losses_``.
    """

    bandwidth_grid: Sequence[float] = DEFAULT_BANDWIDTHS
    max_centres: int | None = 4000

    tuned_grids = ("bandwidth_grid",)
    positive_grids = ("bandwidth_grid",)

    def _fit(self, X: np.ndarray, U: np.ndarray) -> None:
        scale = target_scale(U)
        rng = np.random.default_rng(self.random_state)
        if not self.tune:
            self.bandwidth_ = float(self.fixed("bandwidth_grid")) * scale
            self.centres_ = U[capped_subset(np.arange(len(U)), self.max_centres, rng)].copy()
            return
        fit_idx, val_idx = self._validation_split(len(U))
        fit_idx = capped_subset(fit_idx, self.max_centres, rng)
        K = fit_idx.size
        weights = np.full((1, 1, K), 1.0 / K)
        self.tuning_losses_ = kernel_cde_losses(weights, U[fit_idx][None], U[val_idx], scale, self.bandwidth_grid)[0]
        (ib,) = best_cell(self.tuning_losses_)
        self.bandwidth_ = float(self.bandwidth_grid[ib]) * scale
        self.centres_ = U[capped_subset(np.arange(len(U)), self.max_centres, rng)].copy()

    def _check_params(self) -> None:
        """``max_centres`` is None or an integer >= 2 (checked by ``Registry.build`` before any fit)."""
        super()._check_params()
        check_cap(self.max_centres, "marginal: max_centres", 2)

    def _mixture(self, X: np.ndarray) -> DiagKernelMixture:
        n = self.centres_.shape[0]
        return DiagKernelMixture(np.full((1, n), 1.0 / n), self.centres_[None], self.bandwidth_)
