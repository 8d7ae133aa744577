"""The comparison page of a sweep (``comparison.html``), beside the one plotly.js file of its folder; offline.

What a user opens to compare strategies, benchopt-style:

* a sortable table (click a header) with one row per data set x strategy (x every other swept key): F-macro,
  macro-F, micro-F, the certified lower / upper bound and the gap with the objective they certify ("bounds
  of": the F-macro of the row, the F-macro of the fit split, the plug-in F-macro, ...), the fit time, the
  kind (deterministic / randomized / uses test scores), the ranker and its P@1, the number of runs (seeds)
  with the standard error over them, and a link to each run (in the MLflow UI, or its result.json when the
  sweep ran without tracking). Numbers show 4-7 significant digits, full precision on hover and in the sort;
  the best row of each group is marked; every empty cell says why; the data set and strategy columns stay in
  view when a wide table scrolls sideways;
* interactive plotly figures (hover: the run ids and the configuration of the point) -- line plots over
  numeric sweep parameters, bars with error bars over seeds otherwise (:mod:`xmlthresh.report.figures`
  decides which); plotly.js is ``plotly.min.js`` beside the page, written once per folder;
* the paired differences to the reference strategy;
* provenance: when, by which command, at which git commit, with which package versions, on which machine.

Without plotly installed the page shows the static PNG instead of the interactive figures.
"""

from __future__ import annotations

import html
import importlib.metadata
import math
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from xmlthresh.metrics import EMPIRICAL_OBJECTIVE
from xmlthresh.report.figures import FigureSpec, log_axis, figure_points

#: the MLflow UI of ``make ui`` (loopback, port 5000); ``python -m xmlthresh.report --ui-url`` for another
DEFAULT_UI_URL = "http://127.0.0.1:5000"
#: the packages whose versions the provenance lists
PACKAGES = ("xmlthresh", "numpy", "scipy", "numba", "pandas", "scikit-learn", "mlflow", "hydra-core", "matplotlib",
            "plotly")
#: the metric columns of the table, when present: (column, header, what it holds, significant digits shown);
#: ``bound_*`` and ``bounds_of`` are the certified bounds of the evaluated documents or else of the fit split
_METRIC_COLUMNS = (
    ("f_macro", "F-macro", "F_beta of the mean precision and the mean recall over labels, on the evaluated "
     "documents (the test split under holdout / crossfit)", 6),
    ("macro_f", "macro-F", "the mean over labels of each label's F_beta", 6),
    ("micro_f", "micro-F", "F_beta of the counts of all labels pooled", 6),
    ("f_macro_interval_low", "new docs: low", "the population interval for the F-macro of these thresholds on "
     "new documents (from the fit split alone): low end", 4),
    ("f_macro_interval_high", "new docs: high", "the population interval for new documents: high end", 4),
    ("bound_low", "lower bound", "certified lower bound of the optimum of the objective in 'bounds of'", 7),
    ("bound_high", "upper bound", "certified upper bound of the optimum of the objective in 'bounds of'", 7),
    ("bound_gap", "gap", "upper bound - lower bound", 4),
    ("bounds_of", "bounds of", "the objective the certified bounds hold for, and on which documents", None),
    ("fit_f_macro", "fit F-macro", "the F-macro of the same thresholds on the fit split (holdout / crossfit): "
     "the empirical F-macro that fit-split bounds of the F-macro certify", 6),
    ("fit_seconds", "fit (s)", "seconds of the strategy's fit alone (numba compiled before)", 4),
    ("ranker_p_at_1", "ranker P@1", "precision at 1 of the first-stage ranker", 4),
)
#: the key columns kept in view (``position: sticky``) when the table scrolls sideways: the first two of these
#: that the table has (a CDE table: its data set and estimator)
FROZEN_KEYS = ("dataset", "cde_dataset", "strategy", "estimator")
#: significant digits of other numbers (extra metrics, the standard error)
DIGITS = 6


