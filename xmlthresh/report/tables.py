"""The comparison table of tracked runs (:func:`load_runs`), or of a sweep's jobs read from their result.json
files (:func:`load_results`, a sweep without tracking): which runs are selected, what is a key and what
a repetition (only seeds are pooled), the table with means and standard errors (:func:`comparison`), the
paired differences to a reference strategy (:func:`paired_differences`) and its markdown (:func:`to_markdown`).

The leaf of the report package: :mod:`xmlthresh.report.figures` and :mod:`xmlthresh.report.html` draw what
this module computes, :mod:`xmlthresh.report.comparison` writes them all.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from xmlthresh._util.files import write_text_atomic
from xmlthresh.tracking.mlflow_runs import OBJECTIVE_TAG, runs_table

log = logging.getLogger(__name__)

KEYS = ["dataset", "protocol", "strategy", "beta"]
METRICS = ["f_macro", "macro_f", "micro_f", "precision", "recall", "lower_bound", "upper_bound", "gap", "fit_seconds",
           "ranker_p_at_1",
           # holdout / crossfit with interval.resamples > 0: the population interval from the fit split alone
           "f_macro_interval_low", "f_macro_interval_high",
           # holdout / crossfit: the certified bounds hold on the split the thresholds were fitted on
           "fit_f_macro", "fit_lower_bound", "fit_upper_bound", "fit_gap"]
#: task=cde runs: one row per data set and estimator
CDE_KEYS = ["cde_dataset", "estimator"]
CDE_METRICS = ["rel_loss_direct", "rel_loss_direct_se", "rel_loss_approx", "rel_loss_approx_se", "loss_approx",
               "loss_approx_se", "nll", "nll_se", "coverage50", "coverage90", "pit_ks", "fit_seconds"]


#: params that describe the machine or the bookkeeping, never a dimension of a comparison
_NOT_KEYS = ("seed", "launcher", "threads.numba", "threads.blas", "strategy.beta", "kind")


def _is_seed(param: str) -> bool:
    """Seeds are repetitions, never a dimension of a comparison: ``seed``, every option's own seed
    (``dataset.seed``, ``protocol.seed``, ``strategy.seed``, which default to ``${seed}``) and the ``seeds.*``
    record of what each random choice used."""
    return param == "seed" or param.endswith(".seed") or param.startswith("seeds.")


def load_runs(uri: str | None = None, experiment: str = "xmlthresh", sweep: str | None = None,
              latest_sweep: bool = False, metrics: Sequence[str] = ()) -> pd.DataFrame:
    """One row per finished, non-skipped job run: its keys (params) and metrics, its ``run_id`` and whether it
    is ``reused`` (a resumed sweep job: a child of the sweep that reuses an earlier run's result, tagged
    ``xmlthresh.reused_run_id``; without ``sweep`` such copies are left out, the runs they copy are there).

    Besides dataset, protocol, strategy and beta, every other param that varies among the selected runs
    (e.g. ``dataset.first_n_labels`` or ``strategy.n_angles`` in a sweep) becomes a key column;
    ``runs.attrs["keys"]`` lists the key columns. ``metrics`` adds metrics beyond the default ones.
    """
    runs = runs_table(uri, experiment)
    if runs.empty:
        return pd.DataFrame(columns=KEYS + ["seed"] + METRICS)
    table = select_runs(runs, sweep=sweep, latest_sweep=latest_sweep, metrics=metrics)
    if "bounds_objective" in table and table["bounds_objective"].isin([UNRECORDED_OBJECTIVE]).any():
        artifacts = dict(zip(runs["run_id"], runs["artifact_uri"])) if "artifact_uri" in runs else {}
        _objectives_from_results(table, uri, artifacts)
    return table


def select_runs(runs: pd.DataFrame, sweep: str | None = None, latest_sweep: bool = False,
                metrics: Sequence[str] = ()) -> pd.DataFrame:
    """The table of :func:`load_runs` from a table shaped like MLflow's search table (``params.*``,
    ``metrics.*``, ``tags.*``, ``run_id``, ``status``): MLflow's own, or :func:`results_table`'s."""
    parent_col = "tags.mlflow.parentRunId"
    if latest_sweep and sweep is None and "tags.xmlthresh.sweep" in runs:
        parents = runs[runs["tags.xmlthresh.sweep"] == "parent"].sort_values("start_time")
        if not parents.empty:
            sweep = parents.iloc[-1]["run_id"]
    reused_col = "tags.xmlthresh.reused_run_id"  # a sweep job that reuses an earlier run's result (resumed)
    if sweep is not None:
        runs = runs[runs.get(parent_col) == sweep] if parent_col in runs else runs.iloc[0:0]
    elif reused_col in runs:  # over all runs a reused one is a copy of a run already counted
        runs = runs[runs[reused_col].isna()]
    runs = runs[runs["status"] == "FINISHED"]
    task = "cde" if "tags.task" in runs and (runs["tags.task"] == "cde").any() and not (
        runs["tags.task"].fillna("thresholds") == "thresholds").any() else "thresholds"
    if "tags.task" in runs:
        runs = runs[runs["tags.task"].fillna("thresholds") == task]
    if task == "cde":
        return _cde_table(runs, metrics)
    if "tags.skipped" in runs:
        runs = runs[runs["tags.skipped"].isna()]
    if "tags.xmlthresh.sweep" in runs:
        runs = runs[runs["tags.xmlthresh.sweep"].isna()]
    swept = [column[len("params."):] for column in runs.columns
             if column.startswith("params.") and column[len("params."):] not in KEYS + list(_NOT_KEYS)
             and not _is_seed(column[len("params."):]) and _varies(runs, column)]
    table = pd.DataFrame({key: runs.get(f"params.{key}") for key in KEYS + sorted(swept) + ["seed"]})
    if "params.kind" in runs:  # deterministic / randomized / uses test scores: part of a fair comparison
        table.insert(3, "kind", runs["params.kind"].fillna("deterministic"))
    for metric in dict.fromkeys([*METRICS, *metrics]):
        table[metric] = runs.get(f"metrics.{metric}", pd.Series(np.nan, index=runs.index))
    table["protocol"] = table["protocol"].fillna("oracle")
    table["seed"] = table["seed"].fillna("0")
    table["beta"] = pd.to_numeric(table["beta"])
    for key in swept:  # numeric sweep values sort as numbers (2, 16, 128), never as text (128, 16, 2)
        table[key] = _numeric_or_text(table[key], runs.get("metrics.n_labels") if key.endswith("first_n_labels") else None)
    table["run_id"] = runs["run_id"]
    if "experiment_id" in runs:  # the page links each row to its run in the MLflow UI
        table["experiment_id"] = runs["experiment_id"]
    if "run_dir" in runs:  # runs read from their result.json: the page links each row to its job folder
        table["run_dir"] = runs["run_dir"]
    ranker = "ranker" not in swept and "params.ranker" in runs and runs["params.ranker"].notna().any()
    if ranker:  # the first-stage ranker of feature data sets (one per sweep unless swept): a key to show
        table.insert(table.columns.get_loc("beta"), "ranker", runs["params.ranker"])
    table["reused"] = runs[reused_col].notna() if reused_col in runs else False
    table["bounds_objective"] = _bounds_objectives(runs)
    table = table.reset_index(drop=True)
    table.attrs["keys"] = (KEYS[:3] + (["kind"] if "kind" in table else []) + (["ranker"] if ranker else [])
                           + KEYS[3:] + sorted(swept))
    table.attrs["metrics"] = list(dict.fromkeys([*METRICS, *metrics]))
    table.attrs["sweep"] = sweep  # the parent run selected (None: every run of the experiment)
    table.attrs["logged_metrics"] = sorted(c for c in runs.columns if c.startswith("metrics.") and runs[c].notna().any())
    return table


#: a run with bounds whose objective is not known (made before runs named it, and no result.json to read)
UNRECORDED_OBJECTIVE = "not recorded"


def _bounds_objectives(runs: pd.DataFrame) -> pd.Series:
    """Per run, the objective its certified bounds hold for: the :data:`OBJECTIVE_TAG`, or
    :data:`UNRECORDED_OBJECTIVE` for a run with bounds but no tag; None for a run without bounds."""
    bounds = pd.Series(False, index=runs.index)
    for column in ("lower_bound", "upper_bound", "fit_lower_bound", "fit_upper_bound"):
        if f"metrics.{column}" in runs:
            bounds |= runs[f"metrics.{column}"].notna()
    tagged = runs.get(f"tags.{OBJECTIVE_TAG}", pd.Series(None, index=runs.index, dtype=object))
    return tagged.where(tagged.notna(), UNRECORDED_OBJECTIVE).where(bounds, None)


def _objectives_from_results(table: pd.DataFrame, uri: str | None, artifacts: dict[str, str]) -> None:
    """The objective of the bounds of runs made before it was a tag, read from their ``result.json`` artifact
    (``artifacts``: run id -> artifact URI); left :data:`UNRECORDED_OBJECTIVE` when it cannot be read."""
    import json
    import tempfile

    from xmlthresh.tracking.run_fields import bounds_objective
    from xmlthresh.tracking.mlflow_runs import FinishedRun, copy_result

    with tempfile.TemporaryDirectory(prefix="xmlthresh-report-") as folder:
        for number, index in enumerate(table.index[table["bounds_objective"] == UNRECORDED_OBJECTIVE]):
            run_id = str(table.at[index, "run_id"])
            try:
                path = copy_result(FinishedRun(run_id, artifacts[run_id]), Path(folder) / str(number), uri)
                result = json.loads(path.read_text())
            except Exception:  # noqa: BLE001 - a label is not worth failing a report for: it says "not recorded"
                continue
            table.at[index, "bounds_objective"] = bounds_objective(result) or UNRECORDED_OBJECTIVE


def results_table(sweep_dir: Path, say_left_out: bool = True) -> pd.DataFrame:
    """The jobs of a sweep from their own files, for a sweep run without tracking: one row per job folder
    with a ``result.json``, shaped like MLflow's search table so that :func:`select_runs` reads it -- params
    as the job logs them (:func:`xmlthresh.tracking.run_fields.config_params` of the job's ``.hydra/config.yaml``, the
    ``kind`` and ``ranker`` the result names), metrics (the result's numbers), tags (skipped, task, the
    objective of the bounds) and ``run_id`` = the job folder's name. A job whose ``result.json`` cannot be read
    is left out, with a warning unless ``say_left_out`` is false (a second reading of the same folder)."""

    from xmlthresh.report.result_files import ResultFileError, read_result, result_paths
    from xmlthresh.tracking.run_fields import NOT_METRICS, bounds_objective, config_params
    from xmlthresh.tracking.mlflow_runs import numeric_metrics

    rows = []
    for path in result_paths(sweep_dir):
        try:
            result = read_result(path)
        except ResultFileError as exc:  # the page is made without it, and says so (it was left out silently)
            if say_left_out:  # once per report: its figures read the same files again
                log.warning("left out of the report: %s", exc)
            continue
        config = path.parent / ".hydra" / "config.yaml"
        cfg = _job_config(config) if config.is_file() else {}
        task = str(result.get("task", "thresholds"))
        params = config_params(cfg, task) if cfg else {}
        if "ranker" not in result:  # the config always names one; only a data set with features used it
            params = {k: v for k, v in params.items() if k != "ranker" and not k.startswith("ranker.")}
        params.update({key: result[key] for key in ("strategy", "dataset", "beta", "protocol", "seed", "kind", "ranker",
                                                    "estimator", "cde_dataset") if result.get(key) is not None})
        row = {f"params.{key}": None if value is None else str(value) for key, value in params.items()}
        if not result.get("skipped"):
            row.update({f"metrics.{key}": value for key, value in numeric_metrics(result, NOT_METRICS).items()})
        row.update({"run_id": path.parent.name, "status": "FINISHED", "tags.task": task,
                    "tags.skipped": result.get("skip_reason") if result.get("skipped") else None,
                    f"tags.{OBJECTIVE_TAG}": bounds_objective(result), "run_dir": str(path.parent)})
        rows.append(row)
    return pd.DataFrame(rows)


def _job_config(path: Path) -> dict:
    """A job's ``.hydra/config.yaml`` as a dict, interpolations resolved where they can be (else as written)."""
    from omegaconf import OmegaConf

    config = OmegaConf.load(path)
    try:
        return OmegaConf.to_container(config, resolve=True)
    except Exception:  # noqa: BLE001 - a resolver of another process (a plugin's): the values as written
        return OmegaConf.to_container(config, resolve=False)



