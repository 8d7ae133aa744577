"""Post-processing of an orthogonal-series density estimate on a tensor grid of cells (FlexCode).

A truncated series g(z) = sum_j beta_j psi_j(z) dips below zero and rings: clipped at 0 and renormalised
it leaves small spurious bumps and, where the clip bites, zero density. Izbicki & Lee (2017, section 2.3)
post-process it in two steps, both on the normalised density p = max(g, 0) / int max(g, 0):

1. *remove small bumps*: the connected regions of {p > 0} (here: connected sets of grid cells, diagonal
   neighbours included) whose mass is below a threshold ``delta`` are set to 0 (the heaviest region is
   always kept, so the density never vanishes everywhere);
2. *sharpen*: p -> p^alpha / int p^alpha, alpha > 0 (alpha > 1 sharpens, alpha < 1 flattens).

Both ``delta`` and ``alpha`` are tuned on a validation split by the CDE loss. This module holds the
grid operations; the estimator (``estimators/flexcode``) evaluates the series and owns the tuning.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage


def bump_regions(p: np.ndarray, cell_shape: tuple[int, ...], cell_volume: float) -> tuple[np.ndarray, np.ndarray]:
    """Connected regions of positive cells of every row and their masses.

    ``p`` (m, C) is the flattened (last coordinate fastest) cell grid of every row; cells touching by a
    face, an edge or a corner belong to one region. Returns ``ids`` (m, C): a region number unique over
    all rows, 0 for cells that are not positive, and ``masses``: the mass of p in each region (index 0:
    +inf, "no region"), with the heaviest region of every row marked by mass +inf as well, so that no
    threshold removes it.
    """
    structure = ndimage.generate_binary_structure(len(cell_shape), len(cell_shape))
    ids = np.zeros(p.shape, dtype=np.int64)
    offset = 0
    firsts, counts = [], []
    for i in range(p.shape[0]):
        lab, count = ndimage.label((p[i] > 0).reshape(cell_shape), structure=structure)
        lab = lab.ravel()
        ids[i] = np.where(lab > 0, lab + offset, 0)
        firsts.append(offset + 1)
        counts.append(count)
        offset += count
    masses = np.bincount(ids.ravel(), weights=p.ravel(), minlength=offset + 1) * cell_volume
    for first, count in zip(firsts, counts):
        if count:
            masses[first + int(np.argmax(masses[first:first + count]))] = np.inf
    masses[0] = np.inf
    return ids, masses


def kept_cells(ids: np.ndarray, masses: np.ndarray, delta: float) -> np.ndarray:
    """Mask (m, C) of the cells that survive bump removal at threshold ``delta`` (see ``bump_regions``).

    Cells that are not positive (id 0) are kept: they carry no mass on the grid, and a point inside such
    a cell keeps whatever small positive series value it has.
    """
    if delta <= 0:
        return np.ones(ids.shape, dtype=bool)
    return (masses >= delta)[ids]


def point_cells(Z: np.ndarray, box: np.ndarray, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat cell index (last coordinate fastest) of points Z (..., d) and whether they lie inside the box."""
    unit = (Z - box[:, 0]) / (box[:, 1] - box[:, 0])
    inside = np.all((unit > 0) & (unit < 1), axis=-1)
    coords = np.clip(np.floor(unit * cells).astype(np.int64), 0, cells - 1)
    flat = np.zeros(Z.shape[:-1], dtype=np.int64)
    for k in range(Z.shape[-1]):
        flat = flat * cells + coords[..., k]
    return flat, inside


class Floor:
    """The defensive component mixed into the post-processed series: f = (1 - eps) h + eps q.

    With a declared target box, q is uniform on it (no mass leaves the box); without one, q is the
    Gaussian with the training targets' mean and covariance, so targets outside the series' box (where
    h = 0) still get a positive density. Either way the mixture integrates to 1 and is positive wherever
    a test target can fall.
    """

    def __init__(self, box: np.ndarray, Z: np.ndarray | None = None) -> None:
        self.box = np.asarray(box, dtype=np.float64)
        self.uniform = Z is None
        d = self.box.shape[0]
        if self.uniform:
            self.volume = float(np.prod(self.box[:, 1] - self.box[:, 0]))
            return
        self.mean = Z.mean(axis=0)
        cov = np.cov(Z, rowvar=False).reshape(d, d)
        cov = cov + 1e-9 * max(float(np.trace(cov)) / d, 1e-12) * np.eye(d)
        self.chol = np.linalg.cholesky(cov)
        self.chol_inv = np.linalg.inv(self.chol)
        self.log_norm = -0.5 * d * np.log(2.0 * np.pi) - float(np.log(np.diag(self.chol)).sum())

    def pdf(self, Z: np.ndarray) -> np.ndarray:
        """q(Z) for points Z (..., d) -> (...)."""
        Z = np.asarray(Z, dtype=np.float64)
        if self.uniform:
            inside = np.all((Z > self.box[:, 0]) & (Z < self.box[:, 1]), axis=-1)
            return inside / self.volume
        y = (Z - self.mean) @ self.chol_inv.T
        return np.exp(self.log_norm - 0.5 * (y * y).sum(-1))

    def sample(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """Draws from q -> shape + (d,)."""
        d = self.box.shape[0]
        if self.uniform:
            return self.box[:, 0] + rng.random(shape + (d,)) * (self.box[:, 1] - self.box[:, 0])
        return self.mean + rng.standard_normal(shape + (d,)) @ self.chol.T

    def squared_norm(self) -> float:
        """int q^2: 1 / volume, or N(0; 0, 2 S) for the Gaussian."""
        if self.uniform:
            return 1.0 / self.volume
        d = self.box.shape[0]
        return float(np.exp(-0.5 * d * np.log(4.0 * np.pi) - np.log(np.diag(self.chol)).sum()))
