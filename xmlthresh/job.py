"""One run of the main job: load a data set, (rank it), fit a strategy under a protocol, write
``result.json`` and ``thresholds.csv``, log everything to MLflow.

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
from .data.multilabel import MultiLabelData, ScoreData
from .data.ranked_lists import RankedLists
from .datasets import DATASETS
from .files import write_json_atomic, write_text_atomic
from .plugins import load_plugins
from .protocols import ProtocolSpec, fit_and_evaluate, protocol_spec
from .seeds import loader_seeds, seeds_used
from .strategies import STRATEGIES, BaseStrategy
from .sweep import mark_resumed, parent_run_id
from .tracking import (CONFIG_HASH_TAG, config_hash, finished_run_with_hash, flatten, git_commit, numeric_metrics,
                       tracked_run)

log = logging.getLogger(__name__)

#: what a run can do: choose thresholds (the default) or benchmark a conditional density estimator
TASKS = ("thresholds", "cde")

#: result fields that are settings, not measurements (logged as params, not metrics)
_NOT_METRICS = ("beta", "include_predict_all", "seed", "folds")


class ConfigError(ValueError):
    """A configuration that names an unknown parameter or gives it an invalid value."""


def build(plugin: type, params: Mapping[str, Any], what: str) -> Any:
    """Instantiate a plugin class with ``params``, turning unknown parameters into a readable error."""
    accepted = [p for p in inspect.signature(plugin.__init__).parameters if p not in ("self", "args", "kwargs")]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ConfigError(f"{what} has no parameter(s) {', '.join(unknown)}; its parameters: {', '.join(accepted)}")
    return plugin(**params)


def run_job(cfg: Mapping[str, Any], run_dir: Path, resolved_yaml: str = "",
            context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run the job described by ``cfg``: task ``thresholds`` (strategy, dataset, ranker, protocol, beta) or
    ``cde`` (estimator, cde_dataset); tracked in MLflow as ``cfg["tracking"]`` says.

    ``context`` (from :func:`xmlthresh.sweep.job_context`) says whether the job is part of a sweep: then its
    MLflow run is a child of the sweep's parent run, and a job whose configuration already FINISHED in an
    earlier sweep is not run again (unless ``force``): its earlier result is copied instead.
    """
    load_plugins()  # again here: sweep workers do not run the CLI's main()
    context = dict(context or {})
    task = str(cfg.get("task", "thresholds"))
    if task not in TASKS:
        raise ConfigError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    tracking = cfg.get("tracking", {}) or {}
    enabled = bool(tracking.get("enabled", True))
    experiment = str(tracking.get("experiment", "xmlthresh"))
    digest = config_hash(cfg)
    if context.get("multirun") and enabled and not cfg.get("force", False):
        done = finished_run_with_hash(tracking.get("uri"), experiment, digest)
        resumed = _resumed(done, run_dir, context, tracking.get("uri")) if done is not None else None
        if resumed is not None:
            return resumed
    parent = parent_run_id(context["sweep_dir"]) if context.get("multirun") else None

    with tracked_run(
        enabled=enabled,
        uri=tracking.get("uri"),
        experiment=experiment,
        run_name=_run_name(cfg, task),
        parent_run_id=parent,
        tags={CONFIG_HASH_TAG: digest, "task": task},
    ) as tracker:
        if resolved_yaml:
            tracker.log_text(resolved_yaml, "config.yaml")
        base = {"task": task, "version": __version__, "git_commit": git_commit(), "mlflow_run_id": tracker.run_id,
                "run_dir": str(run_dir)}
        if task == "cde":
            from .cde.job import run_cde_task

            result = run_cde_task(cfg, run_dir, tracker, base, _parallelism(context))
        else:
            result = _threshold_task(cfg, run_dir, tracker, base, _parallelism(context))
        result_path = run_dir / "result.json"
        write_json_atomic(result_path, result)
        if not result.get("skipped"):
            tracker.log_metrics(numeric_metrics(result, exclude=_NOT_METRICS))
        tracker.log_artifact(result_path)
    return result


