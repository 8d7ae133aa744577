"""What a sweep report draws, and the static (matplotlib) drawing of it.

The rule: a report never averages over a swept parameter it does not name. Every key column of
the runs table (dataset, strategy, protocol, beta and every other param that varies, see
:func:`xmlthresh.report.comparison.load_runs`) is either the x axis, or names a line / bar, or a panel -- only the
repetitions over seeds are pooled, into a mean with its standard error. A numeric sweep parameter (beta,
``strategy.n_angles``, ``dataset.first_n_labels``, a training size) becomes the x axis of a line plot, one
line per strategy (and per value of the other swept keys); without one, bars per data set with error bars
over seeds. :func:`figure_specs` decides, :func:`figure_points` computes the points, and the renderers
(:func:`comparison_png` here, plotly in :mod:`xmlthresh.report.html`) only draw them.
"""

from __future__ import annotations

import io

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

#: keys that name categories, never an x axis, even when their values look like numbers
CATEGORY_KEYS = ("dataset", "cde_dataset", "strategy", "estimator", "protocol", "kind", "ranker")
#: metrics a report may ask for (``report.metrics``) that are never plotted: the x axis already says them
_NOT_PLOTTED = ("n_labels",)


@dataclass(frozen=True)
class FigureSpec:
    """One figure: ``metric`` against ``x``.

    ``kind`` "line": ``x`` is a numeric sweep parameter; "bar": ``x`` is the category key (the data set).
    ``series`` are the keys whose values name a line (or a bar within a category), ``panels`` the keys with
    one panel per value, ``fixed`` the keys that take one value in the whole table (said in the title)."""

    kind: str
    metric: str
    x: str
    series: tuple[str, ...]
    panels: tuple[str, ...]
    fixed: dict = field(default_factory=dict)

    @property
    def title(self) -> str:
        fixed = ", ".join(f"{k} = {_fmt(v)}" for k, v in self.fixed.items() if k in ("dataset", "cde_dataset", "beta", "protocol"))
        what = f"{self.metric} against {self.x}" if self.kind == "line" else f"{self.metric} by {self.x}"
        return what + (f" ({fixed})" if fixed else "")


def _fmt(value) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{value:g}"
    return str(value)


def _varying(table: pd.DataFrame, keys: Sequence[str]) -> list[str]:
    return [k for k in keys if k in table and table[k].nunique(dropna=False) > 1]


def _determined(table: pd.DataFrame, key: str, by: Sequence[str]) -> bool:
    """Whether ``key`` takes one value for each combination of ``by`` (kind is the strategy's)."""
    if not by:
        return False
    return bool((table.groupby(list(by), dropna=False)[key].nunique(dropna=False) <= 1).all())


def _names(table: pd.DataFrame, candidates: Sequence[str], context: Sequence[str] = ()) -> list[str]:
    """The keys that name a series: ``candidates`` less those the others or the ``context`` (the panel, the
    bar's category) determine (``kind`` is the strategy's), dropped one at a time so that the names stay
    unique within a panel or category."""
    kept = list(candidates)
    for key in list(kept):
        if key not in ("strategy", "estimator") and _determined(table, key, [k for k in kept if k != key] + list(context)):
            kept.remove(key)
    return kept


def figure_specs(table: pd.DataFrame) -> list[FigureSpec]:
    """The figures of a runs (or comparison) table: a line plot per numeric swept key and plotted metric,
    else one bar plot of the headline metric; [] for an empty table.

    Plotted metrics: the headline (``attrs["headline"]``, F-macro by default), the certified ``gap`` when
    some run has one above 1e-12, and the extra metrics the report was asked for (``report.metrics``)."""
    if table.empty:
        return []
    keys = list(table.attrs.get("keys", []))
    headline = table.attrs.get("headline", "f_macro")
    category = "cde_dataset" if "cde_dataset" in keys else "dataset"
    varying = _varying(table, keys)
    numeric = [k for k in varying if k not in CATEGORY_KEYS and pd.api.types.is_numeric_dtype(table[k])]
    fixed = {k: table[k].iloc[0] for k in keys if k in table and k not in varying}
    if not numeric:
        series = _names(table, [k for k in varying if k != category], [category])
        return [FigureSpec("bar", headline, category, tuple(series), (), fixed)]
    metrics = [headline]
    if "gap" in table and (pd.to_numeric(table["gap"], errors="coerce") > 1e-12).any():
        metrics.append("gap")
    from xmlthresh.report.tables import METRICS

    defaults = {*METRICS, headline}
    metrics += [m for m in table.attrs.get("metrics", []) if m not in defaults and m not in _NOT_PLOTTED
                and m in table and table[m].notna().any()]
    specs = []
    for x in numeric:
        panels = (category,) if category in varying else ()
        series = _names(table, [k for k in varying if k != x and k not in panels], panels)
        specs += [FigureSpec("line", metric, x, tuple(series), panels, fixed) for metric in metrics]
    return specs


