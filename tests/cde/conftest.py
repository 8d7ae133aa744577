"""Shared fixtures of the CDE tests: small seeded data sets and cheap tuning grids."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from helpers import data_dir_with, no_data

from xmlthresh.cde import CDE_DATASETS

XANES_PROBE = Path("xanes_fesio4") / "sample3" / "spectra.txt"

#: cheap tuning grids so that the many small fits stay fast
FAST = {
    "marginal": {"bandwidth_grid": (0.05, 0.1, 0.2, 0.4)},
    "nnkcde": {"k_grid": (10, 40), "bandwidth_grid": (0.05, 0.1, 0.2, 0.4)},
    "ckde": {"n_neighbors": 60, "x_bandwidth_grid": (0.3, 1.0), "bandwidth_grid": (0.05, 0.1, 0.2, 0.4)},
    "gmm": {"n_components_grid": (2, 4), "n_pca_grid": (11,)},
    "rfcde": {"n_estimators": 20, "n_neighbors": 80, "bandwidth_grid": (0.05, 0.1, 0.2, 0.4)},
    "flexcode": {"n_basis_grid": (6, 10), "k_grid": (20, 40)},
}
ESTIMATOR_NAMES = sorted(FAST)


def fast_params(name: str) -> dict:
    return dict(FAST[name])


@pytest.fixture(scope="session")
def small_data() -> dict:
    """Small 1-, 2- and 3-D problems (400 training points) keyed by target dimension."""
    return {
        1: CDE_DATASETS.get("surd")(nz=1, d=[0.3], alpha=[0.5], a=0.05, n_train=400, n_test=100).load(seed=3),
        2: CDE_DATASETS.get("fork")(n_train=400, n_test=100).load(seed=3),
        3: CDE_DATASETS.get("surd")(
            nz=3, d=[0.2, 0.6, 0.4], alpha=[0.3, 0.3, 0.3], a=0.1, n_train=400, n_test=100
        ).load(seed=3),
    }


def padded_box(Z: np.ndarray, pad: float) -> np.ndarray:
    """The range of Z widened by ``pad`` times the range on each side -> (d, 2)."""
    lo, hi = Z.min(axis=0), Z.max(axis=0)
    return np.column_stack([lo - pad * (hi - lo), hi + pad * (hi - lo)])


def midpoint_grid(box: np.ndarray, cells: int) -> tuple[np.ndarray, float]:
    """Cell centres of a tensor grid over ``box`` and the cell volume."""
    axes = [lo + (np.arange(cells) + 0.5) * (hi - lo) / cells for lo, hi in box]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([m.ravel() for m in mesh]), float(np.prod((box[:, 1] - box[:, 0]) / cells))


@pytest.fixture
def xanes_data(monkeypatch) -> Path:
    """$XMLTHRESH_DATA when it holds the XANES files (downloads switched off), else skip with the reason."""
    env = os.environ.get("XMLTHRESH_DATA")
    if not env or not (Path(env) / XANES_PROBE).is_file():
        pytest.skip(no_data(str(XANES_PROBE), "real XANES data"))
    monkeypatch.setenv("XMLTHRESH_OFFLINE", "1")
    return Path(env)


@pytest.fixture
def shared_xanes() -> Path:
    """The shared cache's xanes_fesio4 folder (the origin served in the download test), else skip."""
    root = data_dir_with(str(XANES_PROBE))
    if root is None:
        pytest.skip(no_data(str(XANES_PROBE), "the XANES files the download test serves"))
    return root / "xanes_fesio4"
