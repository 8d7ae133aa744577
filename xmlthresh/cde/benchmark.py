"""One benchmark run: build a dataset and an estimator by name, fit, time and evaluate.

``run_benchmark("nnkcde", "surd", seed=0)`` is what the CLI calls; it returns a flat, JSON-friendly dict
(losses with standard errors, direct and approximate, absolute and relative — see ``metrics`` — plus NLL,
HDR coverage, PIT KS distances and timings). The dataset's declared target box, if any, is passed to the
estimator as ``bounds``; the seed drives the data draw/split, the estimator's tuning split and the Monte
Carlo integrals.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np

from xmlthresh._util.registry import constructor_parameters
from xmlthresh.cde.datasets.base import CDEData
from xmlthresh.cde.metrics import evaluate_cde
from xmlthresh.cde.registry import CDE_DATASETS, ESTIMATORS
from xmlthresh.validation import check_int, check_memory


def load_dataset(dataset_name: str, seed: int = 0, **params: Any) -> CDEData:
    """The registered dataset ``dataset_name`` built with ``params`` (checked) and drawn/split with ``seed``."""
    return CDE_DATASETS.build(dataset_name, params).load(seed=seed)


def make_estimator(estimator_name: str, data: CDEData | None = None, seed: int = 0, **params: Any):
    """The registered estimator with ``params`` (checked); ``bounds`` and ``random_state`` default to data / seed."""
    accepted, _ = constructor_parameters(ESTIMATORS.get(estimator_name))
    if data is not None and data.bounds is not None and "bounds" in accepted:
        params.setdefault("bounds", data.bounds)
    if "random_state" in accepted:
        params.setdefault("random_state", seed)
    return ESTIMATORS.build(estimator_name, params)


#: float64 values held per quadrature node (its coordinates, weight, density and the temporaries of the
#: evaluation; an estimate from below), for the memory check of ``n_samples``
VALUES_PER_NODE = 8


def check_quadrature_size(n_samples: Any, data: CDEData) -> int:
    """``n_samples`` (nodes per test point) as an integer >= 1 whose quadrature -- test points x nodes x
    :data:`VALUES_PER_NODE` float64 -- fits in the memory budget; else one error naming ``cde.n_samples``, the
    memory and the budget (``cde.n_samples=10^11`` died in a 745 GiB allocation after the fit)."""
    n = check_int("cde.n_samples", n_samples, 1)
    n_points = int(data.X_test.shape[0])
    check_memory(f"cde.n_samples={n:,} nodes x {n_points:,} test points x {VALUES_PER_NODE} values",
                 float(n) * n_points * VALUES_PER_NODE * 8, "lower cde.n_samples")
    return n


def tuned_parameters(estimator) -> dict[str, Any]:
    """The fitted scalar / short-vector attributes (tuned k, bandwidths, ...) as plain Python values."""
    out: dict[str, Any] = {}
    for key, value in vars(estimator).items():
        if not key.endswith("_") or key.startswith("_"):
            continue
        if isinstance(value, (bool, int, float, np.integer, np.floating)):
            out[key] = value.item() if hasattr(value, "item") else value
        elif isinstance(value, np.ndarray) and value.ndim == 1 and value.size <= 3 and key != "n_basis_grid_":
            out[key] = value.tolist()
    return out


def zero_density_counts(estimator, data: CDEData, density: np.ndarray) -> dict[str, int | None]:
    """Test targets given density 0 (they floor the NLL): ``n_zero_density`` for the estimate as scored and,
    for an estimator that post-processes a raw estimate (``predict_raw_density``, FlexCode),
    ``n_zero_density_raw`` for the raw one (None for the others)."""
    raw = getattr(estimator, "predict_raw_density", None)
    raw_zeros = int(np.sum(raw(data.X_test, data.Z_test) <= 0)) if callable(raw) else None
    return {"n_zero_density": int(np.sum(np.asarray(density) <= 0)), "n_zero_density_raw": raw_zeros}


def run_benchmark(
    estimator_name: str,
    dataset_name: str,
    seed: int = 0,
    *,
    estimator_params: Mapping[str, Any] | None = None,
    dataset_params: Mapping[str, Any] | None = None,
    n_samples: int = 256,
    return_fitted: bool = False,
    per_point_out: dict[str, np.ndarray] | None = None,
) -> dict[str, Any] | tuple[dict[str, Any], Any, CDEData]:
    """Fit ``estimator_name`` on ``dataset_name`` (drawn with ``seed``) and evaluate it on the test split.

    Keys: loss_direct(_se), loss_approx(_se), rel_loss_direct(_se), rel_loss_approx(_se), zero_loss,
    direct_minus_approx(_se), nll(_se), coverage50, coverage90, pit_ks, pit_ks_per_coordinate, hpd_ks,
    n_zero_density(_raw) (see ``zero_density_counts``), fit_seconds, evaluate_seconds, plus the names, seed,
    sizes and the estimator's tuned parameters.
    Direct and relative losses are None on real data (no true density). With ``return_fitted`` the call
    returns ``(record, fitted estimator, data)`` so that the caller can plot or inspect without refitting.
    A dict passed as ``per_point_out`` receives the per-test-point arrays of the evaluation (``loss_approx``,
    ``loss_direct`` when known, ``nll``, ``density``, ``squared_norm``, ``hpd``, ``pit``), in the test order,
    for paired comparisons of estimators on the same test points.
    """
    data = load_dataset(dataset_name, seed, **dict(dataset_params or {}))
    estimator = make_estimator(estimator_name, data, seed, **dict(estimator_params or {}))
    check_quadrature_size(n_samples, data)  # before the fit, which may take minutes
    start = time.perf_counter()
    estimator.fit(data.X_train, data.Z_train)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    evaluation = evaluate_cde(
        estimator,
        data.X_test,
        data.Z_test,
        true_density=data.true_density,
        true_squared_norm=data.true_squared_norm,
        n_samples=n_samples,
        random_state=seed,
    )
    if per_point_out is not None:
        per_point_out.update(evaluation.per_point)
    tuned = tuned_parameters(estimator)
    zero_counts = zero_density_counts(estimator, data, evaluation.per_point["density"])
    record = {
        "estimator": estimator_name,
        "dataset": dataset_name,
        "seed": seed,
        "n_train": int(data.X_train.shape[0]),
        "n_targets": int(data.n_targets),
        **evaluation.summary,
        **zero_counts,
        "fit_seconds": fit_seconds,
        "evaluate_seconds": time.perf_counter() - start,
        "tuned": tuned,
    }
    return (record, estimator, data) if return_fitted else record
