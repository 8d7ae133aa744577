"""Pictures of a fitted threshold problem (matplotlib, Agg): saved as PNG and logged as MLflow artifacts.

* ``domain.png`` -- the achievable set D(V) of (P, R) (all threshold vectors for small n, a seeded sample
  otherwise), the boundary of its convex hull (the Minkowski sum of the label chains), F level lines, the
  returned point and the hull maximiser (the certified upper bound); where V has no fixed point, the face
  [V+, V-] of its jump in grey (the segment of Fig. 3.12 of the reference work);
* ``argv.png`` -- ArgV, the angle of V against the input angle, with the identity: a fixed point where they
  cross, a jump where there is none (its curve as data in ``argv.csv``, which the ``argv`` study overlays);
* ``pr_curves.png`` -- precision-recall curves of sample labels (the most frequent, or those of the
  ``plot_labels`` config key) with the chosen cuts;
* ``per_label_pr.png`` -- per-label (p_k, r_k) at the fitted cuts, with their mean (P, R);
* ``domain_fast.png`` -- ``domain_fast``'s polygons (Figs 3.7, 3.8b of the reference work): the inner
  polygon H_a through the support points, the rigorous outer polygon of supporting lines, the lower point
  (the returned, achievable thresholds) and the upper point (F's maximum on the outer polygon), and the
  region where F exceeds the lower bound (it holds the optimum); whole quadrant and a zoom on the region;
* ``metric_choice_density.png`` and ``metric_choice_groups.png`` (``figures=[metric_choice]``, runs of ``domain``,
  the certified F-macro optimum; section 3.6, Figs 3.13-3.14 of the reference work) -- the density of the per-label (p_k, r_k) at the
  F-macro optimum next to the macro-F optimum (every label at its own F optimum: the ``independent`` cuts,
  computed from the lists by its kernel), and the averaged PR curves of three label groups (same threshold
  under both metrics / p_k >= r_k / p_k < r_k under F-macro) with the level lines of the linear objective
  R0^2 p + beta^2 P0^2 r at the optimum (P0, R0) and of the per-label F;
* ``error_map.png`` -- the grid of ``linearization_region``: the error sqrt(dP^2 + dR^2) per grid point and
  F(V), with the error region (black cells).
"""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import os
import sys
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from xmlthresh.data.candidates import build_candidates
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh._util.files import write_bytes_atomic, write_text_atomic
from xmlthresh.metrics import f_beta_raw


log = logging.getLogger(__name__)

#: resolution of the saved pictures (pixels per inch)
DPI = 110


