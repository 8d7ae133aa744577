"""One run of the main job: a tracked MLflow run around one task (``thresholds``:
:mod:`xmlthresh.run.threshold_task`; ``cde``: :mod:`xmlthresh.run.cde_task`), its ``result.json`` written and logged,
and in a sweep the resume of a configuration that already finished.

Usable without Hydra (``run_job(config_dict, run_dir)``); the CLI is a thin layer that composes the config.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from xmlthresh import __version__
from xmlthresh._util.files import write_json_atomic
from xmlthresh.config import plugins  # noqa: F401  (registries load the plugins when a name is not built in)
from xmlthresh._util.registry import ConfigError
from xmlthresh.metrics import EMPIRICAL_OBJECTIVE
from xmlthresh.run.sweep import mark_resumed, parent_run_id, resumable_run
from xmlthresh.tracking.mlflow_runs import (CONFIG_HASH_TAG, OBJECTIVE_TAG, OVERRIDES_TAG, config_hash, git_commit,
                                            numeric_metrics, read_sweep_store)
from xmlthresh.tracking.record import SYNC_MODES, tracked_run
from xmlthresh.tracking.run_fields import NOT_METRICS, bounds_objective, config_params

log = logging.getLogger(__name__)

#: what a run can do: choose thresholds (the default) or benchmark a conditional density estimator
TASKS = ("thresholds", "cde")

def run_job(cfg: Mapping[str, Any], run_dir: Path, resolved_yaml: str = "",
            context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Run the job described by ``cfg``: task ``thresholds`` (strategy, dataset, ranker, protocol, beta) or
    ``cde`` (estimator, cde_dataset); tracked in MLflow as ``cfg["tracking"]`` says.

    ``context`` (from :func:`xmlthresh.run.sweep.job_context`) says whether the job is part of a sweep: then its
    MLflow run is a child of the sweep's parent run, and a job whose configuration already FINISHED in an
    earlier sweep is not run again (unless ``force``): its earlier result is copied instead.
    """
    context = dict(context or {})
    task = str(cfg.get("task", "thresholds"))
    if task not in TASKS:
        raise ConfigError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    tracking = cfg.get("tracking", {}) or {}
    enabled = bool(tracking.get("enabled", True))
    experiment = str(tracking.get("experiment", "xmlthresh"))
    digest = config_hash(cfg)
    if context.get("multirun") and enabled and not cfg.get("force", False):
        done = resumable_run(context["sweep_dir"], digest)
        resumed = _resumed(done, run_dir, context, tracking.get("uri"), cfg, task) if done is not None else None
        if resumed is not None:
            return resumed
    parent = parent_run_id(context["sweep_dir"]) if context.get("multirun") else None
    # the store, experiment and commit the sweep's launcher found once (None outside a tracked sweep)
    sweep_store = read_sweep_store(str(context["sweep_dir"])) if context.get("multirun") else None
    sync = "deferred" if context.get("multirun") else sync_mode(tracking)

    with tracked_run(
        enabled=enabled,
        uri=tracking.get("uri"),
        experiment=experiment,
        run_name=_run_name(cfg, task, context),
        parent_run_id=parent,
        # the job's overrides name it from the start: a run killed before its params were written says which
        tags={CONFIG_HASH_TAG: digest, "task": task,
              **({OVERRIDES_TAG: context["overrides"][:5000]} if context.get("overrides") else {})},
        failure_params=config_params(cfg, task),
        sweep=sweep_store,
        run_dir=run_dir,
        sync=sync,
    ) as tracker:
        if resolved_yaml:
            tracker.log_text(resolved_yaml, "config.yaml")
        commit = sweep_store.source_tags.get("git_commit") if sweep_store else None
        base = {"task": task, "version": __version__, "git_commit": commit or git_commit(),
                "mlflow_run_id": tracker.run_id, "run_dir": str(run_dir)}
        draw = draws_pictures(cfg.get("plots", "auto"), context)
        result_path = run_dir / "result.json"
        with files_as_one_unit(run_dir):
            if task == "cde":
                from xmlthresh.run.cde_task import run_cde_task  # the CDE package only for CDE runs

                result, pictures = run_cde_task(cfg, run_dir, tracker, base, _parallelism(context), draw=draw)
            else:
                from xmlthresh.run.threshold_task import run_threshold_task

                result, pictures = run_threshold_task(cfg, run_dir, tracker, base, _parallelism(context), draw=draw,
                                                      ranker_asked=_ranker_asked(context),
                                                      skip_allowed=bool(context.get("multirun")))
            write_json_atomic(result_path, result)
            drawn = pictures() if pictures is not None else []  # after result.json: off the critical path
        if not result.get("skipped"):
            tracker.log_metrics(numeric_metrics(result, exclude=NOT_METRICS))
            objective = bounds_objective(result)
            if objective:  # text, not a metric: the report labels the bounds with it
                tracker.set_tags({OBJECTIVE_TAG: objective})
        tracker.log_artifact(result_path)
        for path in drawn:
            tracker.log_artifact(path)
    if tracker.run_id:  # sent to MLflow before returning (tracking.sync=foreground)
        result = {**result, "mlflow_run_id": tracker.run_id}
    elif enabled:
        result = {**result, "tracking_sync": sync}
    return result


