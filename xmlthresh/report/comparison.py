"""Comparison reports from tracked runs: ``python -m xmlthresh.report``.

Reads the MLflow store and writes, for a sweep (its parent run) or a whole experiment, one comparison table
with rows dataset x strategy (x protocol) and columns F-macro, macro-F, bounds, gap and seconds -- as
markdown, CSV, a PNG and a self-contained interactive HTML page (:mod:`xmlthresh.report.html`: sortable
table, plotly figures, links to the MLflow runs, provenance). Numeric sweep parameters are the x axis of line
plots, and nothing but seeds is ever pooled (:mod:`xmlthresh.report.figures`). Runs that differ only in ``seed``
are repetitions (also in the seeds that follow it, such as ``dataset.seed`` or ``seeds.*``): the table shows
their mean with a standard error, and, per data set, the paired difference of every strategy to a reference
strategy (same data set, protocol and seed) with its standard error.

    python -m xmlthresh.report                       # the latest sweep of the default store
    python -m xmlthresh.report --sweep <parent id>   # one sweep
    python -m xmlthresh.report --all                 # every finished run of the experiment
    python -m xmlthresh.report --results <sweep dir> # a sweep's jobs from their result.json (no MLflow)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from xmlthresh._util.files import folder_as_one_unit, write_bytes_atomic, write_text_atomic
from xmlthresh.report.tables import (KEYS, METRICS, CDE_KEYS, CDE_METRICS, comparison, load_runs, paired_differences, to_markdown)
from xmlthresh.tracking.mlflow_runs import runs_table

__all__ = ["write_report", "main", 'KEYS', 'METRICS', 'CDE_KEYS', 'CDE_METRICS', 'comparison', 'load_runs', 'paired_differences', 'to_markdown']


def write_report(runs: pd.DataFrame, out_dir: Path, reference: str = "domain", title: str = "xmlthresh report",
                 command: str | None = None, ui_url: str | None = None, sweep: str | None = None,
                 run_data: Callable[[str], tuple[dict, dict]] | None = None) -> dict:
    """Write comparison.md/.csv/.html (+ comparison.png) into ``out_dir``; returns the paths.

    The figures follow :func:`xmlthresh.report.figures.figure_specs` (line plots over numeric sweep
    parameters, bars otherwise; never an average over a swept parameter); ``comparison.html`` is the
    interactive page of :mod:`xmlthresh.report.html`, ``command`` its provenance's command line and ``ui_url``
    the MLflow UI its run links point to; ``sweep`` (default: the sweep ``load_runs`` selected) the parent run
    whose children the page's link to the UI's runs table shows; ``run_data(run_id)`` (a run's params and
    metrics, :func:`xmlthresh.report.achievable.mlflow_run_data`) lets the page draw the achievable set of
    each ranked-list data set with the strategies' operating points. plotly.js is one file beside the page
    (``plotly.min.js``, written once per folder: :func:`xmlthresh.report.html.write_plotlyjs`), so the page
    stays small and still works offline."""
    from xmlthresh.report.figures import comparison_png, figure_specs
    from xmlthresh.report.html import (DEFAULT_UI_URL, PLOTLY_FILE, achievable_html, comparison_page, provenance,
                                       write_plotlyjs)

    if "run_dir" in runs:  # runs read from their result.json files: the page links each to its file
        attrs = dict(runs.attrs)
        runs = runs.assign(result_link=[Path(os.path.relpath(Path(folder, "result.json"), Path(out_dir).resolve()))
                                        .as_posix() for folder in runs["run_dir"]])
        runs.attrs.update(attrs)
    table = comparison(runs)
    diffs = paired_differences(runs, reference)
    headline = table.attrs.get("headline", "f_macro")
    columns = table.attrs.get("keys", KEYS) + table.attrs.get("metrics", METRICS) + [f"{headline}_seeds_se", "n_runs",
                                                                                     "bounds_objective"]
    shown = table[[c for c in columns if c in table and table[c].notna().any()]] if not table.empty else table
    markdown = f"# {title}\n\n{to_markdown(shown)}"
    if not diffs.empty:
        markdown += f"\n## Paired differences to `{reference}` (F-macro)\n\n{to_markdown(diffs)}"
    names = {"markdown": "comparison.md", "csv": "comparison.csv", "html": "comparison.html"}
    specs = figure_specs(runs)
    png = comparison_png(runs, specs) if specs else None
    if png is not None:
        names["png"] = "comparison.png"
    achievable = ""
    if run_data is not None and not runs.empty:  # CDE tables have no (precision, recall): no picture
        achievable = achievable_html(runs, run_data)
    page = comparison_page(runs, table, diffs, specs, title=title, provenance_facts=provenance(command),
                           ui_url=ui_url or DEFAULT_UI_URL, png=png, sweep=sweep or runs.attrs.get("sweep"),
                           extra_html=achievable)
    # the report's files appear together or not at all (a full disk half-way left a partial folder)
    with folder_as_one_unit(out_dir) as staging:
        write_text_atomic(staging / names["markdown"], markdown)
        write_text_atomic(staging / names["csv"], shown.to_csv(index=False))
        if png is not None:
            write_bytes_atomic(staging / names["png"], png)
        # the page loads plotly.js from the file beside it, shared by the folder's pages: written once
        if "<script src=" in page and write_plotlyjs(staging, current_in=out_dir) is not None:
            names["plotly"] = PLOTLY_FILE
        write_text_atomic(staging / names["html"], page)
    return {key: out_dir / name for key, name in names.items()}


PROG = "python -m xmlthresh.report"
#: MLflow's documented limits on a tracking server's requests, for this command only: a server that answers
#: the health check but not the API fails within seconds instead of after minutes of retries
HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}


def _nothing_selected(uri: str | None, experiment: str, sweep: str | None) -> str:
    """The one-line reason a report has no rows: an unknown experiment or sweep id (with the known ones), or a
    selection without finished job runs."""
    from xmlthresh.tracking.mlflow_runs import default_tracking_uri, experiment_names

    table = runs_table(uri, experiment)
    if table.empty and experiment not in experiment_names(uri):
        known = ", ".join(repr(name) for name in experiment_names(uri)) or "none"
        return (f"no experiment {experiment!r} in the store {uri or default_tracking_uri()} (experiments: {known}); "
                "give --experiment, or --uri of the store the runs went to")
    parents = (table[table["tags.xmlthresh.sweep"] == "parent"].sort_values("start_time", ascending=False)
               if "tags.xmlthresh.sweep" in table else table.iloc[0:0])
    if sweep is not None and sweep not in set(parents["run_id"]):
        job = table[table["run_id"] == sweep] if "run_id" in table else table.iloc[0:0]
        parent = job["tags.mlflow.parentRunId"].iloc[0] if not job.empty and "tags.mlflow.parentRunId" in job else None
        if isinstance(parent, str) and parent:  # a job's run id, given for its sweep's
            return f"{sweep!r} is the run of one job of the sweep {parent}; pass --sweep {parent}"
        known = ", ".join(parents["run_id"].head(5)) or "none"
        return f"no sweep with parent run id {sweep!r} in experiment {experiment!r} (latest sweeps: {known})"
    where = f"sweep {sweep}" if sweep is not None else (f"experiment {experiment!r}" if parents.empty
                                                         else f"the latest sweep ({parents['run_id'].iloc[0]})")
    return f"no finished job runs in {where}: nothing to report"


def check_selection(runs: pd.DataFrame, reference: str | None, metrics: Sequence[str],
                    metrics_option: str = "--metrics") -> None:
    """Refuse, in one :class:`~xmlthresh._util.errors.InputError`, a ``--reference`` strategy none of the
    selected runs used and a ``--metrics`` name none of them logged (both were silently ignored);
    ``metrics_option`` is how the metrics were given (a sweep's ``report.metrics``)."""
    from xmlthresh._util.errors import InputError

    if reference is not None and "strategy" in runs and reference not in set(runs["strategy"].dropna()):
        known = ", ".join(sorted(set(runs["strategy"].dropna()))) or "none"
        raise InputError(f"--reference {reference!r}: no selected run used that strategy (strategies: {known})")
    missing = [name for name in metrics if name not in runs or not runs[name].notna().any()]
    if missing:
        logged = sorted(column[len("metrics."):] for column in runs.attrs.get("logged_metrics", []))
        hint = f" (logged: {', '.join(logged[:30])}{', ...' if len(logged) > 30 else ''})" if logged else ""
        raise InputError(f"{metrics_option}: no selected run logged {', '.join(map(repr, missing))}{hint}")


def check_page_arguments(title: str, ui_url: str | None) -> None:
    """An empty ``--title`` (a page headed by nothing) and a ``--ui-url`` that is not an http(s) address (every
    run link broken) are :class:`~xmlthresh._util.errors.InputError`."""
    from xmlthresh._util.errors import InputError

    if not title.strip():
        raise InputError("--title is empty; give the page a title (default: 'xmlthresh report')")
    if ui_url is not None and not ui_url.startswith(("http://", "https://")):
        raise InputError(f"--ui-url {ui_url!r} is not an http(s) address; give the MLflow UI's, e.g. "
                         "http://127.0.0.1:5000")


def output_dir(path: Path) -> Path:
    """``path`` created when missing, or a :class:`~xmlthresh._util.files.WriteFailedError` naming it and why
    (a file in the way, no permission): a bad ``--out`` was a raw traceback."""
    from xmlthresh._util.files import WriteFailedError

    import errno

    existing = path  # the folder itself is made with the report's files (write_report): nothing is made here
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    problem = None
    if existing == path and not path.is_dir():
        problem = errno.EEXIST
    elif not existing.is_dir():
        problem = errno.ENOTDIR
    if problem is not None:
        raise WriteFailedError(problem, f"--out {path}: cannot create the report folder there "
                                        f"({os.strerror(problem)}); give another --out")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise WriteFailedError(13, f"--out {path}: the folder is not writable; give another --out")
    return path


def parser() -> argparse.ArgumentParser:
    """The command line of ``python -m xmlthresh.report``."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", default=None, help="MLflow tracking URI (default: sqlite:///<project>/runs/mlflow.db)")
    parser.add_argument("--experiment", default="xmlthresh")
    selection = parser.add_mutually_exclusive_group()  # --all with --sweep silently meant --sweep
    selection.add_argument("--sweep", default=None, help="parent run id of a sweep (default: the latest sweep)")
    selection.add_argument("--all", action="store_true", help="every finished run of the experiment")
    selection.add_argument("--results", default=None, metavar="SWEEP_DIR", help="a sweep folder: the page from its "
                           "jobs' result.json files, without MLflow (a sweep run with tracking.enabled=false; "
                           "default --out: SWEEP_DIR/report)")
    parser.add_argument("--reference", default=None, help="strategy the paired differences refer to (default: "
                        "domain, when the selection has it)")
    parser.add_argument("--out", default=None, help="output directory (default: runs/reports/<sweep or all>)")
    parser.add_argument("--metrics", nargs="*", default=[], help="extra metrics to show (e.g. region_dF)")
    parser.add_argument("--title", default="xmlthresh report", help="the page's and the markdown's title")
    parser.add_argument("--ui-url", default=None, help="the MLflow UI the page links runs to (default: make ui's "
                        "http://127.0.0.1:5000)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m xmlthresh.report``: exit code 0 with the report written, or 1 and one line on stderr naming
    the problem (a store that cannot be read, an unknown experiment, sweep, reference or metric, an output
    folder that cannot be written)."""
    args = parser().parse_args(argv)
    set_here = {key: value for key, value in HTTP_DEFAULTS.items() if key not in os.environ}
    os.environ.update(set_here)
    from xmlthresh._util.errors import first_line, user_error_types
    from xmlthresh.tracking.mlflow_runs import mlflow_error_types

    from xmlthresh._util.files import WRITE_ELSEWHERE

    token = WRITE_ELSEWHERE.set("--out")  # the report's own setting of where it writes
    try:
        return report(args, argv)
    except user_error_types() + mlflow_error_types() as exc:
        print(f"{PROG}: error: {first_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: the page is written as one unit, so none is left half-made
        print(f"{PROG}: interrupted; no report was written", file=sys.stderr)
        return 130
    finally:  # called as a function (tests, scripts), the process keeps its own MLflow settings
        WRITE_ELSEWHERE.reset(token)
        for key in set_here:
            os.environ.pop(key, None)


def report(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """The report the parsed command line asks for (see :func:`main`)."""
    if args.results is not None:
        return _report_from_results(args, argv)
    from xmlthresh.tracking.mlflow_runs import default_tracking_uri, open_store
    from xmlthresh.tracking.store import check_store_exists

    check_store_exists(args.uri or default_tracking_uri())
    open_store(args.uri, repair=False)  # a report reads: it never repairs or replaces a store
    check_page_arguments(args.title, args.ui_url)
    if args.out is not None and not args.out.strip():  # an empty --out was read as no --out at all
        from xmlthresh._util.errors import InputError

        raise InputError("--out is empty; give a folder, or leave --out out for runs/reports/<sweep or all>")
    runs = load_runs(args.uri, args.experiment, sweep=args.sweep, latest_sweep=not args.all, metrics=args.metrics)
    if runs.empty:  # an empty report would look like a sweep that ran nothing: say what was selected instead
        print(f"{PROG}: error: {_nothing_selected(args.uri, args.experiment, args.sweep)}", file=sys.stderr)
        return 1
    check_selection(runs, args.reference, args.metrics)
    from xmlthresh._util.paths import runs_dir

    out = output_dir(Path(args.out) if args.out is not None else
                     runs_dir() / "reports" / (args.sweep or ("all" if args.all else "latest")))
    command = " ".join([PROG, *(argv if argv is not None else sys.argv[1:])])
    from xmlthresh.report.achievable import mlflow_run_data

    paths = write_report(runs, out, reference=args.reference or "domain", title=args.title, command=command,
                         ui_url=args.ui_url, run_data=mlflow_run_data(args.uri))
    print(paths["markdown"].read_text())
    print("written: " + ", ".join(str(p) for p in paths.values()))
    return 0


def _report_from_results(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """``--results SWEEP_DIR``: the page of a sweep folder's jobs, read from their ``result.json`` files."""
    from xmlthresh._util.errors import InputError
    from xmlthresh.report.achievable import results_run_data
    from xmlthresh.report.tables import load_results

    folder = Path(args.results)
    if not folder.is_dir():
        raise InputError(f"--results {folder}: no such folder; give a sweep folder (runs/multirun/<date>/<time>)")
    check_page_arguments(args.title, args.ui_url)
    runs = load_results(folder, metrics=args.metrics)
    if runs.empty:
        print(f"{PROG}: error: --results {folder}: no job folder with a result.json of a finished job "
              "(<sweep dir>/<job number>/result.json): nothing to report", file=sys.stderr)
        return 1
    check_selection(runs, args.reference, args.metrics)
    out = output_dir(Path(args.out) if args.out else folder / "report")
    command = " ".join([PROG, *(argv if argv is not None else sys.argv[1:])])
    paths = write_report(runs, out, reference=args.reference or "domain", title=args.title, command=command,
                         run_data=results_run_data(folder))
    print(paths["markdown"].read_text())
    print("written: " + ", ".join(str(p) for p in paths.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
