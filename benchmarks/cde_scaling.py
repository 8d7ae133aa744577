#!/usr/bin/env python
"""Scaling of the conditional density estimators: fit / predict CPU time and peak memory against the
number of training points (issue 16; goal: <= 30 s CPU and O(n) memory at 10^5).

Data: SURD with its default options (nx = 10, ny = 1, nz = 2, d = [0.1, 1], a = 0.01, alpha = [0.3, 0.3],
phi = pi) and ``n_train`` = each size, 1000 test points, seed 0. Every (estimator, size) point runs in its
own worker subprocess with one BLAS / OpenMP thread (the machine is shared; CPU time is comparable across
estimators that way) and a time limit (``--timeout``). The worker measures, with ``time.process_time``:

* **fit**: ``estimator.fit`` on the training split (tuning included: every estimator tunes on a validation
  split);
* **predict**: ``predict_density`` at the 1000 test targets;
* **evaluate**: the whole ``evaluate_cde`` of a benchmark run (quadrature with 256 nodes per test point,
  squared norm, densities), for the relative direct loss in the table;

and the peak memory twice: ``tracemalloc`` (Python and numpy allocations during fit + predict) and the
worker's peak RSS (``ru_maxrss``, everything the process held, the interpreter and libraries included).

    .venv/bin/python benchmarks/cde_scaling.py                                  # 2k, 20k, 100k
    .venv/bin/python benchmarks/cde_scaling.py --sizes 2000,20000 --estimators marginal,gmm
    .venv/bin/python benchmarks/cde_scaling.py --sizes 500 --out /tmp/cde_scaling.md   # smoke test

Output: a markdown table (``--out``, default ``benchmarks/cde_scaling.md``) with the machine and the command.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import PROJECT_ROOT, command_line, fmt_mb, fmt_s, machine_description, markdown_table  # noqa: E402

ESTIMATORS = ("marginal", "nnkcde", "ckde", "gmm", "rfcde", "flexcode")
DEFAULT_SIZES = (2000, 20000, 100000)
N_TEST = 1000
ONE_THREAD = {key: "1" for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                   "NUMBA_NUM_THREADS")}


def worker(estimator_name: str, n_train: int, seed: int) -> dict:
    """Fit, predict and evaluate one estimator on SURD with ``n_train`` points; the measurements as a dict."""
    import xmlthresh.config.plugins  # noqa: F401  (estimators of installed plugins, e.g. mdn, resolve by name)
    from xmlthresh.cde.benchmark import load_dataset, make_estimator
    from xmlthresh.cde.metrics import evaluate_cde

    data = load_dataset("surd", seed, n_train=n_train, n_test=N_TEST)
    estimator = make_estimator(estimator_name, data, seed)
    tracemalloc.start()
    cpu0 = time.process_time()
    estimator.fit(data.X_train, data.Z_train)
    fit_cpu = time.process_time() - cpu0
    cpu0 = time.process_time()
    estimator.predict_density(data.X_test, data.Z_test)
    predict_cpu = time.process_time() - cpu0
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    cpu0 = time.process_time()
    evaluation = evaluate_cde(estimator, data.X_test, data.Z_test, true_density=data.true_density,
                              true_squared_norm=data.true_squared_norm, n_samples=256, random_state=seed)
    evaluate_cpu = time.process_time() - cpu0
    return {"estimator": estimator_name, "n_train": n_train, "fit_cpu_s": fit_cpu, "predict_cpu_s": predict_cpu,
            "evaluate_cpu_s": evaluate_cpu, "traced_peak_mb": traced_peak / 2**20,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rel_loss_direct": evaluation.summary["rel_loss_direct"]}


def run_point(estimator_name: str, n_train: int, seed: int, timeout: float) -> dict:
    """One point in its own subprocess; a row with the reason when it fails or times out."""
    env = {**os.environ, **ONE_THREAD, "PYTHONPATH": str(PROJECT_ROOT)}
    cmd = [sys.executable, __file__, "--worker", estimator_name, str(n_train), "--seed", str(seed)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"estimator": estimator_name, "n_train": n_train, "error": f"timeout after {timeout:.0f} s"}
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["exit code %d" % proc.returncode])[-1]
        return {"estimator": estimator_name, "n_train": n_train, "error": last[:120]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(rows: list[dict]) -> str:
    header = ["estimator", "n_train", "fit CPU s", "predict CPU s (1000 rows)", "evaluate CPU s",
              "peak traced MB", "peak RSS MB", "rel. direct loss"]
    body = []
    for row in rows:
        if "error" in row:
            body.append([row["estimator"], str(row["n_train"]), row["error"], "", "", "", "", ""])
            continue
        body.append([row["estimator"], str(row["n_train"]), fmt_s(row["fit_cpu_s"]), fmt_s(row["predict_cpu_s"]),
                     fmt_s(row["evaluate_cpu_s"]), fmt_mb(row["traced_peak_mb"]), fmt_mb(row["max_rss_mb"]),
                     f"{row['rel_loss_direct']:.4f}"])
    return markdown_table(header, body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="training sizes, comma-separated")
    parser.add_argument("--estimators", default=",".join(ESTIMATORS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600.0, help="wall seconds per point")
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "benchmarks" / "cde_scaling.md")
    parser.add_argument("--worker", nargs=2, metavar=("ESTIMATOR", "N_TRAIN"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], int(args.worker[1]), args.seed)))
        return 0
    sizes = [int(float(s)) for s in args.sizes.split(",") if s]
    machine = machine_description()
    rows = []
    for name in [e for e in args.estimators.split(",") if e]:
        for n in sizes:
            row = run_point(name, n, args.seed, args.timeout)
            print(json.dumps(row), flush=True)
            rows.append(row)
    text = (f"# CDE scaling (SURD nz=2, {N_TEST} test points, seed {args.seed}, one thread)\n\n"
            f"{table(rows)}\n\nMachine: {', '.join(f'{k}: {v}' for k, v in machine.items())}.\n\n"
            f"Command: `{command_line()}`\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
