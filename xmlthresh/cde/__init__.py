"""Conditional density estimation: f(z | x) for targets z of dimension 1 to 3.

Reference application: structure parameters z of a molecule given its X-ray absorption spectrum x.
Estimators (``ESTIMATORS``: marginal, nnkcde, ckde, gmm, rfcde, flexcode) follow the scikit-learn
contract with ``fit(X, Z)``, ``predict_density(X, Z_points)`` and ``density_on_grid(X, grid)``, and
accept a target box ``bounds``. Datasets (``CDE_DATASETS``: surd, fork, xanes) return train/test splits
and, for the synthetic ones, the true density. ``metrics`` scores estimates (direct and approximate CDE
loss, NLL, HDR coverage, PIT); ``run_benchmark`` runs one estimator on one dataset.
"""

from xmlthresh.cde.benchmark import run_benchmark
from xmlthresh.cde.registry import CDE_DATASETS, ESTIMATORS

__all__ = ["CDE_DATASETS", "ESTIMATORS", "run_benchmark"]
