"""The map between the target space z and the working space u in which the estimators run.

Without bounds the map is the identity. With a box [lo, hi] per coordinate, each coordinate is sent to
the real line by u = logit((z - lo) / (hi - lo)); an estimator then models the density of u, which lives
on all of R^d, and the density of z is recovered with the Jacobian,

    f_z(z) = f_u(u(z)) * prod_k du_k/dz_k,   du/dz = 1 / ((hi - lo) p (1 - p)),  p = (z - lo) / (hi - lo),

and 0 outside the box. Because f_u integrates to 1 over R^d, f_z integrates to 1 over the box exactly:
no probability mass leaks outside, whatever the estimator does in u-space.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit


class TargetTransform:
    """Identity (``bounds=None``) or coordinate-wise logit map of the box ``bounds`` (shape (d, 2))."""

    def __init__(self, bounds: np.ndarray | None) -> None:
        self.bounds = None if bounds is None else np.asarray(bounds, dtype=np.float64)

    @property
    def is_identity(self) -> bool:
        return self.bounds is None

    def inside(self, Z: np.ndarray) -> np.ndarray:
        """Mask (shape Z.shape[:-1]) of points strictly inside the box (all True without bounds)."""
        if self.bounds is None:
            return np.ones(Z.shape[:-1], dtype=bool)
        return np.all((Z > self.bounds[:, 0]) & (Z < self.bounds[:, 1]), axis=-1)

    def forward(self, Z: np.ndarray) -> np.ndarray:
        """u(z); points outside the box are mapped to 0 (callers mask them with ``inside``)."""
        if self.bounds is None:
            return np.asarray(Z, dtype=np.float64)
        lo, width = self.bounds[:, 0], self.bounds[:, 1] - self.bounds[:, 0]
        p = (Z - lo) / width
        p = np.where((p > 0) & (p < 1), p, 0.5)
        return np.log(p) - np.log1p(-p)

    def inverse(self, U: np.ndarray) -> np.ndarray:
        """z(u)."""
        if self.bounds is None:
            return np.asarray(U, dtype=np.float64)
        lo, width = self.bounds[:, 0], self.bounds[:, 1] - self.bounds[:, 0]
        return lo + width * expit(U)

    def log_jacobian_u(self, U: np.ndarray) -> np.ndarray:
        """log |du/dz| summed over coordinates, written in u (stable for any u, shape U.shape[:-1])."""
        if self.bounds is None:
            return np.zeros(U.shape[:-1])
        width = self.bounds[:, 1] - self.bounds[:, 0]
        # -log p = log(1 + e^-u), -log(1 - p) = log(1 + e^u)
        per_coord = np.logaddexp(0.0, -U) + np.logaddexp(0.0, U) - np.log(width)
        return per_coord.sum(axis=-1)

    def density_to_z(self, density_u: np.ndarray, U: np.ndarray, inside: np.ndarray | None = None) -> np.ndarray:
        """f_z from f_u at the same points (given in u), 0 where ``inside`` is False."""
        if self.bounds is None:
            return density_u
        out = density_u * np.exp(self.log_jacobian_u(U))
        if inside is not None:
            out = np.where(inside, out, 0.0)
        return out
