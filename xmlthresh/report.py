"""Comparison reports from tracked runs: ``python -m xmlthresh.report``.

Reads the MLflow store and writes, for a sweep (its parent run) or a whole experiment, one comparison table
with rows dataset x strategy (x protocol) and columns F-macro, macro-F, bounds, gap and seconds -- as
markdown, CSV, a PNG and a self-contained interactive HTML page (:mod:`xmlthresh.report_html`: sortable
table, plotly figures, links to the MLflow runs, provenance). Numeric sweep parameters are the x axis of line
plots, and nothing but seeds is ever pooled (:mod:`xmlthresh.report_figures`). Runs that differ only in ``seed``
are repetitions (also in the seeds that follow it, such as ``dataset.seed`` or ``seeds.*``): the table shows
their mean with a standard error, and, per data set, the paired difference of every strategy to a reference
strategy (same data set, protocol and seed) with its standard error.

    python -m xmlthresh.report                       # the latest sweep of the default store
    python -m xmlthresh.report --sweep <parent id>   # one sweep
    python -m xmlthresh.report --all                 # every finished run of the experiment
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from .files import write_text_atomic
from .tracking import runs_table

KEYS = ["dataset", "protocol", "strategy", "beta"]
METRICS = ["f_macro", "macro_f", "micro_f", "precision", "recall", "lower_bound", "upper_bound", "gap", "fit_seconds",
           "ranker_p_at_1",
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
    ranker = "ranker" not in swept and "params.ranker" in runs and runs["params.ranker"].notna().any()
    if ranker:  # the first-stage ranker of feature data sets (one per sweep unless swept): a key to show
        table.insert(table.columns.get_loc("beta"), "ranker", runs["params.ranker"])
    table["reused"] = runs[reused_col].notna() if reused_col in runs else False
    table = table.reset_index(drop=True)
    table.attrs["keys"] = (KEYS[:3] + (["kind"] if "kind" in table else []) + (["ranker"] if ranker else [])
                           + KEYS[3:] + sorted(swept))
    table.attrs["metrics"] = list(dict.fromkeys([*METRICS, *metrics]))
    table.attrs["sweep"] = sweep  # the parent run selected (None: every run of the experiment)
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


def _cde_table(runs: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Rows of task=cde runs: data set, estimator, every other param that varies (``cde_dataset.alpha`` in
    a sweep over it: never averaged over), seed and the CDE metrics."""
    swept = sorted(column[len("params."):] for column in runs.columns
                   if column.startswith("params.") and column[len("params."):] not in CDE_KEYS + list(_NOT_KEYS)
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


def png_bytes(fig) -> bytes:
    """A matplotlib figure as PNG bytes (tight layout, 110 dpi); the figure is closed."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def write_report(runs: pd.DataFrame, out_dir: Path, reference: str = "domain", title: str = "xmlthresh report",
                 command: str | None = None, ui_url: str | None = None, sweep: str | None = None,
                 run_data: Callable[[str], tuple[dict, dict]] | None = None) -> dict:
    """Write comparison.md/.csv/.html (+ comparison.png) into ``out_dir``; returns the paths.

    The figures follow :func:`xmlthresh.report_figures.figure_specs` (line plots over numeric sweep
    parameters, bars otherwise; never an average over a swept parameter); ``comparison.html`` is the
    interactive page of :mod:`xmlthresh.report_html`, ``command`` its provenance's command line and ``ui_url``
    the MLflow UI its run links point to; ``sweep`` (default: the sweep ``load_runs`` selected) the parent run
    whose children the page's link to the UI's runs table shows; ``run_data(run_id)`` (a run's params and
    metrics, :func:`xmlthresh.report_achievable.mlflow_run_data`) lets the page draw the achievable set of
    each ranked-list data set with the strategies' operating points."""
    from .report_figures import comparison_png, figure_specs
    from .report_html import DEFAULT_UI_URL, achievable_html, comparison_page, provenance

    out_dir.mkdir(parents=True, exist_ok=True)
    table = comparison(runs)
    diffs = paired_differences(runs, reference)
    headline = table.attrs.get("headline", "f_macro")
    columns = table.attrs.get("keys", KEYS) + table.attrs.get("metrics", METRICS) + [f"{headline}_seeds_se", "n_runs"]
    shown = table[[c for c in columns if c in table and table[c].notna().any()]] if not table.empty else table
    markdown = f"# {title}\n\n{to_markdown(shown)}"
    if not diffs.empty:
        markdown += f"\n## Paired differences to `{reference}` (F-macro)\n\n{to_markdown(diffs)}"
    paths = {"markdown": out_dir / "comparison.md", "csv": out_dir / "comparison.csv", "html": out_dir / "comparison.html"}
    write_text_atomic(paths["markdown"], markdown)
    write_text_atomic(paths["csv"], shown.to_csv(index=False))
    specs = figure_specs(runs)
    png = None
    if specs:
        png = comparison_png(runs, specs)
        paths["png"] = out_dir / "comparison.png"
        paths["png"].write_bytes(png)
    achievable = ""
    if run_data is not None and not runs.empty:  # CDE tables have no (precision, recall): no picture
        achievable = achievable_html(runs, run_data)
    page = comparison_page(runs, table, diffs, specs, title=title, provenance_facts=provenance(command),
                           ui_url=ui_url or DEFAULT_UI_URL, png=png, sweep=sweep or runs.attrs.get("sweep"),
                           extra_html=achievable)
    write_text_atomic(paths["html"], page)
    return paths


def _nothing_selected(uri: str | None, experiment: str, sweep: str | None) -> str:
    """The one-line reason a report has no rows: an unknown sweep id (with the latest known ones), or a
    selection without finished job runs."""
    table = runs_table(uri, experiment)
    parents = (table[table["tags.xmlthresh.sweep"] == "parent"].sort_values("start_time", ascending=False)
               if "tags.xmlthresh.sweep" in table else table.iloc[0:0])
    if sweep is not None and sweep not in set(parents["run_id"]):
        known = ", ".join(parents["run_id"].head(5)) or "none"
        return f"no sweep with parent run id {sweep!r} in experiment {experiment!r} (latest sweeps: {known})"
    where = f"sweep {sweep}" if sweep is not None else (f"experiment {experiment!r}" if parents.empty
                                                         else f"the latest sweep ({parents['run_id'].iloc[0]})")
    return f"no finished job runs in {where}: nothing to report"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xmlthresh.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", default=None, help="MLflow tracking URI (default: sqlite:///<project>/runs/mlflow.db)")
    parser.add_argument("--experiment", default="xmlthresh")
    parser.add_argument("--sweep", default=None, help="parent run id of a sweep (default: the latest sweep)")
    parser.add_argument("--all", action="store_true", help="every finished run of the experiment")
    parser.add_argument("--reference", default="domain", help="strategy the paired differences refer to")
    parser.add_argument("--out", default=None, help="output directory (default: runs/reports/<sweep or all>)")
    parser.add_argument("--metrics", nargs="*", default=[], help="extra metrics to show (e.g. region_dF)")
    parser.add_argument("--title", default="xmlthresh report", help="the page's and the markdown's title")
    parser.add_argument("--ui-url", default=None, help="the MLflow UI the page links runs to (default: make ui's "
                        "http://127.0.0.1:5000)")
    args = parser.parse_args(argv)
    runs = load_runs(args.uri, args.experiment, sweep=args.sweep, latest_sweep=not args.all, metrics=args.metrics)
    if runs.empty:  # an empty report would look like a sweep that ran nothing: say what was selected instead
        print(f"python -m xmlthresh.report: error: {_nothing_selected(args.uri, args.experiment, args.sweep)}",
              file=sys.stderr)
        return 1
    from .paths import runs_dir

    out = Path(args.out) if args.out else runs_dir() / "reports" / (args.sweep or ("all" if args.all else "latest"))
    command = " ".join(["python -m xmlthresh.report", *(argv if argv is not None else sys.argv[1:])])
    from .report_achievable import mlflow_run_data

    paths = write_report(runs, out, reference=args.reference, title=args.title, command=command, ui_url=args.ui_url,
                         run_data=mlflow_run_data(args.uri))
    print(paths["markdown"].read_text())
    print("written: " + ", ".join(str(p) for p in paths.values()))
    return 0 if not runs.empty else 1


if __name__ == "__main__":
    sys.exit(main())