def provenance(command: str | None = None) -> dict[str, str]:
    """Date (UTC), command line, git commit of the code, package versions and the machine."""
    from xmlthresh.tracking.mlflow_runs import git_commit

    versions = []
    for package in PACKAGES:
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "command": command or " ".join([os.path.basename(sys.argv[0]) or "python", *sys.argv[1:]]),
        "git commit": git_commit(),
        "packages": ", ".join(versions),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "machine": f"{platform.node()} ({platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs)",
    }


def full_precision(value: Any) -> str:
    """A number as the shortest decimal that round-trips it (``repr``), integers without ``.0``; '' for NaN."""
    if value is None or (isinstance(value, (float, np.floating)) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))
    return str(value)


#: the MLflow UI's "Model training" view (MLflow 3 opens on its GenAI view otherwise)
_ML_VIEW = "workflowType=machine_learning"


def run_url(ui_url: str, experiment_id: Any, run_id: str) -> str:
    """The MLflow UI's page of a run, in the "Model training" view."""
    return f"{ui_url.rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}?{_ML_VIEW}"


def runs_view_url(ui_url: str, experiment_id: Any, sweep: str | None = None, order_by: str = "f_macro") -> str:
    """The MLflow UI's runs table of an experiment (of one sweep: its parent's children), in the "Model
    training" view, best ``order_by`` first (checked in Chromium against MLflow 3.17's UI)."""
    from urllib.parse import quote

    query = [_ML_VIEW, f"orderByKey={quote(f'metrics.`{order_by}`')}", "orderByAsc=false"]
    if sweep:
        query.insert(1, f"searchFilter={quote(f'tags.`mlflow.parentRunId` = {chr(39)}{sweep}{chr(39)}')}")
    return f"{ui_url.rstrip('/')}/#/experiments/{experiment_id}/runs?{'&'.join(query)}"


def _is_reused(values: pd.Series) -> pd.Series:
    """Which runs were reused from an earlier sweep (``reused``: a flag or the id of the run reused)."""
    text = values.astype(str).str.strip().str.lower()
    return values.notna() & ~text.isin(["", "false", "0", "0.0", "none", "nan"])