def _figure(figsize: tuple[float, float], **kwargs: Any):
    """A figure on its own Agg canvas: no pyplot (no global figure registry to close, no backend lookup)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, **kwargs)
    FigureCanvasAgg(fig)
    return fig


def _tight(fig) -> None:
    """``tight_layout`` at the saved resolution, then no layout engine. At :data:`DPI` the layout pass and the
    drawing share one renderer (and its cached text extents); without an engine savefig does not lay the figure
    out again (a whole draw without rendering) -- ``tight_layout`` leaves a placeholder engine that makes it.
    The artists are made before, at the default resolution: contour labels are placed in pixels when made."""
    fig.set_dpi(DPI)
    fig.tight_layout()
    fig.set_layout_engine(None)


def _level_lines(ax, beta: float, levels=None) -> None:
    grid = np.linspace(1e-3, 1, 200)
    P, R = np.meshgrid(grid, grid)
    contour = ax.contour(P, R, f_beta_raw(P, R, beta), levels=levels or np.linspace(0.1, 0.9, 9), colors="0.75",
                         linewidths=0.7)
    ax.clabel(contour, fontsize=7, fmt="%.1f")


def _random_vectors(rng: np.random.Generator, n_points: int, counts: np.ndarray, first: np.ndarray,
                    p: np.ndarray, r: np.ndarray, block: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    """Mean (P, R) of ``n_points`` threshold vectors drawn uniformly (label k: candidate ``first[k] +
    floor(u * counts[k])``, u uniform in [0, 1), row after row from ``rng``), drawn and averaged in blocks of
    about ``block`` entries: the same numbers as one (n_points, n_labels) draw -- the generator's stream does not
    depend on how it is cut -- at half the CPU, because each block stays in the cache."""
    n_labels = len(counts)
    rows = max(1, block // n_labels)
    points_p, points_r = np.empty(n_points), np.empty(n_points)
    for start in range(0, n_points, rows):
        stop = min(n_points, start + rows)
        choice = (rng.random((stop - start, n_labels)) * counts).astype(np.int64) + first
        points_p[start:stop], points_r[start:stop] = p[choice].mean(axis=1), r[choice].mean(axis=1)
    return points_p, points_r


def achievable_set(lists: RankedLists, beta: float, cuts: np.ndarray | None = None, max_points: int = 20_000,
                   seed: int = 0):
    """Figure of D(V), its hull boundary, level lines, the returned point and the hull maximiser."""
    from xmlthresh.strategies.linearization import LinearizedMap

    kept = lists if np.all(lists.n_relevant > 0) else lists.with_relevant_only()[0]
    cands = build_candidates(kept)
    p, r = cands.precision, cands.recall
    counts = np.diff(cands.cand_ptr)
    with np.errstate(over="ignore"):  # an astronomically large set (WikiLSHTC) is sampled: inf is fine
        total = float(np.prod(counts.astype(float)))
    if total <= max_points:  # every threshold vector
        grids = np.meshgrid(*[np.arange(c) for c in counts], indexing="ij")
        choice = np.stack([g.ravel() for g in grids], axis=1) + cands.cand_ptr[:-1]
        points_p, points_r = p[choice].mean(axis=1), r[choice].mean(axis=1)
        title = f"all {int(total)} threshold vectors"
    else:
        # bounded work for 10^5+ labels: 6e6 draws (ESP Game keeps its 20,000 points; WikiLSHTC gets 21, whose
        # spread -- 1.2e-3 in P and R, the same for 70 -- is under a pixel of the figure)
        n_points = max(10, min(max_points, 6_000_000 // kept.n_labels))
        points_p, points_r = _random_vectors(np.random.default_rng(seed), n_points, counts, cands.cand_ptr[:-1], p, r)
        title = f"{n_points} random threshold vectors"
    vmap = LinearizedMap.build(cands, beta)
    fig = _figure((5.2, 5))
    ax = fig.subplots()
    _level_lines(ax, beta)
    ax.scatter(points_p, points_r, s=2, color="tab:blue", alpha=0.35, label=f"D(V): {title}")
    ax.plot(vmap.mean_p, vmap.mean_r, color="black", lw=1, label="convex hull boundary (Minkowski sum)")
    crossing = vmap.resolve(0, vmap.n_groups)
    if not crossing.fixed_point:  # V jumps across the identity: the optimum is on the face [V+, V-] of the jump
        first, last = crossing.face
        ax.plot(vmap.mean_p[[first, last]], vmap.mean_r[[first, last]], color="0.55", lw=5, alpha=0.8, zorder=1,
                label=f"jump of V, no fixed point: ({vmap.mean_p[first]:.3g}, {vmap.mean_r[first]:.3g})-"
                      f"({vmap.mean_p[last]:.3g}, {vmap.mean_r[last]:.3g})")
    best = int(np.argmax(vmap.f(np.arange(len(vmap.mean_p)))))
    ax.plot(vmap.mean_p[best], vmap.mean_r[best], "*", color="tab:red", ms=12, label="best hull state")
    if cuts is not None:
        from xmlthresh.data.evaluation import evaluate_cuts

        kept_cuts = np.asarray(cuts)[lists.n_relevant > 0]
        m = evaluate_cuts(kept, kept_cuts, beta)
        ax.plot(m["precision"], m["recall"], "o", mfc="none", color="tab:green", ms=10,
                label=f"returned thresholds (F = {m['f_macro']:.6f})")
    ax.set_xlabel("mean precision P")
    ax.set_ylabel("mean recall R")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_title(f"{lists.name or 'data'}: achievable (P, R), beta = {beta:g}", fontsize=10)
    ax.legend(fontsize=7, loc="lower left")
    _tight(fig)
    return fig


def argv_curve(lists: RankedLists, beta: float, n_angles: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """ArgV on a uniform fan of input angles in (0, pi/2): (theta, angle of V(cos theta, sin theta))."""
    from xmlthresh.strategies.linearization import LinearizedMap

    kept = lists if np.all(lists.n_relevant > 0) else lists.with_relevant_only()[0]
    vmap = LinearizedMap.build(build_candidates(kept), beta)
    theta = np.linspace(1e-4, np.pi / 2 - 1e-4, n_angles)
    return theta, vmap.angle(vmap.state_at_angle(theta))


def argv_csv(theta: np.ndarray, arg_v: np.ndarray) -> str:
    """``argv.csv``: the curve of ``argv.png`` as data (columns theta, argv), read by the ``argv`` study."""
    return "theta,argv\n" + "".join(f"{t!r},{a!r}\n" for t, a in zip(theta.tolist(), arg_v.tolist()))


def argv_plot(lists: RankedLists, beta: float, n_angles: int = 2000,
              curve: tuple[np.ndarray, np.ndarray] | None = None):
    """Figure of ArgV(theta) against the identity (``curve``: the :func:`argv_curve` when already computed)."""
    theta, arg_v = curve if curve is not None else argv_curve(lists, beta, n_angles)
    fig = _figure((5, 4.2))
    ax = fig.subplots()
    ax.plot(theta, arg_v, drawstyle="steps-post", label="ArgV")
    ax.plot([0, np.pi / 2], [0, np.pi / 2], "--", color="0.5", label="identity")
    ax.set_xlabel("angle of (P0, R0)")
    ax.set_ylabel("angle of V(P0, R0)")
    ax.set_title(f"{lists.name or 'data'}: linearised map, beta = {beta:g}", fontsize=10)
    ax.legend(fontsize=8)
    _tight(fig)
    return fig


def pr_curves(lists: RankedLists, cuts: np.ndarray, n_labels: int = 6, labels: np.ndarray | None = None):
    """Precision-recall curves over every cut of their lists, chosen cut marked: of the labels at the
    positions ``labels`` (the reference work's Fig. 3.3 picks them), else of the ``n_labels`` most frequent."""
    order = (np.asarray(labels) if labels is not None
             else np.argsort(-lists.n_relevant, kind="stable")[:n_labels])
    fig = _figure((5.2, 4.4))
    ax = fig.subplots()
    for k in order:
        length = int(lists.list_length[k])
        ranks = lists.relevant_rank[lists.label_ptr[k]:lists.label_ptr[k + 1]]
        positions = np.arange(1, length + 1)
        tp = np.searchsorted(ranks, positions, side="right")
        line, = ax.plot(tp / lists.n_relevant[k], tp / positions, lw=1, label=f"label {lists.label_ids[k]}")
        cut = int(cuts[k])
        if 0 < cut <= length:
            ax.plot(tp[cut - 1] / lists.n_relevant[k], tp[cut - 1] / cut, "o", color=line.get_color())
        elif cut == lists.num_docs:
            ax.plot(1.0, lists.n_relevant[k] / lists.num_docs, "s", color=line.get_color())
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_title(f"PR curves of {'chosen' if labels is not None else 'frequent'} labels (markers: chosen cuts)",
                 fontsize=10)
    ax.legend(fontsize=7)
    _tight(fig)
    return fig


def per_label_pr(lists: RankedLists, cuts: np.ndarray, strategy: str, beta: float, max_points: int = 20_000,
                 seed: int = 0):
    """Per-label (p_k, r_k) at the fitted cuts (a seeded sample of at most ``max_points`` labels), with the
    mean point (P, R) and the F-macro level lines."""
    from xmlthresh.data.evaluation import true_positives_at_cuts
    from xmlthresh.metrics import per_label_precision_recall

    kept_labels = lists.n_relevant > 0
    kept = lists if kept_labels.all() else lists.select_labels(kept_labels)
    kept_cuts = np.asarray(cuts)[kept_labels]
    p, r = per_label_precision_recall(true_positives_at_cuts(kept, kept_cuts), kept_cuts, kept.n_relevant)
    shown = np.random.default_rng(seed).permutation(kept.n_labels)[:max_points]
    fig = _figure((5.2, 5))
    ax = fig.subplots()
    _level_lines(ax, beta)
    ax.scatter(p[shown], r[shown], s=10, marker=".", color="tab:blue", alpha=0.6, label=f"labels ({len(shown)})")
    ax.plot(p.mean(), r.mean(), "*", color="tab:red", ms=12,
            label=f"mean (P {p.mean():.3f}, R {r.mean():.3f}): F-macro {f_beta_raw(p.mean(), r.mean(), beta):.4f}")
    ax.set_xlabel("precision of the label")
    ax.set_ylabel("recall of the label")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"per-label operating points of {strategy}, beta = {beta:g}", fontsize=10)
    ax.legend(fontsize=7, loc="lower left")
    _tight(fig)
    return fig


