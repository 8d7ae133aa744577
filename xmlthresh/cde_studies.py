"""Reports of the CDE reference-study presets (issue 16), read from the ``result.json`` of every job of a
sweep directory (``task=cde`` runs):

* ``cde_sweep`` (``experiment=cde_sweep_alpha``, ...): the relative direct CDE loss of every estimator
  against the swept data-set parameter, mean +- SE over seeds, one line per estimator with an SE band,
  one panel per value of any other varied data-set parameter (e.g. ``d``). The swept parameter is found
  from the jobs: the numeric data-set parameter with the most distinct values, where a coordinate of a
  list parameter counts as one (``d[0]`` when the jobs sweep d = [d, 1]); the others make panels.
* ``cde_density_at_x`` (``experiment=cde_density_at_x``): the true density at one x next to each
  estimator's (``density_at_x.npz`` of every job, written when ``cde.density_at_x`` is set), heat maps on
  one colour scale, and a table of the integrated squared error at that x and the test-set losses.

    python -m xmlthresh.studies cde_sweep <sweep dir>    # or cde_density_at_x; writes <sweep dir>/report/
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from .report import png_bytes

#: what each CDE study report is called (``report.kind``)
CDE_STUDIES = ("cde_sweep", "cde_density_at_x")
PARAM = "data."


def _cell(value):
    """A data-set parameter as a table cell: lists become their text, so they can group rows."""
    return json.dumps(value) if isinstance(value, (list, tuple, dict)) else value


def load_cde_results(sweep_dir: Path) -> pd.DataFrame:
    """One row per finished CDE job: its scalar fields, ``data.<param>`` per data-set parameter, ``run_dir``."""
    rows = []
    for path in sorted(Path(sweep_dir).glob("*/result.json")):
        result = json.loads(path.read_text())
        if result.get("skipped") or result.get("task") != "cde":
            continue
        row = {key: value for key, value in result.items() if not isinstance(value, (dict, list))}
        for key, value in (result.get("cde_dataset_params") or {}).items():
            row[PARAM + key] = _cell(value)
            if isinstance(value, (list, tuple)):  # d = [d1, d2]: each coordinate may be the swept one
                row.update({f"{PARAM}{key}[{i}]": v for i, v in enumerate(value) if isinstance(v, (int, float))})
        row["job_dir"] = str(path.parent)
        rows.append(row)
    return pd.DataFrame(rows)


def sweep_axes(results: pd.DataFrame) -> tuple[str, list[str]]:
    """(the swept parameter column, the other varied ones): the scalar numeric ``data.*`` column with the
    most distinct values is the x axis; every other column that varies (``dataset`` included) is a panel."""
    varied = [c for c in results.columns if (c.startswith(PARAM) or c == "dataset") and results[c].nunique() > 1]
    numeric = [c for c in varied if c != "dataset" and pd.api.types.is_numeric_dtype(results[c])]
    if not numeric:
        raise ValueError(f"no swept numeric data-set parameter among the jobs (varied: {varied or 'none'})")
    x_key = max(numeric, key=lambda c: (results[c].nunique(), "[" not in c))
    # a list parameter whose coordinates vary is represented by them (its text would repeat their grouping)
    return x_key, [c for c in varied if c != x_key and not any(n.startswith(c + "[") for n in numeric)]


def _se(values: pd.Series) -> float:
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else float("nan")


def cde_sweep_table(results: pd.DataFrame, metric: str = "rel_loss_direct") -> tuple[pd.DataFrame, str, list[str]]:
    """Per (panel, x, estimator): the metric's mean and SE over seeds, seeds, mean NLL and fit seconds."""
    x_key, panels = sweep_axes(results)
    keys = panels + [x_key, "estimator"]
    grouped = results.groupby(keys)
    table = pd.DataFrame({
        metric: grouped[metric].mean(), f"{metric}_se": grouped[metric].apply(_se),
        "n_seeds": grouped["seed"].nunique(), "nll": grouped["nll"].mean(),
        "fit_seconds": grouped["fit_seconds"].mean(),
    }).reset_index()
    return table.sort_values(keys), x_key, panels


