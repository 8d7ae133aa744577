"""The jumps of ArgV against the clusters of labels with identical PR curves (the caption of the reference's
Fig. 3.1: "jumps of ArgV = clusters of classes with identical PR curves").

For each data set, :func:`xmlthresh.strategies.linearization.argv_jumps` lists every jump of ArgV (one per
distinct hull-edge key) with the labels that switch at it; the table counts the jumps whose labels form one
cluster of identical PR curves (the same candidate (p, r) points), one cluster of identical count vectors, or
move along one identical edge (dp, dr), and the share of ArgV's total rise that those jumps carry.

    python benchmarks/argv_jumps.py                               # example, espgame, wikilshtc (~40 s)
    python benchmarks/argv_jumps.py --datasets example,espgame
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from xmlthresh.api import load_dataset
from xmlthresh.data.candidates import build_candidates
from xmlthresh.strategies.linearization import argv_jumps, pr_curve_groups


def summary(name: str, beta: float) -> dict:
    """The counts of one data set's row."""
    with warnings.catch_warnings():  # the loaders' data notes (e.g. lists shorter than s_k) are not the point
        warnings.simplefilter("ignore")
        lists = load_dataset(name)
    if (lists.n_relevant == 0).any():
        lists = lists.with_relevant_only()[0]
    candidates = build_candidates(lists)
    curves = np.bincount(pr_curve_groups(candidates))
    jumps = argv_jumps(candidates, beta, lists)
    labels = np.array([len(jump.labels) for jump in jumps])
    size = np.array([jump.size for jump in jumps])
    one_curve = np.array([jump.one_tie_group for jump in jumps])
    one_count = np.array([jump.count_groups == 1 for jump in jumps])
    one_edge = np.array([jump.edge_groups == 1 for jump in jumps])
    several = labels > 1
    top = np.argsort(-size, kind="stable")[:10]
    crossing = [jump for jump in jumps if jump.crossing]
    return {
        "data set": name, "labels": lists.n_labels, "distinct PR curves": len(curves),
        "labels sharing their curve": int(curves[curves > 1].sum()), "jumps": len(jumps),
        "one label": int(np.sum(~several)), "several labels": int(np.sum(several)),
        "several, one curve": int(np.sum(several & one_curve)), "several, one count vector": int(np.sum(several & one_count)),
        "several, one edge": int(np.sum(several & one_edge)),
        "rise in one-curve jumps": float(size[one_curve].sum() / size.sum()) if size.sum() else float("nan"),
        "10 largest: one curve": int(one_curve[top].sum()), "10 largest: one edge": int(one_edge[top].sum()),
        "crossing jump": (f"{len(crossing[0].labels)} label(s), {crossing[0].pr_groups} curve(s)" if crossing
                          else "none (fixed point)"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="example,espgame,wikilshtc")
    parser.add_argument("--beta", type=float, default=1.0)
    args = parser.parse_args(argv)
    rows = [summary(name, args.beta) for name in args.datasets.split(",")]
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(f"{value:.3f}" if isinstance(value, float) else str(value) for value in row.values())
              + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