def _run_name(cfg: Mapping[str, Any], task: str) -> str:
    if task == "cde":
        return f"{cfg['estimator']['name']}-{cfg['cde_dataset']['name']}"
    dataset = cfg["dataset"].get("name") or cfg["dataset"]["loader"]
    protocol = cfg.get("protocol") or "oracle"
    protocol = protocol.get("name", "?") if isinstance(protocol, Mapping) else protocol
    return f"{cfg['strategy']['name']}-{dataset}-{protocol}"


def _threshold_task(cfg: Mapping[str, Any], run_dir: Path, tracker: Any, base: dict[str, Any],
                    parallelism: dict[str, Any]) -> dict[str, Any]:
    """Thresholds: load a data set, rank it when it has features, fit a strategy under a protocol."""
    strategy_cfg = dict(cfg["strategy"])
    dataset_cfg = dict(cfg["dataset"])
    ranker_cfg = dict(cfg.get("ranker") or {})
    strategy_name = strategy_cfg.pop("name")
    loader = dataset_cfg.pop("loader")
    beta = float(cfg.get("beta", 1.0))
    seed = _run_seed(cfg.get("seed", 0))
    spec = protocol_spec(cfg.get("protocol"), run_seed=seed)
    protocol = spec.name
    # built inside the run: a configuration error is a FAILED run with its message, like any other
    dataset = build(DATASETS.get(loader), dataset_cfg, f"dataset loader {loader!r}")
    strategy: BaseStrategy = build(STRATEGIES.get(strategy_name), {"beta": beta, **strategy_cfg},
                                   f"strategy {strategy_name!r}")
    strategy._check_params()
    tracker.log_params(
        {"strategy": strategy_name, "kind": strategy.kind, "dataset": dataset.name, "beta": beta,
         "protocol": protocol, "seed": seed, **flatten(spec.params(), "protocol."),
         **flatten(strategy.get_params(), "strategy."), **flatten(dataset_cfg, "dataset."),
         "dataset.loader": loader, **parallelism}
    )

    started = time.perf_counter()
    data = dataset.load()
    load_seconds = time.perf_counter() - started
    data_info: dict[str, Any] = {}
    split_seeds = loader_seeds(data, dataset)
    ranked_here = isinstance(data, MultiLabelData)
    if ranked_here:
        data, ranker_name = _rank(data, ranker_cfg, seed, spec)
        data = data.with_predict_all(dataset.include_predict_all)
        data_info = {"ranker": ranker_name, **data.info}
        tracker.log_params({"ranker": ranker_name, **flatten(ranker_cfg, "ranker.")})
    seeds = seeds_used(seed, split_seeds, data, spec, ranked_here, strategy.get_params())
    tracker.log_params(flatten(seeds, "seeds."))

    base = {"strategy": strategy_name, "variant": strategy_variant(strategy_name, strategy), "kind": strategy.kind,
            "dataset": dataset.name, "beta": beta, "protocol": protocol, **spec.params(), "seed": seed, "seeds": seeds,
            "load_seconds": load_seconds, **data_info, **base}
    skipped, reason = strategy.skip(data)
    if skipped:
        log.warning("skipped: %s", reason)
        tracker.set_tags({"skipped": reason})
        return {**base, "skipped": True, "skip_reason": reason}

    warmup_seconds = 0.0
    if cfg.get("warm_up", True):
        started = time.perf_counter()
        strategy.warm_up()
        warmup_seconds = time.perf_counter() - started
    log.info("fitting %s on %s (protocol %s)", strategy_name, dataset.name, protocol)
    evaluation = fit_and_evaluate(strategy, data, protocol=spec)
    evaluation.update(population_metrics(dataset, data, strategy, beta))
    if cfg.get("ceiling", False) and isinstance(data, ScoreData) and protocol != "oracle":
        evaluation["ceiling_f_macro"] = ceiling_f_macro(data.splits["test"], beta)
    thresholds_path = run_dir / "thresholds.csv"
    write_text_atomic(thresholds_path, thresholds_table(strategy, _label_ids(data)).to_csv(index=False))
    tracker.log_artifact(thresholds_path)
    if hasattr(strategy, "grid_table"):  # linearization_region: the grid with its rectangles
        grid_path = run_dir / "grid.csv"
        write_text_atomic(grid_path, strategy.grid_table().to_csv(index=False))
        tracker.log_artifact(grid_path)
    if cfg.get("plots", True) and hasattr(strategy, "fit_lists_"):
        from .plots import save_run_plots

        for path in save_run_plots(strategy.fit_lists_, strategy, beta, run_dir):
            tracker.log_artifact(path)
    return {**base, **evaluation, "warmup_seconds": warmup_seconds}


