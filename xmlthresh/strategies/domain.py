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
"""

from __future__ import annotations

import numpy as np

from ..data.candidates import Candidates
from ..data.ranked_lists import RankedLists
from ..data.hulls import hull_chains
from ._kernels import minkowski_sweep
from .base import ThresholdStrategy
from .registry import STRATEGIES

#: a hull maximiser closer than this (as a fraction of its edge) to an end point is taken to be that vertex
_VERTEX_TOL = 1e-9


@STRATEGIES.register("domain")
class DomainStrategy(ThresholdStrategy):
    """Exact domain analysis with certified lower and upper bounds on the F-macro optimum."""

    certified = True

    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        precision, recall = candidates.precision, candidates.recall
        hulls = hull_chains(candidates)
        chain_ptr, chain, order = hulls.chain_ptr, hulls.chain, hulls.order
        sorted_label = hulls.edge_label[order]
        best_step, _, upper_f, segment, t = minkowski_sweep(
            sorted_label, chain_ptr, chain, precision, recall, self.beta**2
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
        return chain[chain_ptr[:-1] + applied]

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
