"""``domain_fast``: fast domain analysis in a fan of directions (Algorithm 4 of theory.md, defect fixed).

For every direction theta of a fan, each label takes its support vertex (the chain vertex maximising
p cos(theta) + r sin(theta)); the average of those vertices is the support point of the achievable set's
convex hull in that direction, and it is achievable (one vertex per label).

Directions: the reference program (Berger & Guda) spreads ``n_angles`` directions over the full circle,
theta_j = 2 pi j / n_angles, and only those in [0, pi/2] matter for F (it increases in P and R); this is
the set that reproduces its published support points (``result_ESPGameNN_1000_20.txt``) and numbers. When
n_angles is not a multiple of 4, pi/2 is added so that the outer polygon is bounded. Angles whose tangent
is rational (0, pi/4, pi/2) are handled exactly.

The reference program's defect is fixed: in a direction on a boundary of a label's normal cone (the label's
support set is a whole edge) the label contributes one vertex (the higher-precision end), never two.

Reported:

* ``lower_bound`` = best F over the support points, recomputed from the returned cuts (achievable);
* ``info_['inner_estimate']`` = max of F over the inner polygon (the polyline through the support points)
  -- what the reference reports as an upper estimate; it is *not* a bound (the optimum can lie outside);
* ``upper_bound`` = max of F over the outer polygon {x : w_j . x <= h(w_j) for every direction}, a rigorous
  bound (every achievable point satisfies all supporting inequalities); F is increasing and concave, so its
  maximum lies on the polyline through consecutive intersections of the supporting lines.

Fitted arrays besides the estimator contract: ``directions_`` (angles), ``support_points_`` and
``outer_vertices_`` ((d, 2) and (d - 1, 2) arrays of (P, R)).
"""

from __future__ import annotations

import numpy as np

from ..data.candidates import Candidates
from ..data.hulls import hull_chains
from ..data.ranked_lists import RankedLists
from ..validation import check_size
from ._domain_kernels import polyline_max_f, support_points
from .base import ThresholdStrategy
from .registry import STRATEGIES

#: peak memory per direction of a fit: the directions' angle, tangent, cosine and sine, the support points'
#: step, P and R, and the outer polygon's differences and vertices (measured: 38.5 bytes per direction at
#: 10^6 and 4 * 10^6 directions, independent of the labels; rounded up) -- ``n_angles`` is refused beyond
#: the memory available (a billion directions ran until the kernel killed the process at 21.7 GB)
BYTES_PER_DIRECTION = 48


def quadrant_directions(n_angles: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Directions 2 pi j / n_angles in [0, pi/2] (plus pi/2 when missing): (theta, tan, cos, sin).

    Multiples of pi/4 get exact values (tan 0, 1, inf; cos/sin 0, sqrt(1/2), 1), so that ties with edges of
    slope -1 or axis-parallel are decided exactly.
    """
    j = np.arange(n_angles // 4 + 1, dtype=np.int64)
    theta = 2.0 * np.pi * j / n_angles
    quarter = np.where(8 * j % n_angles == 0, 8 * j // n_angles, -1)  # theta = quarter * pi/4 exactly, or -1
    if n_angles % 4:
        theta, quarter = np.r_[theta, np.pi / 2], np.r_[quarter, 2]
    tangent = np.tan(theta)
    cos, sin = np.cos(theta), np.sin(theta)
    half = np.sqrt(0.5)
    for q, (tq, cq, sq) in enumerate(((0.0, 1.0, 0.0), (1.0, half, half), (np.inf, 0.0, 1.0))):
        at = quarter == q
        tangent[at], cos[at], sin[at] = tq, cq, sq
        theta[at] = q * np.pi / 4
    return theta, tangent, cos, sin


@STRATEGIES.register("domain_fast")
class DomainFastStrategy(ThresholdStrategy):
    """Support points in ``n_angles`` directions: achievable lower bound, rigorous outer-polygon upper bound."""

    certified = True

    def __init__(self, beta: float = 1.0, n_angles: int = 1000) -> None:
        super().__init__(beta=beta)
        self.n_angles = n_angles

    def _check_params(self) -> None:
        super()._check_params()
        check_size("strategy.n_angles", self.n_angles, BYTES_PER_DIRECTION, 3, unit="direction")

    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        precision, recall = candidates.precision, candidates.recall
        hulls = hull_chains(candidates)
        chain_ptr, chain = hulls.chain_ptr, hulls.chain
        sorted_label = hulls.edge_label[hulls.order]
        sorted_key = hulls.edge_key[hulls.order]
        theta, tangent, cos, sin = quadrant_directions(int(self.n_angles))
        step, point_p, point_r = support_points(sorted_key, sorted_label, chain_ptr, chain, precision, recall, tangent)
        b2 = float(self.beta**2)

        # best support point (achievable); its cuts are returned and F recomputed from them by the base class
        den = b2 * point_p + point_r
        point_f = np.where(den > 0, (1 + b2) * point_p * point_r / np.where(den > 0, den, 1.0), 0.0)
        best = int(np.argmax(point_f))
        inner_f, _, _ = polyline_max_f(point_p, point_r, b2)

        # outer polygon: consecutive supporting lines w_j . x = h_j = w_j . s_j intersect at its vertices
        # V_j = s_j + t_j (-sin_j, cos_j), t_j = w_{j+1} . (s_{j+1} - s_j) / sin(theta_{j+1} - theta_j): written
        # from the support points' differences, so rounding is not amplified by 1 / sin(dtheta)
        step_p, step_r = np.diff(point_p), np.diff(point_r)
        advance = np.maximum(cos[1:] * step_p + sin[1:] * step_r, 0.0)  # >= 0: s_j is below line j + 1
        t = advance / np.sin(np.diff(theta))
        outer_p = point_p[:-1] - t * sin[:-1]
        outer_r = point_r[:-1] + t * cos[:-1]
        outer_f, _, _ = polyline_max_f(outer_p, outer_r, b2)

        self.directions_ = theta
        self.support_points_ = np.column_stack([point_p, point_r])
        self.outer_vertices_ = np.column_stack([outer_p, outer_r])
        self._outer_f = float(outer_f)
        self.info_["n_directions"] = int(len(theta))
        self.info_["n_hull_edges"] = int(hulls.n_edges)
        self.info_["best_direction"] = float(theta[best])
        self.info_["inner_estimate"] = float(inner_f)
        self.info_["outer_upper_bound"] = float(outer_f)

        applied = np.bincount(sorted_label[: step[best]], minlength=candidates.n_labels)
        return chain[chain_ptr[:-1] + applied]

    def _after_fit(self, candidates: Candidates, choice: np.ndarray) -> None:
        self.lower_bound_ = self.f_macro_
        self.upper_bound_ = max(self._outer_f, self.f_macro_)
        self.info_["gap"] = self.upper_bound_ - self.lower_bound_
