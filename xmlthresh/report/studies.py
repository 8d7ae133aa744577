"""Reports of the two transfer studies, read from the ``result.json`` of every job of a sweep directory.

* ``transfer`` (``experiment=transfer``): thresholds fitted on labelled fit data (holdout or crossfit) and
  applied to the test split. Per data set and protocol: the ceiling (``domain`` fitted on the test split
  itself, ``ceiling_f_macro`` of every job), F-macro mean +- SE over seeds per strategy variant, the **gap
  closed** (F - F_independent) / (F_ceiling - F_independent) (means over seeds), the paired difference to
  ``independent`` with its SE, the ranker's P@1; the average gap closed over data sets; a plot.
* ``consistency`` (``experiment=consistency``): the population regret (``population_regret``) of every
  strategy variant against the fit-split size, mean +- SE over seeds, on a log-log plot with an
  m^(-1/2) guide.

* ``cde_sweep`` and ``cde_density_at_x``: the CDE reference-study presets (``xmlthresh.report.cde_studies``).
* ``argv``: the figure presets of the reference work's chapters 2-3 (``xmlthresh.report.figure_studies``).

    python -m xmlthresh.report.studies transfer <sweep dir>      # or consistency, cde_sweep, ...; writes <sweep dir>/report/

The sweep callback writes the same report when a preset sets ``report.kind``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from xmlthresh.report.cde_studies import CDE_STUDIES, cde_study
from xmlthresh.report.figure_studies import FIGURE_STUDIES, figure_study
from xmlthresh._util.errors import InputError, first_line, user_error_types
from xmlthresh._util.files import folder_as_one_unit, write_bytes_atomic, write_text_atomic
from xmlthresh.report.figures import png_bytes
from xmlthresh.report.result_files import read_result, result_paths
from xmlthresh.report.tables import to_markdown

REFERENCE = "independent"
STUDIES = ("transfer", "consistency", *CDE_STUDIES, *FIGURE_STUDIES)

#: the result field each threshold study reads, and the runs that have it
STUDY_NEEDS = {
    "transfer": ("ceiling_f_macro", "runs fitted on one split and scored on another, with the ceiling: "
                 "protocol=holdout or crossfit and ceiling=true (experiment=transfer sets both)"),
    "consistency": ("population_regret", "runs with a population regret (experiment=consistency)"),
}
def load_results(sweep_dir: Path) -> pd.DataFrame:
    """One row per finished, non-skipped thresholds job: every scalar field of its result.json
    (:func:`~xmlthresh.report.result_files.read_result` checks each file)."""
    rows = []
    for path in result_paths(sweep_dir):
        result = read_result(path)
        if result.get("skipped") or result.get("task", "thresholds") != "thresholds":
            continue
        rows.append({key: value for key, value in result.items() if not isinstance(value, (dict, list))})
    table = pd.DataFrame(rows)
    if not table.empty and "variant" not in table:
        table["variant"] = table["strategy"]
    return table


def _se(values: pd.Series) -> float:
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else float("nan")


def transfer_table(results: pd.DataFrame, reference: str = REFERENCE) -> pd.DataFrame:
    """Per (dataset, protocol, variant): F-macro mean and SE, ceiling, gap closed, paired difference."""
    rows = []
    for (dataset, protocol), group in results.groupby(["dataset", "protocol"]):
        ref = group[group["variant"] == reference].set_index("seed")["f_macro"]
        ceiling = group.groupby("seed")["ceiling_f_macro"].mean() if "ceiling_f_macro" in group else pd.Series(dtype=float)
        for variant, runs in group.groupby("variant"):
            f = runs.set_index("seed")["f_macro"]
            paired = (f - ref).dropna()
            row = {"dataset": dataset, "protocol": protocol, "variant": variant, "kind": runs["kind"].iloc[0],
                   "f_macro": f.mean(), "f_macro_se": _se(f), "n_seeds": len(f),
                   "ceiling": ceiling.mean() if len(ceiling) else np.nan,
                   "diff_to_ref": paired.mean() if len(paired) else np.nan,
                   "diff_to_ref_se": _se(paired) if len(paired) else np.nan}
            for metric in ("macro_f", "micro_f", "achievable_f_macro"):
                if metric in runs:
                    row[metric] = runs[metric].mean()
            if len(ref) and len(ceiling):
                denominator = ceiling.mean() - ref.mean()
                row["gap_closed"] = (f.mean() - ref.mean()) / denominator if denominator > 0 else np.nan
            if "ranker_p_at_1" in runs:
                row["ranker_p_at_1"] = runs["ranker_p_at_1"].mean()
            rows.append(row)
    return pd.DataFrame(rows)


def transfer_summary(table: pd.DataFrame, results: pd.DataFrame | None = None,
                     reference: str = REFERENCE) -> pd.DataFrame:
    """Per (protocol, variant), over data sets: the mean, median and pooled gap closed (pooled: the summed
    gains over the summed gaps), how many data sets are below the reference by more than one SE of the paired
    difference, the mean F-macro, macro-F and micro-F (and achievable F-macro when the jobs measured it) and,
    with ``results``, the mean paired difference to the reference in F points (x 100) with its SE over every
    (data set, seed) pair."""
    if table.empty or "gap_closed" not in table:
        return pd.DataFrame()
    below = table["diff_to_ref"] < -table["diff_to_ref_se"].fillna(0.0)
    gap = table["ceiling"] - table["f_macro"] + table["diff_to_ref"]  # ceiling - reference, per row
    aggregations = dict(mean_gap_closed=("gap_closed", "mean"), median_gap_closed=("gap_closed", "median"),
                        gain=("diff_to_ref", "sum"), gap=("gap", "sum"), n_datasets=("dataset", "nunique"),
                        datasets_below_ref_by_1se=("below_ref_by_1se", "sum"), mean_f_macro=("f_macro", "mean"))
    for metric in ("macro_f", "micro_f", "achievable_f_macro"):
        if metric in table:
            aggregations[f"mean_{metric}"] = (metric, "mean")
    summary = table.assign(below_ref_by_1se=below, gap=gap).groupby(["protocol", "variant", "kind"]).agg(
        **aggregations).reset_index()
    summary["pooled_gap_closed"] = summary.pop("gain") / summary.pop("gap")
    if results is not None and not results.empty:
        points = []
        for (protocol, variant), runs in results.groupby(["protocol", "variant"]):
            ref = results[(results["protocol"] == protocol) & (results["variant"] == reference)]
            paired = (runs.set_index(["dataset", "seed"])["f_macro"]
                      - ref.set_index(["dataset", "seed"])["f_macro"]).dropna() * 100.0
            points.append({"protocol": protocol, "variant": variant, "dF_points": paired.mean() if len(paired) else np.nan,
                           "dF_points_se": _se(paired) if len(paired) else np.nan})
        summary = summary.merge(pd.DataFrame(points), on=["protocol", "variant"], how="left")
    return summary.sort_values(["protocol", "mean_gap_closed"], ascending=[True, False])


def transfer_plot(table: pd.DataFrame) -> bytes:
    """PNG: gap closed by strategy variant (bars) per data set, one panel per protocol."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    protocols = sorted(table["protocol"].unique())
    fig, axes = plt.subplots(len(protocols), 1, figsize=(12, 3.6 * len(protocols)), squeeze=False)
    for ax, protocol in zip(axes[:, 0], protocols):
        pivot = table[table["protocol"] == protocol].pivot_table(index="dataset", columns="variant",
                                                                 values="gap_closed", aggfunc="mean")
        pivot.plot.bar(ax=ax, rot=0, width=0.85, colormap="tab20")
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.axhline(0.4, color="grey", linewidth=0.8, linestyle="--")
        ax.set_ylabel("gap closed")
        ax.set_title(f"share of the gap independent -> ceiling closed ({protocol})")
        ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1.0), loc="upper left", frameon=False)
    return png_bytes(fig)


