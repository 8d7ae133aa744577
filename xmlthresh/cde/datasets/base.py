"""What a CDE dataset returns, and the seeded-generator base of the synthetic ones.

``CDEData`` holds the train/test arrays plus, for synthetic data, the true conditional density
``true_density(X, Z_points) -> (m,)`` and its squared norm ``true_squared_norm(X) -> (m,)``
(int f(z | x)^2 dz, the CDE loss of the zero estimator, used to normalise losses). It unpacks as
``X_train, Z_train, X_test, Z_test, true_density = data``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from xmlthresh._util import detmath

DensityFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
NormFn = Callable[[np.ndarray], np.ndarray]


@dataclass
class CDEData:
    """Train/test split of (features X, targets Z) with optional ground truth and target box."""

    X_train: np.ndarray
    Z_train: np.ndarray
    X_test: np.ndarray
    Z_test: np.ndarray
    true_density: DensityFn | None = None
    true_squared_norm: NormFn | None = None
    bounds: np.ndarray | None = None
    target_names: tuple[str, ...] = ()
    name: str = ""
    info: dict = field(default_factory=dict)

    def __iter__(self) -> Iterator:
        return iter((self.X_train, self.Z_train, self.X_test, self.Z_test, self.true_density))

    @property
    def n_targets(self) -> int:
        return self.Z_train.shape[1]

    def plot_box(self, pad: float = 0.1) -> np.ndarray:
        """A (d, 2) box for plots: the declared bounds, else the data range widened by ``pad``."""
        if self.bounds is not None:
            return self.bounds
        Z = np.vstack([self.Z_train, self.Z_test])
        lo, hi = Z.min(axis=0), Z.max(axis=0)
        width = np.where(hi > lo, hi - lo, 1.0)
        return np.column_stack([lo - pad * width, hi + pad * width])


def relevance_summary(X: np.ndarray, nx: int) -> np.ndarray:
    """s(x) in (0, 1): the mean of the ``nx`` relevant features, mapped through its approximate CDF.

    The mean of nx uniforms has mean 1/2 and variance 1/(12 nx); Phi(sqrt(12 nx) (mean - 1/2)) is then
    close to Uniform(0, 1) whatever nx, so the dependence of z on x keeps its full strength (the raw mean
    would concentrate near 1/2 as nx grows and leave little to learn).
    """
    mean = X[:, :nx].mean(axis=1)
    return detmath.ndtr(np.sqrt(12.0 * nx) * (mean - 0.5))  # the same bits on every CPU (glibc: not)


class SyntheticCDE:
    """Seeded generator: x uniform on [0, 1]^(nx + ny) (the last ny features are irrelevant noise).

    Subclasses implement ``sample_z(X, rng)``, ``true_density(X, Z)`` and ``true_squared_norm(X)``.
    """

    nx: int
    ny: int
    n_train: int
    n_test: int

    def sample_z(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def true_density(self, X: np.ndarray, Z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def true_squared_norm(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def load(self, seed: int = 0) -> CDEData:
        """Draw ``n_train + n_test`` independent samples with generator seed ``seed``."""
        rng = np.random.default_rng(seed)
        n = self.n_train + self.n_test
        X = rng.random((n, self.nx + self.ny))
        Z = self.sample_z(X, rng)
        k = self.n_train
        return CDEData(
            X[:k], Z[:k], X[k:], Z[k:],
            true_density=self.true_density,
            true_squared_norm=self.true_squared_norm,
            target_names=tuple(f"z{j + 1}" for j in range(Z.shape[1])),
            name=getattr(self, "registry_name", type(self).__name__),
            info={"seed": seed},
        )


def check_sizes(nx: int, ny: int, n_train: int, n_test: int) -> None:
    """Shared parameter checks of the synthetic generators."""
    for name, value, least in (("nx", nx, 1), ("ny", ny, 0), ("n_train", n_train, 2), ("n_test", n_test, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            why = " (the losses' standard errors need two test points)" if name == "n_test" else ""
            raise ValueError(f"cde_dataset.{name} must be an integer >= {least}{why}, got {value!r}")
