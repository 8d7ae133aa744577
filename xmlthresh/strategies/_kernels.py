"""Numba kernels shared by the strategies: the exact Minkowski sweep, F evaluation, coordinate moves.

Conventions: a label's candidates are sorted by increasing tp (so increasing recall); points are (p, r).
All kernels are pure functions over flat arrays (see ``xmlthresh.data.candidates`` for the layout).
"""

from __future__ import annotations

import numpy as np
from xmlthresh._util.jit import cached_njit


@cached_njit(inline="always")
def f_beta_scalar(precision, recall, b2):
    """F_beta for scalars with b2 = beta^2; 0 when both are 0."""
    den = b2 * precision + recall
    if den <= 0.0:
        return 0.0
    return (1.0 + b2) * precision * recall / den


@cached_njit(inline="always")
def neumaier_add(total, compensation, value):
    """One step of Neumaier's compensated summation: (total + value, updated compensation); the exact sum is
    total + compensation. Keeps 10^6-step sweeps exact to ~1e-16."""
    t = total + value
    if abs(total) >= abs(value):
        compensation += (total - t) + value
    else:
        compensation += (value - t) + total
    return t, compensation


@cached_njit
def segment_max_f(p0, r0, dp, dr, b2):
    """Max of F_beta on the segment (p0, r0) + t (dp, dr), t in [0, 1]; returns (F, t).

    F is concave along any line of the positive quadrant, so its maximum is at an end point or at a
    root of the derivative's numerator, a quadratic in t; every candidate is a point of the segment, so
    evaluating extra roots can never overestimate.
    """
    best = f_beta_scalar(p0, r0, b2)
    best_t = 0.0
    f1 = f_beta_scalar(p0 + dp, r0 + dr, b2)
    if f1 > best:
        best, best_t = f1, 1.0
    a0 = p0 * r0
    a1 = p0 * dr + r0 * dp
    a2 = dp * dr
    d0 = b2 * p0 + r0
    d1 = b2 * dp + dr
    qa = a2 * d1
    qb = 2.0 * a2 * d0
    qc = a1 * d0 - a0 * d1
    root1 = -1.0  # -1: no root in (0, 1); plain scalars, no allocation per segment
    root2 = -1.0
    if qa == 0.0:
        if qb != 0.0:
            root1 = -qc / qb
    else:
        disc = qb * qb - 4.0 * qa * qc
        if disc >= 0.0:
            sq = np.sqrt(disc)
            q = -0.5 * (qb + sq) if qb >= 0.0 else -0.5 * (qb - sq)
            if q != 0.0:
                root1 = q / qa
                root2 = qc / q
    for t in (root1, root2):
        if 0.0 < t < 1.0:
            f = f_beta_scalar(p0 + t * dp, r0 + t * dr, b2)
            if f > best:
                best, best_t = f, t
    return best, best_t


@cached_njit
def select_crossing(key, dp, dr, start_p_sum, start_r_sum, n, b2, seed):
    """The group of equal-key edges where F turns from rising to falling along the hull boundary, found
    without sorting the edges (expected O(E), quickselect on the keys).

    At a state (P, R) an edge of key t changes F by a multiple of dr (b2 P^2 - t R^2) (dp = -t dr), and along
    the sweep that factor only decreases (t grows, P falls, R grows): F is unimodal along the boundary. A
    random pivot key splits the active edges; the sign of the factor just before and just after the pivot's
    group says whether the turn is below, above or inside it.

    Returns (inside, pivot_key, base_p_sum, base_r_sum): ``inside`` means F rises into the group of key
    ``pivot_key`` and falls out of it; the base sums are the state before that group (every edge of smaller
    key applied, Neumaier-compensated). When no group holds the turn, the maximum is the hull vertex whose
    state the base sums give (every edge of key < ``pivot_key`` applied; inf when all edges rise).
    """
    np.random.seed(seed)
    m = len(key)
    active = np.arange(m)
    base_p, base_perr = start_p_sum, 0.0
    base_r, base_rerr = start_r_sum, 0.0
    inv_n = 1.0 / n
    threshold = np.inf
    while m > 0:
        pivot = key[active[np.random.randint(m)]]
        lt_p, lt_perr, lt_r, lt_rerr = 0.0, 0.0, 0.0, 0.0
        eq_p, eq_perr, eq_r, eq_rerr = 0.0, 0.0, 0.0, 0.0
        for i in range(m):
            e = active[i]
            if key[e] < pivot:
                lt_p, lt_perr = neumaier_add(lt_p, lt_perr, dp[e])
                lt_r, lt_rerr = neumaier_add(lt_r, lt_rerr, dr[e])
            elif key[e] == pivot:
                eq_p, eq_perr = neumaier_add(eq_p, eq_perr, dp[e])
                eq_r, eq_rerr = neumaier_add(eq_r, eq_rerr, dr[e])
        p0 = (base_p + base_perr + lt_p + lt_perr) * inv_n
        r0 = (base_r + base_rerr + lt_r + lt_rerr) * inv_n
        w = 0
        if b2 * p0 * p0 - pivot * r0 * r0 <= 0.0:  # F does not rise into the group: the turn is below it
            threshold = pivot
            for i in range(m):
                if key[active[i]] < pivot:
                    active[w] = active[i]
                    w += 1
            m = w
            continue
        p1 = p0 + (eq_p + eq_perr) * inv_n
        r1 = r0 + (eq_r + eq_rerr) * inv_n
        if b2 * p1 * p1 - pivot * r1 * r1 >= 0.0:  # still rising after the group: the turn is above it
            base_p, base_perr = neumaier_add(base_p, base_perr, lt_p + lt_perr + eq_p + eq_perr)
            base_r, base_rerr = neumaier_add(base_r, base_rerr, lt_r + lt_rerr + eq_r + eq_rerr)
            for i in range(m):
                if key[active[i]] > pivot:
                    active[w] = active[i]
                    w += 1
            m = w
            continue
        base_p, base_perr = neumaier_add(base_p, base_perr, lt_p + lt_perr)
        base_r, base_rerr = neumaier_add(base_r, base_rerr, lt_r + lt_rerr)
        return True, pivot, base_p + base_perr, base_r + base_rerr
    return False, threshold, base_p + base_perr, base_r + base_rerr


