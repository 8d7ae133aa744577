"""How fast the error region of Algorithm 2 (``strategy=linearization_region``) shrinks with the number of labels.

The reference work bounds the linearisation's remainder by eps = 2 delta^2 (P + R + 2 delta)^2 /
(P + R - 2 delta)^3 with delta = 1/n, which falls like 1/n^2. On the unit grid of the strategy (grid 30 in
``experiment=errors_linearization``) the region's measured spread cannot follow: it is at least a cell wide.
This script measures the region where the grid does not dominate, on label sets that grow without changing
their kind: ``synthetic`` ranked lists with every label alike (``zipf_exponent = 0``, ``max_label_share``
of the documents relevant to each label), n = 100 .. 3200 labels, several seeds.

Per (n, seed):

1. the optimum (P*, R*) of the exact ``domain`` strategy, a coordinate-wise maximum, so in the region, and
   eps there;
2. ``linearization_region`` on a coarse unit grid (``--coarse``); the part of its region around the optimum
   (the connected cells holding it; the region can have a second part near the origin, where the bound is
   weak: ESP Game's 268 labels have one at P, R < 0.06) gives a box;
3. that part is recomputed on ``--cells`` x ``--cells`` cells of the box widened by one coarse cell
   (:func:`~xmlthresh.strategies.linearization_region.region_cells`), then again on the box of the new part
   widened by one of its cells (``--zooms`` windows in all); a window is widened again while the part touches
   its border, so none of it is cut off;
4. the spread dF (and dP, dR) of the last part (:func:`~xmlthresh.strategies.linearization_region.region_spread`),
   its cell size, the spread one window before, and the whole region's dF on the unit grid (what
   ``experiment=errors_linearization`` reports).

The table has one row per n (means over seeds); the exponent of the spread against n is the least-squares
slope of log(spread) on log(n) over every (n, seed), with a t-based 95% confidence interval.

    python benchmarks/region_rate.py                      # n = 100 .. 3200, 3 seeds (~8 min on 2 cores)
    python benchmarks/region_rate.py --labels 60,240 --seeds 1 --cells 16 --coarse 12 --zooms 1   # smoke run
    python benchmarks/region_rate.py --out benchmarks/region_rate.md
    python benchmarks/region_rate.py --dataset espgame --labels 32,64,128,268 --fit-from 64
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import ndimage, stats

from xmlthresh.api import load_dataset
from xmlthresh.data.evaluation import evaluate_cuts
from xmlthresh.datasets.synthetic import generate_ranked_lists
from xmlthresh.strategies import STRATEGIES
from xmlthresh.strategies.linearization_region import region_cells, region_spread, taylor_remainder_bound

#: how many times a window is widened (by half its size on each touched side) before giving up
MAX_WIDENINGS = 6


def _window(low: float, high: float, margin: float) -> tuple[float, float]:
    return max(0.0, low - margin), min(1.0, high + margin)


def component_at(region: np.ndarray, p_edges: np.ndarray, r_edges: np.ndarray, point: tuple[float, float]) -> np.ndarray:
    """The connected part (cells touching by an edge or a corner) of ``region`` holding the cells that contain
    ``point``; all False when no region cell contains it."""
    labelled, _ = ndimage.label(region, structure=np.ones((3, 3), dtype=bool))
    rows = np.flatnonzero((p_edges[:-1] <= point[0]) & (point[0] <= p_edges[1:]))
    cols = np.flatnonzero((r_edges[:-1] <= point[1]) & (point[1] <= r_edges[1:]))
    ids = np.setdiff1d(labelled[np.ix_(rows, cols)], [0])
    return np.isin(labelled, ids) if len(ids) else np.zeros_like(region)


def zoomed_region(lists, box: tuple[float, float, float, float], margin: float, optimum: tuple[float, float],
                  cells: int, zooms: int, beta: float) -> dict:
    """The part of the region around ``optimum`` (a coordinate-wise maximum, so in the region) on ``cells`` x
    ``cells`` cells of ``box`` (P_lo, P_hi, R_lo, R_hi) widened by ``margin``, refined ``zooms`` times on the
    box of that part; its spread at the last zoom and at the one before (to show that the cell size no longer
    matters)."""
    history = []
    for _ in range(zooms):
        p_lo, p_hi = _window(box[0], box[1], margin)
        r_lo, r_hi = _window(box[2], box[3], margin)
        for _ in range(MAX_WIDENINGS):
            p_edges, r_edges = np.linspace(p_lo, p_hi, cells + 1), np.linspace(r_lo, r_hi, cells + 1)
            part = component_at(region_cells(lists, p_edges, r_edges, beta), p_edges, r_edges, optimum)
            if not part.any():
                break
            rows, cols = np.nonzero(part)
            touched = {"p_lo": rows.min() == 0 and p_lo > 0, "p_hi": rows.max() == cells - 1 and p_hi < 1,
                       "r_lo": cols.min() == 0 and r_lo > 0, "r_hi": cols.max() == cells - 1 and r_hi < 1}
            if not any(touched.values()):
                break
            width_p, width_r = p_hi - p_lo, r_hi - r_lo
            p_lo = max(0.0, p_lo - width_p / 2) if touched["p_lo"] else p_lo
            p_hi = min(1.0, p_hi + width_p / 2) if touched["p_hi"] else p_hi
            r_lo = max(0.0, r_lo - width_r / 2) if touched["r_lo"] else r_lo
            r_hi = min(1.0, r_hi + width_r / 2) if touched["r_hi"] else r_hi
        spread = region_spread(part, p_edges, r_edges, beta)
        cell = max(p_edges[1] - p_edges[0], r_edges[1] - r_edges[0])
        history.append({**spread, "cell": cell, "cells": int(part.sum())})
        if spread["dF"] is None:
            raise RuntimeError(f"no region cell holds the optimum {optimum}: the region would not be sound")
        box, margin = (spread["P_min"], spread["P_max"], spread["R_min"], spread["R_max"]), cell
    return {**history[-1], "dF_previous": history[-2]["dF"] if len(history) > 1 else None}


def measure(n_labels: int, seed: int, args: argparse.Namespace) -> dict:
    """One (n, seed): the spread of the zoomed region around the optimum, eps at the optimum and the time."""
    if args.dataset == "synthetic":
        lists = generate_ranked_lists(n_labels=n_labels, num_docs=args.docs, signal=args.signal, zipf_exponent=0.0,
                                      max_label_share=args.share, seed=seed, name="synthetic")
    else:  # the first n labels of a data set (one "seed": the data are fixed)
        with warnings.catch_warnings():  # the loaders' data notes are not the point here
            warnings.simplefilter("ignore")
            lists = load_dataset(args.dataset, first_n_labels=n_labels)
        if (lists.n_relevant == 0).any():
            lists = lists.with_relevant_only()[0]
    best = STRATEGIES.get("domain")(beta=args.beta).fit_lists(lists)
    optimum = evaluate_cuts(lists, best.cuts_, args.beta)
    point = (optimum["precision"], optimum["recall"])
    eps = float(taylor_remainder_bound(*point, n_labels, args.beta))
    start = time.perf_counter()
    coarse = STRATEGIES.get("linearization_region")(beta=args.beta, grid=args.coarse).fit_lists(lists)
    edges = np.arange(args.coarse + 1) / args.coarse
    own = coarse.grid_table()["cell_in_region"].to_numpy().reshape(args.coarse + 1, -1)[:-1, :-1]
    part = region_spread(component_at(own, edges, edges, point), edges, edges, args.beta)
    box = (part["P_min"], part["P_max"], part["R_min"], part["R_max"])
    zoomed = zoomed_region(lists, box, 1.0 / args.coarse, point, args.cells, args.zooms, args.beta)
    return {"n": n_labels, "seed": seed, "eps": eps, "P*": point[0], "R*": point[1], "f_macro": optimum["f_macro"],
            "coarse_dF": coarse.info_["region_dF"], "seconds": time.perf_counter() - start, **zoomed}


def fit_exponent(n: np.ndarray, spread: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Least-squares slope of log(spread) on log(n) and its t-based confidence interval."""
    fit = stats.linregress(np.log(n), np.log(spread))
    half = stats.t.ppf(0.5 + level / 2, len(n) - 2) * fit.stderr if len(n) > 2 else np.inf
    return float(fit.slope), float(fit.slope - half), float(fit.slope + half)


