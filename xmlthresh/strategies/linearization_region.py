"""``linearization_region``: Algorithm 2 (docs/theory.md#error-region) -- the error region of the linearisation.

On the uniform (grid+1) x (grid+1) grid of (P0, R0) in [0, 1]^2 (rows: P0 = i/grid outer, R0 = j/grid
inner, the layout of the reference program's ``result_<data>_<...>_KxK.txt``) each grid point gets

* V(P0, R0): the first maximiser (in cut order) of the linear score R0^2 p + beta^2 P0^2 r per label,
  averaged -- columns ``VP``, ``VR`` and ``F(V)`` = F_beta(VP, VR);
* the neighbourhood rectangle [Pmin, Pmax] x [Rmin, Rmax]: per label the min/max of p and r over every cut
  position (1..L_k and "predict all", not only the Pareto candidates) whose linear score is within
  ``slack`` of the best, averaged over labels.

The reference program's region is the grid points that lie in their own rectangle (``in_own_rectangle``,
counted in ``region_points``). That test is unsound at large n: the rectangles shrink below the grid
spacing, and a fixed point between grid points is in no point's rectangle (Corel5k with 263 labels: 0
points while ``linearization`` certifies a fixed point). **The reported region is made of cells instead.**
For the cell [i/k, (i+1)/k] x [j/k, (j+1)/k] the linear-score weights (R0^2, beta^2 P0^2) lie in a box and
the slack is bounded over the cell (:func:`cell_slack`); a position of a label is excluded when, for one of
the reference positions (the first maximisers at the cell's corners and centre), its gap to the reference
exceeds that slack for every weight of the box. A coordinate-wise maximum X* in the cell has each label
within the slack of the best linear score at its own weights (the Taylor argument below, at X0 = X*), so
none of its positions is excluded and X* lies in the cell's rectangle; the cell is in the region when its
rectangle meets it. So every coordinate-wise maximum, and every fixed point of V, lies in a region cell at
any n (property-tested against brute force); the spreads are taken over the cells. Near the origin
(small D0 = beta^2 P0 + R0) the Taylor slack is large and cells there can stay in the region although no
maximum is near them: the bound cannot exclude them (Corel5k, 263 labels: 17 such cells below P0 = 0.05 next
to 5 cells around the fixed point).

**The slack (Taylor bound).** Moving one label from threshold tau to tau' moves X = (P, R) by
Delta = (p' - p, r' - r) / n, |Delta_i| <= delta = 1/n. With D = beta^2 P + R,

    grad F = (1 + b^2) / D^2 * (R^2, b^2 P^2),     Delta' H Delta = -2 (1 + b^2) b^2 (R dp - P dr)^2 / D^3.

Taylor at X0 = (P0, R0) with the Lagrange remainder at some xi, |xi - X0|_inf <= delta:
|F(X0 + Delta) - F(X0) - grad F(X0) . Delta| = (1 + b^2) b^2 (R_xi dp - P_xi dr)^2 / D_xi^3. With
|R dp - P dr| <= delta (P + R), P_xi + R_xi <= P0 + R0 + 2 delta and D_xi >= D0 - (1 + b^2) delta:

    eps = (1 + b^2) b^2 delta^2 (P0 + R0 + 2 delta)^2 / (D0 - (1 + b^2) delta)^3   if D0 > (1 + b^2) delta,
    else eps = infinity.

Threshold tau' of label k can beat its linear best response tau* (others fixed) only if the linear gain
grad F(X0) . (Delta_tau' - Delta_tau*) = (1 + b^2) / (n D0^2) * (score(tau') - score(tau*)) is >= -2 eps
(one remainder for each of the two moves from X0), i.e.

    best - score(tau') <= slack = 2 n eps D0^2 / (1 + b^2).

At beta = 1 this is exactly the reference program's eps = 2 delta^2 (P0+R0+2 delta)^2 / (P0+R0-2 delta)^3 and
neighb = n eps (P0+R0)^2.

**Conventions (matched to the reference outputs, tested to 1e-5 on every published grid).** Ties of the
linear score go to the first position in cut order. For P0 > 0 that first maximiser is a vertex of the
label's hull chain and V is computed exactly through :class:`~xmlthresh.strategies.linearization.LinearizedMap`
(exact ties, e.g. on the diagonal P0 = R0, are not left to rounding); at P0 = 0 (weight on precision only) it
is the smallest cut of maximal precision, taken over every position. "Predict all" replaces the list
position m; with tied scores a cut cannot split the tie group of a relevant document (tie groups of
irrelevant documents only are not recorded in ranked lists, so cuts inside them count as positions).
(0, 0) has no direction: its row is NaN and it is never in the region.

**Thresholds returned.** The linear best response (over the Pareto candidates) at the grid point whose V
has the best F -- every such V is an achievable threshold vector. No bounds are certified.

``info_``: ``n_grid_points``, ``region_points`` (the reference's point test), ``region_cells`` and, over the
region's cells, min/max and spread of P0, R0, F(P0, R0), the radius sqrt(P0^2 + R0^2) and the angle
atan2(R0, P0) (``region_dP``, ``region_dR``, ``region_dF``, ``region_dradius``, ``region_dangle``; None when
the region is empty); ``region_contains_fixed_point`` (None when V has no fixed point); ``grid_best_f``,
``grid_best_P0``, ``grid_best_R0``. :meth:`grid_table` returns the whole grid in the reference's columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from xmlthresh.data.candidates import Candidates
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.metrics import f_beta_raw
from xmlthresh.validation import check_size
from xmlthresh.strategies._linearization_kernels import cell_rectangles, neighbourhood_rectangles, position_blocks
from xmlthresh.strategies.base import ThresholdStrategy
from xmlthresh.strategies.linearization import LinearizedMap

if TYPE_CHECKING:
    import pandas as pd
from xmlthresh.strategies.registry import STRATEGIES

#: columns of the reference program's grid files (``grid_table`` adds ``in_own_rectangle``, ``cell_in_region``)
#: peak memory per point of the (grid + 1)^2 grid: the table's columns, the rectangles and the cell region
#: (measured: 475 bytes per point at grid = 900 with 20 labels, 483 at grid = 500 with 100 labels: per point,
#: not per label; rounded up)
BYTES_PER_GRID_POINT = 600
GRID_COLUMNS = ("P0", "R0", "VP", "VR", "F(V)", "Pmin", "Pmax", "Rmin", "Rmax")


def taylor_remainder_bound(p0, r0, n_labels: int, beta: float) -> np.ndarray:
    """eps: bound on |F(X0 + Delta) - F(X0) - grad F(X0) . Delta| for |Delta_i| <= 1/n (module docstring);
    +inf where D0 = beta^2 p0 + r0 <= (1 + beta^2) / n."""
    p0, r0 = np.asarray(p0, dtype=np.float64), np.asarray(r0, dtype=np.float64)
    b2 = beta * beta
    delta = 1.0 / n_labels
    margin = b2 * p0 + r0 - (1.0 + b2) * delta
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = (1.0 + b2) * b2 * delta * delta * (p0 + r0 + 2.0 * delta) ** 2 / margin**3
    return np.where(margin > 0, eps, np.inf)


def taylor_slack(p0, r0, n_labels: int, beta: float) -> np.ndarray:
    """The neighbourhood width of the linear score R0^2 p + beta^2 P0^2 r at (p0, r0): 2 n eps D0^2 / (1 + b^2)."""
    p0, r0 = np.asarray(p0, dtype=np.float64), np.asarray(r0, dtype=np.float64)
    b2 = beta * beta
    d0 = b2 * p0 + r0
    with np.errstate(invalid="ignore"):
        slack = 2.0 * n_labels * taylor_remainder_bound(p0, r0, n_labels, beta) * d0 * d0 / (1.0 + b2)
    return np.where(np.isnan(slack), np.inf, slack)


@STRATEGIES.register("linearization_region")
class LinearizationRegionStrategy(ThresholdStrategy):
    """Extended linearisation: V and the neighbourhood rectangles on a grid, the region of fixed points."""

    def __init__(self, beta: float = 1.0, grid: int = 100) -> None:
        super().__init__(beta=beta)
        self.grid = grid

    def _check_params(self) -> None:
        super()._check_params()
        check_size("strategy.grid", self.grid, BYTES_PER_GRID_POINT, 1, unit="grid point", square=True)

    def grid_table(self) -> pd.DataFrame:
        """One row per grid point (P0 outer, R0 inner) with the reference's columns, ``in_own_rectangle``
        (the reference's point test) and ``cell_in_region`` (the cell whose lower-left corner is the point
        belongs to the sound region; False on the last row and column, which start no cell)."""
        import pandas as pd  # only for this strategy's grid table: slow to import, and no fit needs it

        self._check_fitted()
        return pd.DataFrame({**{name: self.grid_[name] for name in GRID_COLUMNS},
                             "in_own_rectangle": self.grid_["in_own_rectangle"],
                             "cell_in_region": self.grid_["cell_in_region"]})

    def _fitted_extras(self) -> dict[str, Any]:
        return {"grid": self.grid_table()}

    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        k = int(self.grid)
        b2 = self.beta**2
        i, j = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")
        i, j = i.ravel(), j.ravel()
        p0, r0 = i / k, j / k
        weight_p, weight_r = r0 * r0, b2 * (p0 * p0)
        slack = taylor_slack(p0, r0, lists.n_labels, self.beta)
        blocks = position_blocks(
            lists.relevant_rank, lists.cut_of_relevant, lists.label_ptr, lists.list_length, lists.n_relevant,
            lists.num_docs, lists.include_predict_all,
        )
        first_p, first_r, pmin, pmax, rmin, rmax = neighbourhood_rectangles(
            *blocks, lists.n_relevant, weight_p, weight_r, slack
        )
        # V: exact first maximiser through the hull chains where P0 > 0, over every position where P0 = 0
        vmap = LinearizedMap.build(candidates, self.beta)
        ratio = np.where(j > 0, b2 * (i * i) / np.maximum(j * j, 1), np.inf)
        states = vmap.state_at_ratio(ratio)
        vp = np.where(i > 0, vmap.mean_p[states], first_p)
        vr = np.where(i > 0, vmap.mean_r[states], first_r)
        origin = (i == 0) & (j == 0)
        columns = {"P0": p0, "R0": r0, "VP": vp, "VR": vr, "F(V)": f_beta_raw(vp, vr, self.beta),
                   "Pmin": pmin, "Pmax": pmax, "Rmin": rmin, "Rmax": rmax}
        for name in GRID_COLUMNS[2:]:
            columns[name] = np.where(origin, np.nan, columns[name])
        in_own_rectangle = ~origin & (pmin <= p0) & (p0 <= pmax) & (rmin <= r0) & (r0 <= rmax)
        edges = np.arange(k + 1) / k
        cells = _region_cells(blocks, lists.n_relevant, edges, edges, self.beta)
        cell_in_region = np.zeros((k + 1, k + 1), dtype=bool)
        cell_in_region[:k, :k] = cells
        self.grid_ = {**columns, "in_own_rectangle": in_own_rectangle, "cell_in_region": cell_in_region.ravel(),
                      "slack": slack}
        self.info_["region_points"] = int(np.count_nonzero(in_own_rectangle))
        self._region_info(cells, k)
        crossing = vmap.resolve(0, vmap.n_groups)
        fixed = (float(vmap.mean_p[crossing.state]), float(vmap.mean_r[crossing.state]))
        self.info_["region_contains_fixed_point"] = (bool(_in_cells(cells, k, *fixed)) if crossing.fixed_point
                                                     else None)

        # returned thresholds: the Pareto linear best response with the best F over the grid
        pareto_f = np.where(origin, -np.inf, vmap.f(states))
        best = int(np.argmax(pareto_f))
        self.info_.update(
            n_grid_points=int(len(p0) - 1),
            grid_best_f=float(pareto_f[best]),
            grid_best_P0=float(p0[best]),
            grid_best_R0=float(r0[best]),
        )
        return vmap.choice(int(states[best]))

    def _region_info(self, cells: np.ndarray, k: int) -> None:
        """``region_cells`` and the spread (min, max, max - min) over the region's cells of P0, R0, F, radius
        and angle (:func:`region_spread`); None when the region is empty."""
        self.info_["region_cells"] = int(np.count_nonzero(cells))
        edges = np.arange(k + 1) / k
        for name, value in region_spread(cells, edges, edges, self.beta).items():
            self.info_[f"region_{name}"] = value


def region_cells(lists: RankedLists, p_edges: np.ndarray, r_edges: np.ndarray, beta: float = 1.0) -> np.ndarray:
    """The sound error region of Algorithm 2 on any rectangular grid of cells of (P0, R0).

    Parameters
    ----------
    lists : RankedLists
        The ranked lists (every label with at least one relevant document).
    p_edges, r_edges : numpy.ndarray
        Increasing cell edges in [0, 1] along P0 and R0: the cells are [p_edges[i], p_edges[i+1]] x
        [r_edges[j], r_edges[j+1]]. ``np.arange(k + 1) / k`` on both axes gives the strategy's own cells; a
        window of finer cells measures the region where the unit grid is too coarse.
    beta : float
        The F measure's beta.

    Returns
    -------
    numpy.ndarray
        Boolean (len(p_edges) - 1, len(r_edges) - 1): the cells whose rectangle meets them. Every
        coordinate-wise maximum lying in a cell of the grid lies in a region cell (module docstring).
    """
    blocks = position_blocks(
        lists.relevant_rank, lists.cut_of_relevant, lists.label_ptr, lists.list_length, lists.n_relevant,
        lists.num_docs, lists.include_predict_all,
    )
    return _region_cells(blocks, lists.n_relevant, np.asarray(p_edges, dtype=np.float64),
                         np.asarray(r_edges, dtype=np.float64), beta)


def _region_cells(blocks: tuple, n_relevant: np.ndarray, p_edges: np.ndarray, r_edges: np.ndarray,
                  beta: float) -> np.ndarray:
    """The cells [p_edges[i], p_edges[i+1]] x [r_edges[j], r_edges[j+1]] of (P0, R0) whose rectangle
    (:func:`cell_rectangles`: every position not excluded anywhere in the cell) meets the cell. Every
    coordinate-wise maximum -- hence every fixed point of V -- lies in one of them, at any n (module
    docstring); a point test alone misses them once the rectangles are smaller than the grid spacing."""
    b2 = beta**2
    i, j = np.meshgrid(np.arange(len(p_edges) - 1), np.arange(len(r_edges) - 1), indexing="ij")
    p_lo, p_hi = p_edges[i].ravel(), p_edges[i + 1].ravel()
    r_lo, r_hi = r_edges[j].ravel(), r_edges[j + 1].ravel()
    ref_p = np.stack([p_lo, p_lo, p_hi, p_hi, 0.5 * (p_lo + p_hi)], axis=1)  # corners and centre
    ref_r = np.stack([r_lo, r_hi, r_lo, r_hi, 0.5 * (r_lo + r_hi)], axis=1)
    slack = cell_slack(p_lo, p_hi, r_lo, r_hi, len(n_relevant), beta)
    pmin, pmax, rmin, rmax = cell_rectangles(
        *blocks, n_relevant, r_lo * r_lo, r_hi * r_hi, b2 * p_lo * p_lo, b2 * p_hi * p_hi,
        np.ascontiguousarray(ref_r * ref_r), np.ascontiguousarray(b2 * ref_p * ref_p), slack,
    )
    meets = (pmin <= p_hi) & (pmax >= p_lo) & (rmin <= r_hi) & (rmax >= r_lo)
    return meets.reshape(i.shape)


def region_spread(cells: np.ndarray, p_edges: np.ndarray, r_edges: np.ndarray,
                  beta: float = 1.0) -> dict[str, float | None]:
    """The extent of a region of cells (:func:`region_cells`) in P0, R0, F, radius and angle.

    Each of the five is monotone in P0 and R0, so its range over a cell is taken at the cell's corners.

    Returns
    -------
    dict
        ``<name>_min``, ``<name>_max`` and ``d<name>`` (max - min) for name in P, R, F, radius, angle; None
        when the region is empty.
    """
    i, j = np.nonzero(cells)
    p_edges, r_edges = np.asarray(p_edges, dtype=np.float64), np.asarray(r_edges, dtype=np.float64)
    corners_p = np.concatenate([p_edges[i], p_edges[i], p_edges[i + 1], p_edges[i + 1]])
    corners_r = np.concatenate([r_edges[j], r_edges[j + 1], r_edges[j], r_edges[j + 1]])
    values = {"P": corners_p, "R": corners_r, "F": f_beta_raw(corners_p, corners_r, beta),
              "radius": np.hypot(corners_p, corners_r), "angle": np.arctan2(corners_r, corners_p)}
    spread: dict[str, float | None] = {}
    for name, value in values.items():
        low, high = (float(np.min(value)), float(np.max(value))) if len(value) else (None, None)
        spread[f"{name}_min"] = low
        spread[f"{name}_max"] = high
        spread[f"d{name}"] = None if low is None else high - low
    return spread


def cell_slack(p_lo, p_hi, r_lo, r_hi, n_labels: int, beta: float) -> np.ndarray:
    """An upper bound of :func:`taylor_slack` over each cell [p_lo, p_hi] x [r_lo, r_hi]: the remainder's
    numerator at the upper corner, its denominator and D0 at their worst corners (+inf where the bound at the
    lower corner is infinite)."""
    b2 = beta * beta
    delta = 1.0 / n_labels
    margin = b2 * p_lo + r_lo - (1.0 + b2) * delta
    d_hi = b2 * p_hi + r_hi
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = (1.0 + b2) * b2 * delta * delta * (p_hi + r_hi + 2.0 * delta) ** 2 / margin**3
        slack = 2.0 * n_labels * eps * d_hi * d_hi / (1.0 + b2)
    return np.where(margin > 0, slack, np.inf)


def _in_cells(cells: np.ndarray, k: int, p: float, r: float) -> bool:
    """Whether (p, r) lies in a region cell (closed cells: a point on a cell edge belongs to both sides)."""
    i_candidates = {min(max(int(np.floor(p * k)), 0), k - 1), min(max(int(np.ceil(p * k)) - 1, 0), k - 1)}
    j_candidates = {min(max(int(np.floor(r * k)), 0), k - 1), min(max(int(np.ceil(r * k)) - 1, 0), k - 1)}
    return any(cells[i, j] for i in i_candidates for j in j_candidates)
