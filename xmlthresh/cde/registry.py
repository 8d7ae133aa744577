"""Registries of the conditional-density-estimation plugins.

``ESTIMATORS`` maps a name (``"nnkcde"``, ``"flexcode"``, ...) to an estimator class and
``CDE_DATASETS`` a name (``"surd"``, ``"fork"``, ``"xanes"``) to a dataset class, so that the CLI and
``run_benchmark`` can build both from plain strings.
"""

from __future__ import annotations

from xmlthresh._util.registry import Registry

ESTIMATORS: Registry = Registry("estimator", package="xmlthresh.cde.estimators")
CDE_DATASETS: Registry = Registry("cde_dataset", package="xmlthresh.cde.datasets")