def report(rows: list[dict], args: argparse.Namespace) -> str:
    """The markdown table (means over seeds) and the fitted exponents of dF and dP."""
    data = (f"`synthetic` lists, all labels alike: {args.docs} documents, {args.share:g} of them relevant to each "
            f"label, signal {args.signal:g}; {args.seeds} seed(s) per n" if args.dataset == "synthetic" else
            f"`{args.dataset}`, its first n labels")
    lines = [f"{data}; beta {args.beta:g}; region on {args.cells} x {args.cells} cells of its own box after "
             f"{args.zooms} zoom(s) from a {args.coarse}-grid.",
             "",
             "| n | eps at (P*, R*) | measured spread dF | ratio dF / eps | dP | dR | cell size | dF one zoom "
             "before | dF of the whole region, unit grid | cells |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for n in sorted({row["n"] for row in rows}):
        group = [row for row in rows if row["n"] == n and row["dF"] is not None]
        if not group:
            lines.append(f"| {n} | | empty region | | | | | | | |")
            continue
        mean = {key: float(np.mean([row[key] for row in group if row[key] is not None]))
                for key in ("eps", "dF", "dP", "dR", "cell", "cells", "coarse_dF")}
        previous = [row["dF_previous"] for row in group if row["dF_previous"] is not None]
        lines.append(f"| {n} | {mean['eps']:.3g} | {mean['dF']:.4g} | {mean['dF'] / mean['eps']:.3g} | "
                     f"{mean['dP']:.4g} | {mean['dR']:.4g} | {mean['cell']:.2g} | "
                     f"{np.mean(previous) if previous else float('nan'):.4g} | {mean['coarse_dF']:.4g} | "
                     f"{mean['cells']:.0f} |")
    lines.append("")
    for smallest in sorted({min(row["n"] for row in rows), args.fit_from}):
        kept = [row for row in rows if row["dF"] and row["n"] >= smallest]
        if len({row["n"] for row in kept}) < 2:
            continue
        n = np.array([row["n"] for row in kept], dtype=float)
        for key, name in (("dF", "spread dF"), ("dP", "spread dP"), ("eps", "eps at (P*, R*)")):
            slope, low, high = fit_exponent(n, np.array([row[key] for row in kept]))
            lines.append(f"- exponent of {name} against n (n >= {smallest}): {slope:.3f} (95% CI {low:.3f} .. "
                         f"{high:.3f}; {len(kept)} points)")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", default="100,200,400,800,1600,3200", help="numbers of labels, comma-separated")
    parser.add_argument("--dataset", default="synthetic",
                        help="synthetic (generated, every label alike) or a data set option: its first n labels")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per n (synthetic only)")
    parser.add_argument("--docs", type=int, default=200, help="documents per label set")
    parser.add_argument("--share", type=float, default=0.2, help="share of the documents relevant to each label")
    parser.add_argument("--signal", type=float, default=1.5, help="the simulated ranker's signal")
    parser.add_argument("--beta", type=float, default=1.0)
    parser.add_argument("--coarse", type=int, default=40, help="unit grid of the first linearization_region fit")
    parser.add_argument("--cells", type=int, default=60, help="cells per axis of each zoomed window")
    parser.add_argument("--zooms", type=int, default=3, help="zoomed windows after the unit grid")
    parser.add_argument("--fit-from", type=int, default=400,
                        help="also fit the exponent over n >= this only (the bound is loose at small n)")
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown to this file")
    args = parser.parse_args(argv)
    if args.dataset != "synthetic":
        args.seeds = 1
    rows = []
    for n_labels in [int(value) for value in args.labels.split(",")]:
        for seed in range(args.seeds):
            row = measure(n_labels, seed, args)
            rows.append(row)
            print(f"n={n_labels} seed={seed}: dF {row['dF']} (cell {row['cell']:.2g}), eps {row['eps']:.3g}, "
                  f"{row['seconds']:.1f} s", file=sys.stderr)
    markdown = report(rows, args)
    print(markdown)
    if args.out is not None:
        args.out.write_text(f"# The error region's rate (Algorithm 2)\n\n`python benchmarks/region_rate.py "
                            f"{' '.join(argv if argv is not None else sys.argv[1:])}`\n\n{markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
