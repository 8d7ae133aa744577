"""``domain``: the exact sweep over the Minkowski average of the per-label hull chains
(docs/theory.md#exact-sweep).

The set of achievable (P, R) is the Minkowski average of the per-label point sets; its convex hull is the
Minkowski average of the per-label hulls, whose upper-right boundary is traced by merging all labels'
chain edges sorted by angle. Starting with every label at its max-precision vertex, the edges are applied
one at a time -- a single label moving to its next hull vertex -- and F is evaluated after every switch:
every visited state is an achievable threshold vector (also inside a group of edges of equal angle).

* ``lower_bound`` = F-macro of the best visited state (achieved by the returned cuts);
* ``upper_bound`` = max of F over the traced boundary, i.e. over the whole convex hull (F is increasing
  and concave) -- no threshold vector can do better. Both are exact up to floating-point rounding.
* ``fixed_point_exists``: the linearised map V has a fixed point iff the hull maximiser is a vertex of the
  Minkowski hull (then that vertex is achievable and optimal); when the maximiser lies inside an edge,
  V jumps across it and there is no fixed point (the Example data set).

Ties in edge angle are kept together by sorting on the exact-integer edge key, then on the edge vector,
so equal edges of different labels form one group whatever the label order.

No full sort is needed: F is unimodal along the boundary (an edge of key t raises F iff b^2 P^2 > t R^2,
and that test only turns from true to false along the sweep), so a quickselect on the keys finds the one
group of equal-key edges where F turns (expected O(E)); only that group is ordered and swept. Its best
visited state is the best of the whole sweep, and the maximum of F over its segments is the maximum over
the hull.

Closing the gap (``refine='bnb'``): the hull bound can exceed the discrete optimum (by O(1/n^2)), and the
optimum need not use hull vertices only. A best-first branch and bound over labels
(``_domain_kernels.branch_and_bound``) restricts labels to ranges of their candidates; a node's bound is the
same exact sweep over the hulls of the restricted ranges (fixed labels shift it), its best visited state
feeds the incumbent, and the label whose edge holds the hull maximiser is split (identical labels are
split as one orbit, so n copies of a label cost O(n) nodes, not O(2^n)). It stops when
upper - lower <= ``gap_tol`` (``info_['refine_status'] = 'proved'``) or after ``max_nodes`` evaluated nodes
(``'budget'``; the remaining gap is in ``info_['gap']``). ``info_`` also gets ``nodes``, ``refine_seconds``,
``label_classes`` and the sweep's ``root_lower_bound`` / ``root_upper_bound``. With ``refine='none'``
(default) nothing changes.

Polishing (``polish='coordinate'``, the default): the sweep's best state is achievable but not always a
coordinate-wise maximum, and cyclic coordinate ascent from T_b (the ``coordinate`` strategy) can, rarely, end
above it. The polish keeps the best of three states: the sweep's, coordinate ascent from it (labels visited in
an order fixed by their candidates), and the ``coordinate`` strategy's own result (from T_b, labels in their
given order, the same passes and tolerance). So ``domain`` is never below ``coordinate`` on the same fit
problem. When the sweep's state is already within ``POLISH_SKIP_GAP`` of the certified upper bound nothing can
beat it by more than that, and the polish is skipped (``info_['polish_skipped'] = True``). The certificate is
unchanged: the upper bound holds for every threshold vector, so the result is within the certified gap;
``refine='bnb'`` proves the discrete optimum. ``info_['polish_gain']`` records what the polish added and
``info_['polish_source']`` which state won (``'sweep'``, ``'sweep_ascent'`` or ``'coordinate'``). Because
``coordinate`` depends on the order of the labels, so can the polished F-macro when ``'coordinate'`` wins;
``polish='none'`` gives the sweep's state, whose F-macro and bounds do not depend on the labels' order.
"""

from __future__ import annotations

import time

import numpy as np

from xmlthresh.data.candidates import Candidates
from xmlthresh.data.hulls import hull_chains
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.metrics import f_beta_raw
from xmlthresh.validation import check_int, check_size
from xmlthresh.strategies._domain_kernels import branch_and_bound, label_classes
from xmlthresh.strategies._kernels import (coordinate_ascent, coordinate_ascent_in_order, increment_sweep,
                                           independent_argmax, select_crossing)
