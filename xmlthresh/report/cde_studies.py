"""Reports of the CDE reference-study presets (chapter 4), read from the ``result.json`` of every job of a
sweep directory (``task=cde`` runs):

* ``cde_sweep`` (``experiment=cde_sweep_alpha``, ...): the relative direct CDE loss of every estimator
  against the swept data-set parameter, mean +- SE over seeds, one line per estimator with an SE band,
  one panel per value of any other varied data-set parameter (e.g. ``d``). The swept parameter is found
  from the jobs: the numeric data-set parameter with the most distinct values, where a coordinate of a
  list parameter counts as one (``d[0]`` when the jobs sweep d = [d, 1]); the others make panels.
* ``cde_density_at_x`` (``experiment=cde_density_at_x``, Fig. 4.1): (a) the data set, the training targets
  coloured by s(x), and (b) the true density at one x next to each estimator's (``density_at_x.npz`` of
  every job, written when ``cde.density_at_x`` is set), heat maps on one colour scale, and a table of the
  integrated squared error at that x and the test-set losses.
* ``cde_direct_vs_approx`` (``experiment=cde_direct_vs_approx``, Fig. 4.2): per job the direct and the
  approximate relative loss with their SEs and their paired difference; a scatter of direct against
  approximate with the identity line, a colour per estimator and a marker per data-set setting.
* ``cde_xanes`` (``experiment=cde_xanes``, Table 8): real data, no true density. Per target set and
  estimator the approximate loss, NLL and HDR coverage pooled over the test points of all seeds (from each
  job's ``per_point.npz``, ``cde.save_per_point=true``), and the paired difference of every estimator's
  per-point approximate loss to the winner's on the same test points (same seed = same split).

    python -m xmlthresh.report.studies cde_sweep <sweep dir>    # or another kind above; writes <sweep dir>/report/
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from xmlthresh._util.errors import InputError
from xmlthresh.report.figures import png_bytes
from xmlthresh.report.result_files import read_result, result_paths

#: what each CDE study report is called (``report.kind``)
CDE_STUDIES = ("cde_sweep", "cde_density_at_x", "cde_direct_vs_approx", "cde_xanes")
PARAM = "data."


def _cell(value):
    """A data-set parameter as a table cell: lists become their text, so they can group rows."""
    return json.dumps(value) if isinstance(value, (list, tuple, dict)) else value


def load_cde_results(sweep_dir: Path) -> pd.DataFrame:
    """One row per finished CDE job: its scalar fields, ``data.<param>`` per data-set parameter, ``run_dir``."""
    rows = []
    for path in result_paths(sweep_dir):
        result = read_result(path)
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
    grouped = results.groupby(keys, dropna=False)  # a parameter one family lacks (Fork has no d) is NaN
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

    groups = list(table.groupby(panels, dropna=False)) if panels else [((), table)]
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
        arrays = _job_arrays(path)
        first = first or arrays
        estimated[row["estimator"]] = arrays
    if first is None:
        raise ValueError("no job wrote density_at_x.npz (set cde.density_at_x)")
    return first, estimated


def density_at_x_plot(first: dict[str, np.ndarray], estimated: dict[str, dict]) -> bytes:
    """PNG: (a) the data set -- the training targets of the first job, coloured by s(x) (when the job saved
    them) -- then (b) the true density at x and every estimator's, heat maps on one colour scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = ([("true", first["true"])] if "true" in first else []) + [(k, v["estimated"]) for k, v in estimated.items()]
    sample = "sample_z" in first
    top = max(float(values.max()) for _, values in panels) or 1.0
    extent = (first["z1"][0], first["z1"][-1], first["z2"][0], first["z2"][-1])
    n_axes = len(panels) + sample
    cols = min(4, n_axes)
    rows = int(np.ceil(n_axes / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.2 * rows), squeeze=False)
    for ax in axes.ravel()[n_axes:]:
        ax.axis("off")
    heat_axes = axes.ravel()[int(sample):n_axes]
    if sample:
        ax = axes.ravel()[0]
        z, colour = first["sample_z"], first["sample_s"]
        name = str(first["sample_colour"]) if "sample_colour" in first else "s(x)"
        points = ax.scatter(z[:, 0], z[:, 1], c=colour, s=3, cmap="coolwarm", vmin=0.0, vmax=1.0, linewidths=0)
        ax.set_xlim(extent[0], extent[1])
        ax.set_ylim(extent[2], extent[3])
        ax.set_title(f"(a) the data: {len(z)} training targets", fontsize=9)
        ax.set_xlabel("z1")
        ax.set_ylabel("z2")
        fig.colorbar(points, ax=ax, label=name)
    for ax, (title, values) in zip(heat_axes, panels):
        image = ax.imshow(values, origin="lower", extent=extent, aspect="auto", vmin=0.0, vmax=top, cmap="viridis")
        ax.set_title(f"(b) {title}" if sample else title)
        ax.set_xlabel("z1")
        ax.set_ylabel("z2")
        fig.colorbar(image, ax=ax)  # every panel has the same vmin / vmax: one colour scale
    x = np.asarray(first["x"])
    where = f"x = {x[0]:g} (every feature)" if np.all(x == x[0]) else f"x = {np.round(x, 3).tolist()}"
    fig.suptitle(f"{'(b) ' if sample else ''}f(z | x) at {where}, one colour scale (0 .. {top:.3g})")
    return png_bytes(fig)


