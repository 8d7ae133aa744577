"""What a job logs, read off its config and its ``result.json``: the params (as the config states them), which
result fields are settings rather than metrics, and the objective its certified bounds hold for.

Shared by the job that logs a run (:mod:`xmlthresh.run.job`) and the report that reads runs back, from MLflow or
from the jobs' own files (:mod:`xmlthresh.report.tables`), so both name a run's fields the same way.
"""

from __future__ import annotations

from typing import Any, Mapping

from xmlthresh.metrics import EMPIRICAL_OBJECTIVE
from xmlthresh.tracking.mlflow_runs import flatten

#: result fields that are settings, not measurements (logged as params, not metrics)
NOT_METRICS = ("beta", "include_predict_all", "seed", "folds", "native_threshold")


def bounds_objective(result: Mapping[str, Any]) -> str | None:
    """The objective a result's certified bounds hold for -- those of the evaluated documents (``lower_bound``,
    ``upper_bound``) or else of the fit split (``fit_*``) -- as the strategy names it (``objective``, e.g.
    ``plug-in F-macro (expected counts under calibrated probabilities)``), ``empirical F-macro`` when it names
    none; None for a result without bounds."""
    for prefix in ("", "fit_"):
        if result.get(f"{prefix}lower_bound") is not None or result.get(f"{prefix}upper_bound") is not None:
            return str(result.get(f"{prefix}objective") or EMPIRICAL_OBJECTIVE)
    return None


def config_params(cfg: Mapping[str, Any], task: str) -> dict[str, Any]:
    """The params a job logs, as its config states them (a job that fails before logging its own -- a bad
    ``beta``, an unknown option -- is logged with these, so a failed sweep job says in MLflow what it was)."""
    def options(group: str, drop: tuple[str, ...] = ("name",)) -> dict[str, Any]:
        section = cfg.get(group) or {}
        return flatten({k: v for k, v in section.items() if k not in drop}, f"{group}.") if isinstance(
            section, Mapping) else {}

    def name(group: str) -> Any:
        section = cfg.get(group) or {}
        return section.get("name", section.get("loader")) if isinstance(section, Mapping) else section

    if task == "cde":
        return {"estimator": name("estimator"), "cde_dataset": name("cde_dataset"), "seed": cfg.get("seed"),
                **options("estimator"), **options("cde_dataset")}
    return {"strategy": name("strategy"), "dataset": name("dataset"), "beta": cfg.get("beta"),
            "protocol": name("protocol") or "oracle", "seed": cfg.get("seed"), **options("protocol"),
            **options("strategy"), **options("dataset", drop=()),
            **({"ranker": name("ranker"), **options("ranker")} if cfg.get("ranker") else {})}