def table_html(runs: pd.DataFrame, table: pd.DataFrame, ui_url: str) -> str:
    """The sortable comparison table: one row per key combination of ``table`` (means over seeds).

    Numbers are shown to 4-7 significant digits, at full precision on hover (``title``) and in the sort key
    (``data-v``); the best row of each group (same keys but strategy) is marked; the certified bounds are
    labelled with the objective they hold for; every empty cell says why it is empty (a footnote letter and
    its ``title``); the key columns of :data:`FROZEN_KEYS` stay in view when the table scrolls sideways."""
    keys = [k for k in table.attrs.get("keys", []) if k in table]
    frozen = [k for k in FROZEN_KEYS if k in keys][:2]
    # keys with one value in every row are said once above the table, not repeated in a column of each row
    same = [k for k in keys if k not in frozen and len(table) > 1 and table[k].nunique(dropna=False) == 1]
    group_keys = keys
    keys = frozen + [k for k in keys if k not in frozen and k not in same]
    headline = table.attrs.get("headline", "f_macro")
    shown = _with_bounds(table)
    metrics = [(c, h, t, d) for c, h, t, d in _METRIC_COLUMNS if c in shown and shown[c].notna().any()]
    if headline not in {c for c, *_ in metrics} and headline in shown:
        metrics.insert(0, (headline, headline, "the headline metric", DIGITS))
    metrics += [(c, c, "a metric of report.metrics / --metrics", DIGITS) for c in table.attrs.get("metrics", [])
                if c in shown and c not in {m[0] for m in metrics} and c not in _HIDDEN and shown[c].notna().any()]
    se = f"{headline}_seeds_se"
    runs_by_key = {}
    if not runs.empty:
        for key, group in runs.groupby(group_keys, dropna=False, sort=False):
            runs_by_key[tuple(_key_text(v) for v in (key if isinstance(key, tuple) else (key,)))] = group
    from_results = runs.attrs.get("source") == "results" or "run_dir" in runs
    headers = [(k, "a key of the comparison" + (" (stays in view)" if k in frozen else "")) for k in keys]
    headers += [(h, t) for _, h, t, _ in metrics]
    headers += [("runs", "runs (seeds) averaged in the row"), ("SE", f"standard error of {headline} over seeds")]
    has_reused = "reused" in runs and bool(_is_reused(runs["reused"]).any())
    if has_reused:
        headers.append(("reused", "runs reused from an earlier sweep (same configuration, already finished)"))
    headers.append(("result" if from_results else "MLflow", "each run's result.json" if from_results else
                    "each run in the MLflow UI"))
    best = best_rows(shown, group_keys, headline)
    notes = _Footnotes()
    rows = []
    for index, row in shown.iterrows():
        group = runs_by_key.get(tuple(_key_text(row[k]) for k in group_keys), runs.iloc[0:0])
        cells = [_key_cell(row[k], k, frozen) for k in keys]
        other = bool(row.get("bounds_other", False))
        for column, _, _, digits in metrics:
            value = row.get(column)
            if _missing(value):
                cells.append(notes.cell(why_empty(column, row)))
            elif column == "bounds_of":
                cells.append(f'<td class="text{" other" if other else ""}" '
                             f'title="{html.escape(str(row["bounds_title"]))}">{html.escape(str(value))}'
                             f'{"<sup>&dagger;</sup>" if other else ""}</td>')
            else:
                classes = ["best"] if column == headline and index in best else []
                if other and column.startswith("bound_"):
                    classes.append("other")
                cells.append(_cell(value, digits=digits or DIGITS, classes=classes,
                                   mark=" &#9733;" if "best" in classes else ""))
        cells.append(_cell(row.get("n_runs")))
        cells.append(notes.cell(why_empty("se", row)) if _missing(row.get(se)) else _cell(row.get(se), digits=4))
        if has_reused:
            cells.append(_cell(int(_is_reused(group["reused"]).sum()) if len(group) else 0))
        links = []
        for _, run in group.sort_values("seed", key=_seed_order).iterrows():
            label = f"seed {run['seed']}" if len(group) > 1 else "run"
            if from_results and isinstance(run.get("result_link"), str):
                href, hover = run["result_link"], str(Path(run["run_dir"]) / "result.json")
            else:
                href, hover = run_url(ui_url, run.get("experiment_id", 0), run["run_id"]), str(run["run_id"])
            links.append(f'<a href="{html.escape(href)}" title="{html.escape(hover)}">{html.escape(label)}</a>')
        cells.append(f"<td>{' '.join(links)}</td>")
        opening = '<tr class="best-row">' if index in best else "<tr>"
        rows.append(opening + "".join(cells) + "</tr>")
    head = "".join(f'<th{_class_attr(_key_class(h, frozen))} title="{html.escape(t)}; click to sort">{html.escape(h)}'
                   "</th>" for h, t in headers)
    legend = _legend(next((h for c, h, *_ in metrics if c == headline), headline), bool(best),
                     bool(shown["bounds_other"].any()), notes)
    common = ", ".join(f"{html.escape(k)} = <b>{html.escape(full_precision(table[k].iloc[0]))}</b>" for k in same)
    common = f'<p class="note" id="same-in-every-row">In every row: {common}.</p>' if same else ""
    return (f'{common}<div class="scroll" id="comparison-scroll"><table class="sortable" id="comparison"><thead><tr>'
            f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>{legend}")


#: table columns never shown as extra metrics (their content is in the merged bound columns)
_HIDDEN = ("lower_bound", "upper_bound", "gap", "fit_lower_bound", "fit_upper_bound", "fit_gap", "precision", "recall")
#: headline metrics where lower is better (the CDE losses); otherwise higher is better
_LOWER_IS_BETTER = ("loss", "nll")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))