def series_label(row: pd.Series | dict, spec: FigureSpec, fallback: str = "") -> str:
    """The name of a line or bar: the strategy (estimator) as it is, other keys as ``key=value``."""
    parts = [(_fmt(row[k]) if k in ("strategy", "estimator") else f"{k}={_fmt(row[k])}") for k in spec.series]
    method = next((k for k in ("strategy", "estimator") if k in row), None)
    if method is not None and method not in spec.series:  # one strategy: still named, before the other keys
        parts.insert(0, _fmt(row[method]))
    return " / ".join(parts) or fallback


def figure_points(runs: pd.DataFrame, spec: FigureSpec) -> pd.DataFrame:
    """One row per point of ``spec``: its panel, series, x, the mean of the metric over the seeds, the
    standard error (NaN with one seed), the number of runs and their run ids. Grouped by every key of the
    table, so nothing but repetitions is pooled; sorted by panel, series and x (numbers as numbers)."""
    keys = [k for k in runs.attrs.get("keys", []) if k in runs]
    if spec.metric not in runs or runs.empty:
        return pd.DataFrame(columns=["panel", "series", "x", "mean", "se", "n", "run_ids"])
    grouped = runs.groupby(keys, dropna=False, sort=True)
    values = grouped[spec.metric]
    points = pd.DataFrame({"mean": values.mean(), "se": values.sem(ddof=1), "n": values.count()}).reset_index()
    points["run_ids"] = list(grouped["run_id"].agg(list)) if "run_id" in runs else [[] for _ in range(len(points))]
    points.loc[points["n"] < 2, "se"] = np.nan
    points = points[points["n"] > 0].reset_index(drop=True)  # a strategy without the metric (no gap): no line
    fallback = str(runs["strategy"].iloc[0]) if "strategy" in runs else spec.metric
    points["series"] = [series_label(row, spec, fallback) for _, row in points.iterrows()]
    points["panel"] = [" / ".join(_fmt(row[k]) for k in spec.panels) for _, row in points.iterrows()]
    points["x"] = points[spec.x]
    return points.sort_values(["panel", "series", "x"], kind="stable").reset_index(drop=True)


def comparison_png(runs: pd.DataFrame, specs: Sequence[FigureSpec]) -> bytes:
    """PNG of every figure of ``specs``: one row per figure, one column per panel (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn = [(spec, figure_points(runs, spec)) for spec in specs]
    n_cols = max([max(1, pts["panel"].nunique()) for _, pts in drawn] or [1])
    width = max(5.0, 4.2 * n_cols + 2.5)
    if any(spec.kind == "bar" for spec in specs):
        width = max(width, 0.35 * sum(len(p) for _, p in drawn) + 3.0)
    fig, axes = plt.subplots(len(drawn), n_cols, figsize=(width, 3.6 * len(drawn)), squeeze=False)
    for row, (spec, points) in enumerate(drawn):
        panels = list(dict.fromkeys(points["panel"])) or [""]
        for col in range(n_cols):
            ax = axes[row][col]
            if col >= len(panels):
                ax.set_visible(False)
                continue
            here = points[points["panel"] == panels[col]]
            if spec.kind == "line":
                for label, line in here.groupby("series", sort=False):
                    err = line["se"] if line["se"].notna().any() else None
                    ax.errorbar(line["x"], line["mean"], yerr=err, marker="o", ms=3, capsize=3, label=label)
                if log_axis(here["x"]):
                    ax.set_xscale("log", base=2 if _powers_of_two(here["x"]) else 10)
                ax.set_xlabel(spec.x)
            else:
                pivot = here.pivot_table(index="x", columns="series", values="mean", aggfunc="first", sort=False)
                errors = here.pivot_table(index="x", columns="series", values="se", aggfunc="first", sort=False)
                pivot.plot.bar(ax=ax, yerr=errors.reindex_like(pivot) if errors.notna().any().any() else None, rot=0,
                               width=0.85, colormap="tab20", legend=False)
                ax.set_xlabel(spec.x)
            ax.set_ylabel(spec.metric)
            ax.set_title(f"{spec.title}" + (f"\n{panels[col]}" if panels[col] else ""), fontsize=9)
            ax.grid(alpha=0.3)
        handles, labels = axes[row][0].get_legend_handles_labels()
        if handles:
            axes[row][min(len(panels), n_cols) - 1].legend(handles, labels, fontsize=7, bbox_to_anchor=(1.01, 1.0),
                                                          loc="upper left", frameon=False)
    return png_bytes(fig)


def log_axis(x: pd.Series) -> bool:
    """Positive values spanning more than a factor 20 (beta 0.25..4 is 16: linear; n = 2..268: log)."""
    values = pd.to_numeric(x, errors="coerce").dropna()
    return bool(len(values) > 2 and (values > 0).all() and values.max() / values.min() > 20)


def _powers_of_two(x: pd.Series) -> bool:
    values = pd.to_numeric(x, errors="coerce").dropna()
    return bool(len(values) and (np.log2(values) % 1 == 0).mean() >= 0.5)


def png_bytes(fig) -> bytes:
    """A matplotlib figure as PNG bytes (tight layout, 110 dpi); the figure is closed."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()
