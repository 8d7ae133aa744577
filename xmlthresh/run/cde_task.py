"""``task=cde``: one conditional-density-estimation benchmark run inside the common job (MLflow, result.json);
the job-level glue of :mod:`xmlthresh.cde` (which itself knows nothing of tracking).

    python -m xmlthresh task=cde estimator=nnkcde cde_dataset=surd
    python -m xmlthresh -m task=cde estimator=marginal,nnkcde,ckde,gmm,rfcde,flexcode cde_dataset=surd,fork,xanes

The estimator and data-set options live in ``xmlthresh/conf/estimator/`` and ``xmlthresh/conf/cde_dataset/``;
their keys are the constructor parameters of the registered classes (``name`` picks the class).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping

from xmlthresh.cde.benchmark import run_benchmark
from xmlthresh.config.seeds import run_seed
from xmlthresh.tracking.mlflow_runs import flatten
from xmlthresh.validation import check_int, check_size

#: test points whose densities a run draws at most (one panel each: 99 made a 27,720-pixel picture)
MAX_PLOT_POINTS = 12

log = logging.getLogger(__name__)

#: float64 values per point of a density slice's G x G grid (its two coordinates, the estimate, the truth and
#: the temporaries of the evaluation; an estimate from below), for the memory check of ``cde.slice_grid``
SLICE_BYTES_PER_POINT = 8 * 8


def run_cde_task(cfg: Mapping[str, Any], run_dir: Path, tracker: Any, base: dict[str, Any],
                 parallelism: dict[str, Any], draw: bool = True) -> tuple[dict[str, Any], Any]:
    """Fit and evaluate one estimator on one data set. With ``cde.density_at_x`` set, the density at that x
    on a grid is saved (``density_at_x.npz``, for the study report). With ``cde.save_per_point`` the per-test-point
    losses are saved (``per_point.npz``). The chosen hyper-parameters are logged as ``tuned.*`` params. The
    run's seed draws the synthetic data,
    the estimator's tuning split and the Monte Carlo integrals. Returns the result and, for a 2-D target
    when ``draw``, its density plot to draw (a callable writing it into ``run_dir``; the job draws it after
    result.json)."""
    estimator_cfg = dict(cfg["estimator"])
    dataset_cfg = dict(cfg["cde_dataset"])
    estimator_name = estimator_cfg.pop("name")
    dataset_name = dataset_cfg.pop("name")
    seed = run_seed(cfg.get("seed", 0))
    cde_cfg = dict(cfg.get("cde") or {})
    tracker.log_params({"estimator": estimator_name, "cde_dataset": dataset_name, "seed": seed,
                        **flatten(estimator_cfg, "estimator."), **flatten(dataset_cfg, "cde_dataset."),
                        **parallelism})
    cde_cfg["n_plot_points"] = check_int("cde.n_plot_points", cde_cfg.get("n_plot_points", 3), 0,
                                         MAX_PLOT_POINTS)  # before the fit, not when drawing
    if cde_cfg.get("density_at_x") is not None:  # the slice is drawn after the fit: its size is checked before
        cde_cfg["slice_grid"] = check_size("cde.slice_grid", cde_cfg.get("slice_grid", 80), SLICE_BYTES_PER_POINT,
                                           2, unit="grid point", square=True)
    log.info("fitting %s on %s (seed %d)", estimator_name, dataset_name, seed)
    per_point: dict[str, Any] = {}
    result, estimator, data = run_benchmark(
        estimator_name, dataset_name, seed, estimator_params=estimator_cfg, dataset_params=dataset_cfg,
        n_samples=int(cde_cfg.get("n_samples", 256)), return_fitted=True, per_point_out=per_point,
    )
    tracker.log_params(flatten(result["tuned"], "tuned."))  # the values the tuning chose, beside the grids
    if cde_cfg.get("save_per_point"):
        _save_per_point(run_dir, per_point, tracker)
    result["cde_dataset_params"] = dataset_cfg
    result["seeds"] = {"run": seed, "cde_generator": seed, "estimator": seed}  # run_benchmark's one seed
    at_x = cde_cfg.get("density_at_x")
    if at_x is not None and data.n_targets == 2:
        import numpy as np

        from xmlthresh.cde.slices import density_slice, training_sample

        slice_ = density_slice(estimator, data, at_x, int(cde_cfg["slice_grid"]), what="cde.density_at_x")
        slice_.update(training_sample(data, dataset_cfg.get("nx")))  # panel (a) of the report: the data set
        path = run_dir / "density_at_x.npz"
        run_dir.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **slice_)
        tracker.log_artifact(path)
        if "ise" in slice_:
            result["ise_at_x"] = float(slice_["ise"])
    pictures = None
    if draw and data.n_targets == 2 and int(cde_cfg.get("n_plot_points", 3)) > 0:  # 0: no density picture
        def pictures() -> list[Path]:
            from xmlthresh.cde.plot import plot_densities

            xs = data.X_test[: int(cde_cfg.get("n_plot_points", 3))]
            return [plot_densities(estimator, data, xs, run_dir / "densities.png")]
    return {**base, **result}, pictures


def _save_per_point(run_dir: Path, per_point: Mapping[str, Any], tracker: Any) -> None:
    """``per_point.npz``: the per-test-point losses, NLL and HPD values (test order; the study reports pair
    estimators on them), logged as an artifact."""
    import numpy as np

    keys = ("loss_approx", "loss_direct", "nll", "density", "squared_norm", "hpd")
    path = run_dir / "per_point.npz"
    run_dir.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **{key: np.asarray(per_point[key]) for key in keys if key in per_point})
    tracker.log_artifact(path)


def cde_summary(result: Mapping[str, Any]) -> str:
    """A short human summary of a CDE result."""
    def pm(key: str) -> str:
        value, se = result.get(key), result.get(f"{key}_se")
        return "n/a" if value is None else f"{value:.4f} +- {se:.4f}" if se is not None else f"{value:.4f}"

    lines = [
        f"xmlthresh: task=cde estimator={result['estimator']} cde_dataset={result['dataset']} seed={result['seed']}",
        f"  relative CDE loss: direct {pm('rel_loss_direct')}, approximate {pm('rel_loss_approx')}",
        f"  NLL {pm('nll')}, HDR coverage 50% {result.get('coverage50', float('nan')):.3f}, "
        f"90% {result.get('coverage90', float('nan')):.3f}",
        f"  fit {result['fit_seconds']:.2f} s, evaluate {result['evaluate_seconds']:.2f} s",
        f"  result: {Path(result['run_dir']) / 'result.json'}",
    ]
    if result.get("mlflow_run_id"):
        lines.append(f"  mlflow run: {result['mlflow_run_id']}")
    return "\n".join(lines)