def error_map(grid) -> Any:
    """The grid of ``linearization_region`` in two panels: the error sqrt(dP^2 + dR^2) of each grid point's
    rectangle (the reference work's picture) and F(V); in both the sound error region in black (every
    coordinate-wise maximum lies in one of its cells) and the reference's point test as red circles."""
    from matplotlib.patches import Rectangle

    fig = _figure((10, 4.6))
    axes = fig.subplots(1, 2)
    valid = np.isfinite(grid["F(V)"].to_numpy())
    error = np.hypot(grid["Pmax"] - grid["Pmin"], grid["Rmax"] - grid["Rmin"]).to_numpy()
    finite = valid & np.isfinite(error)
    side = float(np.diff(np.unique(grid["P0"].to_numpy()))[0]) if grid["P0"].nunique() > 1 else 1.0
    cells = grid["cell_in_region"].to_numpy(dtype=bool)
    own = grid["in_own_rectangle"].to_numpy(dtype=bool)
    panels = ((axes[0], error, finite, "sqrt(dP^2 + dR^2) of the rectangle", "magma"),
              (axes[1], grid["F(V)"].to_numpy(), valid, "F(V)", "viridis"))
    for ax, value, shown, label, cmap in panels:
        image = ax.scatter(grid["P0"][shown], grid["R0"][shown], c=value[shown], s=12, cmap=cmap)
        for p0, r0 in zip(grid["P0"][cells], grid["R0"][cells]):
            ax.add_patch(Rectangle((p0, r0), side, side, facecolor="black", edgecolor="none"))
        ax.scatter(grid["P0"][own], grid["R0"][own], s=40, facecolors="none", edgecolors="red",
                   label="grid point in its own rectangle")
        ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="black", label=f"error region ({cells.sum()} cells)"))
        fig.colorbar(image, ax=ax, label=label)
        ax.set_xlabel("P0")
        ax.set_ylabel("R0")
        ax.legend(fontsize=7, loc="lower right")
    axes[0].set_title("error of the linearisation and the region holding every fixed point", fontsize=9)
    axes[1].set_title("F(V) on the grid", fontsize=9)
    _tight(fig)
    return fig


