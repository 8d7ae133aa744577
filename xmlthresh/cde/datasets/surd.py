"""``surd`` — SURD: a Shifted, Uniform, Rotated box with a Dash of Gaussian noise.

x has nx relevant features (uniform on [0, 1]) and ny irrelevant ones; s(x) in (0, 1) summarises the
relevant ones (``relevance_summary``). Given x,

    z = alpha * g(x) + R(phi * s(x)) (d * v) + a * eps,   v ~ Uniform[-1, 1]^nz,  eps ~ N(0, I),

with g(x) = s(x) - 1/2 and R a rotation in the (z1, z2) plane (identity when nz = 1). So z is uniform on
a box of half-widths d, rotated by an angle that sweeps phi as s goes over (0, 1) and shifted with x,
blurred by isotropic noise of std a. Because the noise is isotropic, in the rotated frame
y = R^T (z - alpha g) the density is a product of 1-D box-convolved-with-Gaussian terms,

    f(z | x) = prod_k [Phi((y_k + d_k)/a) - Phi((y_k - d_k)/a)] / (2 d_k),

and int f^2 dz is a product of closed-form 1-D integrals as well.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.special import ndtr

from xmlthresh._util import detmath
from xmlthresh.cde.registry import CDE_DATASETS
from xmlthresh.cde.datasets.base import SyntheticCDE, check_sizes, relevance_summary


def _box_conv(y: np.ndarray, half: np.ndarray, a: float) -> np.ndarray:
    """Density of Uniform[-half, half] + N(0, a^2) at y (coordinate-wise)."""
    if a == 0:
        return (np.abs(y) < half) / (2.0 * half)
    return (ndtr((y + half) / a) - ndtr((y - half) / a)) / (2.0 * half)


def _box_conv_sq_integral(half: np.ndarray, a: float) -> np.ndarray:
    """int (Uniform[-half, half] * N(0, a^2))^2 dy, coordinate-wise, in closed form.

    = (1/w^2) int_{-w}^{w} (w - |u|) phi_s(u) du with w = 2 half, s = sqrt(2) a
    = (1/w^2) [2 w (Phi(w/s) - 1/2) - 2 s (1 - exp(-w^2 / (2 s^2))) / sqrt(2 pi)].
    """
    w = 2.0 * half
    if a == 0:
        return 1.0 / w
    s = np.sqrt(2.0) * a
    inner = 2.0 * w * (ndtr(w / s) - 0.5) - 2.0 * s * (-np.expm1(-(w * w) / (2.0 * s * s))) / np.sqrt(2.0 * np.pi)
    return inner / (w * w)


def _per_coordinate(value, nz: int) -> np.ndarray:
    """A scalar repeated nz times, or the given vector (its length is checked by the caller)."""
    arr = np.asarray(value, dtype=np.float64)
    return np.full(nz, float(arr)) if arr.ndim == 0 else arr


@CDE_DATASETS.register("surd")
class SURD(SyntheticCDE):
    """SURD(nx, ny, nz, d, a, alpha, phi) generator; ``load(seed)`` returns a ``CDEData``."""

    def __init__(
        self,
        nx: int = 10,
        ny: int = 1,
        nz: int = 2,
        d: Sequence[float] | float = (0.1, 1.0),
        a: float = 0.01,
        alpha: Sequence[float] | float = (0.3, 0.3),
        phi: float = np.pi,
        n_train: int = 2000,
        n_test: int = 1000,
    ) -> None:
        check_sizes(nx, ny, n_train, n_test)
        if isinstance(nz, bool) or not isinstance(nz, (int, np.integer)) or not 1 <= nz <= 3:
            raise ValueError(f"nz must be 1, 2 or 3, got {nz!r}")
        half, shift = _per_coordinate(d, nz), _per_coordinate(alpha, nz)
        if half.shape != (nz,) or shift.shape != (nz,):
            raise ValueError(
                f"d and alpha need one value per target coordinate (nz = {nz}); got d {half.shape}, alpha {shift.shape}"
            )
        if np.any(half <= 0) or not np.isfinite(half).all():
            raise ValueError(f"the half-widths d must be positive, got {half.tolist()}")
        if not (np.isfinite(a) and a >= 0):
            raise ValueError(f"the noise std a must be >= 0, got {a!r}")
        self.nx, self.ny, self.nz, self.a, self.phi = int(nx), int(ny), int(nz), float(a), float(phi)
        self.d, self.alpha = half.copy(), shift.copy()
        self.n_train, self.n_test = int(n_train), int(n_test)

    def _frame(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Shift alpha * g(x) (m, nz) and rotation angle phi * s(x) (m,)."""
        s = relevance_summary(X, self.nx)
        return self.alpha * (s - 0.5)[:, None], self.phi * s

    def _rotate(self, V: np.ndarray, theta: np.ndarray, sign: float) -> np.ndarray:
        """R(sign * theta) V in the (z1, z2) plane (leaves other coordinates alone)."""
        if self.nz == 1:
            return V
        c, s = detmath.cos(theta), sign * detmath.sin(theta)  # same bits on every CPU (glibc: not)
        out = V.copy()
        out[:, 0] = c * V[:, 0] - s * V[:, 1]
        out[:, 1] = s * V[:, 0] + c * V[:, 1]
        return out

    def sample_z(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        shift, theta = self._frame(X)
        V = self.d * rng.uniform(-1.0, 1.0, size=(X.shape[0], self.nz))
        return shift + self._rotate(V, theta, 1.0) + self.a * rng.standard_normal((X.shape[0], self.nz))

    def true_density(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        """f(Z[i] | X[i]) -> (m,)."""
        Z = np.asarray(Z, dtype=np.float64).reshape(len(X), self.nz)
        shift, theta = self._frame(np.asarray(X, dtype=np.float64))
        Y = self._rotate(Z - shift, theta, -1.0)
        return np.prod(_box_conv(Y, self.d, self.a), axis=1)

    def true_squared_norm(self, X: np.ndarray) -> np.ndarray:
        """int f(z | X[i])^2 dz -> (m,) (the same for every x: rotations and shifts preserve it)."""
        return np.full(len(X), float(np.prod(_box_conv_sq_integral(self.d, self.a))))