def sync_mode(tracking: Mapping[str, Any]) -> str:
    """``tracking.sync`` of a single run (see :data:`xmlthresh.tracking.record.SYNC_MODES`); for a config
    without the key, ``$XMLTHRESH_TRACKING_SYNC`` or ``background``, as the packaged config says."""
    from xmlthresh._util.environment import env_choice

    if not tracking.get("sync"):
        return env_choice("XMLTHRESH_TRACKING_SYNC", tuple(SYNC_MODES), "background")
    mode = str(tracking.get("sync"))
    if mode not in SYNC_MODES:
        raise ConfigError(f"tracking.sync must be one of {', '.join(SYNC_MODES)}, got {mode!r}")
    return mode


def draws_pictures(plots: Any, context: Mapping[str, Any]) -> bool:
    """``plots``: ``true`` / ``false``, or ``auto`` (the default): pictures for a single run, none for the jobs
    of a sweep (its report draws the comparison)."""
    if plots == "auto":
        return not context.get("multirun")
    if isinstance(plots, bool):
        return plots
    raise ConfigError(f"plots must be true, false or auto, got {plots!r}")


@contextmanager
def files_as_one_unit(run_dir: Path) -> Iterator[None]:
    """The files a run writes into ``run_dir`` (thresholds.csv, grid.csv, plots, result.json) as one unit:
    when the block fails -- a full disk at result.json, an error after the plots -- the files it created are
    removed again, so a failed run leaves no partial result (thresholds and plots without result.json).
    Files that were there before (Hydra's ``.hydra/`` and log) stay."""
    before = _files_in(run_dir)
    try:
        yield
    except BaseException:
        for path in sorted(_files_in(run_dir) - before):
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:  # never hide the run's own error behind a cleanup problem
                log.warning("could not remove the partial file %s: %s", path, exc)
        raise


def _files_in(directory: Path) -> set[Path]:
    return {path for path in directory.rglob("*") if path.is_file()} if directory.is_dir() else set()


def _ranker_asked(context: Mapping[str, Any]) -> bool:
    """Whether the job's command-line overrides choose or set the ranker (``ranker=knn``, ``ranker.C=2``)."""
    keys = (override.lstrip("+~").split("=", 1)[0] for override in context.get("override_list", []))
    return any(key == "ranker" or key.startswith("ranker.") for key in keys)


#: option groups whose choice the base of a run name already shows
NAMED_GROUPS = ("strategy", "dataset", "protocol", "estimator", "cde_dataset")


def _run_name(cfg: Mapping[str, Any], task: str, context: Mapping[str, Any] | None = None) -> str:
    """``<strategy>-<dataset>-<protocol>`` (``<estimator>-<cde_dataset>`` for CDE), followed in a sweep by the
    values of the keys it varies (``domain-espgame-oracle beta=2``), so that a sweep's runs are told apart in
    MLflow's list."""
    if task == "cde":
        base = f"{cfg['estimator']['name']}-{cfg['cde_dataset']['name']}"
    else:
        dataset = cfg["dataset"].get("name") or cfg["dataset"]["loader"]
        protocol = cfg.get("protocol") or "oracle"
        protocol = protocol.get("name", "?") if isinstance(protocol, Mapping) else protocol
        base = f"{cfg['strategy']['name']}-{dataset}-{protocol}"
    context = context or {}
    if not context.get("multirun"):
        return base
    from xmlthresh.run.sweep import swept_keys

    varied = set(swept_keys(context.get("sweep_dir"))) - set(NAMED_GROUPS)
    shown = [override.lstrip("+~") for override in context.get("override_list", [])
             if override.lstrip("+~").split("=", 1)[0] in varied]
    return " ".join([base, *shown])[:250]


def _parallelism(context: Mapping[str, Any]) -> dict[str, Any]:
    """Thread counts and launcher: timings under different parallelism are not comparable."""
    import numba
    from threadpoolctl import threadpool_info

    blas = max((pool.get("num_threads", 0) for pool in threadpool_info()), default=0)
    return {"threads.numba": numba.get_num_threads(), "threads.blas": blas,
            "launcher": context.get("launcher", "none")}


