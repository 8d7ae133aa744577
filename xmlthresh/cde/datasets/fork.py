"""``fork`` — Fork: a 2-D target that splits into m branches as x moves.

x has nx relevant features (uniform on [0, 1]) and ny irrelevant ones; s(x) in (0, 1) summarises the
relevant ones (``relevance_summary``). Given x, z is an equal-weight mixture of m isotropic Gaussians of
std a centred at c_j(x) = 3 s(x) (cos(2 pi j / m), sin(2 pi j / m)), j = 0..m-1: one blob at the origin
for s = 0 that forks into m branches whose distance grows with s. The density and its squared norm
(sum of Gaussian overlaps N(c_j - c_k; 0, 2 a^2 I) / m^2) are closed form.
"""

from __future__ import annotations

import numpy as np

from xmlthresh._util import detmath
from xmlthresh.cde.registry import CDE_DATASETS
from xmlthresh.cde.datasets.base import SyntheticCDE, check_sizes, relevance_summary

#: distance of the branch centres from the origin at s = 1
SPREAD = 3.0


@CDE_DATASETS.register("fork")
class Fork(SyntheticCDE):
    """Fork(nx, ny, m, a) generator; ``load(seed)`` returns a ``CDEData``."""

    nz = 2

    def __init__(
        self, nx: int = 10, ny: int = 1, m: int = 2, a: float = 1.0, n_train: int = 2000, n_test: int = 1000
    ) -> None:
        check_sizes(nx, ny, n_train, n_test)
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"the number of branches m must be a positive integer, got {m!r}")
        if not (np.isfinite(a) and a > 0):
            raise ValueError(f"the branch std a must be positive, got {a!r}")
        self.nx, self.ny, self.m, self.a = int(nx), int(ny), int(m), float(a)
        self.n_train, self.n_test = int(n_train), int(n_test)

    def centres(self, X: np.ndarray) -> np.ndarray:
        """Branch centres c_j(x) -> (m_rows, m, 2)."""
        angles = 2.0 * np.pi * np.arange(self.m) / self.m
        direction = np.column_stack([detmath.cos(angles), detmath.sin(angles)])  # same bits on every CPU
        return SPREAD * relevance_summary(np.asarray(X, dtype=np.float64), self.nx)[:, None, None] * direction

    def sample_z(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        branch = rng.integers(0, self.m, size=X.shape[0])
        centre = self.centres(X)[np.arange(X.shape[0]), branch]
        return centre + self.a * rng.standard_normal((X.shape[0], 2))

    def true_density(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """f(Z[i] | X[i]) -> (m,)."""
        Z = np.asarray(Z, dtype=np.float64).reshape(len(X), 2)
        sq = ((Z[:, None, :] - self.centres(X)) ** 2).sum(-1)
        return np.exp(-sq / (2 * self.a**2)).mean(axis=1) / (2 * np.pi * self.a**2)

    def true_squared_norm(self, X: np.ndarray) -> np.ndarray:
        """int f(z | X[i])^2 dz -> (m,)."""
        c = self.centres(X)
        sq = ((c[:, :, None, :] - c[:, None, :, :]) ** 2).sum(-1)
        return np.exp(-sq / (4 * self.a**2)).mean(axis=(1, 2)) / (4 * np.pi * self.a**2)