def _with_bounds(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the certified bounds of each row in one set of columns: ``bound_low``, ``bound_high``,
    ``bound_gap`` (those of the evaluated documents, else of the fit split), ``bounds_of`` (the objective and
    the documents, short), ``bounds_title`` (in full) and ``bounds_other`` (the bounds are not those of the
    row's F-macro: another objective, or the fit split's documents)."""
    shown = table.copy()
    none = pd.Series(np.nan, index=table.index)
    own = table.get("lower_bound", none).notna() | table.get("upper_bound", none).notna()
    fit = ~own & (table.get("fit_lower_bound", none).notna() | table.get("fit_upper_bound", none).notna())
    shown["bound_low"] = table.get("lower_bound", none).where(own, table.get("fit_lower_bound", none))
    shown["bound_high"] = table.get("upper_bound", none).where(own, table.get("fit_upper_bound", none))
    shown["bound_gap"] = shown["bound_high"] - shown["bound_low"]
    objectives = table.get("bounds_objective", pd.Series(None, index=table.index, dtype=object))
    of, title, other = [], [], []
    for index in table.index:
        if not (own[index] or fit[index]):
            of.append(None), title.append(""), other.append(False)
            continue
        objective = objectives[index] if isinstance(objectives[index], str) else EMPIRICAL_OBJECTIVE
        where = "the documents of this row's F-macro" if own[index] else "the fit split (see fit F-macro)"
        short = "F-macro" if objective == EMPIRICAL_OBJECTIVE else objective.split(" (")[0]
        of.append(short if own[index] else f"{short}, fit split")
        title.append(f"the bounds hold for the optimum of the {objective} on {where}")
        other.append(objective != EMPIRICAL_OBJECTIVE or not own[index])
    shown["bounds_of"], shown["bounds_title"], shown["bounds_other"] = of, title, other
    return shown


def best_rows(table: pd.DataFrame, keys: Sequence[str], headline: str = "f_macro") -> set:
    """The index of the best row of each group of ``table``'s rows that share every key but the strategy (and
    its kind): the highest ``headline`` (the lowest for a loss), ties all best; groups of one row have none."""
    if table.empty or headline not in table or table[headline].isna().all():
        return set()
    lower = any(word in headline for word in _LOWER_IS_BETTER)
    by = [k for k in keys if k not in ("strategy", "kind")]
    best = set()
    groups = table.groupby(by, dropna=False, sort=False) if by else [((), table)]
    for _, group in groups:
        values = group[headline].dropna()
        if len(group) < 2 or values.empty:
            continue
        top = values.min() if lower else values.max()
        best.update(values.index[values == top])
    return best


def why_empty(column: str, row: Mapping[str, Any]) -> str:
    """Why a cell of the comparison table is empty, in one sentence (its footnote and its ``title``)."""
    protocol, strategy = str(row.get("protocol", "")), str(row.get("strategy", ""))
    if column.startswith("bound") or column in ("lower_bound", "upper_bound", "gap"):
        if not _certified(strategy):
            return f"{strategy} gives no certificate: it computes no bounds of the optimum"
        return "no certified bounds recorded for these runs"
    if column == "fit_f_macro" and protocol == "oracle":
        return "protocol oracle fits and evaluates on the same documents: there is no separate fit split"
    if column.startswith("f_macro_interval"):
        if protocol == "oracle":
            return "protocol oracle: no fit split apart from the evaluated documents, so no interval for new ones"
        return "no interval: it needs interval.resamples > 0 and scores (not ranked lists) under holdout / crossfit"
    if column == "ranker_p_at_1":
        return "no ranker: the data set gives its scores or ranked lists"
    if column == "se":
        return "one run (seed) only: no standard error; sweep seed=0,1,2 for one"
    return "not recorded by these runs"


def _certified(strategy: str) -> bool:
    """Whether the strategy registered as ``strategy`` computes certified bounds (its ``certified`` flag)."""
    try:
        from xmlthresh.strategies import STRATEGIES

        return bool(getattr(STRATEGIES.get(strategy), "certified", False))
    except Exception:  # noqa: BLE001 - an unknown or unloadable plugin strategy: say only what is known
        return True


class _Footnotes:
    """The reasons of the table's empty cells, one footnote letter each."""

    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}

    def cell(self, reason: str) -> str:
        letter = self.reasons.setdefault(reason, "abcdefghijklmnopqrstuvwxyz"[len(self.reasons) % 26])
        return (f'<td class="empty" data-v="" title="{html.escape(reason)}">&ndash;<sup>{letter}</sup></td>')


