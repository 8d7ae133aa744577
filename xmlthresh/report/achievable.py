"""The achievable set of each ranked-list data set of a sweep, with every strategy's operating point on it.

For the comparison page (:mod:`xmlthresh.report.html`): the boundary of the convex hull of the achievable
(mean precision, mean recall) pairs -- the Minkowski average of the labels' hull chains, the set whose
F-maximiser ``domain`` certifies -- and, on it, the (precision, recall) each run of the sweep reached. Only
for runs evaluated on the data their thresholds were fitted on (``protocol=oracle``): under holdout the
test points lie in another set. The data set is rebuilt from the run's MLflow params (``dataset.loader`` and
``dataset.*``), so a report made later, or on another machine with the same data, draws the same picture.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

import numpy as np
import pandas as pd

log = logging.getLogger("xmlthresh")

#: data sets with more labels are not loaded for the page (WikiLSHTC's hull takes a minute and 1 GB)
MAX_LABELS = 20_000
_PALETTE = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692", "#b6e880", "#ff97ff",
            "#fecb52", "#1f77b4", "#ff7f0e")
_SYMBOLS = ("circle-open", "square-open", "diamond-open", "triangle-up-open", "x-open", "star-open", "hexagon-open")
#: points of the hull boundary drawn (evenly spaced states; the page stays small)
MAX_BOUNDARY_POINTS = 2_000


def _param_value(text: Any) -> Any:
    """An MLflow param (text) back as the YAML value it was: None, booleans, numbers, else the text."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return None
    text = str(text)
    if text in ("None", "null"):
        return None
    if text in ("True", "False"):
        return text == "True"
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            continue
    return text


def dataset_from_params(params: Mapping[str, str]):
    """The data set of a run, built from its params (``dataset.loader`` and every ``dataset.<key>``)."""
    from xmlthresh.datasets import DATASETS

    loader = params.get("dataset.loader")
    if not loader:
        raise ValueError("the run has no dataset.loader param")
    config = {key[len("dataset."):]: _param_value(value) for key, value in params.items()
              if key.startswith("dataset.") and key != "dataset.loader" and "." not in key[len("dataset."):]}
    return DATASETS.build(loader, config)


def hull_boundary(lists) -> tuple[np.ndarray, np.ndarray]:
    """(mean P, mean R) along the boundary of the achievable set's convex hull (labels without a relevant
    document dropped, as the strategies do), thinned to at most :data:`MAX_BOUNDARY_POINTS` states."""
    from xmlthresh.data.candidates import build_candidates
    from xmlthresh.strategies.linearization import LinearizedMap

    kept = lists if np.all(lists.n_relevant > 0) else lists.with_relevant_only()[0]
    vmap = LinearizedMap.build(build_candidates(kept), 1.0)  # the hull does not depend on beta
    states = np.unique(np.linspace(0, len(vmap.mean_p) - 1, min(len(vmap.mean_p), MAX_BOUNDARY_POINTS)).astype(int))
    return vmap.mean_p[states], vmap.mean_r[states]


