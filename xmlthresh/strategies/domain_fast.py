"""``domain_fast``: fast domain analysis in a fan of directions (Algorithm 4, defect fixed;
docs/theory.md#fast-domain-analysis).

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

**The region where F exceeds the lower bound** (the reference work's Table 6 and Fig. 3.8b). Every
achievable point lies in the outer polygon, so the optimum lies in R = {x in outer polygon : F(x) >= lower
bound}: a convex set (F is concave, the polygon convex) that does not contain the origin. F is positively
homogeneous, so in polar coordinates (angle phi, radius rho) R is exactly
{rho_in(phi) <= rho <= rho_out(phi)}, with rho_in = lower / F(cos phi, sin phi) (the level line) and
rho_out the ray's exit from the outer polygon; its angles form one interval [phi_a, phi_b] whose ends are
found by bisection. Its spreads are reported like ``linearization_region``'s: ``region_dP``, ``region_dR``,
``region_dF`` (= upper - lower), ``region_dradius``, ``region_dangle`` with their ``_min`` / ``_max``.
P, R and the radius are extreme at the outer polygon's vertices or at phi_a, phi_b (the level line is
monotone in P and R, and the radius is convex along a segment), except the smallest radius, which lies on
the level line and is found by golden-section search on the unimodal F(cos phi, sin phi).

Fitted arrays besides the estimator contract: ``directions_`` (angles), ``support_points_`` and
``outer_vertices_`` ((d, 2) and (d - 1, 2) arrays of (P, R)), ``outer_chain_`` (the outer polygon's
boundary in the quadrant, from (P_max, 0) to (0, R_max)), ``upper_point_`` (where F is maximal on it) and
``region_boundary_`` (a closed polyline around R, for pictures). ``fitted().fan`` holds them for the plots.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xmlthresh.data.candidates import Candidates
from xmlthresh.data.hulls import hull_chains
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.validation import check_size
from xmlthresh.strategies._domain_kernels import polyline_max_f, support_points
from xmlthresh.strategies.base import ThresholdStrategy
from xmlthresh.strategies.registry import STRATEGIES

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
        outer_f, segment, at = polyline_max_f(outer_p, outer_r, b2)
        if len(outer_p) > 1:
            upper = (outer_p[segment] + at * (outer_p[segment + 1] - outer_p[segment]),
                     outer_r[segment] + at * (outer_r[segment + 1] - outer_r[segment]))
        else:
            upper = (float(outer_p[0]), float(outer_r[0]))

        self.directions_ = theta
        self.support_points_ = np.column_stack([point_p, point_r])
        self.outer_vertices_ = np.column_stack([outer_p, outer_r])
        self._outer_f = float(outer_f)
        self.upper_point_ = np.array(upper, dtype=np.float64)
        self.outer_chain_ = outer_chain(point_p[0], self.outer_vertices_, point_r[-1])
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
        region, boundary = lower_bound_region(self.outer_chain_, self.lower_bound_, self.upper_bound_, self.beta)
        self.info_.update(region)
        self.region_boundary_ = boundary

    def _fitted_extras(self) -> dict[str, Any]:
        return {"fan": {"directions": self.directions_, "support_points": self.support_points_,
                        "outer_chain": self.outer_chain_, "upper_point": self.upper_point_,
                        "lower_point": np.array([self.metrics_["precision"], self.metrics_["recall"]]),
                        "region_boundary": self.region_boundary_, "n_angles": int(self.n_angles)}}


def outer_chain(max_precision: float, vertices: np.ndarray, max_recall: float) -> np.ndarray:
    """The outer polygon's boundary in the quadrant, (m, 2): (P_max, 0), the vertices, (0, R_max), with
    repeated points dropped -- with the origin it is a convex polygon whose angles from the origin increase."""
    chain = np.vstack([[max_precision, 0.0], vertices, [0.0, max_recall]])
    keep = np.r_[True, np.any(np.diff(chain, axis=0) != 0.0, axis=1)]
    return chain[keep]


def _exit_radius(chain: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """rho_out(phi): where the ray of angle phi in [0, pi/2] leaves the polygon (origin + ``chain``)."""
    angles = np.arctan2(chain[:, 1], chain[:, 0])
    seg = np.clip(np.searchsorted(angles, phi, side="right") - 1, 0, len(chain) - 2)
    a, d = chain[seg], chain[seg + 1] - chain[seg]
    ux, uy = np.cos(phi), np.sin(phi)
    across = ux * d[:, 1] - uy * d[:, 0]
    own = a[:, 0] * d[:, 1] - a[:, 1] * d[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(across != 0.0, own / across, np.hypot(a[:, 0], a[:, 1]))
    return np.maximum(rho, 0.0)


def _f_on_circle(phi, b2: float):
    c, s = np.cos(phi), np.sin(phi)
    den = b2 * c + s
    return np.where(den > 0, (1 + b2) * c * s / np.where(den > 0, den, 1.0), 0.0)


def _entry_radius(phi, lower: float, b2: float):
    """rho_in(phi) = lower / F(cos phi, sin phi): where the ray of angle phi reaches the level line F = lower."""
    f = _f_on_circle(phi, b2)
    if lower <= 0:
        return np.zeros_like(f)
    with np.errstate(divide="ignore"):
        return np.where(f > 0, lower / np.where(f > 0, f, 1.0), np.inf)


def lower_bound_region(chain: np.ndarray, lower: float, upper: float, beta: float,
                       n_grid: int = 4097) -> tuple[dict[str, float], np.ndarray]:
    """Spreads of R = {x in the outer polygon : F_beta(x) >= lower} (module docstring) and a closed polyline
    around R (outer part, then the level line back). ``upper`` is the max of F over the polygon (dF)."""
    b2 = float(beta) ** 2
    vertex_angles = np.arctan2(chain[:, 1], chain[:, 0])
    phi = np.unique(np.r_[np.linspace(0.0, np.pi / 2, n_grid), vertex_angles])

    def margin(angle):  # >= 0 exactly where the ray of this angle meets R
        return _exit_radius(chain, angle) - _entry_radius(angle, lower, b2)

    inside = margin(phi) >= 0
    if not inside.any():  # R is one point (lower == upper up to rounding): the polygon's F maximiser
        best = int(np.argmax(_f_on_circle(phi, b2) * _exit_radius(chain, phi)))
        inside[best] = True
    first, last = int(np.argmax(inside)), len(phi) - 1 - int(np.argmax(inside[::-1]))
    ends = []
    for lo, hi, is_lower_end in ((first - 1, first, True), (last + 1, last, False)):
        if lo < 0 or lo >= len(phi):  # the interval reaches 0 or pi/2
            ends.append(phi[hi])
            continue
        out, inn = np.array([phi[lo]]), np.array([phi[hi]])
        for _ in range(60):  # bisection between an angle outside R and one inside
            mid = 0.5 * (out + inn)
            ok = margin(mid) >= 0
            inn, out = np.where(ok, mid, inn), np.where(ok, out, mid)
        ends.append(float(inn[0]))
    phi_a, phi_b = ends
    inner = (vertex_angles > phi_a) & (vertex_angles < phi_b)
    end_phi = np.array([phi_a, phi_b])
    end_rho = _exit_radius(chain, end_phi)
    outer_points = np.vstack([np.column_stack([end_rho * np.cos(end_phi), end_rho * np.sin(end_phi)]),
                              chain[inner]])
    # smallest radius: on the level line, at the maximum of F(cos phi, sin phi) over [phi_a, phi_b]
    lo, hi = phi_a, phi_b
    golden = (np.sqrt(5.0) - 1) / 2
    for _ in range(100):
        x1, x2 = hi - golden * (hi - lo), lo + golden * (hi - lo)
        if _f_on_circle(x1, b2) >= _f_on_circle(x2, b2):
            hi = x2
        else:
            lo = x1
    near = np.array([phi_a, phi_b, 0.5 * (lo + hi)])
    rho_in = np.minimum(_entry_radius(near, lower, b2), _exit_radius(chain, near))
    radius = np.r_[np.hypot(outer_points[:, 0], outer_points[:, 1]), rho_in]
    values = {"P": outer_points[:, 0], "R": outer_points[:, 1], "F": np.array([lower, upper]),
              "radius": radius, "angle": end_phi}
    info: dict[str, float] = {}
    for name, value in values.items():
        info[f"region_{name}_min"] = float(value.min())
        info[f"region_{name}_max"] = float(value.max())
        info[f"region_d{name}"] = float(value.max() - value.min())

    # picture: the outer part from phi_a to phi_b, then the level line back
    path_phi = np.unique(np.r_[np.linspace(phi_a, phi_b, 400), vertex_angles[inner]])
    rho_out = _exit_radius(chain, path_phi)
    rho_back = np.minimum(_entry_radius(path_phi, lower, b2), rho_out)[::-1]
    boundary = np.vstack([np.column_stack([rho_out * np.cos(path_phi), rho_out * np.sin(path_phi)]),
                          np.column_stack([rho_back * np.cos(path_phi[::-1]), rho_back * np.sin(path_phi[::-1])])])
    return info, np.vstack([boundary, boundary[:1]])