from xmlthresh.strategies.base import PoolingMixin, PrecisionControlMixin, ThresholdStrategy
from xmlthresh.strategies.registry import STRATEGIES

#: a hull maximiser closer than this (as a fraction of its edge) to an end point is taken to be that vertex
_VERTEX_TOL = 1e-9
#: memory per node of the branch and bound: seven int64/float64 arrays of max_nodes + 1 entries (parent,
#: restriction start and count, bound, children's start, orbit size, heap), allocated when it starts
BYTES_PER_NODE = 56


@STRATEGIES.register("domain")
class DomainStrategy(PoolingMixin, PrecisionControlMixin, ThresholdStrategy):
    """Exact domain analysis with certified lower and upper bounds on the F-macro optimum.

    ``min_precision`` and ``smoothing`` (see :class:`PrecisionControlMixin`) change the problem that is solved;
    the bounds then certify that problem. ``pooling`` / ``fallback`` (on scores, see :class:`PoolingMixin`)
    move the thresholds after the exact fit: the bounds stay those of the fit problem."""

    certified = True

    #: values of ``refine``
    REFINE = ("none", "bnb")
    #: values of ``polish``
    POLISH = ("coordinate", "none")
    #: the coordinate ascent of the polish stops after this many passes, and accepts a gain above this
    #: tolerance: the ``coordinate`` strategy's defaults, so that its result is one of the polish's candidates
    POLISH_MAX_PASSES = 1000
    POLISH_TOL = 1e-15
    #: a sweep state this close to the certified upper bound cannot be beaten by more than this: no polish
    POLISH_SKIP_GAP = 1e-12

    def __init__(
        self, beta: float = 1.0, refine: str = "none", gap_tol: float = 1e-9, max_nodes: int = 100_000,
        min_precision: float = 0.0, smoothing: float = 0.0, pooling: float | str = 0.0, fallback: str = "never",
        pooling_space: str = "score", max_predicted_per_positive: float | None = None, polish: str = "coordinate",
    ) -> None:
        super().__init__(beta=beta)
        self.polish = polish
        self.min_precision = min_precision
        self.smoothing = smoothing
        self.max_predicted_per_positive = max_predicted_per_positive
        self.pooling = pooling
        self.fallback = fallback
        self.pooling_space = pooling_space
        self.refine = refine
        self.gap_tol = gap_tol
        self.max_nodes = max_nodes

    def _check_params(self) -> None:
        super()._check_params()
        self._check_precision_control()
        self._check_pooling()
        if self.refine == "bnb" and self.smoothing:
            raise ValueError("refine='bnb' branches on exact integer counts; it cannot be combined with smoothing")
        if self.polish not in self.POLISH:
            raise ValueError(f"polish must be one of {', '.join(map(repr, self.POLISH))}, got {self.polish!r}")
        if self.refine not in self.REFINE:
            raise ValueError(f"refine must be one of {', '.join(map(repr, self.REFINE))}, got {self.refine!r}")
        if not (isinstance(self.gap_tol, (int, float)) and not isinstance(self.gap_tol, bool)
                and 0 <= self.gap_tol < np.inf):
            raise ValueError(f"gap_tol must be a finite number >= 0, got {self.gap_tol!r}")
        if self.refine == "bnb":  # the node arrays are allocated for max_nodes nodes up front
            check_size("strategy.max_nodes", self.max_nodes, BYTES_PER_NODE, 1, unit="node")
        else:
            check_int("strategy.max_nodes", self.max_nodes, 1)

    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        if self.refine == "bnb":
            return self._sweep_all(candidates)
        return self._sweep_turning_group(candidates)

    def _sweep_turning_group(self, candidates: Candidates) -> np.ndarray:
        choice, upper_f, info = turning_group_sweep(candidates, self.beta)
        self._upper_f = upper_f
        self.info_.update(info)
        return self._polished(candidates, choice)

    def _polished(self, candidates: Candidates, choice: np.ndarray) -> np.ndarray:
        """The best of the sweep's ``choice``, coordinate ascent from it, and the ``coordinate`` strategy's own
        result (``polish='coordinate'``); ``choice`` itself with ``polish='none'``, or when the sweep's state is
        within ``POLISH_SKIP_GAP`` of the certified upper bound ``self._upper_f``."""
        if self.polish == "none":
            return choice
        precision, recall = candidates.precision, candidates.recall
        n, b2 = candidates.n_labels, float(self.beta**2)

        def f_of(state: np.ndarray) -> float:
            return float(f_beta_raw(precision[state].sum() / n, recall[state].sum() / n, self.beta))

        before = f_of(choice)
        self.info_["polish_gain"] = 0.0
        self.info_["polish_source"] = "sweep"
        upper = getattr(self, "_upper_f", None)
        self.info_["polish_skipped"] = bool(upper is not None and upper - before <= self.POLISH_SKIP_GAP)
        if self.info_["polish_skipped"]:
            return choice
        # from the sweep's state, labels in an order fixed by their candidates (identical labels are
        # interchangeable, so this ascent does not depend on the labels' order) ...
        from_sweep = np.ascontiguousarray(choice, dtype=np.int64).copy()
        order = np.argsort(self._label_classes(candidates), kind="stable").astype(np.int64)
        passes_sweep, _ = coordinate_ascent_in_order(candidates.cand_ptr, precision, recall, from_sweep, order, b2,
                                                     self.POLISH_MAX_PASSES, self.POLISH_TOL)
        # ... and exactly what the coordinate strategy computes: from T_b, labels in their given order
        from_tb = independent_argmax(candidates.cand_ptr, precision, recall, b2)
        passes_tb, _ = coordinate_ascent(candidates.cand_ptr, precision, recall, from_tb, b2,
                                         self.POLISH_MAX_PASSES, self.POLISH_TOL)
        best, best_f = np.asarray(choice), before
        for source, state in (("sweep_ascent", from_sweep), ("coordinate", from_tb)):
            if f_of(state) > best_f:  # ties keep the earlier, order-free state
                best, best_f = state, f_of(state)
                self.info_["polish_source"] = source
        self.info_["polish_passes"] = int(passes_sweep) + int(passes_tb)
        self.info_["polish_gain"] = best_f - before
        return best

    def _sweep_all(self, candidates: Candidates) -> np.ndarray:
        """The full sweep over all edges in sorted order (the root of the branch and bound needs the order),
        then the branch and bound."""
        precision, recall = candidates.precision, candidates.recall
        hulls = hull_chains(candidates)
        chain_ptr, chain, order = hulls.chain_ptr, hulls.chain, hulls.order
        sorted_label = hulls.sorted_label
        start = hulls.start
        best_step, root_f, upper_f, segment, t = increment_sweep(
            float(precision[start].sum()), float(recall[start].sum()), hulls.sorted_dp, hulls.sorted_dr,
            candidates.n_labels, self.beta**2,
        )
        self._upper_f = float(upper_f)
        n_edges = len(order)
        self.info_["n_hull_edges"] = int(n_edges)
        self.info_["best_step"] = int(best_step)

        # Where the hull maximiser sits: a state (vertex of the traced path) or inside a segment.
        state = segment if t <= _VERTEX_TOL else (segment + 1 if t >= 1 - _VERTEX_TOL else -1)
        sorted_key = hulls.edge_key[order]
        is_hull_vertex = state >= 0 and (
            state == 0 or state == n_edges or sorted_key[state - 1] != sorted_key[state]
        )
        self.info_["fixed_point_exists"] = bool(is_hull_vertex)
        hull_p, hull_r = self._point_on_path(sorted_label, chain_ptr, chain, precision, recall, segment, t)
        self.info_["hull_argmax_precision"] = hull_p
        self.info_["hull_argmax_recall"] = hull_r

        applied = np.bincount(sorted_label[:best_step], minlength=candidates.n_labels)
        choice = chain[chain_ptr[:-1] + applied]
        self.info_["root_lower_bound"] = float(root_f)
        return self._branch_and_bound(candidates, sorted_label, self._polished(candidates, choice))

    def _branch_and_bound(self, candidates: Candidates, sorted_label: np.ndarray, choice: np.ndarray) -> np.ndarray:
        """Refine the sweep's result ``choice`` by branch and bound; tightens ``self._upper_f``."""
        started = time.perf_counter()
        hulls = hull_chains(candidates)
        chain_ptr, chain = hulls.chain_ptr, hulls.chain
        # the i-th edge of label k in sweep order joins its chain vertices i and i + 1 (as in the sweep)
        edges_of_label = np.bincount(sorted_label, minlength=candidates.n_labels)
        first_edge = np.r_[0, np.cumsum(edges_of_label)[:-1]]
        occurrence = np.empty(len(sorted_label), dtype=np.int64)
        occurrence[np.argsort(sorted_label, kind="stable")] = np.arange(len(sorted_label)) - np.repeat(
            first_edge, edges_of_label
        )
        slot = chain_ptr[sorted_label] + occurrence
        incumbent = np.ascontiguousarray(choice, dtype=np.int64).copy()
        label_class = self._label_classes(candidates)
        class_member = np.argsort(label_class, kind="stable")
        class_ptr = np.r_[0, np.cumsum(np.bincount(label_class))]
        _, upper, nodes, proved = branch_and_bound(
            candidates.cand_ptr, candidates.tp, candidates.cut, candidates.n_relevant,
            candidates.precision, candidates.recall,
            sorted_label, chain[slot], chain[slot + 1], hulls.edge_key[hulls.order], hulls.start,
            class_ptr, class_member, label_class,
            incumbent, float(self.beta**2), float(self.gap_tol), int(self.max_nodes),
        )
        self.info_["refine_seconds"] = time.perf_counter() - started
        self.info_["label_classes"] = int(len(class_ptr) - 1)
        self.info_["root_upper_bound"] = self._upper_f
        self.info_["refine_status"] = "proved" if proved else "budget"
        self.info_["nodes"] = int(nodes)
        self._upper_f = min(self._upper_f, float(upper))
        return incumbent

    @staticmethod
    def _label_classes(candidates: Candidates) -> np.ndarray:
        """Class id of every label; labels of one class have identical candidates (interchangeable)."""
        counts = np.diff(candidates.cand_ptr)
        position = np.arange(candidates.n_candidates) - np.repeat(candidates.cand_ptr[:-1], counts)
        with np.errstate(over="ignore"):  # a multiplicative hash: wrap-around is intended
            mix = (
                candidates.tp.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                ^ candidates.cut.astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
                ^ (position.astype(np.uint64) + np.uint64(1)) * np.uint64(0x165667B19E3779F9)
            )
            label_hash = np.add.reduceat(mix, candidates.cand_ptr[:-1])
        order = np.lexsort((label_hash, counts, candidates.n_relevant))
        return label_classes(order, candidates.cand_ptr, candidates.tp, candidates.cut, candidates.n_relevant)

    def _after_fit(self, candidates: Candidates, choice: np.ndarray) -> None:
        # bounds of the problem that was solved (the empirical one unless smoothing changed the objective)
        self.lower_bound_ = self.objective_f_macro_ if not candidates.exact else self.f_macro_
        self.upper_bound_ = max(self._upper_f, self.lower_bound_)
        self.info_["gap"] = self.upper_bound_ - self.lower_bound_
        self.fixed_point_exists_ = self.info_["fixed_point_exists"]

    @staticmethod
    def _point_on_path(sorted_label, chain_ptr, chain, precision, recall, segment, t) -> tuple[float, float]:
        """(P, R) at fraction t of segment ``segment`` of the traced boundary, recomputed from scratch."""
        n = len(chain_ptr) - 1
        applied = np.bincount(sorted_label[:segment], minlength=n)
        vertex = chain[chain_ptr[:-1] + applied]
        p, r = precision[vertex].sum(), recall[vertex].sum()
        if segment < len(sorted_label) and t > 0:
            k = sorted_label[segment]
            a, b = vertex[k], chain[chain_ptr[k] + applied[k] + 1]
            p += t * (precision[b] - precision[a])
            r += t * (recall[b] - recall[a])
        return float(p / n), float(r / n)


