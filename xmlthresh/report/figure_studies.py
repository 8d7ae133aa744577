"""Reports of the reference work's figure presets (chapters 2-3), read from the run directories of a sweep:

* ``argv`` (``experiment=argv``, Fig. 3.1): the ArgV curve of every job (``argv.csv``, written with the run's
  pictures) in one figure against the identity, one line per data set, each fixed point (from the job's
  ``result.json``: ``fixed_point_exists``, ``angle``) marked (open where ArgV jumps across the identity); a
  table of the data sets, their number of labels, whether V has a fixed point, the crossing angle, F-macro.

    python -m xmlthresh.report.studies argv <sweep dir>      # writes <sweep dir>/report/argv.{md,csv,png}
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from xmlthresh._util.errors import InputError
from xmlthresh.report.figures import png_bytes
from xmlthresh.report.result_files import read_result, result_paths
from xmlthresh.report.tables import to_markdown

#: what each figure study report is called (``report.kind``)
FIGURE_STUDIES = ("argv",)


def _jobs(sweep_dir: Path, needed: str) -> list[tuple[Path, dict]]:
    """(job dir, result) of every finished, non-skipped job of the sweep that wrote ``needed``."""
    jobs = []
    for path in result_paths(sweep_dir):
        result = read_result(path)
        if not result.get("skipped") and (path.parent / needed).is_file():
            jobs.append((path.parent, result))
    return jobs


def argv_table(sweep_dir: Path) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """One row per job with an ``argv.csv`` (data set, labels, fixed point, its angle, F-macro) and the curves."""
    rows, curves = [], {}
    for job_dir, result in _jobs(sweep_dir, "argv.csv"):
        label = f"{result.get('dataset', job_dir.name)} (beta {result.get('beta', 1):g})"
        curves[label] = pd.read_csv(job_dir / "argv.csv")
        angle = result.get("angle")
        rows.append({"dataset": result.get("dataset"), "beta": result.get("beta"), "strategy": result.get("strategy"),
                     "n_labels": result.get("n_labels"), "fixed_point_exists": result.get("fixed_point_exists"),
                     "crossing_angle_deg": float(np.degrees(angle)) if angle is not None else np.nan,
                     "f_macro": result.get("f_macro"), "job": job_dir.name})
    return pd.DataFrame(rows), curves


def argv_plot(table: pd.DataFrame, curves: dict[str, pd.DataFrame]) -> bytes:
    """PNG: every data set's ArgV against the identity (degrees), fixed points marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 5.4))
    ax.plot([0, 90], [0, 90], "--", color="0.5", lw=0.8, label="identity")
    for (label, curve), (_, row) in zip(curves.items(), table.iterrows()):
        line, = ax.plot(np.degrees(curve["theta"]), np.degrees(curve["argv"]), drawstyle="steps-post", lw=1.2,
                        label=f"{label}: {row['n_labels']} labels, "
                              + ("fixed point" if row["fixed_point_exists"] else "no fixed point"))
        angle = row["crossing_angle_deg"]
        if np.isfinite(angle):  # filled: a fixed point; open: where ArgV jumps across the identity
            ax.plot(angle, angle, "o", color=line.get_color(), ms=6,
                    mfc=line.get_color() if row["fixed_point_exists"] else "white")
    ax.set_xlim(0, 90)
    ax.set_ylim(0, 90)
    ax.set_xlabel("angle of (P0, R0) [degrees]")
    ax.set_ylabel("angle of V(P0, R0) [degrees]")
    ax.set_title("ArgV of the linearised map (a fixed point where it meets the identity)", fontsize=10)
    ax.legend(fontsize=7, loc="lower left")
    return png_bytes(fig)


def figure_study(study: str, sweep_dir: Path) -> tuple[str, pd.DataFrame, bytes | None]:
    """(markdown, table, PNG) of a figure study."""
    if study not in FIGURE_STUDIES:
        raise ValueError(f"unknown figure study {study!r}; known: {', '.join(FIGURE_STUDIES)}")
    table, curves = argv_table(Path(sweep_dir))
    if table.empty:  # a page saying so read like a study of nothing (the CDE and threshold studies refuse too)
        raise InputError(f"the {study} study reads the argv.csv its jobs draw, and no job of {sweep_dir} wrote one "
                         "(run the sweep with plots=true, experiment=argv does)")
    markdown = (f"# ArgV of the linearised map (reference work, Fig. 3.1)\n\n{len(table)} runs from `{sweep_dir}`."
                f"\n\n{to_markdown(table, 6)}\n![ArgV](argv.png)\n")
    return markdown, table, argv_plot(table, curves)
