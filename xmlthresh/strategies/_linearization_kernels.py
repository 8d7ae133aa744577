"""Numba kernels of the linearisation strategies (Algorithms 1 and 2, docs/theory.md#linearisation).

* :func:`prefix_means` -- the (P, R) states of the linearised map along the hull edges sorted by angle
  (compensated running sums), shared by both strategies;
* :func:`position_blocks` -- every admissible cut position of every label, as blocks of equal tp;
* :func:`neighbourhood_rectangles` -- Algorithm 2: per direction, the first maximiser of the linear score
  over every cut position and the per-label min/max of p and r over the positions whose linear score is
  within a slack of the best, averaged over labels.

Pure functions over flat arrays (CSR by label, see ``xmlthresh.data.ranked_lists``).
"""

from __future__ import annotations

import numpy as np

from xmlthresh.strategies._kernels import neumaier_add
from xmlthresh._util.jit import cached_njit


@cached_njit
def prefix_means(start_p_sum, start_r_sum, step_dp, step_dr, n_labels):
    """Mean precision and recall after each prefix of the steps: state i = start + steps[:i] (i = 0..E),
    divided by ``n_labels``. Neumaier-compensated, so state i is as accurate as a fresh sum."""
    n_steps = len(step_dp)
    mean_p = np.empty(n_steps + 1)
    mean_r = np.empty(n_steps + 1)
    p, r = start_p_sum, start_r_sum
    p_err, r_err = 0.0, 0.0
    inv_n = 1.0 / n_labels
    mean_p[0] = p * inv_n
    mean_r[0] = r * inv_n
    for i in range(n_steps):
        p, p_err = neumaier_add(p, p_err, step_dp[i])
        r, r_err = neumaier_add(r, r_err, step_dr[i])
        mean_p[i + 1] = (p + p_err) * inv_n
        mean_r[i + 1] = (r + r_err) * inv_n
    return mean_p, mean_r


@cached_njit(inline="always")
def _last_cut_in_block(tp, start, end, recall, weight_p, weight_r, threshold):
    """Largest cut c in [start, end] of a block of equal tp whose linear score weight_p * tp / c +
    weight_r * recall is >= threshold (the score at ``start`` is known to be). The score falls with c, so
    the closed-form guess is corrected by evaluating the score exactly as for a single position."""
    if weight_p == 0.0 or threshold == -np.inf:
        return end
    rest = threshold - weight_r * recall
    if rest <= 0.0:
        cut = end
    else:
        guess = weight_p * tp / rest
        cut = end if guess >= end else max(start, int(guess))
    while cut < end and weight_p * (tp / (cut + 1)) + weight_r * recall >= threshold:
        cut += 1
    while cut > start and not (weight_p * (tp / cut) + weight_r * recall >= threshold):
        cut -= 1
    return cut


@cached_njit
def position_blocks(relevant_rank, cut_of_relevant, label_ptr, list_length, n_relevant, num_docs,
                    include_predict_all):
    """Every admissible cut position of every label, as blocks of equal tp (CSR by label, in cut order).

    The positions of label k are the cuts c = 1..L_k (tp = relevant documents among the top c) and, when
    allowed, "predict all" (c = m, tp = s_k), which replaces the list position m. With ties a cut cannot
    split the tie group of a relevant document (``cut_of_relevant`` = the group's end). Block b holds the
    cuts block_start[b]..block_end[b], all with tp = block_tp[b]: the tp = 0 block before the first relevant
    document, one block per distinct ``cut_of_relevant``, and "predict all" as a block of its own. A label
    without any position (empty list, no predict-all) gets the single block "predict nothing" (cut 0).
    """
    n = len(n_relevant)
    capacity = len(relevant_rank) + 2 * n
    block_ptr = np.zeros(n + 1, dtype=np.int64)
    block_tp = np.empty(capacity, dtype=np.int64)
    block_start = np.empty(capacity, dtype=np.int64)
    block_end = np.empty(capacity, dtype=np.int64)
    out = 0
    for k in range(n):
        lo, hi = label_ptr[k], label_ptr[k + 1]
        last = list_length[k]  # last admissible list position
        if include_predict_all and last >= num_docs:
            last = num_docs - 1
        first_rel = relevant_rank[lo] if hi > lo else last + 1
        if min(first_rel - 1, last) >= 1:
            block_tp[out], block_start[out], block_end[out] = 0, 1, min(first_rel - 1, last)
            out += 1
        j = lo
        while j < hi:
            start = cut_of_relevant[j]
            while j + 1 < hi and cut_of_relevant[j + 1] == start:
                j += 1  # a tie group: its relevant documents come with the one cut
            j += 1
            if start > last:
                break
            end = relevant_rank[j] - 1 if j < hi else last
            block_tp[out], block_start[out], block_end[out] = j - lo, start, min(end, last)
            out += 1
        if include_predict_all:
            block_tp[out], block_start[out], block_end[out] = n_relevant[k], num_docs, num_docs
            out += 1
        if out == block_ptr[k]:
            block_tp[out], block_start[out], block_end[out] = 0, 0, 0
            out += 1
        block_ptr[k + 1] = out
    return block_ptr, block_tp[:out].copy(), block_start[:out].copy(), block_end[:out].copy()