def _in_chain_order(group: np.ndarray, edge_label: np.ndarray, chain_ptr: np.ndarray,
                    applied: np.ndarray) -> np.ndarray:
    """The group's edges in sweep order with every label's own edges in chain order among the positions it
    occupies (as :func:`~xmlthresh.data.hulls.canonical_edge_order` does for the full sweep): a label whose
    chain has collinear consecutive edges (equal keys) must take its first such edge first, or the states
    swept (sums of ``edge_dp``) are not the threshold vectors that the returned counts per label select.
    ``applied`` counts the edges of each label applied before the group (a prefix of its chain)."""
    labels = edge_label[group]
    by_label = np.argsort(labels, kind="stable")
    first_of_label = np.searchsorted(labels[by_label], labels[by_label], side="left")
    occurrence = np.empty(len(group), dtype=np.int64)
    occurrence[by_label] = np.arange(len(group)) - first_of_label
    return chain_ptr[labels] - labels + applied[labels] + occurrence


def turning_group_sweep(candidates: Candidates, beta: float) -> tuple[np.ndarray, float, dict]:
    """The exact sweep without sorting the edges: F is unimodal along the hull boundary, so the best
    visited state and the hull maximiser lie in the one group of equal-key edges where F turns from
    rising to falling (or at the vertex between two groups). A quickselect finds that group in expected
    O(E); only its edges are ordered (canonically: by edge vector, label, chain position) and swept.

    Returns (candidate index per label of the best visited state, max of F over the hull, diagnostics).
    Works on any candidate set, also one with an estimated objective (``candidates.exact`` False)."""
    precision, recall = candidates.precision, candidates.recall
    hulls = hull_chains(candidates)
    n, b2 = candidates.n_labels, beta**2
    info: dict = {}
    start = hulls.start
    inside, group_key, base_p, base_r = select_crossing(
        hulls.edge_key, hulls.edge_dp, hulls.edge_dr, float(precision[start].sum()),
        float(recall[start].sum()), n, b2, 0,
    )
    below = hulls.edge_key < group_key
    applied = np.bincount(hulls.edge_label[below], minlength=n)
    n_before = int(np.count_nonzero(below))
    info["n_hull_edges"] = int(hulls.n_edges)
    if inside:
        group = np.flatnonzero(hulls.edge_key == group_key)
        group = group[np.lexsort((group, hulls.edge_label[group], hulls.edge_dp[group], hulls.edge_dr[group]))]
        group = _in_chain_order(group, hulls.edge_label, hulls.chain_ptr, applied)
        step_dp = np.ascontiguousarray(hulls.edge_dp[group])
        step_dr = np.ascontiguousarray(hulls.edge_dr[group])
        best_step, _, upper_f, segment, t = increment_sweep(base_p, base_r, step_dp, step_dr, n, b2)
        applied += np.bincount(hulls.edge_label[group[:best_step]], minlength=n)
        # a maximiser at either end of the group is a vertex of the Minkowski hull: a fixed point of V
        fixed = (segment == 0 and t <= _VERTEX_TOL) or (segment == len(group) - 1 and t >= 1 - _VERTEX_TOL)
        hull_p = (base_p + step_dp[:segment].sum() + t * step_dp[segment]) / n
        hull_r = (base_r + step_dr[:segment].sum() + t * step_dr[segment]) / n
    else:  # the maximum is the hull vertex between two groups: achievable, a fixed point of V
        best_step, fixed = 0, True
        hull_p, hull_r = base_p / n, base_r / n
        upper_f = f_beta_raw(hull_p, hull_r, beta)
    info["best_step"] = n_before + int(best_step)
    info["fixed_point_exists"] = bool(fixed)
    info["hull_argmax_precision"] = float(hull_p)
    info["hull_argmax_recall"] = float(hull_r)
    return hulls.chain[hulls.chain_ptr[:-1] + applied], float(upper_f), info
