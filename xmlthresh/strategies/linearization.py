"""``linearization``: Algorithm 1 (docs/theory.md#fixed-point-search) -- the fixed point of the linearised map V.

**The map.** At a point (P0, R0) the gradient of F_beta is proportional to (R0^2, beta^2 P0^2), so each
label's best response to the linearised problem maximises the linear score
``R0^2 p_k(tau) + beta^2 P0^2 r_k(tau)`` over its candidates; V(P0, R0) = (mean p_k(tau_k*), mean r_k(tau_k*)).
Ties go to the **first maximiser in candidate order** (smallest cut, i.e. the lower recall): that is the
order that reproduces the reference program (its grids in ``berger/grids``; the exact ties there are on the
diagonal P0 = R0, where a different order or a rounded comparison moves ``VP`` by 1.6e-3).

V depends only on the direction of (P0, R0): with theta = atan2(R0, P0) and t = beta^2 cot(theta)^2 (the
ratio of the weights), label k takes exactly the edges of its upper-right hull chain whose key
-dp/dr is < t (``xmlthresh.data.hulls``). So V is evaluated through the hull chains: the edges of all labels
sorted by key, V(theta) = the state after the first ``searchsorted(keys, t)`` edges (compensated prefix
sums). This *is* the first maximiser of the linear score -- a candidate off the chain never maximises it
strictly, and at a tie (t equal to a key) the edge is not taken -- but the comparison is made on keys
computed from integer counts and on t = beta^2 i^2 / j^2 for grid points, so exact ties are found exactly
instead of being decided by rounding. Cost O(E log E) once (E hull edges, shared with ``domain``), then
O(log E) per evaluation of V.

**The crossing.** ArgV(theta) = angle of V(theta) is non-increasing and piecewise constant (it changes only at
the breakpoint angles theta_q = atan2(beta, sqrt(key_q))), so g = ArgV - theta decreases strictly and crosses
zero once:

* inside a piece: V is constant there and its angle lies in the piece -- a **fixed point**; V is then the
  support point of the achievable set in the direction of grad F at V, and F is concave, so it is the
  **exact global optimum** (lower bound = upper bound);
* at a breakpoint: V jumps from V+ (above the breakpoint angle, lower recall) to V- across the identity --
  **no fixed point exists** (the Example data set). The hull maximiser is then the point of angle theta_q on
  the face [V+, V-] of the Minkowski hull (its normal is grad F there), so max F over that face is a
  rigorous **upper bound**.

``search='bisection'`` (default) bisects on theta, evaluating V, until the bracket is narrower than ``tol``
or holds at most one breakpoint; ``search='grid'`` evaluates V on the (grid+1) x (grid+1) grid of (P0, R0)
in [0, 1]^2 without (0, 0) and takes the bracket between the grid angles where ArgV crosses the identity.
Either bracket is then resolved **exactly** over the breakpoints it contains (with a full scan as a fallback
if rounding ever made the bracket inconsistent), so both searches return the same answer for any ``tol``
and ``grid``; they differ in cost and in the diagnostics they report.

**Thresholds returned.** At a fixed point: the thresholds of V (the optimum). Without a fixed point: the
labels of the jump switch one at a time along the face (in the canonical edge order of ``hull_chains``);
every partial switch is an achievable threshold vector lying on the face, and the best of them -- which
includes both sides V+ and V- of the jump -- is returned. F is unimodal along the upper-right hull boundary,
so no other hull vertex (and no other value of V) is better. ``lower_bound`` = F of the returned cuts
(recomputed by the base class), ``upper_bound`` = max F over the face; ``info_['gap']`` is the reported error.

Diagnostics in ``info_``: ``fixed_point_exists``, ``angle`` (radians: the angle of the fixed point, or the
breakpoint angle of the jump), ``jump_labels`` (labels switching at the jump, 0 at a fixed point),
``n_breakpoints``, ``n_evaluations`` (values of V computed by the search), ``states_scanned`` and, for the
grid, ``n_grid_points`` and ``grid_best_f`` (best F of V over the grid points).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xmlthresh.data.candidates import Candidates
from xmlthresh.data.hulls import hull_chains
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.metrics import f_beta_raw
from xmlthresh.validation import check_int, check_size
from xmlthresh.strategies._kernels import segment_max_f
from xmlthresh.strategies._linearization_kernels import prefix_means
from xmlthresh.strategies.base import ThresholdStrategy
from xmlthresh.strategies.registry import STRATEGIES

HALF_PI = np.pi / 2
#: peak memory per point of ``search=grid``'s (grid + 1)^2 points (measured: 83 bytes per point at grid = 1500,
#: 20 labels; the arrays are per point, not per label; rounded up)
BYTES_PER_GRID_POINT = 96


@dataclass(frozen=True)
class Crossing:
    """Where ArgV crosses the identity, resolved exactly."""

    fixed_point: bool
    state: int  # number of sorted hull edges applied in the returned threshold vector
    angle: float  # angle of the fixed point, or the breakpoint angle of the jump (radians)
    upper_f: float  # F at the fixed point, or max F over the face of the jump
    jump_labels: int  # labels switching at the jump (0 at a fixed point)
    states_scanned: int
    face: tuple[int, int]  # states at the ends of the jump's face [V+, V-] (the segment); (state, state) at a fixed point


@dataclass(frozen=True)
class LinearizedMap:
    """The linearised map V of a candidate set: every value of V is a state of the hull-edge sweep.

    State i applies the first i edges (sorted by key) to the max-precision vertices. Distinct keys split
    the edges into groups; ``bounds[q]`` is the state after the first q groups (q = 0..Q), which is V on
    theta in [theta(key_{q+1}), theta(key_q)] (theta(key_0) = pi/2, theta(key_{Q+1}) = 0).
    """

    beta: float
    sorted_key: np.ndarray
    sorted_label: np.ndarray
    chain_ptr: np.ndarray
    chain: np.ndarray
    mean_p: np.ndarray  # (E+1,) V's precision at every state
    mean_r: np.ndarray  # (E+1,) V's recall at every state
    bounds: np.ndarray  # (Q+1,) state at the end of each group of equal keys
    group_key: np.ndarray  # (Q,) key of group q = 1..Q at index q-1

    @classmethod
    def build(cls, candidates: Candidates, beta: float) -> "LinearizedMap":
        hulls = hull_chains(candidates)
        order = hulls.order
        sorted_key = hulls.edge_key[order]
        start = hulls.start
        mean_p, mean_r = prefix_means(
            float(candidates.precision[start].sum()), float(candidates.recall[start].sum()),
            np.ascontiguousarray(hulls.edge_dp[order]), np.ascontiguousarray(hulls.edge_dr[order]),
            candidates.n_labels,
        )
        n_edges = len(sorted_key)
        if n_edges:
            group_start = np.r_[0, np.flatnonzero(sorted_key[1:] != sorted_key[:-1]) + 1]
            bounds = np.r_[group_start, n_edges].astype(np.int64)
            group_key = sorted_key[group_start]
        else:
            bounds = np.zeros(1, dtype=np.int64)
            group_key = np.zeros(0)
        return cls(float(beta), sorted_key, hulls.edge_label[order], hulls.chain_ptr, hulls.chain,
                   mean_p, mean_r, bounds, group_key)

    # ------------------------------------------------------------------ evaluation of V
    @property
    def n_groups(self) -> int:
        return len(self.group_key)

    def weight_ratio(self, theta):
        """t = beta^2 cot(theta)^2, the weight of recall over the weight of precision (inf at theta = 0)."""
        theta = np.asarray(theta, dtype=np.float64)
        with np.errstate(divide="ignore"):
            cot = np.where(theta >= HALF_PI, 0.0, np.cos(theta) / np.sin(theta))
        return self.beta**2 * cot * cot

    def state_at_ratio(self, t):
        """State of V where the weight ratio is t: every edge of key < t is taken (a tie is not)."""
        return np.searchsorted(self.sorted_key, t, side="left")

    def state_at_angle(self, theta):
        return self.state_at_ratio(self.weight_ratio(theta))

    def group_of_state(self, state):
        """Index q of a state that ends a group (every state returned by ``state_at_*`` does)."""
        return np.searchsorted(self.bounds, state, side="left")

    def angle(self, state):
        """ArgV: the angle of V at ``state``."""
        return np.arctan2(self.mean_r[state], self.mean_p[state])

    def f(self, state):
        return f_beta_raw(self.mean_p[state], self.mean_r[state], self.beta)

    def breakpoint_angle(self, key):
        """The angle theta at which an edge of this key becomes a tie: beta^2 cot(theta)^2 = key."""
        return np.arctan2(self.beta, np.sqrt(key))

    def choice(self, state: int) -> np.ndarray:
        """Candidate index per label at ``state``."""
        n = len(self.chain_ptr) - 1
        applied = np.bincount(self.sorted_label[:state], minlength=n)
        return self.chain[self.chain_ptr[:-1] + applied]

    # ------------------------------------------------------------------ the crossing
    def resolve(self, group_hi: int, group_lo: int) -> Crossing:
        """The exact crossing of ArgV with the identity, searched among groups group_hi..group_lo (V at the
        larger and at the smaller angle of a bracket); falls back to all groups if that range does not
        contain a consistent crossing (rounding in the bracket)."""
        q, scanned = self._first_not_below(group_hi, group_lo)
        if q < 0 or (q == group_hi and q > 0 and self._not_below(np.array([q - 1]))[0]):
            q, more = self._first_not_below(0, self.n_groups)
            scanned += more
        state = int(self.bounds[q])
        upper_angle = HALF_PI if q == 0 else float(self.breakpoint_angle(self.group_key[q - 1]))
        v_angle = float(self.angle(state))
        if v_angle <= upper_angle:  # V of piece q has its angle inside the piece: a fixed point
            return Crossing(True, state, v_angle, float(self.f(state)), 0, scanned, (state, state))
        # jump at key_q: from state bounds[q-1] (angle below the breakpoint) to bounds[q] (above it)
        first, last = int(self.bounds[q - 1]), state
        face = np.arange(first, last + 1)
        best = first + int(np.argmax(self.f(face)))
        upper_f, _ = segment_max_f(
            self.mean_p[first], self.mean_r[first], self.mean_p[last] - self.mean_p[first],
            self.mean_r[last] - self.mean_r[first], self.beta**2,
        )
        return Crossing(False, best, upper_angle, float(upper_f), last - first, scanned, (first, last))

    def _not_below(self, groups: np.ndarray) -> np.ndarray:
        """Whether ArgV of piece q is >= the lower end of the piece (theta(key_{q+1}), 0 for the last)."""
        lower = np.zeros(len(groups))
        inner = groups < self.n_groups
        lower[inner] = self.breakpoint_angle(self.group_key[groups[inner]])
        return self.angle(self.bounds[groups]) >= lower

    def _first_not_below(self, group_from: int, group_to: int) -> tuple[int, int]:
        groups = np.arange(group_from, group_to + 1)
        hit = np.flatnonzero(self._not_below(groups))
        return (int(groups[hit[0]]) if len(hit) else -1), len(groups)


@dataclass(frozen=True)
class ArgvJump:
    """One jump of ArgV: the labels whose hull-chain edge has the key of this breakpoint switch together."""

    angle: float  # the breakpoint angle theta_q (radians)
    key: float  # the edges' key -dp/dr
    argv_above: float  # ArgV just above the breakpoint angle (fewer edges taken)
    argv_below: float  # ArgV just below it (these edges taken): argv_below >= argv_above
    labels: np.ndarray  # positions of the switching labels in the candidate set
    pr_groups: int  # distinct PR curves (candidate (p, r) points) among them
    count_groups: int  # distinct count vectors (relevant ranks, s_k, list length) among them; 0 without lists
    edge_groups: int  # distinct edges (dp, dr) they move along (equal keys, possibly different lengths)
    crossing: bool  # ArgV crosses the identity at this jump (no fixed point)

    @property
    def size(self) -> float:
        return self.argv_below - self.argv_above

    @property
    def one_tie_group(self) -> bool:
        """Whether every switching label has the same PR curve (a cluster of identical classes)."""
        return self.pr_groups == 1


def pr_curve_groups(candidates: Candidates) -> np.ndarray:
    """Group id per label; labels with identical PR curves -- the same candidate (p, r) points, compared
    exactly -- share one id (ids numbered in order of first appearance)."""
    precision, recall, ptr = candidates.precision, candidates.recall, candidates.cand_ptr
    return _group_ids(precision[ptr[k]:ptr[k + 1]].tobytes() + b"|" + recall[ptr[k]:ptr[k + 1]].tobytes()
                      for k in range(candidates.n_labels))


def count_vector_groups(lists: RankedLists) -> np.ndarray:
    """Group id per label; labels with the same relevant ranks, the same s_k and the same list length (and so
    the same counts tp at every cut) share one id."""
    ranks, ptr = lists.relevant_rank, lists.label_ptr
    return _group_ids(ranks[ptr[k]:ptr[k + 1]].tobytes() + b"|" + np.int64([lists.n_relevant[k],
                      lists.list_length[k]]).tobytes() for k in range(lists.n_labels))


def _group_ids(keys) -> np.ndarray:
    ids: dict[bytes, int] = {}
    return np.array([ids.setdefault(key, len(ids)) for key in keys], dtype=np.int64)


def argv_jumps(candidates: Candidates, beta: float = 1.0, lists: RankedLists | None = None) -> list[ArgvJump]:
    """Every jump of ArgV with the labels that switch at it and the tie groups they form.

    ArgV changes only at the breakpoint angles theta_q = atan2(beta, sqrt(key_q)); at theta_q every label
    whose hull chain has an edge of key key_q moves along that edge. Labels with identical PR curves have
    identical chains, so each cluster of identical classes switches at the same angles (the caption of the
    reference's Fig. 3.1); a jump may also gather labels with different curves whose edges happen to share a
    key. ``pr_groups`` counts the distinct curves among the switching labels, ``count_groups`` (with
    ``lists``, the lists ``candidates`` were built from) the distinct count vectors, ``edge_groups`` the
    distinct edges (dp, dr) they move along.

    Parameters
    ----------
    candidates : Candidates
        The candidate set (:func:`xmlthresh.data.candidates.build_candidates`).
    beta : float
        The F measure's beta (it sets the breakpoint angles).
    lists : RankedLists, optional
        The lists of ``candidates``, for ``count_groups``.

    Returns
    -------
    list of ArgvJump
        One per distinct edge key, from the largest angle (precision side) to the smallest.
    """
    vmap = LinearizedMap.build(candidates, beta)
    hulls = hull_chains(candidates)
    edge_dp, edge_dr = hulls.edge_dp[hulls.order], hulls.edge_dr[hulls.order]
    curves = pr_curve_groups(candidates)
    counts = count_vector_groups(lists) if lists is not None else None
    crossing = vmap.resolve(0, vmap.n_groups)
    jumps = []
    for q in range(vmap.n_groups):
        first, last = int(vmap.bounds[q]), int(vmap.bounds[q + 1])
        labels = np.unique(vmap.sorted_label[first:last])
        angle = float(vmap.breakpoint_angle(vmap.group_key[q]))
        jumps.append(ArgvJump(
            angle=angle, key=float(vmap.group_key[q]), argv_above=float(vmap.angle(first)),
            argv_below=float(vmap.angle(last)), labels=labels, pr_groups=len(np.unique(curves[labels])),
            count_groups=len(np.unique(counts[labels])) if counts is not None else 0,
            edge_groups=np.unique(np.stack([edge_dp[first:last], edge_dr[first:last]]), axis=1).shape[1],
            crossing=not crossing.fixed_point and angle == crossing.angle,
        ))
    return jumps


@STRATEGIES.register("linearization")
class LinearizationStrategy(ThresholdStrategy):
    """Fixed point of the linearised map V by bisection on the angle (or on a grid), resolved exactly."""

    certified = True

    #: values of ``search``
    SEARCH = ("bisection", "grid")

    def __init__(self, beta: float = 1.0, search: str = "bisection", grid: int = 100, tol: float = 1e-12) -> None:
        super().__init__(beta=beta)
        self.search = search
        self.grid = grid
        self.tol = tol

    def _check_params(self) -> None:
        super()._check_params()
        if self.search not in self.SEARCH:
            raise ValueError(f"search must be one of {', '.join(map(repr, self.SEARCH))}, got {self.search!r}")
        if self.search == "grid":  # (grid + 1)^2 points; bisection does not use the grid
            check_size("strategy.grid", self.grid, BYTES_PER_GRID_POINT, 1, unit="grid point", square=True)
        else:
            check_int("strategy.grid", self.grid, 1)
        if not (isinstance(self.tol, (int, float, np.floating)) and not isinstance(self.tol, bool)
                and 0 <= self.tol < np.inf):
            raise ValueError(f"tol must be a finite number >= 0 (radians), got {self.tol!r}")

    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        vmap = LinearizedMap.build(candidates, self.beta)
        if self.search == "bisection":
            group_hi, group_lo = self._bisection(vmap)
        else:
            group_hi, group_lo = self._grid(vmap)
        crossing = vmap.resolve(group_hi, group_lo)
        self._upper_f = crossing.upper_f
        self.info_.update(
            search=self.search,
            fixed_point_exists=bool(crossing.fixed_point),
            angle=crossing.angle,
            jump_labels=int(crossing.jump_labels),
            n_breakpoints=int(vmap.n_groups),
            states_scanned=int(crossing.states_scanned),
        )
        return vmap.choice(crossing.state)

    def _bisection(self, vmap: LinearizedMap) -> tuple[int, int]:
        """Bisect on theta for the sign change of ArgV - theta; returns the groups at (hi, lo)."""
        lo, hi = 0.0, HALF_PI  # ArgV(lo) >= lo, ArgV(hi) <= hi
        group_lo = int(vmap.group_of_state(vmap.state_at_angle(lo)))
        group_hi = int(vmap.group_of_state(vmap.state_at_angle(hi)))
        evaluations = 2
        while hi - lo > self.tol and group_lo - group_hi > 1:
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            state = int(vmap.state_at_angle(mid))
            evaluations += 1
            gap = float(vmap.angle(state)) - mid
            if gap > 0:
                lo, group_lo = mid, int(vmap.group_of_state(state))
            elif gap < 0:
                hi, group_hi = mid, int(vmap.group_of_state(state))
            else:  # V(mid) has angle mid exactly: a fixed point
                group_lo = group_hi = int(vmap.group_of_state(state))
                break
        self.info_["n_evaluations"] = evaluations
        self.info_["bracket_width"] = hi - lo
        return group_hi, group_lo

    def _grid(self, vmap: LinearizedMap) -> tuple[int, int]:
        """V on the (grid+1)^2 grid of (P0, R0) without (0, 0); the bracket where ArgV crosses the identity."""
        k = int(self.grid)
        i, j = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")  # i: P0 = i/k, j: R0 = j/k
        i, j = i.ravel()[1:], j.ravel()[1:]  # drop (0, 0)
        ratio = np.where(j > 0, self.beta**2 * (i * i) / np.maximum(j * j, 1), np.inf)  # exact ties stay exact
        states = vmap.state_at_ratio(ratio)
        theta = np.arctan2(j, i)
        above = vmap.angle(states) > theta
        lo = float(theta[above].max()) if above.any() else 0.0
        higher = theta > lo
        hi = float(theta[higher].min()) if higher.any() else HALF_PI
        state_lo = states[theta == lo][0] if above.any() else len(vmap.sorted_key)
        state_hi = states[theta == hi][0] if higher.any() else 0
        self.info_["n_grid_points"] = int(len(states))
        self.info_["n_evaluations"] = int(len(states))
        self.info_["grid_best_f"] = float(np.max(vmap.f(states)))
        return int(vmap.group_of_state(state_hi)), int(vmap.group_of_state(state_lo))

    def _after_fit(self, candidates: Candidates, choice: np.ndarray) -> None:
        self.lower_bound_ = self.f_macro_
        fixed = self.info_["fixed_point_exists"]
        self.upper_bound_ = self.f_macro_ if fixed else max(self._upper_f, self.f_macro_)
        self.info_["gap"] = self.upper_bound_ - self.lower_bound_
        self.fixed_point_exists_ = fixed