def _legend(headline: str, has_best: bool, has_other: bool, notes: _Footnotes) -> str:
    """What the marks of the table mean, below it."""
    items = []
    if has_best:
        better = "lowest" if any(word in headline for word in _LOWER_IS_BETTER) else "highest"
        items.append(f"<li><b>&#9733; best</b>: the {better} {html.escape(headline)} (mean over seeds) among the "
                     "strategies of the same data set, protocol, beta and every other key (ties all marked)</li>")
    if has_other:
        items.append("<li><i>&dagger; bounds of another objective</i>: these bounds do not certify the row's F-macro "
                     "but the objective named in 'bounds of' (e.g. the plug-in F-macro, or the F-macro on the fit "
                     "split under holdout / crossfit): compare them with that objective, not with the F-macro "
                     "column</li>")
    items += [f"<li>&ndash;<sup>{letter}</sup> {html.escape(reason)}</li>" for reason, letter in notes.reasons.items()]
    items.append("<li>numbers to 4-7 significant digits; hover a number for its full precision (the sort uses "
                 "it)</li>")
    return f'<ul class="legend note">{"".join(items)}</ul>'


def plain_table_html(frame: pd.DataFrame, digits: int = DIGITS) -> str:
    """A sortable table of ``frame`` (the paired differences): numbers to ``digits`` significant digits, full
    precision on hover; empty cells as a dash."""
    head = "".join(f'<th title="click to sort">{html.escape(str(c))}</th>' for c in frame.columns)
    body = "".join("<tr>" + "".join('<td class="empty" data-v="" title="not defined (a single pair: no standard '
                                    'error)">&ndash;</td>' if _missing(v) else _cell(v, digits=digits)
                                    for v in row) + "</tr>" for row in frame.itertuples(index=False))
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _class_attr(classes: str) -> str:
    return f' class="{classes}"' if classes else ""


def _key_class(column: str, frozen: Sequence[str]) -> str:
    return f"key key{frozen.index(column)}" if column in frozen else ""


def _key_cell(value: Any, column: str, frozen: Sequence[str]) -> str:
    text = full_precision(value)
    numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    attrs = f' class="{_key_class(column, frozen)}"' if column in frozen else ""
    if numeric and text:
        return f'<td class="{" ".join(["num", _key_class(column, frozen)]).strip()}" data-v="{text}">{text}</td>'
    return f"<td{attrs}>{html.escape(text)}</td>"


def _seed_order(seeds: pd.Series) -> pd.Series:
    numeric = pd.to_numeric(seeds, errors="coerce")
    return numeric if numeric.notna().all() else seeds.astype(str)


def _key_text(value: Any) -> str:
    return full_precision(value) if not (isinstance(value, float) and math.isnan(value)) else "nan"


def _cell(value: Any, digits: int | None = None, classes: Sequence[str] = (), mark: str = "") -> str:
    """A table cell: a number to ``digits`` significant digits (all of them for integers), its full precision
    in ``title`` and in its sort key ``data-v`` (numbers sort as numbers); text as it is."""
    text = full_precision(value)
    numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if numeric and text:
        exact = isinstance(value, (int, np.integer)) or (float(value).is_integer() and abs(value) < 1e6)
        shown = text if exact or not digits else f"{float(value):.{digits}g}"
        title = f' title="{text}"' if shown != text else ""
        return f'<td class="{" ".join(["num", *classes])}" data-v="{text}"{title}>{shown}{mark}</td>'
    return f"<td>{html.escape(text)}</td>"


#: panels side by side in one row of a figure; more wrap to further rows (plotly refuses a horizontal spacing
#: above 1 / (columns - 1): one row of 14 panels at 0.08 crashed the report)
MAX_PANEL_COLUMNS = 4