def fan_plot(fitted: Any):
    """``domain_fast``'s inner polygon H_a, outer polygon, lower / upper points and the region where F exceeds
    the lower bound, drawn from ``fitted.fan`` (two panels: the quadrant, and a zoom on the region)."""
    from matplotlib.patches import Polygon

    fan, info, beta = fitted.fan, fitted.info, fitted.beta
    support, chain, region = fan["support_points"], fan["outer_chain"], fan["region_boundary"]
    lower, upper = fitted.lower_bound, fitted.upper_bound
    fig = _figure((10.4, 5))
    axes = fig.subplots(1, 2)
    (rp0, rp1), (rr0, rr1) = (info["region_P_min"], info["region_P_max"]), (info["region_R_min"], info["region_R_max"])
    half = 0.75 * max(rp1 - rp0, rr1 - rr0, 1e-6)
    zoom = ((0.5 * (rp0 + rp1) - half, 0.5 * (rp0 + rp1) + half), (0.5 * (rr0 + rr1) - half, 0.5 * (rr0 + rr1) + half))
    for ax, (xlim, ylim) in zip(axes, (((0, 1.02), (0, 1.02)), zoom)):
        grid_p, grid_r = np.meshgrid(np.linspace(*xlim, 300), np.linspace(*ylim, 300))
        ax.contour(grid_p, grid_r, f_beta_raw(np.maximum(grid_p, 0), np.maximum(grid_r, 0), beta), levels=[lower, upper],
                   colors=["tab:green", "tab:red"], linewidths=0.6, linestyles=":")
        # a thick gold edge keeps a sliver-thin region visible (at 1000 directions it is ~1e-5 wide)
        ax.add_patch(Polygon(region, closed=True, facecolor="gold", edgecolor="gold", lw=4, alpha=0.8, zorder=1,
                             label=f"F >= lower bound inside the outer polygon (dP {info['region_dP']:.2g}, "
                                   f"dR {info['region_dR']:.2g})"))
        ax.plot(chain[:, 0], chain[:, 1], "-", color="tab:red", lw=1, label="outer polygon (supporting lines)")
        ax.plot(support[:, 0], support[:, 1], ".-", color="tab:blue", lw=1, ms=3,
                label=f"inner polygon H_a ({len(support)} support points)")
        ax.plot(*fan["lower_point"], "o", color="tab:green", ms=7, label=f"lower point, F = {lower:.6f}")
        ax.plot(*fan["upper_point"], "^", color="tab:red", ms=7, label=f"upper point, F = {upper:.6f}")
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        ax.set_xlabel("mean precision P")
        ax.set_ylabel("mean recall R")
    axes[0].legend(fontsize=7, loc="lower left")
    name = fitted.fit_lists.name if fitted.fit_lists is not None else "data"
    axes[0].set_title(f"{name}: domain_fast, n_angles = {fan['n_angles']}, beta = {beta:g}", fontsize=9)
    axes[1].set_title(f"zoom on the region: dF {info['region_dF']:.2g}, dRad {info['region_dradius']:.2g}, "
                      f"dArg {info['region_dangle']:.2g}", fontsize=9)
    _tight(fig)
    return fig


