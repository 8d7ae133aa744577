"""Comparison reports from tracked runs: ``python -m xmlthresh.report``.

Reads the MLflow store and writes, for a sweep (its parent run) or a whole experiment, one comparison table
with rows dataset x strategy (x protocol) and columns F-macro, macro-F, bounds, gap and seconds -- as
markdown, CSV and a self-contained HTML page with the plots embedded. Runs that differ only in ``seed``
are repetitions (also in the seeds that follow it, such as ``dataset.seed`` or ``seeds.*``): the table shows
their mean with a standard error, and, per data set, the paired difference of every strategy to a reference
strategy (same data set, protocol and seed) with its standard error.

    python -m xmlthresh.report                       # the latest sweep of the default store
    python -m xmlthresh.report --sweep <parent id>   # one sweep
    python -m xmlthresh.report --all                 # every finished run of the experiment
"""

from __future__ import annotations

import argparse
import base64
import io
import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .files import write_text_atomic
from .tracking import runs_table

KEYS = ["dataset", "protocol", "strategy", "beta"]
METRICS = ["f_macro", "macro_f", "micro_f", "lower_bound", "upper_bound", "gap", "fit_seconds"]
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
    """One row per finished, non-skipped job run: its keys (params) and metrics.

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
    if sweep is not None:
        runs = runs[runs.get(parent_col) == sweep] if parent_col in runs else runs.iloc[0:0]
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
    for key in swept:  # numeric sweep values sort as numbers
        numeric = pd.to_numeric(table[key], errors="coerce")
        if numeric.notna().all():
            table[key] = numeric
    table["run_id"] = runs["run_id"]
    table = table.reset_index(drop=True)
    table.attrs["keys"] = KEYS[:3] + (["kind"] if "kind" in table else []) + KEYS[3:] + sorted(swept)
    table.attrs["metrics"] = list(dict.fromkeys([*METRICS, *metrics]))
    return table


def _varies(runs: pd.DataFrame, column: str) -> bool:
    """Whether a param takes several values: a strategy's own param must vary among runs of one strategy
    (two strategies that merely default ``tol`` differently are not a sweep over ``tol``)."""
    if column.startswith("params.strategy.") and "params.strategy" in runs:
        return bool((runs.groupby("params.strategy")[column].nunique(dropna=True) > 1).any())
    return runs[column].nunique(dropna=True) > 1


def _cde_table(runs: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Rows of task=cde runs: data set, estimator, seed and the CDE metrics."""
    table = pd.DataFrame({key: runs.get(f"params.{key}") for key in CDE_KEYS + ["seed"]})
    wanted = list(dict.fromkeys([*CDE_METRICS, *metrics]))
    for metric in wanted:
        table[metric] = runs.get(f"metrics.{metric}", pd.Series(np.nan, index=runs.index))
    table["seed"] = table["seed"].fillna("0")
    table["run_id"] = runs["run_id"]
    table = table.reset_index(drop=True)
    # real data only (no true density, so no relative loss): the absolute approximate loss is the headline
    headline = "rel_loss_approx" if table["rel_loss_approx"].notna().any() else "loss_approx"
    table.attrs.update(keys=CDE_KEYS, metrics=wanted, headline=headline)
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


def bar_plot(table: pd.DataFrame) -> bytes:
    """PNG: the headline metric per data set and method (error bars: standard error over seeds)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    index, columns = table.attrs.get("keys", KEYS)[:2] if "estimator" in table else ("dataset", "strategy")
    headline = table.attrs.get("headline", "f_macro")
    pivot = table.pivot_table(index=index, columns=columns, values=headline, aggfunc="mean")
    errors = table.pivot_table(index=index, columns=columns, values=f"{headline}_seeds_se", aggfunc="mean")
    width = max(5.0, 0.35 * pivot.size + 3.0)
    fig, ax = plt.subplots(figsize=(width, 3.8))
    pivot.plot.bar(ax=ax, yerr=errors.reindex_like(pivot) if not errors.empty else None, rot=0, width=0.85,
                   colormap="tab20")
    ax.set_ylabel(headline)
    ax.set_title(f"{headline} by {index} and {columns}")
    ax.legend(fontsize=8, bbox_to_anchor=(1.01, 1.0), loc="upper left", frameon=False)
    return png_bytes(fig)


def png_bytes(fig) -> bytes:
    """A matplotlib figure as PNG bytes (tight layout, 110 dpi); the figure is closed."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def write_report(runs: pd.DataFrame, out_dir: Path, reference: str = "domain", title: str = "xmlthresh report") -> dict:
    """Write comparison.md/.csv/.html (+ comparison.png) into ``out_dir``; returns the paths."""
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
    image = ""
    if not table.empty:
        png = bar_plot(table)
        paths["png"] = out_dir / "comparison.png"
        paths["png"].write_bytes(png)
        image = f'<img alt="F-macro by data set and strategy" src="data:image/png;base64,{base64.b64encode(png).decode()}">'
    html = (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}</style></head><body>"
            f"<h1>{title}</h1>{shown.to_html(index=False, float_format=lambda v: f'{v:.6g}', na_rep='')}"
            + (f"<h2>Paired differences to {reference}</h2>{diffs.to_html(index=False, na_rep='')}" if not diffs.empty else "")
            + f"{image}</body></html>\n")
    write_text_atomic(paths["html"], html)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xmlthresh.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", default=None, help="MLflow tracking URI (default: sqlite:///<project>/runs/mlflow.db)")
    parser.add_argument("--experiment", default="xmlthresh")
    parser.add_argument("--sweep", default=None, help="parent run id of a sweep (default: the latest sweep)")
    parser.add_argument("--all", action="store_true", help="every finished run of the experiment")
    parser.add_argument("--reference", default="domain", help="strategy the paired differences refer to")
    parser.add_argument("--out", default=None, help="output directory (default: runs/reports/<sweep or all>)")
    parser.add_argument("--metrics", nargs="*", default=[], help="extra metrics to show (e.g. region_dF)")
    args = parser.parse_args(argv)
    runs = load_runs(args.uri, args.experiment, sweep=args.sweep, latest_sweep=not args.all, metrics=args.metrics)
    from .paths import runs_dir

    out = Path(args.out) if args.out else runs_dir() / "reports" / (args.sweep or ("all" if args.all else "latest"))
    paths = write_report(runs, out, reference=args.reference)
    print(paths["markdown"].read_text())
    print("written: " + ", ".join(str(p) for p in paths.values()))
    return 0 if not runs.empty else 1


if __name__ == "__main__":
    sys.exit(main())