def panel_grid(n_panels: int) -> tuple[int, int]:
    """(rows, columns) of a figure with ``n_panels`` panels: one row up to :data:`MAX_PANEL_COLUMNS`."""
    cols = max(1, min(n_panels, MAX_PANEL_COLUMNS))
    return -(-max(n_panels, 1) // cols), cols


def plotly_figure(runs: pd.DataFrame, spec: FigureSpec):
    """A plotly figure of ``spec``: one subplot per panel, lines (or bars) per series, error bars = the
    standard error over seeds; hovering a point shows its runs and configuration."""
    import plotly.graph_objects as go
    from plotly.colors import qualitative
    from plotly.subplots import make_subplots

    points = figure_points(runs, spec)
    panels = list(dict.fromkeys(points["panel"])) or [""]
    rows, cols = panel_grid(len(panels))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=panels if panels != [""] else None,
                        horizontal_spacing=min(0.08, 0.5 / (cols - 1)) if cols > 1 else 0.1,
                        vertical_spacing=min(0.12, 0.5 / (rows - 1)) if rows > 1 else 0.1)
    palette = qualitative.Plotly + qualitative.D3
    colours = {name: palette[i % len(palette)] for i, name in enumerate(dict.fromkeys(points["series"]))}
    keys = [k for k in runs.attrs.get("keys", []) if k in points]
    for number, panel in enumerate(panels):
        row, col = number // cols + 1, number % cols + 1
        here = points[points["panel"] == panel]
        for name, part in here.groupby("series", sort=False):
            config = ["<br>".join(f"{k} = {html.escape(full_precision(r[k]))}" for k in keys) for _, r in part.iterrows()]
            custom = np.array([[int(n), ", ".join(map(str, ids)), c] for n, ids, c in
                               zip(part["n"], part["run_ids"], config)], dtype=object)
            error = dict(type="data", array=part["se"].fillna(0).tolist(), visible=bool(part["se"].notna().any()))
            hover = (f"<b>%{{fullData.name}}</b><br>{html.escape(spec.x)} = %{{x}}<br>{html.escape(spec.metric)} = "
                     "%{y:.10g}<br>runs (seeds): %{customdata[0]}<br>%{customdata[2]}<br>run ids: %{customdata[1]}"
                     "<extra></extra>")
            common = dict(name=name, legendgroup=name, showlegend=number == 0, customdata=custom, error_y=error,
                          hovertemplate=hover, marker_color=colours[name])
            if spec.kind == "line":
                trace = go.Scatter(x=part["x"].tolist(), y=part["mean"].tolist(), mode="lines+markers",
                                   line_color=colours[name], **common)
            else:
                trace = go.Bar(x=[full_precision(v) for v in part["x"]], y=part["mean"].tolist(), **common)
            fig.add_trace(trace, row=row, col=col)
        if spec.kind == "line" and log_axis(here["x"]):
            fig.update_xaxes(type="log", row=row, col=col)
        values = sorted(set(here["x"].dropna())) if spec.kind == "line" else []
        if 0 < len(values) <= 12:  # ticks at the swept values (2, 8, 32, 268; 0.25 .. 4), not 2, 5, 10, 20
            fig.update_xaxes(tickvals=values, ticktext=[full_precision(v) for v in values], row=row, col=col)
        fig.update_xaxes(title_text=spec.x, row=row, col=col)
        if col == 1:
            fig.update_yaxes(title_text=spec.metric, row=row, col=1)
    fig.update_yaxes(tickformat=".4~g")  # a flat line must not print 0.0573643465554395313 ticks
    fig.update_layout(title=spec.title, template="plotly_white", height=440 + 320 * (rows - 1), barmode="group",
                      margin=dict(l=60, r=20, t=70, b=50), hoverlabel=dict(align="left"))
    return fig


def achievable_html(runs: pd.DataFrame, run_data) -> str:
    """The page's section of achievable sets (:mod:`xmlthresh.report.achievable`); '' when there is none or
    plotly is not installed."""
    try:
        import plotly  # noqa: F401
    except ImportError:
        return ""
    from xmlthresh.report.achievable import achievable_figures

    figures = achievable_figures(runs, run_data)
    if not figures:
        return ""
    divs = [fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"achievable-{number}",
                        config={"displaylogo": False}) for number, fig in enumerate(figures)]
    return ("<h2>Achievable sets (protocol oracle)</h2><p class='note'>The boundary of the convex hull of the "
            "achievable (mean precision, mean recall) pairs, and the point each run reached: the F-macro optimum "
            "lies on the boundary; hover a point for its run.</p>" + "".join(divs))