@cached_njit
def _block_precision_recall(block_ptr, block_tp, block_start, n_relevant):
    """Precision and recall at the first cut of every block (precision 0 for "predict nothing")."""
    block_p = np.zeros(len(block_tp))
    block_r = np.empty(len(block_tp))
    for k in range(len(n_relevant)):
        for b in range(block_ptr[k], block_ptr[k + 1]):
            if block_start[b] > 0:
                block_p[b] = block_tp[b] / block_start[b]
            block_r[b] = block_tp[b] / n_relevant[k]
    return block_p, block_r


@cached_njit
def neighbourhood_rectangles(block_ptr, block_tp, block_start, block_end, n_relevant, weight_p, weight_r, slack):
    """Algorithm 2 over every position (the blocks of :func:`position_blocks`), for each direction g.

    The linear score is weight_p[g] * p + weight_r[g] * r. Per label: the first maximiser in cut order
    (returned as its p, r), and min/max of p and r over the positions with score >= best - slack[g] (slack
    may be +inf). A block's score falls with the cut, so it is handled in O(1) (its last cut inside the
    neighbourhood by :func:`_last_cut_in_block`).

    Returns six arrays of length G, averaged over labels: first-maximiser p and r, p_min, p_max, r_min, r_max.
    """
    n = len(n_relevant)
    block_p, block_r = _block_precision_recall(block_ptr, block_tp, block_start, n_relevant)
    n_dir = len(weight_p)
    out_bp = np.zeros(n_dir)
    out_br = np.zeros(n_dir)
    out_pmin = np.zeros(n_dir)
    out_pmax = np.zeros(n_dir)
    out_rmin = np.zeros(n_dir)
    out_rmax = np.zeros(n_dir)
    for g in range(n_dir):
        wp, wr = weight_p[g], weight_r[g]
        sum_bp = sum_br = sum_pmin = sum_pmax = sum_rmin = sum_rmax = 0.0
        for k in range(n):
            first, stop = block_ptr[k], block_ptr[k + 1]
            best = -np.inf
            best_block = first
            for b in range(first, stop):
                score = wp * block_p[b] + wr * block_r[b]
                if score > best:
                    best, best_block = score, b
            threshold = best - slack[g]
            pmin, pmax, rmin, rmax = np.inf, -np.inf, np.inf, -np.inf
            for b in range(first, stop):
                if wp * block_p[b] + wr * block_r[b] >= threshold:
                    tp = block_tp[b]
                    pmax = max(pmax, block_p[b])
                    rmin = min(rmin, block_r[b])
                    rmax = max(rmax, block_r[b])
                    if tp == 0 or block_start[b] == 0:
                        pmin = min(pmin, 0.0)
                    else:
                        cut = _last_cut_in_block(tp, block_start[b], block_end[b], block_r[b], wp, wr, threshold)
                        pmin = min(pmin, tp / cut)
            sum_bp += block_p[best_block]
            sum_br += block_r[best_block]
            sum_pmin += pmin
            sum_pmax += pmax
            sum_rmin += rmin
            sum_rmax += rmax
        out_bp[g] = sum_bp / n
        out_br[g] = sum_br / n
        out_pmin[g] = sum_pmin / n
        out_pmax[g] = sum_pmax / n
        out_rmin[g] = sum_rmin / n
        out_rmax[g] = sum_rmax / n
    return out_bp, out_br, out_pmin, out_pmax, out_rmin, out_rmax


