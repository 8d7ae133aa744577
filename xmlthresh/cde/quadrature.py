"""Weighted point sets that stand for an estimated conditional density in integrals.

For query i, ``sum_j weights[i, j] * g(points[i, j])`` approximates  int g(z) f^(z | x_i) dz  for any
function g, and ``density[i, j] = f^(points[i, j] | x_i)``. Metrics are written against this object only:

* int f^2 dz            = sum_j w_ij f^(z_ij)            (squared norm, CDE loss)
* int f^ f dz           = sum_j w_ij f(z_ij | x_i)       (direct CDE loss against a known true density)
* mass denser than z_i  = sum_j w_ij [f^(z_ij) > f^(z_i)] (highest-density-region coverage)
* P(Z_k <= z_ik)        = sum_j w_ij [z_ijk <= z_ik]     (PIT per coordinate)

Mixture estimators fill it with their own samples (weights 1/n); FlexCode, which cannot sample exactly,
with importance samples. This is Monte Carlo, so its cost does not grow exponentially with dim(z).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Quadrature:
    """points (m or 1, n, d) — a leading 1 means the same nodes for every query; weights, density (m, n)."""

    points: np.ndarray
    weights: np.ndarray
    density: np.ndarray

    def __post_init__(self) -> None:
        m, n = self.weights.shape
        if self.density.shape != (m, n) or self.points.shape[1] != n or self.points.shape[0] not in (1, m):
            raise ValueError(
                f"inconsistent quadrature shapes: points {self.points.shape}, weights {self.weights.shape}, "
                f"density {self.density.shape}"
            )

    @property
    def n_queries(self) -> int:
        return self.weights.shape[0]

    def squared_norm(self) -> np.ndarray:
        """int f^(z | x_i)^2 dz for each query -> (m,)."""
        return (self.weights * self.density).sum(axis=1)

    def points_of(self, rows: slice) -> np.ndarray:
        """Nodes of the queries in ``rows`` as a full (c, n, d) array."""
        if self.points.shape[0] == 1:
            count = len(range(*rows.indices(self.n_queries)))
            return np.broadcast_to(self.points, (count,) + self.points.shape[1:])
        return self.points[rows]
