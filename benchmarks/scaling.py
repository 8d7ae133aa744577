#!/usr/bin/env python
"""Scaling study: time of the strategies against the number of candidates, on synthetic extreme-scale lists.

The generator ``synthetic_large`` (:func:`xmlthresh.datasets.synthetic_large.generate_ranked_lists_direct`)
drives the size: 10^3 .. 10^6 labels in half decades with mean s_k = 13, i.e. about 10 relevant documents
per label in the lists -- M = 10^4 .. 10^7 candidates (relevant documents in the lists, before the Pareto
reduction) -- and, opt-in with ``--max-candidates 1e8``, 10^6 labels with 3 x 10^7 and 10^8.

Each point runs in its own worker subprocess (its peak RSS is the point's peak memory) and times, end
to end on a fresh copy of the generated lists (candidates and hull chains built inside the timing, as a
user pays after loading): ``domain``, ``domain_fast`` (100 directions), ``linearization`` (bisection),
``coordinate`` and ``independent``; plus the shared part (Pareto candidates + hull chains) and the sort
floor (one ``np.sort`` of the candidates' precision values) for reference. Median of ``--repeats`` CPU times
(the machine may be shared; wall times are recorded too). Generation is not timed.

Output (``--out-dir``, default ``benchmarks/``): ``scaling.png`` (log-log time vs candidates per strategy,
with the fitted slopes) and ``scaling.md`` (table, slopes, machine, command); MLflow run ``scaling`` in the
experiment ``benchmarks`` with the slopes and times as metrics and both files as artifacts (unless
``--no-mlflow``).

The slope of log(time) vs log(M) is fitted by least squares on the points with M >= ``--fit-min`` (fixed
per-call costs dominate below). O(M log M) has a local slope of 1 + 1/ln M (1.07 at M = 10^6); the check
passes when the exact sweep's slope is <= ``--max-slope`` (default 1.25). ``--check`` turns a failed check
into exit code 1.

    .venv/bin/python benchmarks/scaling.py                         # up to 1e7 candidates
    .venv/bin/python benchmarks/scaling.py --max-candidates 1e8    # opt-in: needs ~20 GB
    .venv/bin/python benchmarks/scaling.py --labels 1e3,1e4 --repeats 1 --no-mlflow --out-dir /tmp/s
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (benchmarks/ is not a package)

#: (label, strategy, parameters), timed end to end
STRATEGIES = [
    ("domain", "domain", {}),
    ("domain_fast_100", "domain_fast", {"n_angles": 100}),
    ("linearization_bisection", "linearization", {"search": "bisection"}),
    ("coordinate", "coordinate", {}),
    ("independent", "independent", {}),
]
#: reference curves (not strategies)
REFERENCES = [("candidates_hulls", "candidates + hulls"), ("floor_sort", "np.sort floor")]
GENERATOR = {"num_docs": 1_000_000, "list_length": 1000, "quality": 1.0, "zipf_exponent": 0.8, "seed": 0}
BASE_MEAN = 13.0  # ~10 relevant documents per label in the lists
#: beyond 10^7: 10^6 labels with a larger mean s_k (calibrated: ~3e7 and ~1e8 relevant documents in the lists)
LARGE_POINTS = [(1_000_000, 45.0, 3e7), (1_000_000, 210.0, 1e8)]
MEMORY_PER_CANDIDATE = 200  # bytes of peak memory per candidate (measured ~165 at 1e7) ...
MEMORY_BASE = 500 * 2**20  # ... plus the interpreter and libraries


@dataclass(frozen=True)
class Point:
    n_labels: int
    mean_relevant: float
    nominal: float  # expected relevant documents in the lists

    @property
    def key(self) -> str:
        return f"n{self.n_labels}_s{self.mean_relevant:g}"


def default_points(max_candidates: float, labels: list[float] | None, min_candidates: float = 0.0) -> list[Point]:
    if labels is not None:
        base = [int(round(n)) for n in labels]
    else:
        base = [int(round(10 ** (3 + i / 2))) for i in range(7)]  # 1e3, 3.2e3, ..., 1e6
    points = [Point(n, BASE_MEAN, 10.0 * n) for n in base]
    if labels is None:
        points += [Point(n, mean, nominal) for n, mean, nominal in LARGE_POINTS]
    return [point for point in points if min_candidates * 0.9999 <= point.nominal <= max_candidates * 1.0001]


# ================================================================================================ worker
def worker(point: Point, repeats: int, budget: float, out: Path) -> None:
    import numpy as np

    from xmlthresh.data.candidates import build_candidates
    from xmlthresh.data.hulls import hull_chains
    from xmlthresh.datasets.synthetic_large import generate_ranked_lists_direct
    from xmlthresh.strategies import STRATEGIES as REGISTRY

    def emit(record: dict[str, Any]) -> None:
        with out.open("a") as handle:
            handle.write(json.dumps(record) + "\n")

    for _, name, params in STRATEGIES:
        REGISTRY.get(name)(**params).warm_up()
    started = time.process_time()
    lists = generate_ranked_lists_direct(n_labels=point.n_labels, mean_relevant=point.mean_relevant, **GENERATOR)
    lists, _ = lists.with_relevant_only()
    generation = time.process_time() - started
    shared = build_candidates(lists)
    hulls = hull_chains(shared)
    emit({"type": "point", "relevant_in_lists": int(len(lists.relevant_rank)), "n_candidates": shared.n_candidates,
          "n_hull_edges": hulls.n_edges, "generation_cpu_s": generation})

    def fresh():
        return dataclasses.replace(lists)

    def record(slug: str, timing: common.Timing, **extra: Any) -> None:
        emit({"type": "time", "slug": slug, "cpu": timing.cpu, "wall": timing.wall, "peak_mb": timing.peak_mb,
              **extra})
        print(f"  {point.key}: {slug}: {timing.cpu_s:.4f} s CPU", file=sys.stderr, flush=True)

    def prep(fresh_lists):
        candidates = build_candidates(fresh_lists)
        candidates.precision, candidates.recall  # noqa: B018  (cached properties)
        return hull_chains(candidates)

    timing, _ = common.measure(prep, repeats, prepare=fresh, budget_s=budget)
    record("candidates_hulls", timing)
    precision = shared.precision
    timing, _ = common.measure(lambda: np.sort(precision), repeats)
    record("floor_sort", timing)
    for slug, name, params in STRATEGIES:
        cls = REGISTRY.get(name)
        try:
            timing, model = common.measure(lambda fresh_lists: cls(**params).fit_lists(fresh_lists), repeats,
                                           prepare=fresh, budget_s=budget)
        except MemoryError:
            emit({"type": "skipped", "slug": slug, "reason": "out of memory"})
            continue
        except Exception as exc:
            emit({"type": "skipped", "slug": slug, "reason": f"failed: {type(exc).__name__}: {exc}"[:300]})
            continue
        record(slug, timing, f_macro=model.f_macro_)
    emit({"type": "end", "max_rss_mb": common.max_rss_mb()})


# ================================================================================================ parent
def run_point(point: Point, args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"point": point, "times": {}, "info": {}, "skipped": "", "max_rss_mb": None}
    _, available = common.memory_gb()
    needed = MEMORY_BASE + MEMORY_PER_CANDIDATE * point.nominal
    if available is not None and needed > available * 2**30:
        result["skipped"] = f"needs ~{needed / 2**30:.1f} GB, {available:.1f} GB available"
        return result
    with tempfile.TemporaryDirectory(prefix="xmlthresh-scaling-") as tmp:
        out = Path(tmp) / "records.jsonl"
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(dataclasses.asdict(point)),
                   "--worker-out", str(out), "--repeats", str(args.repeats), "--budget", str(args.budget)]
        print(f"[{point.key}] ~{point.nominal:.0e} candidates ...", file=sys.stderr, flush=True)
        status = ""
        if args.in_process:  # quick checks and tests: no interpreter start-up, peak RSS is the process's so far
            worker(point, args.repeats, args.budget, out)
        else:
            try:
                proc = subprocess.run(command, timeout=args.timeout, stdout=subprocess.DEVNULL)
                status = "" if proc.returncode == 0 else f"worker exit code {proc.returncode}"
            except subprocess.TimeoutExpired:
                status = f"worker timed out after {args.timeout:g} s"
        records = [json.loads(line) for line in out.read_text().splitlines()] if out.is_file() else []
    for rec in records:
        kind = rec.pop("type")
        if kind == "point":
            result["info"] = rec
        elif kind == "time":
            result["times"][rec["slug"]] = rec
        elif kind == "skipped":
            result["times"][rec["slug"]] = {"skipped": rec["reason"]}
        elif kind == "end":
            result["max_rss_mb"] = rec["max_rss_mb"]
    if status:
        result["skipped"] = status if not result["times"] else f"incomplete: {status}"
    return result


def fit_slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log10(y) against log10(x)."""
    if len(xs) < 2:
        return None
    lx, ly = [math.log10(x) for x in xs], [math.log10(max(y, 1e-9)) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    sxx = sum((x - mx) ** 2 for x in lx)
    return None if sxx == 0 else sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / sxx


def series(results: list[dict[str, Any]], slug: str) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for result in results:
        entry = result["times"].get(slug)
        if entry and "cpu" in entry and "relevant_in_lists" in result["info"]:
            xs.append(float(result["info"]["relevant_in_lists"]))
            ys.append(statistics.median(entry["cpu"]))
    return xs, ys


def slopes(results: list[dict[str, Any]], fit_min: float) -> dict[str, tuple[float | None, int]]:
    """Slope per curve on the points with M >= fit_min (all points when fewer than 2 qualify)."""
    out = {}
    for slug, *_ in STRATEGIES + REFERENCES:
        xs, ys = series(results, slug)
        chosen = [(x, y) for x, y in zip(xs, ys) if x >= fit_min]
        if len(chosen) < 2:
            chosen = list(zip(xs, ys))
        out[slug] = (fit_slope([x for x, _ in chosen], [y for _, y in chosen]), len(chosen))
    return out


def plot(results: list[dict[str, Any]], fitted: dict[str, tuple[float | None, int]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5))
    styles = {"candidates_hulls": dict(linestyle="--", color="0.45"), "floor_sort": dict(linestyle=":", color="0.2")}
    names = dict((slug, slug) for slug, *_ in STRATEGIES) | dict(REFERENCES)
    for slug in [s for s, *_ in STRATEGIES] + [s for s, _ in REFERENCES]:
        xs, ys = series(results, slug)
        if not xs:
            continue
        slope = fitted[slug][0]
        label = f"{names[slug]} (slope {slope:.2f})" if slope is not None else names[slug]
        ax.loglog(xs, ys, marker="o", markersize=4, label=label, **styles.get(slug, {}))
    xs, _ = series(results, "floor_sort")
    if xs:  # guide lines through the first floor point: slope 1 and M log M
        _, ys = series(results, "floor_sort")
        x0, y0 = xs[0], ys[0]
        grid = [x0 * (xs[-1] / x0) ** (i / 20) for i in range(21)] if xs[-1] > x0 else [x0]
        ax.loglog(grid, [y0 * 30 * (x / x0) * math.log(x) / math.log(x0) for x in grid], color="0.75",
                  linewidth=4, alpha=0.5, zorder=0, label="∝ M log M (guide)")
    ax.set_xlabel("M = relevant documents in the lists (candidates before the Pareto reduction)")
    ax.set_ylabel("CPU time end to end [s] (median)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def render(results: list[dict[str, Any]], fitted, args, machine: dict[str, str], command: str,
           started: str, seconds: float) -> tuple[str, dict[str, float], bool]:
    metrics: dict[str, float] = {}
    columns = [slug for slug, *_ in STRATEGIES] + [slug for slug, _ in REFERENCES]
    rows = []
    for result in results:
        point, info = result["point"], result["info"]
        cells = [f"{point.n_labels:,}", f"{point.mean_relevant:g}",
                 f"{info['relevant_in_lists']:,}" if info else "–",
                 f"{info['n_candidates']:,}" if info else "–", f"{info['n_hull_edges']:,}" if info else "–"]
        for slug in columns:
            entry = result["times"].get(slug)
            if entry and "cpu" in entry:
                cpu = statistics.median(entry["cpu"])
                cells.append(common.fmt_s(cpu))
                metrics[common.metric_name(slug, "cpu_s", point.key)] = cpu
            elif entry:
                cells.append(f"skipped: {entry['skipped']}")
            else:
                cells.append("–")
        cells.append(common.fmt_mb(result["max_rss_mb"]))
        cells.append(result["skipped"])
        rows.append(cells)
    table = common.markdown_table(
        ["labels", "mean s_k", "M (relevant in lists)", "Pareto candidates", "hull edges", *columns,
         "peak RSS [MB]", "notes"], rows)
    slope_rows = []
    for slug, (slope, count) in fitted.items():
        slope_rows.append([slug, "–" if slope is None else f"{slope:.3f}", str(count)])
        if slope is not None:
            metrics[common.metric_name("slope", slug)] = slope
    dom_slope = fitted.get("domain", (None, 0))[0]
    ok = dom_slope is not None and dom_slope <= args.max_slope
    verdict = ("no domain timings" if dom_slope is None else
               f"exact sweep (`domain`, end to end) slope {dom_slope:.3f} "
               f"{'<=' if ok else '>'} {args.max_slope:g}: "
               + ("consistent with O(M log M)" if ok else "**steeper than O(M log M)**"))
    machine_line = ", ".join(f"{key} {value}" for key, value in machine.items())
    body = "\n".join([
        "# Scaling study: CPU time vs number of candidates",
        "",
        f"Measured {started} in {seconds:.0f} s on: {machine_line}.",
        "",
        f"Command: `{command}`",
        "",
        f"End-to-end CPU time [s] on a fresh copy of the lists (median of {args.repeats}); generator "
        f"`synthetic_large` with {', '.join(f'{k}={v}' for k, v in GENERATOR.items())}; one worker process "
        "per point (peak RSS = its peak over its life).",
        "",
        table,
        "",
        f"Slopes of log(CPU time) vs log(M), least squares on the points with M >= {args.fit_min:.0e}:",
        "",
        common.markdown_table(["curve", "slope", "points"], slope_rows),
        "",
        f"Check: {verdict}.",
        "",
        "![scaling](scaling.png)",
    ])
    return body, metrics, ok


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-candidates", type=float, default=1e7,
                        help="largest nominal number of candidates (default 1e7; 1e8 opt-in)")
    parser.add_argument("--min-candidates", type=float, default=0.0,
                        help="smallest nominal number of candidates (e.g. 3e7 to run only the opt-in points)")
    parser.add_argument("--labels", default=None,
                        help="comma-separated label counts instead of the default grid (mean s_k = 13)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=float, default=120.0,
                        help="CPU seconds: a step whose one run takes longer is not repeated")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds before a point's worker is killed")
    parser.add_argument("--fit-min", type=float, default=1e5, help="fit the slopes on points with M >= this")
    parser.add_argument("--max-slope", type=float, default=1.25, help="largest slope accepted as O(M log M)")
    parser.add_argument("--check", action="store_true", help="exit 1 when the exact sweep's slope is too steep")
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--in-process", action="store_true",
                        help="run the points in this process (faster start; peak RSS is then cumulative)")
    parser.add_argument("--no-mlflow", action="store_true")
    parser.add_argument("--mlflow-uri", default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    labels = [float(x) for x in args.labels.split(",")] if args.labels else None
    args.points = default_points(args.max_candidates, labels, args.min_candidates)
    if not args.points and not args.worker:
        parser.error("no point within --max-candidates")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        worker(Point(**json.loads(args.worker)), args.repeats, args.budget, args.worker_out)
        return 0
    started_at = time.strftime("%Y-%m-%d %H:%M %Z")
    started = time.perf_counter()
    machine = common.machine_description()
    command = common.command_line()
    results = [run_point(point, args) for point in args.points]
    fitted = slopes(results, args.fit_min)
    body, metrics, ok = render(results, fitted, args, machine, command, started_at, time.perf_counter() - started)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    png, md = args.out_dir / "scaling.png", args.out_dir / "scaling.md"
    plot(results, fitted, png, f"xmlthresh scaling, {machine['cpu']}, {machine['cores']} cores "
                               f"(CPU time, median of {args.repeats})")
    md.write_text(body + "\n")
    print(body)
    print(f"\nwritten: {md}, {png}", file=sys.stderr)
    if not args.no_mlflow:
        from xmlthresh.tracking.mlflow_runs import tracked_run

        with tracked_run(True, args.mlflow_uri, experiment="benchmarks", run_name="scaling") as tracker:
            tracker.log_params({"max_candidates": args.max_candidates, "repeats": args.repeats,
                                "fit_min": args.fit_min, "command": command,
                                **{common.metric_name("machine", k): v for k, v in machine.items()},
                                **{f"generator.{k}": v for k, v in GENERATOR.items()}})
            tracker.log_metrics(metrics)
            tracker.log_artifact(png)
            tracker.log_artifact(md)
        print(f"logged {len(metrics)} metrics and the plot to MLflow (experiment 'benchmarks')", file=sys.stderr)
    return 1 if (args.check and not ok) else 0


if __name__ == "__main__":
    sys.exit(main())