def achievable_figures(runs: pd.DataFrame, run_data) -> list[Any]:
    """One plotly figure per ranked-list data set of ``runs`` evaluated under ``protocol=oracle``: the hull
    boundary and each run's (precision, recall). ``run_data(run_id)`` returns a run's (params, metrics).
    Data sets that cannot be loaded here, or are not ranked lists, or have more than :data:`MAX_LABELS`
    labels are left out (logged)."""
    import plotly.graph_objects as go

    from xmlthresh.data.ranked_lists import RankedLists
    from xmlthresh.metrics import f_beta_raw

    if runs.empty or not {"precision", "recall"} <= set(runs):
        return []
    figures = []
    oracle = runs[runs["protocol"].fillna("oracle") == "oracle"]
    for dataset, group in oracle.groupby("dataset", sort=True):
        try:
            params, metrics = run_data(group["run_id"].iloc[0])
            if "ranker" in params:  # features ranked by a first-stage ranker: scores, not ranked lists
                continue
            if float(metrics.get("n_labels", 0)) > MAX_LABELS:
                log.info("report: no achievable set for %s (more than %d labels)", dataset, MAX_LABELS)
                continue
            lists = dataset_from_params(params).load()
        except Exception as exc:  # a picture is an extra: the page is written without it, and says why
            log.info("report: no achievable set for %s: %s", dataset, exc)
            continue
        if not isinstance(lists, RankedLists) or lists.n_labels > MAX_LABELS:
            continue
        mean_p, mean_r = hull_boundary(lists)
        fig = go.Figure()
        betas = sorted(group["beta"].dropna().unique())
        if len(betas) == 1:  # F level lines of the one beta of the sweep
            grid = np.linspace(0.005, 1, 200)
            P, R = np.meshgrid(grid, grid)
            fig.add_trace(go.Contour(x=grid, y=grid, z=f_beta_raw(P, R, float(betas[0])), showscale=False,
                                     contours=dict(coloring="none", showlabels=True, start=0.1, end=0.9, size=0.1),
                                     line=dict(color="#bbb", width=1), hoverinfo="skip", name="F level lines"))
        fig.add_trace(go.Scatter(x=mean_p, y=mean_r, mode="lines", line=dict(color="black", width=1.5),
                                 name="hull boundary of the achievable set", hoverinfo="skip"))
        strategies = list(dict.fromkeys(sorted(group["strategy"])))
        for (strategy, beta), part in group.groupby(["strategy", "beta"], sort=True):
            label = strategy if len(betas) == 1 else f"{strategy}, beta = {beta:g}"
            colour = _PALETTE[strategies.index(strategy) % len(_PALETTE)]  # one colour per strategy,
            symbol = _SYMBOLS[betas.index(beta) % len(_SYMBOLS)]  # one symbol per beta
            fig.add_trace(go.Scatter(
                x=part["precision"], y=part["recall"], mode="markers", name=label,
                marker=dict(size=10, symbol=symbol, color=colour, line=dict(width=2, color=colour)),
                customdata=np.stack([part["f_macro"], part["run_id"]], axis=1),
                hovertemplate=f"<b>{label}</b><br>P = %{{x:.6f}}<br>R = %{{y:.6f}}<br>F-macro = %{{customdata[0]:.10g}}"
                              "<br>run %{customdata[1]}<extra></extra>"))
        fig.update_layout(title=f"{dataset}: achievable (mean P, mean R) and each strategy's operating point",
                          xaxis=dict(title="mean precision P", range=[0, 1.02]),
                          yaxis=dict(title="mean recall R", range=[0, 1.02], scaleanchor="x"),
                          template="plotly_white", height=560, width=760)
        figures.append(fig)
    return figures


def mlflow_run_data(uri: str | None):
    """``run_data(run_id)`` for :func:`achievable_figures`: a run's (params, metrics) from the store ``uri``."""
    from xmlthresh.tracking.mlflow_runs import run_params_and_metrics

    def run_data(run_id: str) -> tuple[dict[str, str], dict[str, float]]:
        return run_params_and_metrics(uri, run_id)

    return run_data


def results_run_data(sweep_dir):
    """``run_data(run_id)`` for :func:`achievable_figures` from a sweep's own files (a sweep without tracking):
    the (params, metrics) of the job folder ``run_id`` as :func:`xmlthresh.report.tables.results_table` reads
    them from its ``result.json`` and ``.hydra/config.yaml``."""
    from xmlthresh.report.tables import results_table

    table = results_table(sweep_dir, say_left_out=False)  # the comparison table said what it left out
    rows = {str(row["run_id"]): row for _, row in table.iterrows()} if not table.empty else {}

    def run_data(run_id: str) -> tuple[dict[str, str], dict[str, float]]:
        row = rows[str(run_id)]
        params = {key[len("params."):]: value for key, value in row.items()
                  if key.startswith("params.") and isinstance(value, str)}
        metrics = {key[len("metrics."):]: float(value) for key, value in row.items()
                   if key.startswith("metrics.") and pd.notna(value)}
        return params, metrics

    return run_data
