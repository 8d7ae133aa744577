"""``domain``: the exact sweep over the Minkowski average of the per-label hull chains (theory.md sec. 2).

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
"""

from __future__ import annotations

import time

import numpy as np

from ..data.candidates import Candidates
from ..data.ranked_lists import RankedLists
from ..data.hulls import hull_chains
from ._domain_kernels import branch_and_bound, label_classes
from ._kernels import increment_sweep
from .base import ThresholdStrategy
from .registry import STRATEGIES

#: a hull maximiser closer than this (as a fraction of its edge) to an end point is taken to be that vertex
_VERTEX_TOL = 1e-9


@STRATEGIES.register("domain")
class DomainStrategy(ThresholdStrategy):
    """Exact domain analysis with certified lower and upper bounds on the F-macro optimum."""

    certified = True

    #: values of ``refine``
    REFINE = ("none", "bnb")

    def __init__(
        self, beta: float = 1.0, refine: str = "none", gap_tol: float = 1e-9, max_nodes: int = 100_000
    ) -> None:
        super().__init__(beta=beta)
        self.refine = refine
        self.gap_tol = gap_tol
        self.max_nodes = max_nodes

    def _check_params(self) -> None:
        super()._check_params()
        if self.refine not in self.REFINE:
            raise ValueError(f"refine must be one of {', '.join(map(repr, self.REFINE))}, got {self.refine!r}")
        if not (isinstance(self.gap_tol, (int, float)) and not isinstance(self.gap_tol, bool)
                and 0 <= self.gap_tol < np.inf):
            raise ValueError(f"gap_tol must be a finite number >= 0, got {self.gap_tol!r}")
        if not (isinstance(self.max_nodes, (int, np.integer)) and not isinstance(self.max_nodes, bool)
                and self.max_nodes >= 1):
            raise ValueError(f"max_nodes must be an integer >= 1, got {self.max_nodes!r}")

    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
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
        if self.refine == "bnb":
            self.info_["root_lower_bound"] = float(root_f)
            choice = self._branch_and_bound(candidates, sorted_label, choice)
        return choice

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
        self.lower_bound_ = self.f_macro_
        self.upper_bound_ = max(self._upper_f, self.f_macro_)
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
