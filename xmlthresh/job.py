"""One run of the main job: load a dataset, fit a strategy, write ``result.json``, log to MLflow.

Usable without Hydra (``run_job(config_dict, run_dir)``); the CLI is a thin layer that composes the config.
"""

from __future__ import annotations

import inspect
import logging
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import __version__
from .data.ranked_lists import RankedLists
from .datasets import DATASETS
from .files import write_json_atomic, write_text_atomic
from .metrics import true_positives_at_cuts
from .strategies import STRATEGIES, ThresholdStrategy
from .tracking import flatten, git_commit, numeric_metrics, tracked_run

log = logging.getLogger(__name__)


class ConfigError(ValueError):
    """A configuration that names an unknown parameter or gives it an invalid value."""


def build(registry_obj: type, params: Mapping[str, Any], what: str) -> Any:
    """Instantiate a plugin class with ``params``, turning unknown parameters into a readable error."""
    accepted = [p for p in inspect.signature(registry_obj.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ConfigError(f"{what} has no parameter(s) {', '.join(unknown)}; its parameters: {', '.join(accepted)}")
    return registry_obj(**params)


def run_job(cfg: Mapping[str, Any], run_dir: Path, resolved_yaml: str = "") -> dict[str, Any]:
    """Run the job described by ``cfg`` (strategy, dataset, beta, tracking); returns the result dict."""
    strategy_cfg = dict(cfg["strategy"])
    dataset_cfg = dict(cfg["dataset"])
    strategy_name = strategy_cfg.pop("name")
    loader = dataset_cfg.pop("loader")
    beta = float(cfg.get("beta", 1.0))
    tracking = cfg.get("tracking", {}) or {}
    strategy_cls = STRATEGIES.get(strategy_name)
    dataset = build(DATASETS.get(loader), dataset_cfg, f"dataset loader {loader!r}")
    strategy: ThresholdStrategy = build(strategy_cls, {"beta": beta, **strategy_cfg}, f"strategy {strategy_name!r}")

    with tracked_run(
        enabled=bool(tracking.get("enabled", True)),
        uri=tracking.get("uri"),
        experiment=str(tracking.get("experiment", "xmlthresh")),
        run_name=f"{strategy_name}-{dataset.name}",
    ) as tracker:
        tracker.log_params(
            {"strategy": strategy_name, "dataset": dataset.name, "beta": beta,
             **flatten(strategy.get_params(), "strategy."), **flatten(dataset_cfg, "dataset."),
             "dataset.loader": loader}
        )
        if resolved_yaml:
            tracker.log_text(resolved_yaml, "config.yaml")

        started = time.perf_counter()
        lists = dataset.load()
        load_seconds = time.perf_counter() - started
        warmup_seconds = 0.0
        if cfg.get("warm_up", True):
            started = time.perf_counter()
            strategy.warm_up()
            warmup_seconds = time.perf_counter() - started
        log.info("fitting %s on %s (%d labels, %d documents)", strategy_name, dataset.name, lists.n_labels,
                 lists.num_docs)
        started = time.perf_counter()
        strategy.fit(lists)
        fit_seconds = time.perf_counter() - started

        report = strategy.report()
        result = {
            "strategy": strategy_name,
            "dataset": dataset.name,
            "beta": beta,
            **report,
            "n_labels": int(lists.n_labels - strategy.n_labels_dropped_),
            "n_docs": int(lists.num_docs),
            "include_predict_all": bool(lists.include_predict_all),
            "fit_seconds": fit_seconds,
            "load_seconds": load_seconds,
            "warmup_seconds": warmup_seconds,
            "version": __version__,
            "git_commit": git_commit(),
            "mlflow_run_id": tracker.run_id,
            "run_dir": str(run_dir),
        }
        thresholds_path = run_dir / "thresholds.csv"
        write_text_atomic(thresholds_path, thresholds_table(lists, strategy).to_csv(index=False))
        result_path = run_dir / "result.json"
        write_json_atomic(result_path, result)
        tracker.log_metrics(numeric_metrics(result, exclude=("beta", "include_predict_all")))
        tracker.log_artifact(thresholds_path)
        tracker.log_artifact(result_path)
    return result


def thresholds_table(lists: RankedLists, strategy: ThresholdStrategy) -> pd.DataFrame:
    """One row per label: the chosen cut (documents predicted), its counts, precision and recall."""
    kept = strategy.kept_labels_
    tp = np.zeros(lists.n_labels, dtype=np.int64)
    tp[kept] = true_positives_at_cuts(lists.select_labels(kept), strategy.cuts_[kept])
    cut = strategy.cuts_
    precision = np.divide(tp, cut, out=np.zeros(len(cut)), where=cut > 0)
    recall = np.divide(tp, lists.n_relevant, out=np.zeros(len(cut)), where=lists.n_relevant > 0)
    return pd.DataFrame(
        {"label_id": lists.label_ids, "cut": cut, "predict_all": cut == lists.num_docs, "tp": tp,
         "n_relevant": lists.n_relevant, "precision": precision, "recall": recall, "excluded": ~kept}
    )


def summary(result: Mapping[str, Any]) -> str:
    """A short human summary of a result."""
    lines = [
        f"xmlthresh: strategy={result['strategy']} dataset={result['dataset']} "
        f"({result['n_labels']} labels, {result['n_docs']} documents) beta={result['beta']:g}",
        f"  F-macro {result['f_macro']:.7f} (P {result['precision']:.6f}, R {result['recall']:.6f})  "
        f"macro-F {result['macro_f']:.6f}  micro-F {result['micro_f']:.6f}",
    ]
    if result.get("upper_bound") is not None:
        fixed = result.get("fixed_point_exists")
        fixed_text = "" if fixed is None else ("; fixed point of V: yes" if fixed else "; fixed point of V: none")
        lines.append(
            f"  certified: {result['lower_bound']:.7f} <= optimum <= {result['upper_bound']:.7f} "
            f"(gap {result['upper_bound'] - result['lower_bound']:.2e}){fixed_text}"
        )
    if result.get("n_labels_dropped"):
        lines.append(f"  {result['n_labels_dropped']} label(s) without relevant documents excluded")
    lines.append(f"  fit {result['fit_seconds']:.3f} s, load {result['load_seconds']:.3f} s")
    lines.append(f"  result: {Path(result['run_dir']) / 'result.json'}")
    if result.get("mlflow_run_id"):
        lines.append(f"  mlflow run: {result['mlflow_run_id']}")
    return "\n".join(lines)
