"""The estimated and true conditional density at one x on a grid of 2-D targets (Fig. 4.1 of the study).

``density_slice(estimator, data, x)`` evaluates f^(. | x) and, when the data set knows it, f(. | x) on a
``grid_size`` x ``grid_size`` grid over the data set's plot box, plus the integrated squared error
int (f^ - f)^2 dz at that x (midpoint rule). The arrays are what ``xmlthresh.report.cde_studies`` draws side by side
with one colour scale; the job saves them as ``density_at_x.npz``, together with ``training_sample``: the
training targets and the relevance summary s(x) of their features, which the report draws as panel (a), the
data set itself.
"""

from __future__ import annotations

import numpy as np

from xmlthresh.cde.base import CDEstimator
from xmlthresh.cde.datasets.base import CDEData, relevance_summary
from xmlthresh.cde.validation import check_positive_int


def feature_point(x, n_features: int, what: str = "x") -> np.ndarray:
    """One feature vector (1, n_features) from a scalar (every feature equal) or a full vector; ``what`` names
    ``x`` in the message (the option it came from)."""
    arr = np.asarray(x, dtype=np.float64).ravel()
    if arr.size == 1:
        arr = np.full(n_features, float(arr[0]))
    if arr.size != n_features or not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be one number (every feature) or {n_features} finite numbers (one per "
                         f"feature of this data set), got {np.ravel(x).tolist()}")
    return arr[None, :]


def density_slice(estimator: CDEstimator, data: CDEData, x, grid_size: int = 80,
                  what: str = "x") -> dict[str, np.ndarray]:
    """Grid axes ``z1``, ``z2``, ``estimated`` and ``true`` (G x G, row = z2, column = z1), ``x`` and ``ise``."""
    if data.n_targets != 2:
        raise ValueError(f"a density slice needs 2-D targets; this data set has {data.n_targets}")
    n = check_positive_int(grid_size, "grid_size")
    point = feature_point(x, data.X_train.shape[1], what)
    box = data.plot_box()
    z1, z2 = np.linspace(*box[0], n), np.linspace(*box[1], n)
    G1, G2 = np.meshgrid(z1, z2, indexing="xy")
    grid = np.column_stack([G1.ravel(), G2.ravel()])
    out = {"z1": z1, "z2": z2, "x": point[0], "estimated": estimator.density_on_grid(point, grid).reshape(n, n)}
    if data.true_density is not None:
        out["true"] = np.asarray(data.true_density(np.repeat(point, len(grid), axis=0), grid)).reshape(n, n)
        cell = (z1[1] - z1[0]) * (z2[1] - z2[0])
        out["ise"] = np.array(float(((out["estimated"] - out["true"]) ** 2).sum() * cell))
    return out


def training_sample(data: CDEData, relevant_features: int | None = None,
                    max_points: int = 2000) -> dict[str, np.ndarray]:
    """The first ``max_points`` training targets (``sample_z``, (k, nz)) and the colour of each (``sample_s``):
    the relevance summary s(x) of its first ``relevant_features`` features (SURD, Fork: what moves z), or the
    first feature when that number is not known; ``sample_colour`` names it."""
    k = min(check_positive_int(max_points, "max_points"), len(data.Z_train))
    X = data.X_train[:k]
    if relevant_features is not None and 1 <= relevant_features <= X.shape[1]:
        colour, name = relevance_summary(X, int(relevant_features)), "s(x)"
    else:
        colour, name = X[:, 0], "x1"
    return {"sample_z": np.asarray(data.Z_train[:k], dtype=np.float64), "sample_s": np.asarray(colour, dtype=np.float64),
            "sample_colour": np.array(name)}