_SORT_JS = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, index) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var up = th.getAttribute('data-order') !== 'asc';
      table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-order'); });
      th.setAttribute('data-order', up ? 'asc' : 'desc');
      function key(row) {
        var cell = row.cells[index], v = cell.getAttribute('data-v');
        return v === null ? cell.textContent : parseFloat(v);
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), c;
        if (typeof x === 'number' && typeof y === 'number') { c = x - y; }
        else if (typeof x === 'number') { c = -1; } else if (typeof y === 'number') { c = 1; }
        else { c = String(x).localeCompare(String(y)); }
        return up ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

#: after the sort: the frozen key columns' offsets (the second one starts where the first ends), and the table's
#: layout as rendered, on the table's ``data-*`` attributes (read by the browser test)
_LAYOUT_JS = """
function xmlthreshLayout() {
  var table = document.getElementById('comparison'), box = document.getElementById('comparison-scroll');
  if (!table) { return; }
  var first = table.querySelector('th.key0');
  table.style.setProperty('--key1-left', (first ? first.getBoundingClientRect().width : 0) + 'px');
  table.setAttribute('data-right', Math.round(table.getBoundingClientRect().right));
  table.setAttribute('data-box-right', Math.round(box.getBoundingClientRect().right));
  table.setAttribute('data-scrolls', box.scrollWidth > box.clientWidth ? 'yes' : 'no');
  table.setAttribute('data-viewport', window.innerWidth);
  table.setAttribute('data-page-width', document.documentElement.scrollWidth);
  var key = table.querySelector('td.key1');
  table.setAttribute('data-frozen', key ? getComputedStyle(key).position : 'none');
}
window.addEventListener('load', xmlthreshLayout);
window.addEventListener('resize', xmlthreshLayout);
"""

_CSS = ("body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222}h1{font-size:1.5em}"
        ".scroll{overflow-x:auto;max-width:100%}table{border-collapse:separate;border-spacing:0;"
        "margin:0.5em 0 0.5em;font-size:0.85em}"
        "td,th{border-right:1px solid #ccc;border-bottom:1px solid #ccc;padding:3px 6px;background:#fff}"
        "tr>:first-child{border-left:1px solid #ccc}thead th{border-top:1px solid #ccc}"
        "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
        "th{background:#f3f3f3;cursor:pointer;position:sticky;top:0;z-index:1;max-width:7em;font-weight:600;"
        "overflow-wrap:break-word}"
        "th[data-order=asc]::after{content:' \\25B2'}th[data-order=desc]::after{content:' \\25BC'}"
        ".key{position:sticky;z-index:2}.key0{left:0}.key1{left:var(--key1-left,0);box-shadow:2px 0 2px -1px #bbb}"
        "th.key{z-index:3}td.key{background:#fafafa;white-space:nowrap}"
        "tr:hover td{background:#f7fbff}td.best{font-weight:bold;background:#eaf6ea}"
        "td.other{font-style:italic;color:#666}"
        "td.text{max-width:12em;font-size:0.95em}td.empty{color:#999;text-align:center}"
        "ul.legend{margin:0 0 1.5em;padding-left:1.2em}"
        "dl.provenance{display:grid;grid-template-columns:max-content auto;gap:2px 1em;font-size:0.9em}"
        "dl.provenance dt{font-weight:bold}dl.provenance dd{margin:0;font-family:monospace}"
        ".note{color:#555;font-size:0.9em}")

#: the file of plotly.js beside the pages of a report folder (the name plotly's own ``write_html(...,
#: include_plotlyjs="directory")`` uses, so its pages share it too)
PLOTLY_FILE = "plotly.min.js"


