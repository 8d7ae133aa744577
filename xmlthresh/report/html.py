"""The comparison page of a sweep: one self-contained HTML file (``comparison.html``) that works offline.

What a user opens to compare strategies, benchopt-style:

* a sortable table (click a header) with one row per data set x strategy (x every other swept key): F-macro,
  the certified lower / upper bound and the gap at full precision (the shortest decimal that round-trips the
  float), the fit time, the kind (deterministic / randomized / uses test scores), the ranker and its P@1,
  the number of runs (seeds) with the standard error over them, and a link to each run in the MLflow UI;
* interactive plotly figures (hover: the run ids and the configuration of the point) -- line plots over
  numeric sweep parameters, bars with error bars over seeds otherwise (:mod:`xmlthresh.report.figures`
  decides which); plotly.js is embedded inline, so the page needs no network;
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
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from xmlthresh.report.figures import FigureSpec, log_axis, figure_points

#: the MLflow UI of ``make ui`` (loopback, port 5000); ``python -m xmlthresh.report --ui-url`` for another
DEFAULT_UI_URL = "http://127.0.0.1:5000"
#: the packages whose versions the provenance lists
PACKAGES = ("xmlthresh", "numpy", "scipy", "numba", "pandas", "scikit-learn", "mlflow", "hydra-core", "matplotlib",
            "plotly")
#: table columns: (column of the comparison table, header); keys come first, then these, when present
_METRIC_COLUMNS = (("f_macro", "F-macro"), ("f_macro_interval_low", "interval for new documents: low"),
                   ("f_macro_interval_high", "interval for new documents: high"),
                   ("lower_bound", "certified lower bound"),
                   ("upper_bound", "certified upper bound"), ("gap", "gap"), ("fit_seconds", "fit time (s)"),
                   ("ranker_p_at_1", "ranker P@1"), ("fit_f_macro", "F-macro on the fit split"),
                   ("fit_lower_bound", "certified lower bound (fit split)"),
                   ("fit_upper_bound", "certified upper bound (fit split)"), ("fit_gap", "gap (fit split)"),
                   ("macro_f", "macro-F"), ("micro_f", "micro-F"))


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
    """The sortable comparison table: one row per key combination of ``table`` (means over seeds)."""
    keys = [k for k in table.attrs.get("keys", []) if k in table]
    headline = table.attrs.get("headline", "f_macro")
    metrics = [(c, h) for c, h in _METRIC_COLUMNS if c in table and table[c].notna().any()]
    if headline not in dict(metrics) and headline in table:
        metrics.insert(0, (headline, headline))
    metrics += [(c, c) for c in table.attrs.get("metrics", []) if c in table and c not in dict(metrics)
                and table[c].notna().any()]
    se = f"{headline}_seeds_se"
    runs_by_key = {}
    if not runs.empty:
        for key, group in runs.groupby(keys, dropna=False, sort=False):
            runs_by_key[tuple(_key_text(v) for v in (key if isinstance(key, tuple) else (key,)))] = group
    headers = keys + [h for _, h in metrics] + ["runs", f"{headline} SE over seeds"]
    has_reused = "reused" in runs
    if has_reused:
        headers.append("reused")
    headers.append("MLflow")
    rows = []
    for _, row in table.iterrows():
        group = runs_by_key.get(tuple(_key_text(row[k]) for k in keys), runs.iloc[0:0])
        cells = [_cell(row[k]) for k in keys] + [_cell(row[c], digits=_DIGITS.get(c)) for c, _ in metrics]
        cells += [_cell(row.get("n_runs")), _cell(row.get(se))]
        if has_reused:
            cells.append(_cell(int(_is_reused(group["reused"]).sum()) if len(group) else 0))
        links = []
        for _, run in group.sort_values("seed", key=_seed_order).iterrows():
            experiment = run.get("experiment_id", 0)
            label = f"seed {run['seed']}" if len(group) > 1 else "run"
            links.append(f'<a href="{html.escape(run_url(ui_url, experiment, run["run_id"]))}" '
                         f'title="{html.escape(str(run["run_id"]))}">{html.escape(label)}</a>')
        cells.append(f"<td>{' '.join(links)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = "".join(f'<th title="click to sort">{html.escape(h)}</th>' for h in headers)
    return (f'<div class="scroll"><table class="sortable" id="comparison"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _seed_order(seeds: pd.Series) -> pd.Series:
    numeric = pd.to_numeric(seeds, errors="coerce")
    return numeric if numeric.notna().all() else seeds.astype(str)


def _key_text(value: Any) -> str:
    return full_precision(value) if not (isinstance(value, float) and math.isnan(value)) else "nan"


#: columns shown rounded (their sort key keeps full precision): timings are measured, not proved
_DIGITS = {"fit_seconds": 4}


def _cell(value: Any, digits: int | None = None) -> str:
    """A table cell: the value at full precision (or ``digits`` significant digits), and its sort key at full
    precision in ``data-v`` (numbers sort as numbers)."""
    text = full_precision(value)
    numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if numeric and text:
        shown = f"{float(value):.{digits}g}" if digits else text
        return f'<td class="num" data-v="{text}">{shown}</td>'
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
                        horizontal_spacing=0.08 if cols > 1 else 0.1,
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

_CSS = ("body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222}h1{font-size:1.5em}"
        ".scroll{overflow-x:auto}table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.85em}"
        "td,th{border:1px solid #ccc;padding:3px 7px}td.num{text-align:right;font-variant-numeric:tabular-nums}"
        "th{background:#f3f3f3;cursor:pointer;position:sticky;top:0}th[data-order=asc]::after{content:' \\25B2'}"
        "th[data-order=desc]::after{content:' \\25BC'}tr:hover td{background:#f7fbff}"
        "dl.provenance{display:grid;grid-template-columns:max-content auto;gap:2px 1em;font-size:0.9em}"
        "dl.provenance dt{font-weight:bold}dl.provenance dd{margin:0;font-family:monospace}"
        ".note{color:#555;font-size:0.9em}")


def comparison_page(runs: pd.DataFrame, table: pd.DataFrame, diffs: pd.DataFrame, specs: Sequence[FigureSpec], *,
                    title: str, provenance_facts: Mapping[str, str], ui_url: str = DEFAULT_UI_URL,
                    png: bytes | None = None, extra_html: str = "", sweep: str | None = None) -> str:
    """The whole page as one HTML string (plotly.js inline when plotly is installed)."""
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
    summary = (f"{n_runs} finished run(s), {len(table)} row(s), {seeds} seed(s). Each row is the mean over its "
               "seeds (nothing else is pooled); click a header to sort, a run link to open it in the MLflow UI "
               f"(<code>make ui</code>, at {html.escape(ui_url)}).")
    if n_runs and "experiment_id" in runs:
        view = runs_view_url(ui_url, runs["experiment_id"].iloc[0], sweep, table.attrs.get("headline", "f_macro"))
        what = "this sweep's runs" if sweep else "the experiment's runs"
        summary += f' <a id="mlflow-runs" href="{html.escape(view)}">{what} in the MLflow UI</a>, best first.' 
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_CSS}</style>"]
    if get_plotlyjs is not None and (figures or "plotly-graph-div" in extra_html):
        parts.append(f'<script type="text/javascript">{get_plotlyjs()}</script>')
    parts += ["</head><body>", f"<h1>{html.escape(title)}</h1>", f"<p class='note'>{summary}</p>",
              "<h2>Comparison</h2>", table_html(runs, table, ui_url) if not table.empty else "<p>no finished runs</p>"]
    if figures:
        parts += ["<h2>Figures</h2>", *figures]
    if diffs is not None and not diffs.empty:
        reference = html.escape(str(diffs["reference"].iloc[0]))
        parts += [f"<h2>Paired differences to {reference} (F-macro, same data set, protocol, beta and seed)</h2>",
                  diffs.to_html(index=False, na_rep="", float_format=full_precision, classes="sortable")]
    parts.append(extra_html)
    facts = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>" for k, v in provenance_facts.items())
    parts += ["<h2>Provenance</h2>", f"<dl class='provenance'>{facts}</dl>",
              f"<script>{_SORT_JS}</script></body></html>\n"]
    return "".join(parts)