def _kept(fitted: Any) -> tuple[RankedLists, np.ndarray]:
    """The fitted lists restricted to the labels with relevant documents, and their cuts."""
    lists = fitted.fit_lists
    keep = lists.n_relevant > 0
    return (lists if keep.all() else lists.select_labels(keep)), np.asarray(fitted.cuts)[keep]


def macro_f_optimum(lists: RankedLists, beta: float):
    """(candidates, chosen candidate per label) of the macro-F optimum: every label at its first F_beta
    maximiser -- the ``independent`` strategy's kernel on the same candidates (no strategy is fitted)."""
    from xmlthresh.strategies._kernels import independent_argmax

    cands = build_candidates(lists)
    return cands, independent_argmax(cands.cand_ptr, cands.precision, cands.recall, float(beta) ** 2)


def _label_points(lists: RankedLists, cuts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from xmlthresh.data.evaluation import true_positives_at_cuts
    from xmlthresh.metrics import per_label_precision_recall

    return per_label_precision_recall(true_positives_at_cuts(lists, cuts), cuts, lists.n_relevant)


def metric_choice_density(fitted: Any):
    """Density of the per-label (p_k, r_k) at the F-macro optimum (the fitted cuts) and at the macro-F
    optimum, log-scaled 2-D histograms on one colour scale, with each metric's mean point."""
    from matplotlib.colors import LogNorm

    beta = fitted.beta
    lists, cuts = _kept(fitted)
    cands, choice = macro_f_optimum(lists, beta)
    panels = (("F-macro optimum", *_label_points(lists, cuts)),
              ("macro-F optimum (each label at its own F optimum)", cands.precision[choice], cands.recall[choice]))
    bins = np.linspace(0, 1, 51)
    counts = [np.histogram2d(p, r, bins=[bins, bins])[0] for _, p, r in panels]
    top = max(1.0, max(float(c.max()) for c in counts))
    fig = _figure((11.5, 5.4), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, (title, p, r), count in zip(axes, panels, counts):
        image = ax.pcolormesh(bins, bins, np.where(count > 0, count, np.nan).T, cmap="viridis",
                              norm=LogNorm(vmin=1, vmax=top))
        _level_lines(ax, beta)
        macro_f = float(np.mean(f_beta_raw(p, r, beta)))
        ax.plot(p.mean(), r.mean(), "*", color="tab:red", ms=13,
                label=f"mean (P {p.mean():.3f}, R {r.mean():.3f})\nF-macro {f_beta_raw(p.mean(), r.mean(), beta):.4f}, "
                      f"macro-F {macro_f:.4f}")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel("precision of the label p_k")
        ax.set_ylabel("recall of the label r_k")
        ax.set_title(f"{title}: {len(p)} labels", fontsize=9)
        ax.legend(fontsize=7, loc="lower left")
    fig.colorbar(image, ax=list(axes), label="labels per cell (1/50 x 1/50)", shrink=0.8)
    fig.suptitle(f"{lists.name or 'data'}: per-label operating points, beta = {beta:g}", fontsize=10)
    return fig


def metric_choice_groups(fitted: Any):
    """Averaged PR curves (the upper-right boundary of the group's average hull) of three label groups --
    same threshold under both metrics, p_k >= r_k and p_k < r_k under F-macro (the others) -- with each
    group's mean point under both metrics, the level line of the linear objective R0^2 p + beta^2 P0^2 r
    through the F-macro point ((P0, R0) = the optimum's (P, R): every label's best response maximises it)
    and the level line of F through the macro-F point."""
    from xmlthresh.strategies.linearization import LinearizedMap

    beta = fitted.beta
    b2 = beta * beta
    lists, cuts = _kept(fitted)
    cands, choice = macro_f_optimum(lists, beta)
    p_opt, r_opt = _label_points(lists, cuts)
    p_mac, r_mac = cands.precision[choice], cands.recall[choice]
    P0, R0 = p_opt.mean(), r_opt.mean()
    same = cands.cut[choice] == cuts
    groups = (("same threshold under both metrics", same), ("p_k >= r_k under F-macro", ~same & (p_opt >= r_opt)),
              ("p_k < r_k under F-macro", ~same & (p_opt < r_opt)))
    fig = _figure((14, 4.8))
    axes = fig.subplots(1, 3)
    grid = np.linspace(1e-3, 1, 300)
    gp, gr = np.meshgrid(grid, grid)
    for ax, (title, mask) in zip(axes, groups):
        ax.set_title(f"{title}: {int(mask.sum())} labels", fontsize=9)
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("mean precision of the group")
        ax.set_ylabel("mean recall of the group")
        if not mask.any():
            continue
        vmap = LinearizedMap.build(build_candidates(lists.select_labels(mask)), beta)
        ax.plot(vmap.mean_p, vmap.mean_r, color="black", lw=1.2, label="averaged PR curve (group hull)")
        g = (p_opt[mask].mean(), r_opt[mask].mean())
        m = (p_mac[mask].mean(), r_mac[mask].mean())
        weight = np.array([R0 * R0, b2 * P0 * P0])
        ax.contour(gp, gr, weight[0] * gp + weight[1] * gr, levels=[weight @ g], colors="tab:red", linewidths=0.9)
        f_m = float(f_beta_raw(*m, beta))
        if f_m > 0:
            ax.contour(gp, gr, f_beta_raw(gp, gr, beta), levels=[f_m], colors="tab:blue", linewidths=0.9,
                       linestyles="--")
        ax.plot(*g, "o", color="tab:red", ms=7, label=f"F-macro optimum ({g[0]:.3f}, {g[1]:.3f})")
        ax.plot(*m, "s", color="tab:blue", ms=6, label=f"macro-F optimum ({m[0]:.3f}, {m[1]:.3f})")
        ax.plot([], [], color="tab:red", lw=0.9, label="R0^2 p + b^2 P0^2 r = const (at the optimum)")
        ax.plot([], [], color="tab:blue", lw=0.9, ls="--", label=f"F = {f_m:.3f} (through the macro-F point)")
        ax.legend(fontsize=6.5, loc="lower left")
    fig.suptitle(f"{lists.name or 'data'}: label groups at the F-macro optimum (P0 {P0:.3f}, R0 {R0:.3f}), "
                 f"beta = {beta:g}", fontsize=10)
    _tight(fig)
    return fig


#: pictures drawn only when asked for by name (the ``figures`` config key)
EXTRA_FIGURES = ("metric_choice",)


@contextlib.contextmanager
def _earlier_objects_frozen() -> Iterator[None]:
    """Leave the objects that exist now out of the garbage collector's passes for the duration (``gc.freeze``):
    matplotlib's import and figures make enough objects to trigger a full collection, which would scan every
    object of the run though none of them is garbage. Young objects are collected
    as usual; nothing stays frozen afterwards; a caller that froze objects itself is left alone."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def save_run_plots(fitted: Any, out_dir: Path, figures: Sequence[str] = (),
                   labels: np.ndarray | None = None) -> list[Path]:
    """Every plot that applies to a rule fitted on ranked lists (a :class:`~xmlthresh.strategies.fitted.FittedRule`
    with ``fit_lists``), drawn from what it holds -- nothing is refitted -- and saved into ``out_dir``, plus the
    ``figures`` of :data:`EXTRA_FIGURES` asked for; ``labels``: positions of the labels ``pr_curves.png`` draws."""
    with _earlier_objects_frozen():
        return _save_run_plots(fitted, out_dir, figures, labels)


def _save_run_plots(fitted: Any, out_dir: Path, figures: Sequence[str], labels: np.ndarray | None) -> list[Path]:
    lists, beta = fitted.fit_lists, fitted.beta
    extra = set(figures)
    curve = argv_curve(lists, beta)  # drawn in argv.png, written as data to argv.csv
    drawings = {
        "domain.png": lambda: achievable_set(lists, beta, cuts=fitted.cuts),
        "argv.png": lambda: argv_plot(lists, beta, curve=curve),
    }
    if fitted.cuts is not None:
        drawings["per_label_pr.png"] = lambda: per_label_pr(lists, fitted.cuts, fitted.strategy, beta)
        drawings["pr_curves.png"] = lambda: pr_curves(lists, fitted.cuts, labels=labels)
    if "metric_choice" in extra and fitted.strategy == "domain" and fitted.cuts is not None:
        drawings["metric_choice_density.png"] = lambda: metric_choice_density(fitted)
        drawings["metric_choice_groups.png"] = lambda: metric_choice_groups(fitted)
    elif "metric_choice" in extra:  # asked for and not drawn: said (exit 0 without the pictures before)
        log.warning("figures=[metric_choice] draws the F-macro optimum against the macro-F optimum: runs of "
                    "strategy=domain only; strategy=%s draws none", fitted.strategy)
    if getattr(fitted, "fan", None) is not None:
        drawings["domain_fast.png"] = lambda: fan_plot(fitted)
    if fitted.grid is not None:
        drawings["error_map.png"] = lambda: error_map(fitted.grid)
    paths = [out_dir / "argv.csv"]
    write_text_atomic(paths[0], argv_csv(*curve))
    for name, make in drawings.items():
        fig = make()
        buffer = io.BytesIO()
        # zlib level 1: less than half the default level's encoding time (pixels unchanged); files about as
        # large: a run's four pictures +1 % together (-5 % to +7 %), domain_fast.png +10 %, error_map.png +20 %
        fig.savefig(buffer, format="png", dpi=DPI, pil_kwargs={"compress_level": 1})
        write_bytes_atomic(out_dir / name, buffer.getvalue())
        paths.append(out_dir / name)
    return paths