def density_at_x_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per estimator: ISE at x, relative direct loss +- SE on the test set, NLL, 90 % coverage, fit time."""
    columns = ["estimator", "ise_at_x", "rel_loss_direct", "rel_loss_direct_se", "nll", "coverage90", "fit_seconds"]
    present = [c for c in columns if c in results]
    return results[present].sort_values("ise_at_x" if "ise_at_x" in present else "estimator").reset_index(drop=True)


def _number(value):
    """3.0 -> 3 (a column with NaN for another family turns integers into floats)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def setting_labels(results: pd.DataFrame) -> pd.Series:
    """A short name of every job's data-set setting: the data set and the parameters that vary among the
    jobs of that data set (``surd nz=3 d=[1.0, 1.0, 1.0]``); seeds do not make settings."""
    params = [c for c in results.columns if c.startswith(PARAM) and "[" not in c]
    labels = pd.Series(results["dataset"].astype(str), index=results.index)
    for dataset, rows in results.groupby("dataset"):
        varied = [c for c in params if rows[c].nunique() > 1]
        for i, row in rows.iterrows():
            parts = [f"{c.removeprefix(PARAM)}={_number(row[c])}" for c in varied]
            labels[i] = " ".join([str(dataset), *parts])
    return labels


def direct_vs_approx_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per job: setting, estimator, seed, relative direct and approximate loss +- SE, and their paired
    difference (direct - approximate, relative, +- SE over test points) with its z = difference / SE."""
    needed = ["rel_loss_direct", "rel_loss_approx", "direct_minus_approx", "zero_loss"]
    usable = results.dropna(subset=[c for c in needed if c in results])
    if usable.empty or not set(needed) <= set(results):
        raise ValueError("no job with both a direct and an approximate loss (needs synthetic data)")
    table = pd.DataFrame({
        "setting": setting_labels(usable), "estimator": usable["estimator"], "seed": usable["seed"],
        "rel_loss_direct": usable["rel_loss_direct"], "rel_loss_direct_se": usable["rel_loss_direct_se"],
        "rel_loss_approx": usable["rel_loss_approx"], "rel_loss_approx_se": usable["rel_loss_approx_se"],
        "rel_direct_minus_approx": usable["direct_minus_approx"] / usable["zero_loss"],
        "rel_direct_minus_approx_se": usable["direct_minus_approx_se"] / usable["zero_loss"],
    })
    table["z"] = table["rel_direct_minus_approx"] / table["rel_direct_minus_approx_se"]
    return table.sort_values(["setting", "estimator", "seed"]).reset_index(drop=True)


def direct_vs_approx_plot(table: pd.DataFrame) -> bytes:
    """PNG: direct against approximate relative loss, SE bars both ways, the identity line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 6))
    markers = dict(zip(sorted(table["setting"].unique()), "osD^vP*X"))
    colours = dict(zip(sorted(table["estimator"].unique()), plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for (setting, estimator), rows in table.groupby(["setting", "estimator"]):
        ax.errorbar(rows["rel_loss_approx"], rows["rel_loss_direct"], xerr=rows["rel_loss_approx_se"],
                    yerr=rows["rel_loss_direct_se"], fmt=markers[setting], color=colours[estimator], ms=5,
                    capsize=2, alpha=0.8, linestyle="none")
    values = table[["rel_loss_approx", "rel_loss_direct"]].to_numpy(float)
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    pad = 0.05 * (hi - lo or 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="grey", linestyle="--", label="identity")
    for estimator, colour in colours.items():
        ax.plot([], [], "o", color=colour, label=estimator)
    for setting, marker in markers.items():
        ax.plot([], [], marker, color="black", fillstyle="none", label=setting)
    ax.set_xlabel("approximate relative CDE loss (held-out targets), +- SE")
    ax.set_ylabel("direct relative CDE loss (true density), +- SE")
    ax.set_title("direct vs approximate loss: one point per estimator, setting and seed", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, frameon=False, loc="upper left")
    fig.tight_layout()
    return png_bytes(fig)


def target_set_label(row: pd.Series) -> str:
    """``sample3: r1,r2 (2-D)`` from a XANES job's data-set parameters."""
    targets = json.loads(row[PARAM + "targets"]) if isinstance(row.get(PARAM + "targets"), str) else []
    return f"{row.get(PARAM + 'sample', '?')}: {','.join(targets)} ({len(targets)}-D)"


def _per_point(job_dir: str) -> dict[str, np.ndarray]:
    path = Path(job_dir) / "per_point.npz"
    if not path.is_file():
        raise ValueError(f"{path} is missing: run the jobs with cde.save_per_point=true (experiment=cde_xanes does); "
                         "if they had it, the file was deleted: run the sweep again (a job whose files are gone "
                         "runs again) or with force=true")
    return _job_arrays(path)


def _job_arrays(path: Path) -> dict[str, np.ndarray]:
    """The arrays a job saved (``density_at_x.npz``, ``per_point.npz``); one that cannot be read (cut short by
    a full disk or a killed job: numpy's ``BadZipFile``) is named with the fix."""
    import zipfile

    try:
        with np.load(path) as npz:
            return {key: npz[key] for key in npz.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"{path} cannot be read ({exc}); re-run that job or delete its folder") from None


def xanes_tables(results: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table, winners). ``table``: per target set and estimator, over the test points of every seed pooled,
    the approximate loss and NLL (mean +- SE), HDR coverage 50 / 90 %, mean fit seconds, and the paired
    difference of the estimator's per-point approximate loss minus the winner's (same seed, same test
    points; +- SE, z). ``winners``: per target set the winner, the runner-up and the winning margin."""
    results = results.assign(target_set=results.apply(target_set_label, axis=1))
    rows, winners = [], []
    for target_set, jobs in results.groupby("target_set"):
        points = {(r.estimator, r.seed): _per_point(r.job_dir) for r in jobs.itertuples()}
        estimators = sorted(jobs["estimator"].unique())
        seeds = sorted(set.intersection(*(set(jobs.loc[jobs["estimator"] == e, "seed"]) for e in estimators)))
        if not seeds:
            raise ValueError(f"{target_set}: no seed that every estimator finished")
        pooled = {e: {key: np.concatenate([points[e, s][key] for s in seeds]) for key in ("loss_approx", "nll", "hpd")}
                  for e in estimators}
        best = min(estimators, key=lambda e: pooled[e]["loss_approx"].mean())
        for e in estimators:
            loss, nll, hpd = pooled[e]["loss_approx"], pooled[e]["nll"], pooled[e]["hpd"]
            if loss.shape != pooled[best]["loss_approx"].shape:
                raise ValueError(f"{target_set}: {e} and {best} were scored on different test points")
            diff = loss - pooled[best]["loss_approx"]
            diff_se = float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else float("nan")
            rows.append({
                "target_set": target_set, "estimator": e, "n_seeds": len(seeds), "n_test_points": int(loss.size),
                "loss_approx": float(loss.mean()), "loss_approx_se": _se(pd.Series(loss)),
                "nll": float(nll.mean()), "nll_se": _se(pd.Series(nll)),
                "coverage50": float(np.mean(hpd <= 0.5)), "coverage90": float(np.mean(hpd <= 0.9)),
                "fit_seconds": float(jobs.loc[jobs["estimator"] == e, "fit_seconds"].mean()),
                "minus_best": float(diff.mean()), "minus_best_se": diff_se,
                "z": float(diff.mean() / diff_se) if diff_se > 0 else float("nan"),
            })
        mine = pd.DataFrame([r for r in rows if r["target_set"] == target_set]).sort_values("loss_approx")
        runner = mine.iloc[1] if len(mine) > 1 else None
        winners.append({
            "target_set": target_set, "winner": best, "loss_approx": float(mine.iloc[0]["loss_approx"]),
            "runner_up": None if runner is None else runner["estimator"],
            "margin": None if runner is None else runner["minus_best"],
            "margin_se": None if runner is None else runner["minus_best_se"],
            "margin_z": None if runner is None else runner["z"],
            "best_nll": mine.sort_values("nll").iloc[0]["estimator"],
        })
    table = pd.DataFrame(rows).sort_values(["target_set", "loss_approx"]).reset_index(drop=True)
    return table, pd.DataFrame(winners)


def xanes_plot(table: pd.DataFrame) -> bytes:
    """PNG: per target set, every estimator's paired approximate-loss difference to the winner, +- SE."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = list(table.groupby("target_set"))
    cols = min(3, len(sets))
    rows = int(np.ceil(len(sets) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False)
    for ax in axes.ravel()[len(sets):]:
        ax.axis("off")
    for ax, (target_set, part) in zip(axes.ravel(), sets):
        part = part.sort_values("estimator")
        ax.barh(part["estimator"], part["minus_best"], xerr=np.nan_to_num(part["minus_best_se"]), capsize=3,
                color=["tab:green" if v == 0 else "tab:blue" for v in part["minus_best"]])
        ax.axvline(0.0, color="grey", linewidth=0.8)
        ax.set_title(target_set, fontsize=9)
        ax.set_xlabel("approx. loss minus the winner's (paired), +- SE", fontsize=8)
        ax.grid(alpha=0.3, axis="x")
    fig.suptitle("XANES: how far each estimator is behind the winner (0 = winner; lower is better)", fontsize=10)
    fig.tight_layout()
    return png_bytes(fig)


def cde_study(study: str, sweep_dir: Path) -> tuple[str, pd.DataFrame, bytes | None]:
    """(markdown, table, PNG) of one CDE study on the jobs of ``sweep_dir``."""
    from xmlthresh.report.tables import to_markdown

    results = load_cde_results(Path(sweep_dir))
    if results.empty:  # a page saying "no finished CDE runs" read like a study of nothing
        raise InputError(f"the {study} study reads CDE jobs (task=cde), and {sweep_dir} has no finished one")
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
    if study == "cde_direct_vs_approx":
        table = direct_vs_approx_table(results)
        inside = float(np.mean(np.abs(table["z"]) <= 2.0))
        text = (f"# Direct vs approximate relative CDE loss\n\n{len(table)} jobs from `{sweep_dir}`. Both losses are "
                f"relative to the zero estimator (0 = the zero estimator, -1 = the true density); the difference is "
                f"paired over the same test points. {inside:.0%} of the jobs have |z| <= 2 (the approximate loss "
                f"is unbiased for the direct one).\n\n{to_markdown(table, 4)}")
        return text, table, direct_vs_approx_plot(table)
    if study == "cde_xanes":
        other = sorted({str(name) for name in results.get("dataset", pd.Series(dtype=object)) if name != "xanes"})
        if other:  # a page about "the XANES data" of SURD jobs, its target set "?", was written without a word
            raise InputError(f"the cde_xanes study reads jobs on the XANES data (cde_dataset=xanes), and {sweep_dir} "
                             f"has jobs on {', '.join(other)} (experiment=cde_xanes runs the study's sweep)")
        table, winners = xanes_tables(results)
        text = (f"# Every estimator on the XANES data\n\n{len(results)} runs from `{sweep_dir}`; per target set the "
                f"test points of all seeds are pooled. loss_approx = mean of int f^2 - 2 f^(z_i | x_i) (lower is "
                f"better; no true density, so no relative loss); minus_best = the paired difference of the "
                f"per-point loss to the winner's on the same test points, z = minus_best / SE.\n\n"
                f"## Winners\n\n{to_markdown(winners, 4)}\n## Per target set and estimator\n\n{to_markdown(table, 4)}")
        return text, table, xanes_plot(table)
    raise ValueError(f"unknown CDE study {study!r}; known: {', '.join(CDE_STUDIES)}")