def consistency_table(results: pd.DataFrame) -> pd.DataFrame:
    """Population regret per (variant, fit-split size): mean and SE over seeds."""
    size = "fit_docs"
    results = results.assign(**{size: results["fit_n_docs"] if "fit_n_docs" in results else results["n_docs"]})
    grouped = results.groupby(["variant", size])["population_regret"]
    table = pd.DataFrame({"regret": grouped.mean(), "regret_se": grouped.apply(_se), "n_seeds": grouped.size()})
    return table.reset_index().sort_values(["variant", size])


def consistency_plot(table: pd.DataFrame) -> bytes:
    """PNG: regret against the fit-split size, log-log, with an m^(-1/2) guide."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for variant, rows in table.groupby("variant"):
        ax.errorbar(rows["fit_docs"], rows["regret"].clip(lower=1e-6), yerr=rows["regret_se"], marker="o",
                    capsize=3, label=variant)
    m = np.array(sorted(table["fit_docs"].unique()), dtype=float)
    if len(m):
        start = table[table["fit_docs"] == m[0]]["regret"].median()
        ax.plot(m, start * np.sqrt(m[0] / m), color="grey", linestyle="--", label="m^-1/2")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("documents in the fit split (m)")
    ax.set_ylabel("population F-macro regret")
    ax.set_title("regret of thresholds fitted on m documents (synthetic_xmc, dense)")
    ax.legend(fontsize=7, frameon=False)
    return png_bytes(fig)


def write_study_report(study: str, sweep_dir: Path, out_dir: Path | None = None) -> dict[str, Path]:
    """Write ``<study>.md``, ``<study>.csv`` and ``<study>.png`` into ``out_dir`` (default: sweep_dir/report)."""
    if study not in STUDIES:
        raise ValueError(f"unknown study {study!r}; known: {', '.join(STUDIES)}")
    if not any(Path(sweep_dir).glob("*/result.json")):  # a report of nothing read like a report of a bad sweep
        raise InputError(f"no job result (*/result.json) under {sweep_dir}: not a sweep folder, or none of its "
                         "jobs has finished")
    out_dir = Path(out_dir) if out_dir is not None else Path(sweep_dir) / "report"
    paths = {"markdown": out_dir / f"{study}.md", "csv": out_dir / f"{study}.csv", "png": out_dir / f"{study}.png"}
    if study in CDE_STUDIES:
        markdown, table, png = cde_study(study, Path(sweep_dir))
        return _write(paths, markdown, table, png)
    if study in FIGURE_STUDIES:
        markdown, table, png = figure_study(study, Path(sweep_dir))
        return _write(paths, markdown, table, png)
    results = load_results(Path(sweep_dir))
    if results.empty:  # a page saying "no finished runs" read like a study of nothing
        raise InputError(f"the {study} study reads thresholds jobs, and {sweep_dir} has no finished one (its jobs "
                         "were skipped, or are of task=cde)")
    field, runs_needed = STUDY_NEEDS[study]
    if field not in results or results[field].isna().all():  # the page said "no finished runs" about finished runs
        raise InputError(f"the {study} study reads {field}, which no run in {sweep_dir} has: it needs {runs_needed}")
    if study == "transfer":
        table = transfer_table(results)
        summary = transfer_summary(table, results)
        markdown = (f"# Transfer of thresholds to the test split\n\n{len(results)} runs from `{sweep_dir}`.\n\n"
                    f"## Average gap closed over data sets\n\n{to_markdown(summary, 4)}\n"
                    f"## Per data set\n\n{to_markdown(table, 4)}")
        png = transfer_plot(table) if "gap_closed" in table else None
    else:
        table = consistency_table(results)
        markdown = (f"# Consistency: population regret against the fit-split size\n\n{len(results)} runs from "
                    f"`{sweep_dir}`.\n\n{to_markdown(table, 4)}")
        png = consistency_plot(table)
    return _write(paths, markdown, table, png)


def _write(paths: dict[str, Path], markdown: str, table: pd.DataFrame, png: bytes | None) -> dict[str, Path]:
    """Write the markdown, the table as CSV and the PNG (when there is one), together or not at all
    (:func:`~xmlthresh._util.files.folder_as_one_unit`); the paths written."""
    if png is None:
        paths.pop("png")
    with folder_as_one_unit(paths["markdown"].parent) as staging:
        write_text_atomic(staging / paths["markdown"].name, markdown)
        write_text_atomic(staging / paths["csv"].name, table.to_csv(index=False))
        if png is not None:
            write_bytes_atomic(staging / paths["png"].name, png)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xmlthresh.report.studies", description=__doc__.split("\n\n")[0])
    parser.add_argument("study", choices=STUDIES)
    parser.add_argument("sweep_dir", type=Path, help="a multirun directory (its jobs' result.json files)")
    parser.add_argument("--out", type=Path, default=None, help="output directory (default: <sweep_dir>/report)")
    args = parser.parse_args(argv)
    if not args.sweep_dir.is_dir():
        print(f"xmlthresh.report.studies: error: {args.sweep_dir} is not a directory", file=sys.stderr)
        return 1
    try:
        paths = write_study_report(args.study, args.sweep_dir, args.out)
    except user_error_types() as exc:  # every study's refusals, its reads and its writes: one line
        print(f"xmlthresh.report.studies: error: {first_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("xmlthresh.report.studies: interrupted; nothing was written", file=sys.stderr)
        return 130
    print(paths["markdown"].read_text())
    print("written: " + ", ".join(str(p) for p in paths.values()))
    return 0


if __name__ == "__main__":
    from xmlthresh.report.interrupt import end_at_interrupt

    end_at_interrupt("xmlthresh.report.studies")
    sys.exit(main())