def load_results(sweep_dir: Path, metrics: Sequence[str] = ()) -> pd.DataFrame:
    """The table of :func:`load_runs` for a sweep's jobs read from their ``result.json`` files (no MLflow):
    ``runs.attrs["source"]`` is ``"results"`` and each row's ``run_dir`` its job folder."""
    runs = results_table(sweep_dir)
    if runs.empty:
        return pd.DataFrame(columns=KEYS + ["seed"] + METRICS)
    table = select_runs(runs, metrics=metrics)
    table.attrs["source"] = "results"
    return table


#: how MLflow records a parameter left at null (``dataset.first_n_labels: null`` = all labels)
_NULL_TEXT = ("None", "null", "")


def _numeric_or_text(values: pd.Series, null_means: pd.Series | None = None) -> pd.Series:
    """``values`` (params, recorded as text) as numbers when every value that is set is a number; a value
    left at null stays missing, or takes ``null_means`` (first_n_labels: null = all labels, so the run's
    measured n_labels) where that is known. Otherwise the text, unchanged."""
    unset = values.isna() | values.astype(str).isin(_NULL_TEXT)
    numeric = pd.to_numeric(values.where(~unset), errors="coerce")
    if numeric[~unset].isna().any():
        return values
    if null_means is not None:
        numeric = numeric.fillna(pd.to_numeric(null_means, errors="coerce"))
    return numeric