def ceiling_f_macro(split: Any, beta: float) -> float:
    """The transfer study's ceiling: F-macro of ``domain`` fitted on the evaluation split itself (its labels
    included) -- what no rule fitted elsewhere can beat on that split."""
    from .strategies.domain import DomainStrategy

    return float(DomainStrategy(beta=beta).fit_scores(split).f_macro_)


def strategy_variant(name: str, strategy: BaseStrategy) -> str:
    """The strategy's name with the parameters that differ from its defaults (beta and seed aside), e.g.
    ``domain(smoothing=5.0)``: the label that tells variants of one strategy apart in a study."""
    defaults = {key: parameter.default for key, parameter in inspect.signature(type(strategy).__init__).parameters.items()
                if parameter.default is not inspect.Parameter.empty}
    changed = {key: value for key, value in strategy.get_params(deep=False).items()
               if key not in ("beta", "seed") and key in defaults and value != defaults[key]}
    return f"{name}({', '.join(f'{key}={value}' for key, value in sorted(changed.items()))})" if changed else name


def population_metrics(dataset: Any, data: Any, strategy: BaseStrategy, beta: float) -> dict[str, Any]:
    """For a data set whose generative model is known in closed form (``dataset.population()``, e.g. dense
    ``synthetic_xmc``): the population F-macro of the fitted score thresholds, the population optimum and
    the regret. Empty for other data sets and for rules without per-label score thresholds."""
    population = dataset.population() if callable(getattr(dataset, "population", None)) else None
    if population is None or not isinstance(data, ScoreData):
        return {}
    if hasattr(strategy, "thresholds_for"):  # a transductive rule: the thresholds it applies to the eval split
        thresholds = strategy.thresholds_for(data.splits["test"])
    elif hasattr(strategy, "score_thresholds_"):
        thresholds = strategy.score_thresholds_
    else:
        return {}
    best = population.optimum(beta)
    value = population.f_macro(thresholds, beta)
    return {"population_f_macro": value, "population_optimum": best["f_macro"],
            "population_upper_bound": best["upper_bound"], "population_regret": best["f_macro"] - value}


def _parallelism(context: Mapping[str, Any]) -> dict[str, Any]:
    """Thread counts and launcher: timings under different parallelism are not comparable."""
    import numba
    from threadpoolctl import threadpool_info

    blas = max((pool.get("num_threads", 0) for pool in threadpool_info()), default=0)
    return {"threads.numba": numba.get_num_threads(), "threads.blas": blas,
            "launcher": context.get("launcher", "none")}


def _resumed(run_id: str, run_dir: Path, context: Mapping[str, Any], uri: str | None) -> dict[str, Any] | None:
    """A sweep job that already finished in an earlier sweep: copy its result instead of running it
    (None when the earlier result cannot be read: then the job runs again)."""
    import json

    from .tracking import download_result

    try:
        local = download_result(run_id, run_dir, uri)
    except Exception as exc:  # artifacts deleted or store moved: recompute rather than fail
        log.warning("run %s finished but its result.json is unreadable (%s); running the job again", run_id, exc)
        return None
    result = {**json.loads(Path(local).read_text()), "resumed_from": run_id, "run_dir": str(run_dir)}
    write_json_atomic(run_dir / "result.json", result)
    mark_resumed(context["sweep_dir"], int(context.get("job_num", 0)), run_id)
    log.info("already finished as run %s (force=true runs it again)", run_id)
    return result


