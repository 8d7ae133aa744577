"""Input checks shared by every estimator, metric and dataset of the CDE package.

Each check turns a user mistake (NaNs, wrong shapes, targets outside the declared box, ...) into a
``ValueError`` that names the problem and says what to do, in the style of scikit-learn's messages,
instead of letting it surface later as a NaN density or an obscure broadcasting error.
"""

from __future__ import annotations

import numpy as np

#: target dimensions supported by the estimators (tensor bases and Monte Carlo metrics are tuned for these)
MAX_TARGET_DIM = 3


def _first_rows(mask: np.ndarray, limit: int = 5) -> str:
    rows = np.flatnonzero(mask)
    shown = ", ".join(str(r) for r in rows[:limit])
    return f"{rows.size} row(s) (first: [{shown}{', ...' if rows.size > limit else ''}])"


def check_features(X, *, n_features: int | None = None, name: str = "X") -> np.ndarray:
    """``X`` as a finite float64 array of shape (n_samples, n_features)."""
    if hasattr(X, "toarray") and hasattr(X, "nnz"):  # numpy's own words were "setting an array element with a sequence"
        raise ValueError(f"{name} is a sparse matrix, which the density estimators do not take; pass {name}.toarray() "
                         "(they work on a few dense features)")
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array of shape (n_samples, n_features): {exc}") from None
    if arr.ndim == 1:
        raise ValueError(
            f"{name} is 1-D with shape {arr.shape}; expected (n_samples, n_features). Reshape it with "
            f"{name}.reshape(-1, 1) for a single feature or {name}.reshape(1, -1) for a single sample."
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); pass at least one sample and one feature")
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        raise ValueError(
            f"{name} contains NaN or infinite values in {_first_rows(bad)}; impute them (e.g. with "
            f"sklearn.impute.SimpleImputer) or drop these rows before calling the estimator"
        )
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"{name} has {arr.shape[1]} features, but the estimator was fitted with {n_features}")
    return arr


def check_targets(Z, *, n_targets: int | None = None, name: str = "Z") -> np.ndarray:
    """``Z`` as a finite float64 array of shape (n_samples, d) with 1 <= d <= 3 (1-D input means d = 1)."""
    try:
        arr = np.asarray(Z, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array of shape (n_samples, n_targets): {exc}") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_targets), got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty; pass at least one sample")
    if not 1 <= arr.shape[1] <= MAX_TARGET_DIM:
        raise ValueError(
            f"{name} has {arr.shape[1]} target columns; conditional density estimation here supports 1 to "
            f"{MAX_TARGET_DIM} target dimensions. Select at most {MAX_TARGET_DIM} target columns."
        )
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        raise ValueError(f"{name} contains NaN or infinite values in {_first_rows(bad)}; drop these rows")
    if n_targets is not None and arr.shape[1] != n_targets:
        raise ValueError(f"{name} has {arr.shape[1]} target columns, but the estimator was fitted with {n_targets}")
    return arr


def check_same_length(X: np.ndarray, Z: np.ndarray, names: tuple[str, str] = ("X", "Z")) -> None:
    """Raise when the two arrays do not have one row per sample each."""
    if X.shape[0] != Z.shape[0]:
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same number of rows (one {names[1]} row per "
            f"{names[0]} row), got {X.shape[0]} and {Z.shape[0]}"
        )


def check_bounds(bounds, n_targets: int) -> np.ndarray | None:
    """``bounds`` as a (d, 2) array of finite [lo, hi] with lo < hi, or None when no box is declared."""
    if bounds is None:
        return None
    try:
        arr = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bounds must be [[lo, hi], ...] with one pair per target coordinate: {exc}") from None
    if arr.shape == (2,) and n_targets == 1:
        arr = arr[None, :]
    if arr.shape != (n_targets, 2):
        raise ValueError(
            f"bounds must have shape ({n_targets}, 2) — one [lo, hi] pair per target coordinate — got "
            f"shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError("bounds must be finite; use bounds=None for unbounded targets")
    if np.any(arr[:, 0] >= arr[:, 1]):
        bad = np.flatnonzero(arr[:, 0] >= arr[:, 1]).tolist()
        raise ValueError(f"bounds need lo < hi for every coordinate; violated for coordinate(s) {bad}")
    return arr


def check_inside(Z: np.ndarray, bounds: np.ndarray, name: str = "Z") -> None:
    """Raise when a row of ``Z`` is not strictly inside the box (the logit transform needs interior points)."""
    outside = (Z <= bounds[:, 0]) | (Z >= bounds[:, 1])
    if outside.any():
        coords = np.flatnonzero(outside.any(axis=0)).tolist()
        raise ValueError(
            f"{name} has {int(outside.any(axis=1).sum())} row(s) on or outside the declared bounds "
            f"(coordinate(s) {coords}; observed range {Z.min(axis=0).tolist()} .. {Z.max(axis=0).tolist()}, "
            f"bounds {bounds.tolist()}); widen `bounds` so that every target is strictly inside, or drop "
            f"these rows"
        )


def check_grid(grid, n_targets: int) -> np.ndarray:
    """``grid`` as a finite (G, d) array of target points."""
    arr = np.asarray(grid, dtype=np.float64)
    if arr.ndim == 1 and n_targets == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] != n_targets or arr.shape[0] == 0:
        raise ValueError(
            f"grid must have shape (n_points, {n_targets}) — one row per target point — got shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError("grid contains NaN or infinite values; pass finite target points")
    return arr


def check_positive_int(value, name: str) -> int:
    """``value`` as a positive int (for sample counts and similar parameters)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)