@cached_njit(inline="always")
def _gap_lower_bound(p, r, ref_p, ref_r, wp_lo, wp_hi, wr_lo, wr_hi):
    """A lower bound, over every weight (wp, wr) of the box, of the linear-score gap between the reference
    positions and the position (p, r): max over references of min over the box of w . (ref - (p, r))."""
    bound = -np.inf
    for q in range(len(ref_p)):
        dp, dr = ref_p[q] - p, ref_r[q] - r
        value = (wp_lo * dp if dp > 0.0 else wp_hi * dp) + (wr_lo * dr if dr > 0.0 else wr_hi * dr)
        bound = max(bound, value)
    return bound


@cached_njit
def cell_rectangles(block_ptr, block_tp, block_start, block_end, n_relevant, wp_lo, wp_hi, wr_lo, wr_hi,
                    ref_wp, ref_wr, slack):
    """The sound error region's rectangles: for each cell c of the (P0, R0) grid, with linear-score weights in
    the box [wp_lo, wp_hi] x [wr_lo, wr_hi] and ``slack[c]`` bounding the Taylor slack everywhere in the cell,
    per label the min/max of p and r over every position that is NOT excluded, averaged over labels.

    A position is excluded on the cell when, for some reference position (the first maximiser of the linear
    score at each weight ``ref_wp[c, q], ref_wr[c, q]``: corners and centre of the cell), the gap
    reference - position exceeds the slack for EVERY weight of the box. A coordinate-wise maximum X* in the
    cell has every label within its slack of the best linear score at X*'s own weights, so none of its
    positions is excluded and X* lies in the cell's rectangle (see linearization_region's docstring).
    Inside a block of equal tp the bound grows with the cut, so the allowed cuts are a prefix (bisection).

    Returns p_min, p_max, r_min, r_max per cell (averaged over labels).
    """
    n = len(n_relevant)
    block_p, block_r = _block_precision_recall(block_ptr, block_tp, block_start, n_relevant)
    n_cells, n_refs = ref_wp.shape
    out_pmin = np.zeros(n_cells)
    out_pmax = np.zeros(n_cells)
    out_rmin = np.zeros(n_cells)
    out_rmax = np.zeros(n_cells)
    ref_p = np.empty(n_refs)
    ref_r = np.empty(n_refs)
    for c in range(n_cells):
        s = slack[c]
        sum_pmin = sum_pmax = sum_rmin = sum_rmax = 0.0
        for k in range(n):
            first, stop = block_ptr[k], block_ptr[k + 1]
            for q in range(n_refs):  # reference positions: the first maximiser at each reference weight
                best, best_block = -np.inf, first
                for b in range(first, stop):
                    score = ref_wp[c, q] * block_p[b] + ref_wr[c, q] * block_r[b]
                    if score > best:
                        best, best_block = score, b
                ref_p[q], ref_r[q] = block_p[best_block], block_r[best_block]
            pmin, pmax, rmin, rmax = np.inf, -np.inf, np.inf, -np.inf
            for b in range(first, stop):
                if _gap_lower_bound(block_p[b], block_r[b], ref_p, ref_r, wp_lo[c], wp_hi[c], wr_lo[c],
                                    wr_hi[c]) > s:
                    continue  # even its first cut is excluded, so is every later one (lower precision)
                tp = block_tp[b]
                pmax = max(pmax, block_p[b])
                rmin = min(rmin, block_r[b])
                rmax = max(rmax, block_r[b])
                if tp == 0 or block_start[b] == 0:
                    pmin = min(pmin, 0.0)
                    continue
                lo, hi = block_start[b], block_end[b]  # largest allowed cut in [lo, hi]: lo is allowed
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if _gap_lower_bound(tp / mid, block_r[b], ref_p, ref_r, wp_lo[c], wp_hi[c], wr_lo[c],
                                        wr_hi[c]) > s:
                        hi = mid - 1
                    else:
                        lo = mid
                pmin = min(pmin, tp / lo)
            sum_pmin += pmin
            sum_pmax += pmax
            sum_rmin += rmin
            sum_rmax += rmax
        out_pmin[c] = sum_pmin / n
        out_pmax[c] = sum_pmax / n
        out_rmin[c] = sum_rmin / n
        out_rmax[c] = sum_rmax / n
    return out_pmin, out_pmax, out_rmin, out_rmax