def write_plotlyjs(folder: Path, current_in: Path | None = None) -> Path | None:
    """plotly.js in ``folder`` (:data:`PLOTLY_FILE`), written once: left alone when it already holds this
    plotly's bundle, and not written when ``current_in`` (the folder it will be moved into) holds it; that
    file is returned then. None without plotly."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        return None
    from xmlthresh._util.files import write_text_atomic

    bundle = get_plotlyjs()

    def current(path: Path) -> bool:
        return path.is_file() and path.stat().st_size == len(bundle.encode()) and path.read_text() == bundle

    if current_in is not None and current(Path(current_in) / PLOTLY_FILE):
        return Path(current_in) / PLOTLY_FILE
    path = Path(folder) / PLOTLY_FILE
    if not current(path):
        write_text_atomic(path, bundle)
    return path


def comparison_page(runs: pd.DataFrame, table: pd.DataFrame, diffs: pd.DataFrame, specs: Sequence[FigureSpec], *,
                    title: str, provenance_facts: Mapping[str, str], ui_url: str = DEFAULT_UI_URL,
                    png: bytes | None = None, extra_html: str = "", sweep: str | None = None,
                    plotly_src: str | None = PLOTLY_FILE) -> str:
    """The whole page as one HTML string. ``plotly_src``: the plotly.js file the page loads (relative to the
    page: :func:`write_plotlyjs` writes it beside), or None for plotly.js inline (a page of 4.7 MB that needs
    no other file)."""
    try:
        import plotly  # noqa: F401
        from plotly.offline import get_plotlyjs
    except ImportError:
        get_plotlyjs = None
    figures = []
    if get_plotlyjs is not None:
        for number, spec in enumerate(specs):
            fig = plotly_figure(runs, spec)
            figures.append(fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"figure-{number}",
                                       config={"displaylogo": False, "responsive": True}))
    elif png is not None:
        import base64

        figures.append(f'<p class="note">plotly is not installed: static figure.</p><img alt="{html.escape(title)}" '
                       f'src="data:image/png;base64,{base64.b64encode(png).decode()}">')
    n_runs = len(runs)
    seeds = runs["seed"].nunique() if "seed" in runs and n_runs else 0
    from_results = runs.attrs.get("source") == "results" or "run_dir" in runs
    where = ("its result.json (the sweep ran without tracking: the page is made from the jobs' files)"
             if from_results else f"the MLflow UI (<code>make ui</code>, at {html.escape(ui_url)})")
    summary = (f"{n_runs} finished run(s), {len(table)} row(s), {seeds} seed(s). Each row is the mean over its "
               f"seeds (nothing else is pooled); click a header to sort, a run link to open {where}.")
    if n_runs and "experiment_id" in runs:
        view = runs_view_url(ui_url, runs["experiment_id"].iloc[0], sweep, table.attrs.get("headline", "f_macro"))
        what = "this sweep's runs" if sweep else "the experiment's runs"
        summary += f' <a id="mlflow-runs" href="{html.escape(view)}">{what} in the MLflow UI</a>, best first.' 
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_CSS}</style>"]
    if get_plotlyjs is not None and (figures or "plotly-graph-div" in extra_html):
        parts.append(f'<script src="{html.escape(plotly_src)}"></script>' if plotly_src else
                     f'<script type="text/javascript">{get_plotlyjs()}</script>')
    parts += ["</head><body>", f"<h1>{html.escape(title)}</h1>", f"<p class='note'>{summary}</p>",
              "<h2>Comparison</h2>", table_html(runs, table, ui_url) if not table.empty else "<p>no finished runs</p>"]
    if figures:
        parts += ["<h2>Figures</h2>", *figures]
    if diffs is not None and not diffs.empty:
        reference = html.escape(str(diffs["reference"].iloc[0]))
        parts += [f"<h2>Paired differences to {reference} (F-macro, same data set, protocol, beta and seed)</h2>",
                  plain_table_html(diffs)]
    parts.append(extra_html)
    facts = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>" for k, v in provenance_facts.items())
    parts += ["<h2>Provenance</h2>", f"<dl class='provenance'>{facts}</dl>",
              f"<script>{_SORT_JS}{_LAYOUT_JS}</script></body></html>\n"]
    return "".join(parts)