@cached_njit
def increment_sweep(start_p_sum, start_r_sum, step_dp, step_dr, n, b2):
    """Walk the boundary of the Minkowski average of the label chains: from every label at its max-precision
    vertex (sums ``start_p_sum``, ``start_r_sum``), apply the chain edges in sweep order -- each one a single
    label moving to its next hull vertex (``HullChains.sorted_dp``/``sorted_dr``, laid out in sweep order so
    this is one sequential pass) -- evaluating F after every single switch, and maximise F over every
    segment of the traced boundary.

    Returns (best_step, best_f, upper_f, upper_segment, upper_t): the number of switches made at the best
    visited state and its F (compensated running sums), the max of F over the traced boundary, and where it
    is attained (segment i joins state i and state i + 1; t in [0, 1]).

    F is concave along a segment, so its maximum there is inside the segment only when F rises at the start
    and falls at the end (sign of dF/dt = sign of b2 p^2 dr + r^2 dp); other segments peak at a visited state,
    which is compared anyway. ``segment_max_f`` runs only on the (few) segments where that test passes.
    """
    inv_n = 1.0 / n
    p = start_p_sum * inv_n
    r = start_r_sum * inv_n
    p_err, r_err = 0.0, 0.0  # Neumaier compensation terms
    best_f = f_beta_scalar(p, r, b2)
    best_step = 0
    upper_f = best_f
    upper_segment = 0
    upper_t = 0.0
    for i in range(len(step_dp)):
        dp = step_dp[i] * inv_n
        dr = step_dr[i] * inv_n
        p0 = p + p_err
        r0 = r + r_err
        if b2 * p0 * p0 * dr + r0 * r0 * dp > 0.0:
            p1 = p0 + dp
            r1 = r0 + dr
            if b2 * p1 * p1 * dr + r1 * r1 * dp < 0.0:
                seg_f, seg_t = segment_max_f(p0, r0, dp, dr, b2)
                if seg_f > upper_f:
                    upper_f, upper_segment, upper_t = seg_f, i, seg_t
        p, p_err = neumaier_add(p, p_err, dp)
        r, r_err = neumaier_add(r, r_err, dr)
        f = f_beta_scalar(p + p_err, r + r_err, b2)
        if f > best_f:
            best_f, best_step = f, i + 1
        if f > upper_f:
            upper_f, upper_segment, upper_t = f, i, 1.0
    return best_step, best_f, upper_f, upper_segment, upper_t


@cached_njit
def coordinate_ascent(cand_ptr, precision, recall, current, b2, max_passes, tol):
    """Cyclic coordinate ascent on F-macro: each label in turn (0..n-1) moves to its best candidate with the
    others fixed, until a full pass changes nothing (an improvement must exceed ``tol``) or ``max_passes``.

    ``current`` (candidate index per label) is updated in place. Returns (passes made, converged).
    """
    order = np.arange(len(cand_ptr) - 1)
    return coordinate_ascent_in_order(cand_ptr, precision, recall, current, order, b2, max_passes, tol)


@cached_njit
def coordinate_ascent_in_order(cand_ptr, precision, recall, current, order, b2, max_passes, tol):
    """:func:`coordinate_ascent` visiting the labels in ``order`` (a permutation) instead of 0..n-1."""
    n = len(cand_ptr) - 1
    inv_n = 1.0 / n
    sum_p = 0.0
    sum_r = 0.0
    for k in range(n):
        sum_p += precision[current[k]]
        sum_r += recall[current[k]]
    passes = 0
    while passes < max_passes:
        passes += 1
        changed = False
        for j in range(n):
            k = order[j]
            c = current[k]
            rest_p = sum_p - precision[c]
            rest_r = sum_r - recall[c]
            best_f = f_beta_scalar((rest_p + precision[c]) * inv_n, (rest_r + recall[c]) * inv_n, b2)
            best = c
            for i in range(cand_ptr[k], cand_ptr[k + 1]):
                f = f_beta_scalar((rest_p + precision[i]) * inv_n, (rest_r + recall[i]) * inv_n, b2)
                if f > best_f + tol:
                    best_f, best = f, i
            if best != c:
                current[k] = best
                changed = True
                sum_p = rest_p + precision[best]
                sum_r = rest_r + recall[best]
        if not changed:
            return passes, True
    return passes, False


@cached_njit
def independent_argmax(cand_ptr, precision, recall, b2):
    """Per label the first candidate maximising its own F_beta(p_k, r_k) (T_b: the macro-F optimum)."""
    n = len(cand_ptr) - 1
    best = np.empty(n, dtype=np.int64)
    for k in range(n):
        best_f = -1.0
        for i in range(cand_ptr[k], cand_ptr[k + 1]):
            f = f_beta_scalar(precision[i], recall[i], b2)
            if f > best_f:
                best_f = f
                best[k] = i
    return best