def _resumed(done: Any, run_dir: Path, context: Mapping[str, Any], uri: str | None, cfg: Mapping[str, Any],
             task: str) -> dict[str, Any] | None:
    """A sweep job that already finished in an earlier sweep (``done``: a
    :class:`~xmlthresh.tracking.mlflow_runs.FinishedRun`): copy its result instead of running it, and record
    the job as a child run that reuses it (the sweep's launcher sends it with the others). None when the
    earlier result cannot be read: then the job runs again."""
    import json

    from xmlthresh.tracking.mlflow_runs import copy_artifacts, copy_result

    try:
        local = copy_result(done, run_dir, uri)
        earlier = json.loads(Path(local).read_text())
        copied = copy_artifacts(done, run_dir, uri)
    except Exception as exc:  # artifacts deleted or store moved: recompute rather than fail
        log.warning("run %s finished but its result.json is unreadable (%s); running the job again", done.run_id, exc)
        return None
    missing = [name for name in files_needed(cfg, task, earlier) if not (run_dir / name).is_file()]
    if missing:  # e.g. per_point.npz of a sweep killed before its records were sent, its folder deleted since
        log.warning("run %s finished but its %s is gone from the store (the report needs it); running the job "
                    "again", done.run_id, ", ".join(missing))
        for path in copied:
            path.unlink(missing_ok=True)
        return None
    result = {**earlier, "resumed_from": done.run_id, "run_dir": str(run_dir)}
    write_json_atomic(run_dir / "result.json", result)
    sweep_dir = context["sweep_dir"]
    tracking = cfg.get("tracking", {}) or {}
    tags = {OVERRIDES_TAG: context["overrides"][:5000]} if context.get("overrides") else {}
    with tracked_run(True, uri, str(tracking.get("experiment", "xmlthresh")), run_name=_run_name(cfg, task, context),
                     parent_run_id=parent_run_id(sweep_dir), tags=tags, sweep=read_sweep_store(str(sweep_dir)),
                     run_dir=run_dir, sync="deferred") as tracker:
        tracker.record["reused_run_id"] = done.run_id
        tracker.log_artifact(run_dir / "result.json")
        for path in copied:
            tracker.log_artifact(path)
    mark_resumed(sweep_dir, int(context.get("job_num", 0)), done.run_id)
    log.info("already finished as run %s, reused (force=true runs it again)", done.run_id)
    return result


def files_needed(cfg: Mapping[str, Any], task: str, result: Mapping[str, Any]) -> list[str]:
    """The files beside result.json in a job's folder that its configuration asks for and a study report
    reads: ``per_point.npz`` with ``cde.save_per_point``, ``density_at_x.npz`` with ``cde.density_at_x`` on
    2-D targets. A resumed job whose earlier run lacks one is run again (:func:`_resumed`)."""
    if task != "cde" or result.get("skipped"):
        return []
    cde_cfg = cfg.get("cde") or {}
    needed = ["per_point.npz"] if cde_cfg.get("save_per_point") else []
    if cde_cfg.get("density_at_x") is not None and result.get("n_targets") == 2:
        needed.append("density_at_x.npz")
    return needed


def summary(result: Mapping[str, Any]) -> str:
    """A short human summary of a result."""
    if result.get("task") == "cde":
        from xmlthresh.run.cde_task import cde_summary

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
            of = f" [{objective}]" if objective and objective != EMPIRICAL_OBJECTIVE else ""
            lines.append(f"  {label}{of}: {low:.7f} <= optimum <= {up:.7f} (gap {up - low:.2e}){fixed_text}")
    if result.get("f_macro_interval"):
        low, high = result["f_macro_interval"]
        lines.append(f"  on new documents ({100 * result['interval_level']:g} % interval from the fit split, "
                     f"{result['interval_resamples']} bootstrap refits): F-macro in [{low:.4f}, {high:.4f}]")
    if result.get("n_labels_dropped"):
        lines.append(f"  {result['n_labels_dropped']} label(s) without relevant documents excluded")
    if "ranker" in result:
        quality = ", ".join(f"P@{k[-1]} {result[k]:.4f}" for k in ("ranker_p_at_1", "ranker_p_at_3", "ranker_p_at_5")
                            if k in result)
        cache = " (scores from cache)" if result.get("scores_from_cache") else ""
        lines.append(f"  ranker {result['ranker']}{cache}{': ' + quality if quality else ''}")
    lines.append(f"  fit {1e3 * result['fit_seconds']:.1f} ms, load {result['load_seconds']:.3f} s")
    lines.append(f"  result: {Path(result['run_dir']) / 'result.json'}")
    if result.get("mlflow_run_id") and not result.get("resumed_from"):
        lines.append(f"  mlflow run: {result['mlflow_run_id']}")
    elif result.get("tracking_sync") == "background":
        lines.append("  mlflow: sending in the background (xmlthresh sync --wait waits for it)")
    elif result.get("tracking_sync") == "off":
        lines.append("  mlflow: not sent (tracking.sync=off): xmlthresh sync sends it")
    return "\n".join(lines)