def cde_sweep_plot(table: pd.DataFrame, x_key: str, panels: list[str], metric: str = "rel_loss_direct") -> bytes:
    """PNG: the metric against the swept parameter, one line and SE band per estimator, a panel per group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(table.groupby(panels)) if panels else [((), table)]
    fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 4.2), squeeze=False, sharey=True)
    for ax, (key, rows) in zip(axes[0], groups):
        key = key if isinstance(key, tuple) else (key,)
        for estimator, line in rows.groupby("estimator"):
            line = line.sort_values(x_key)
            x, y, se = line[x_key].to_numpy(float), line[metric].to_numpy(float), line[f"{metric}_se"].to_numpy(float)
            ax.plot(x, y, marker="o", label=estimator)
            ax.fill_between(x, y - np.nan_to_num(se), y + np.nan_to_num(se), alpha=0.2)
        ax.set_xlabel(x_key.removeprefix(PARAM))
        ax.set_title(", ".join(f"{k.removeprefix(PARAM)}={v}" for k, v in zip(panels, key)) or "all jobs")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel(f"{metric}, mean +- SE over seeds")
    fig.suptitle("0 = the zero estimator, -1 = the true density", fontsize=9)
    axes[0, -1].legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return png_bytes(fig)


def density_at_x_panels(results: pd.DataFrame) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
    """The true density (from the first job) and every estimator's, from the jobs' ``density_at_x.npz``."""
    estimated, first = {}, None
    for _, row in results.sort_values("estimator").iterrows():
        path = Path(row["job_dir"]) / "density_at_x.npz"
        if not path.is_file():
            continue
        with np.load(path) as npz:
            arrays = {key: npz[key] for key in npz.files}
        first = first or arrays
        estimated[row["estimator"]] = arrays
    if first is None:
        raise ValueError("no job wrote density_at_x.npz (set cde.density_at_x)")
    return first, estimated


def density_at_x_plot(first: dict[str, np.ndarray], estimated: dict[str, dict]) -> bytes:
    """PNG: the true density at x, then every estimator's, heat maps on one colour scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = ([("true", first["true"])] if "true" in first else []) + [(k, v["estimated"]) for k, v in estimated.items()]
    top = max(float(values.max()) for _, values in panels) or 1.0
    extent = (first["z1"][0], first["z1"][-1], first["z2"][0], first["z2"][-1])
    cols = min(4, len(panels))
    rows = int(np.ceil(len(panels) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.2 * rows), squeeze=False)
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    for ax, (title, values) in zip(axes.ravel(), panels):
        image = ax.imshow(values, origin="lower", extent=extent, aspect="auto", vmin=0.0, vmax=top, cmap="viridis")
        ax.set_title(title)
        ax.set_xlabel("z1")
        ax.set_ylabel("z2")
        fig.colorbar(image, ax=ax)  # every panel has the same vmin / vmax: one colour scale
    x = np.asarray(first["x"])
    where = f"x = {x[0]:g} (every feature)" if np.all(x == x[0]) else f"x = {np.round(x, 3).tolist()}"
    fig.suptitle(f"f(z | x) at {where}, one colour scale (0 .. {top:.3g})")
    return png_bytes(fig)


def density_at_x_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per estimator: ISE at x, relative direct loss +- SE on the test set, NLL, 90 % coverage, fit time."""
    columns = ["estimator", "ise_at_x", "rel_loss_direct", "rel_loss_direct_se", "nll", "coverage90", "fit_seconds"]
    present = [c for c in columns if c in results]
    return results[present].sort_values("ise_at_x" if "ise_at_x" in present else "estimator").reset_index(drop=True)


def cde_study(study: str, sweep_dir: Path) -> tuple[str, pd.DataFrame, bytes | None]:
    """(markdown, table, PNG) of one CDE study on the jobs of ``sweep_dir``."""
    from .report import to_markdown

    results = load_cde_results(Path(sweep_dir))
    if results.empty:
        return f"# {study}\n\n_no finished CDE runs in {sweep_dir}_\n", results, None
    if study == "cde_sweep":
        table, x_key, panels = cde_sweep_table(results)
        text = (f"# Relative CDE loss against {x_key.removeprefix(PARAM)}\n\n{len(results)} runs from `{sweep_dir}`; "
                f"mean +- SE over {int(table['n_seeds'].min())}-{int(table['n_seeds'].max())} seeds "
                f"(the seed draws the data).\n\n{to_markdown(table, 4)}")
        return text, table, cde_sweep_plot(table, x_key, panels)
    if study == "cde_density_at_x":
        first, estimated = density_at_x_panels(results)
        table = density_at_x_table(results)
        text = (f"# The density at one x: true vs estimated\n\n{len(results)} runs from `{sweep_dir}`; ise_at_x = "
                f"int (f^ - f)^2 dz at x on the plot grid.\n\n{to_markdown(table, 4)}")
        return text, table, density_at_x_plot(first, estimated)
    raise ValueError(f"unknown CDE study {study!r}; known: {', '.join(CDE_STUDIES)}")
