#!/usr/bin/env python
"""The library API on an extreme-classification score matrix: ``fit_thresholds`` and ``ThresholdResult.predict``
on sparse top-k CSR scores that are never densified.

Default problem: 10^5 labels x 2 x 10^4 documents, top-50 scores per document (10^6 stored scores; as a
dense float matrix it would take 16 GB), simulated by ``synthetic_xmc`` (power-law label frequencies,
``labels_per_doc`` labels per document, relevant pairs score ``signal`` + N(0, 1) and are among the ranker's
candidates). A validation split fits the thresholds, an independent test split of the same size is
predicted. Generation is not timed.

Steps, each timed (wall and CPU, median of ``--repeats``) with the peak RSS of the process during the step
(kernel high-water mark reset before it, as in ``run.py``; ``common.measure``):

* ``fit_thresholds`` on the validation split (input checks, ranking, candidates, the exact sweep, report);
* ``predict`` on the test split (boolean CSR) and its F-macro (``f_macro_score``);
* the same with ``include_predict_all=False`` (a label that predicts every document is a full column of the
  prediction matrix: with many of them the prediction, not the fit, dominates memory).

The process's peak RSS over the whole run is ``resource.getrusage`` ``ru_maxrss`` (and the peaks before each
reset). Output: a markdown report on stdout and in ``--out`` (default ``benchmarks/api_sparse.md``).

    .venv/bin/python benchmarks/api_sparse.py                      # 10^5 labels x 2 x 10^4 documents, top 50
    .venv/bin/python benchmarks/api_sparse.py --labels 1e4 --docs 2e3 --repeats 1 --out /tmp/a.md
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402  (benchmarks/ is not a package)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=float, default=1e5, help="number of labels")
    parser.add_argument("--docs", type=float, default=2e4, help="documents per split (validation and test)")
    parser.add_argument("--top-k", type=int, default=50, help="stored scores per document")
    parser.add_argument("--labels-per-doc", type=float, default=5.0)
    parser.add_argument("--signal", type=float, default=2.0, help="ranker quality (0 = random)")
    parser.add_argument("--strategy", default="domain")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "api_sparse.md")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import numpy as np

    import xmlthresh
    from xmlthresh.datasets.synthetic_xmc import generate_xmc_scores

    machine = common.machine_description()
    n_labels, n_docs = int(args.labels), int(args.docs)
    started = time.perf_counter()
    data = generate_xmc_scores(n_labels=n_labels, num_docs=n_docs, labels_per_doc=args.labels_per_doc,
                               signal=args.signal, top_k=args.top_k, seed=args.seed)
    generate_s = time.perf_counter() - started
    validation, test = data.splits["validation"], data.splits["test"]
    S_val, Y_val, S_test, Y_test = validation.scores, validation.labels, test.scores, test.labels
    # JIT compilation outside the timings (numba caches on disk; the first run of a checkout compiles)
    xmlthresh.fit_thresholds(S_val[:200], Y_val[:200], args.strategy).predict(S_test[:200])
    rss_before = common.rss_mb()

    rows, facts = [], {}
    for predict_all in (True, False):
        variant = "" if predict_all else ", include_predict_all=False"
        fit, result = common.measure(
            lambda: xmlthresh.fit_thresholds(S_val, Y_val, args.strategy, include_predict_all=predict_all),
            args.repeats)
        predict, pred = common.measure(lambda: result.predict(S_test), args.repeats)
        f_test = xmlthresh.f_macro_score(Y_test, pred)
        n_all = int(np.count_nonzero(result.thresholds == -np.inf))
        n_never = int(np.count_nonzero(result.thresholds == np.inf))
        bounds = "" if result.upper_bound is None else f" <= {result.upper_bound:.7f}"
        rows.append([f"fit_thresholds ({args.strategy}{variant}), validation", common.fmt_s(fit.wall_s),
                     common.fmt_s(fit.cpu_s), common.fmt_mb(fit.peak_mb), common.fmt_mb(fit.extra_mb),
                     f"F-macro {result.f_macro:.7f}{bounds}; {n_all:,} labels predict all, {n_never:,} never"])
        rows.append([f"predict{variant}, test", common.fmt_s(predict.wall_s), common.fmt_s(predict.cpu_s),
                     common.fmt_mb(predict.peak_mb), common.fmt_mb(predict.extra_mb),
                     f"{pred.nnz:,} predicted pairs; test F-macro {f_test:.7f}"])
        facts[predict_all] = (fit, predict)
        del pred

    peak = common.max_rss_mb()
    nnz = S_val.nnz
    header = ["step", "wall [s]", "CPU [s]", "peak RSS [MB]", "(+ over RSS before)", "result"]
    lines = [
        "# Library API on sparse top-k scores (`benchmarks/api_sparse.py`)",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on: "
        + ", ".join(f"{key} {value}" for key, value in machine.items()) + ".",
        "",
        f"Command: `{common.command_line()}`",
        "",
        f"Problem: {n_labels:,} labels x {n_docs:,} documents per split, top-{args.top_k} scores per document "
        f"({nnz:,} stored scores in the validation CSR; dense float64 would be "
        f"{8 * n_labels * n_docs / 1e9:.3g} GB), {int(Y_val.nnz):,} relevant pairs "
        f"({int((np.asarray(Y_val.sum(axis=0)).ravel() > 0).sum()):,} labels with a relevant document); "
        f"generated in {generate_s:.1f} s (not timed). Median of {args.repeats} repetition(s); the machine may be "
        "shared, CPU times are the ones to compare.",
        "",
        common.markdown_table(header, rows),
        "",
        f"Process peak RSS over the whole run (`ru_maxrss`, data and imports included): **{peak:.0f} MB** "
        f"(RSS after generating the data and compiling: {rss_before:.0f} MB). Target < 2 GB: "
        f"{'met' if peak < 2048 else '**missed**'}.",
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