def _run_seed(value: Any) -> int:
    """The top-level seed, strictly an integer (``seed=1.5`` or ``seed=true`` is an error, not truncated)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"seed must be an integer, got {value!r} ({type(value).__name__})")
    return int(value)


def _rank(data: MultiLabelData, ranker_cfg: dict, seed: int, spec: ProtocolSpec) -> tuple[ScoreData, str]:
    """Scores of a first-stage ranker for a feature data set (cached by the ranker layer): fitted on train
    (validation and test scored), or under crossfit out-of-fold scores of train ∪ validation and a refit."""
    try:
        from .rankers import crossfit_scores, ranker_scores
    except ImportError as exc:  # pragma: no cover - only without the rankers package
        raise ConfigError(f"data set {data.name!r} has features and needs a ranker, but rankers are unavailable: {exc}")
    params = dict(ranker_cfg)
    name = params.pop("name", None)
    if not name:
        raise ConfigError(f"data set {data.name!r} has features: choose a first-stage ranker, e.g. ranker=br_logreg")
    if spec.name == "crossfit":
        return crossfit_scores(data, name, params, seed, folds=spec.folds, fold_seed=spec.seed), name
    return ranker_scores(data, name, params, seed), name


def _label_ids(data: RankedLists | ScoreData) -> np.ndarray:
    if isinstance(data, RankedLists):
        return data.label_ids
    names = data.splits["test"].label_names
    return names if names is not None else np.arange(data.splits["test"].n_labels)


def thresholds_table(strategy: BaseStrategy, label_ids: np.ndarray) -> pd.DataFrame:
    """One row per label: the fitted cut (documents predicted on the fit data) and/or score threshold."""
    table = {"label_id": label_ids}
    if hasattr(strategy, "cuts_") and len(strategy.cuts_) == len(label_ids):
        table["cut"] = strategy.cuts_
    if hasattr(strategy, "score_thresholds_"):
        table["score_threshold"] = strategy.score_thresholds_
    table["excluded"] = ~strategy.kept_labels_
    return pd.DataFrame(table)


def summary(result: Mapping[str, Any]) -> str:
    """A short human summary of a result."""
    if result.get("task") == "cde":
        from .cde.job import cde_summary

        return cde_summary(result)
    head = (f"xmlthresh: strategy={result['strategy']} dataset={result['dataset']} protocol={result['protocol']} "
            f"beta={result['beta']:g}")
    if result.get("skipped"):
        return f"{head}\n  skipped: {result['skip_reason']}"
    if result.get("resumed_from"):
        head += f" [already done: run {result['resumed_from']}]"
    where = " on the eval split" if result["protocol"] in ("holdout", "crossfit") else ""
    lines = [
        f"{head} ({result['n_labels']} labels, {result['n_docs']} documents{where})",
        f"  F-macro {result['f_macro']:.7f} (P {result['precision']:.6f}, R {result['recall']:.6f})  "
        f"macro-F {result['macro_f']:.6f}  micro-F {result['micro_f']:.6f}",
    ]
    for prefix, label in (("", "certified"), ("fit_", "certified on the fit data")):
        if result.get(f"{prefix}upper_bound") is not None:
            fixed = result.get(f"{prefix}fixed_point_exists")
            fixed_text = "" if fixed is None else ("; fixed point of V: yes" if fixed else "; fixed point of V: none")
            low, up = result[f"{prefix}lower_bound"], result[f"{prefix}upper_bound"]
            objective = result.get(f"{prefix}objective")
            of = f" [{objective}]" if objective and objective != "empirical F-macro" else ""
            lines.append(f"  {label}{of}: {low:.7f} <= optimum <= {up:.7f} (gap {up - low:.2e}){fixed_text}")
    if result.get("n_labels_dropped"):
        lines.append(f"  {result['n_labels_dropped']} label(s) without relevant documents excluded")
    if "ranker" in result:
        quality = ", ".join(f"P@{k[-1]} {result[k]:.4f}" for k in ("ranker_p_at_1", "ranker_p_at_3", "ranker_p_at_5")
                            if k in result)
        cache = " (scores from cache)" if result.get("scores_from_cache") else ""
        lines.append(f"  ranker {result['ranker']}{cache}{': ' + quality if quality else ''}")
    lines.append(f"  fit {1e3 * result['fit_seconds']:.1f} ms, load {result['load_seconds']:.3f} s")
    lines.append(f"  result: {Path(result['run_dir']) / 'result.json'}")
    if result.get("mlflow_run_id"):
        lines.append(f"  mlflow run: {result['mlflow_run_id']}")
    return "\n".join(lines)