def _varies(runs: pd.DataFrame, column: str) -> bool:
    """Whether a param takes several values: a strategy's own param must vary among runs of one strategy
    (two strategies that merely default ``tol`` differently are not a sweep over ``tol``), and likewise a data
    set's or a ranker's (``dataset.path`` differs between espgame and example, but nobody swept it)."""
    for option in ("strategy", "dataset", "ranker", "estimator", "cde_dataset"):
        if column.startswith(f"params.{option}.") and f"params.{option}" in runs:
            return bool((runs.groupby(f"params.{option}")[column].nunique(dropna=True) > 1).any())
    return runs[column].nunique(dropna=True) > 1


#: params a CDE run logs as outcomes, not settings: the values its tuning chose (``tuned.k_``, ``tuned.u_scale_``)
_CDE_OUTCOMES = "tuned."


def _cde_table(runs: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Rows of task=cde runs: data set, estimator, every other param that varies (``cde_dataset.alpha`` in
    a sweep over it: never averaged over), seed and the CDE metrics. The tuned values (``tuned.*``) are
    results of a run, not keys: they differ from seed to seed, and as keys they kept the seeds apart and
    gave every one of them a figure."""
    swept = sorted(column[len("params."):] for column in runs.columns
                   if column.startswith("params.") and column[len("params."):] not in CDE_KEYS + list(_NOT_KEYS)
                   and not column[len("params."):].startswith(_CDE_OUTCOMES)
                   and not _is_seed(column[len("params."):]) and _varies(runs, column))
    table = pd.DataFrame({key: runs.get(f"params.{key}") for key in CDE_KEYS + swept + ["seed"]})
    for key in swept:
        table[key] = _numeric_or_text(table[key])
    wanted = list(dict.fromkeys([*CDE_METRICS, *metrics]))
    for metric in wanted:
        table[metric] = runs.get(f"metrics.{metric}", pd.Series(np.nan, index=runs.index))
    table["seed"] = table["seed"].fillna("0")
    table["run_id"] = runs["run_id"]
    if "experiment_id" in runs:
        table["experiment_id"] = runs["experiment_id"]
    table = table.reset_index(drop=True)
    # real data only (no true density, so no relative loss): the absolute approximate loss is the headline
    headline = "rel_loss_approx" if table["rel_loss_approx"].notna().any() else "loss_approx"
    table.attrs.update(keys=CDE_KEYS + swept, metrics=wanted, headline=headline)
    return table


def comparison(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds (repetitions) per key combination, with the standard error of F-macro."""
    if runs.empty:
        return pd.DataFrame()
    keys = runs.attrs.get("keys", KEYS)
    metrics = runs.attrs.get("metrics", METRICS)
    headline = runs.attrs.get("headline", "f_macro")
    grouped = runs.groupby(keys, dropna=False)
    table = grouped[metrics].mean()
    table["n_runs"] = grouped.size()
    if "bounds_objective" in runs:  # text: the objective the row's bounds certify (the same for its seeds)
        table["bounds_objective"] = grouped["bounds_objective"].first()
    sem = grouped[headline].sem(ddof=1)
    table[f"{headline}_seeds_se"] = sem.where(table["n_runs"] > 1)
    table = table.reset_index().sort_values(keys)
    table.attrs.update(runs.attrs)
    return table


def paired_differences(runs: pd.DataFrame, reference: str = "domain") -> pd.DataFrame:
    """F-macro of each strategy minus the reference's on the same dataset, protocol, beta and seed:
    mean and standard error over seeds (NaN standard error with a single seed)."""
    if runs.empty or "strategy" not in runs or reference not in set(runs["strategy"]):
        return pd.DataFrame()
    ref = runs[runs["strategy"] == reference].set_index(["dataset", "protocol", "beta", "seed"])["f_macro"]
    rows = []
    for (dataset, protocol, strategy, beta), group in runs.groupby(KEYS):
        if strategy == reference:
            continue
        joined = group.set_index(["dataset", "protocol", "beta", "seed"])["f_macro"].groupby(level=[0, 1, 2, 3]).mean()
        diff = (joined - ref.groupby(level=[0, 1, 2, 3]).mean()).dropna()
        if diff.empty:
            continue
        rows.append({"dataset": dataset, "protocol": protocol, "beta": beta, "strategy": strategy,
                     "reference": reference, "mean_diff": diff.mean(), "se_diff": diff.sem(ddof=1) if len(diff) > 1 else np.nan,
                     "n_pairs": len(diff)})
    return pd.DataFrame(rows)


def to_markdown(table: pd.DataFrame, digits: int = 6) -> str:
    """A GitHub markdown table (no extra dependency)."""
    if table.empty:
        return "_no finished runs_\n"

    def cell(value) -> str:
        if isinstance(value, (float, np.floating)):
            return "" if np.isnan(value) else f"{value:.{digits}g}"
        return str(value)

    header = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([header, rule, *body]) + "\n"
