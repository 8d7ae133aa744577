"""Numba kernels of ``domain_fast`` (support points in a fan of directions) and of the branch and bound of
``domain`` (``refine='bnb'``).

Conventions as in ``_kernels``: flat arrays, a label's candidates are ``[cand_ptr[k], cand_ptr[k+1])`` sorted
by increasing tp (so increasing recall); points are (p, r); sums are divided by n at the end.
"""

from __future__ import annotations

import numpy as np

from xmlthresh.strategies._kernels import f_beta_scalar, neumaier_add, segment_max_f
from xmlthresh._util.jit import cached_njit

#: a hull maximiser closer than this (as a fraction of its edge) to an end point is taken to be that vertex
VERTEX_TOL = 1e-9


# ---------------------------------------------------------------------------------------------- domain_fast
@cached_njit
def support_points(sorted_key, sorted_label, chain_ptr, chain, precision, recall, tangent):
    """Support point of the Minkowski average of the label chains in every direction of a fan.

    Direction i maximises p cos(theta_i) + r sin(theta_i); ``tangent[i]`` = tan(theta_i) is non-decreasing
    (``inf`` for theta = pi/2). A chain edge whose key (= -dp/dr, the tangent of its normal) is *strictly*
    below tan(theta) is a move that raises the linear score, so label k's support vertex is its chain vertex
    number (edges of k with key < tan(theta)). On a tie (key == tan(theta): the direction is on a boundary of
    the label's normal cone, its support set is the whole edge) the edge is not taken: every label
    contributes exactly one vertex, its higher-precision end, never both.

    Returns (step, mean_p, mean_r): per direction, the number of edges of ``sorted_*`` applied (the state is
    reproducible from it) and the support point (compensated running sums; a label always moves to its own
    next vertex, whatever the rounding of the keys).
    """
    n = len(chain_ptr) - 1
    n_dir = len(tangent)
    inv_n = 1.0 / n
    position = chain_ptr[:-1].copy()
    p = 0.0
    r = 0.0
    for k in range(n):
        p += precision[chain[position[k]]]
        r += recall[chain[position[k]]]
    p_err = 0.0
    r_err = 0.0
    step = np.empty(n_dir, dtype=np.int64)
    mean_p = np.empty(n_dir)
    mean_r = np.empty(n_dir)
    e = 0
    n_edges = len(sorted_label)
    for i in range(n_dir):
        while e < n_edges and sorted_key[e] < tangent[i]:
            k = sorted_label[e]
            a = chain[position[k]]
            b = chain[position[k] + 1]
            position[k] += 1
            dp = precision[b] - precision[a]
            dr = recall[b] - recall[a]
            p, p_err = neumaier_add(p, p_err, dp)
            r, r_err = neumaier_add(r, r_err, dr)
            e += 1
        step[i] = e
        mean_p[i] = (p + p_err) * inv_n
        mean_r[i] = (r + r_err) * inv_n
    return step, mean_p, mean_r


@cached_njit
def polyline_max_f(point_p, point_r, b2):
    """Max of F_beta over the polyline through the given points (every vertex and every segment).

    Returns (F, segment, t): the maximum and where it is attained (segment i joins points i and i + 1).
    """
    best = f_beta_scalar(point_p[0], point_r[0], b2)
    best_segment = 0
    best_t = 0.0
    for i in range(len(point_p) - 1):
        f, t = segment_max_f(point_p[i], point_r[i], point_p[i + 1] - point_p[i], point_r[i + 1] - point_r[i], b2)
        if f > best:
            best, best_segment, best_t = f, i, t
    return best, best_segment, best_t


# ---------------------------------------------------------------------------------------------- branch and bound
@cached_njit(inline="always")
def _edge_key(tp1, tau1, tp2, tau2, s, dp, dr):
    """-dp/dr of the edge from (tp1, tau1) to (tp2, tau2) of a label with s relevant documents, from integer
    counts exactly as ``xmlthresh.data.hulls.chain_edges`` computes it (equal edges get identical keys)."""
    if tau1 > 0:
        return float(tp1 * tau2 - tp2 * tau1) * s / (float(tau1) * float(tau2) * float(tp2 - tp1))
    return -dp / dr


@cached_njit
def _range_chain(lo, hi, precision, recall, out, base):
    """Upper-right hull chain of the candidates [lo, hi) of one label, written to ``out[base:]``; returns the
    end. Same rule as ``xmlthresh.data.hulls.upper_right_chains``: start at the highest precision (highest
    recall among ties), then strict right turns only (collinear middle points dropped)."""
    start = lo
    for i in range(lo, hi):
        if precision[i] >= precision[start]:
            start = i
    end = base
    out[end] = start
    end += 1
    for i in range(start + 1, hi):
        while end - base >= 2:
            o = out[end - 2]
            a = out[end - 1]
            cross = (recall[a] - recall[o]) * (precision[i] - precision[o]) - (precision[a] - precision[o]) * (
                recall[i] - recall[o]
            )
            if cross >= 0.0:
                end -= 1
            else:
                break
        out[end] = i
        end += 1
    return end


@cached_njit
def label_classes(candidate_order, cand_ptr, tp, cut, n_relevant):
    """Classes of interchangeable labels (same s_k and the same candidates, cut by cut), given the labels
    sorted so that identical labels are adjacent (``candidate_order``, e.g. by a hash of their candidates).
    A label joins the class of the label before it only after an exact comparison, so a hash collision can
    only split a class, never merge different labels. Returns the class id of every label."""
    n = len(n_relevant)
    label_class = np.empty(n, dtype=np.int64)
    n_classes = 0
    rep = -1
    for i in range(n):
        k = candidate_order[i]
        same = rep >= 0 and n_relevant[k] == n_relevant[rep]
        if same:
            size = cand_ptr[k + 1] - cand_ptr[k]
            same = size == cand_ptr[rep + 1] - cand_ptr[rep]
            j = 0
            while same and j < size:
                a = cand_ptr[k] + j
                b = cand_ptr[rep] + j
                same = tp[a] == tp[b] and cut[a] == cut[b]
                j += 1
        if same:
            label_class[k] = label_class[rep]
        else:
            label_class[k] = n_classes
            n_classes += 1
            rep = k
    return label_class


@cached_njit
def _grow(array, needed):
    """``array`` with room for at least ``needed`` elements (doubling), contents kept."""
    if needed <= len(array):
        return array
    size = len(array)
    while size < needed:
        size *= 2
    bigger = np.empty(size, dtype=array.dtype)
    bigger[: len(array)] = array
    return bigger


@cached_njit
def _choice_f(choice, precision, recall, inv_n, b2):
    """F-macro (here F of the averaged precision and recall) of one candidate per label."""
    p = 0.0
    r = 0.0
    for k in range(len(choice)):
        p += precision[choice[k]]
        r += recall[choice[k]]
    return f_beta_scalar(p * inv_n, r * inv_n, b2)


@cached_njit
def _gather_restrictions(node, node_parent, node_rstart, node_rcount, pool_label, pool_lo, pool_hi, restricted,
                         lo_of, hi_of, touched):
    """Apply the restrictions of ``node`` and its ancestors to the scratch ``lo_of``/``hi_of`` (the nearest
    ancestor's restriction of a label wins: it is the narrower range), marking the labels in ``restricted``
    and listing them in ``touched``. Returns how many labels are restricted."""
    n_touched = 0
    c = node
    while c >= 0:
        for q in range(node_rstart[c], node_rstart[c] + node_rcount[c]):
            k = pool_label[q]
            if not restricted[k]:
                restricted[k] = True
                lo_of[k] = pool_lo[q]
                hi_of[k] = pool_hi[q]
                touched[n_touched] = k
                n_touched += 1
        c = node_parent[c]
    return n_touched


@cached_njit
def _restricted_edges(touched, n_touched, lo_of, hi_of, tp, cut, n_relevant, precision, recall, sub_chain,
                      start_of, extra_label, extra_from, extra_to, extra_key):
    """Hull chains of the restricted labels' candidate ranges: sets each one's chain start in ``start_of`` and
    writes the chain edges (label, from, to, key) to ``extra_*``. Returns the number of edges."""
    n_extra = 0
    end = 0
    for j in range(n_touched):
        k = touched[j]
        base = end
        end = _range_chain(lo_of[k], hi_of[k], precision, recall, sub_chain, base)
        start_of[k] = sub_chain[base]
        s = n_relevant[k]
        for v in range(base, end - 1):
            a = sub_chain[v]
            b = sub_chain[v + 1]
            extra_label[n_extra] = k
            extra_from[n_extra] = a
            extra_to[n_extra] = b
            extra_key[n_extra] = _edge_key(
                tp[a], cut[a], tp[b], cut[b], s, precision[b] - precision[a], recall[b] - recall[a]
            )
            n_extra += 1
    return n_extra


@cached_njit
def _merge_edges(root_label, root_from, root_to, root_key, restricted, extra_label, extra_from, extra_to,
                 extra_key, n_extra, merged_label, merged_from, merged_to):
    """The node's edges in sweep order, written to ``merged_*``: the root edges of unrestricted labels merged
    by key with the restricted labels' edges (stably sorted, so a label's edges keep chain order on ties;
    on a key tie a root edge comes first). Returns the number of edges."""
    extra_order = np.argsort(extra_key[:n_extra], kind="mergesort")
    n_root = len(root_label)
    n_merged = 0
    i = 0
    j = 0
    while True:
        while i < n_root and restricted[root_label[i]]:
            i += 1
        if i < n_root and (j >= n_extra or root_key[i] <= extra_key[extra_order[j]]):
            merged_label[n_merged] = root_label[i]
            merged_from[n_merged] = root_from[i]
            merged_to[n_merged] = root_to[i]
            i += 1
        elif j < n_extra:
            e = extra_order[j]
            merged_label[n_merged] = extra_label[e]
            merged_from[n_merged] = extra_from[e]
            merged_to[n_merged] = extra_to[e]
            j += 1
        else:
            break
        n_merged += 1
    return n_merged


@cached_njit
def _sweep_node(start_of, merged_from, merged_to, n_merged, precision, recall, inv_n, b2):
    """Trace the node's hull path (the arithmetic of ``_kernels.increment_sweep``) from the chain starts
    through its ``n_merged`` edges. Returns (best_f, best_step, upper_f, upper_segment, upper_t): the best
    visited state (achievable) and how many edges lead to it, and the max of F over the path (the node's
    bound) with the edge and the position on it where it is attained."""
    p = 0.0
    r = 0.0
    for k in range(len(start_of)):
        p += precision[start_of[k]]
        r += recall[start_of[k]]
    p *= inv_n
    r *= inv_n
    p_err = 0.0
    r_err = 0.0
    best_f = f_beta_scalar(p, r, b2)
    best_step = 0
    upper_f = best_f
    upper_segment = 0
    upper_t = 0.0
    for e in range(n_merged):
        a = merged_from[e]
        b = merged_to[e]
        dp = (precision[b] - precision[a]) * inv_n
        dr = (recall[b] - recall[a]) * inv_n
        seg_f, seg_t = segment_max_f(p + p_err, r + r_err, dp, dr, b2)
        if seg_f > upper_f:
            upper_f, upper_segment, upper_t = seg_f, e, seg_t
        p, p_err = neumaier_add(p, p_err, dp)
        r, r_err = neumaier_add(r, r_err, dr)
        f = f_beta_scalar(p + p_err, r + r_err, b2)
        if f > best_f:
            best_f, best_step = f, e + 1
    return best_f, best_step, upper_f, upper_segment, upper_t


@cached_njit
def _state_after(steps, start_of, merged_label, merged_to, out):
    """The candidate of every label after the first ``steps`` edges of the node's sweep, written to ``out``."""
    for k in range(len(start_of)):
        out[k] = start_of[k]
    for e in range(steps):
        out[merged_label[e]] = merged_to[e]


@cached_njit
def _write_children(node, k, split, lo_of, hi_of, cand_ptr, class_ptr, class_member, label_class, pool_label,
                    pool_lo, pool_hi, pool_size, kids_start, orbit_size):
    """Append the restrictions of ``node``'s two children to the pool: child 1 keeps the branching label ``k``
    in [lo, split), child 2 moves every member of k's orbit (its class, with k's range at the node) to
    [split, hi). Records where they start and the orbit size; returns the (maybe grown) pool and its size."""
    split_offset = split - cand_ptr[k]
    lo_offset = lo_of[k] - cand_ptr[k]
    hi_offset = hi_of[k] - cand_ptr[k]
    cls = label_class[k]
    needed = pool_size + 2 + class_ptr[cls + 1] - class_ptr[cls]
    pool_label = _grow(pool_label, needed)
    pool_lo = _grow(pool_lo, needed)
    pool_hi = _grow(pool_hi, needed)
    kids_start[node] = pool_size
    pool_label[pool_size] = k
    pool_lo[pool_size] = lo_of[k]
    pool_hi[pool_size] = split
    pool_size += 1
    size = 0
    for q in range(class_ptr[cls], class_ptr[cls + 1]):
        member = class_member[q]
        if lo_of[member] - cand_ptr[member] == lo_offset and hi_of[member] - cand_ptr[member] == hi_offset:
            pool_label[pool_size] = member
            pool_lo[pool_size] = cand_ptr[member] + split_offset
            pool_hi[pool_size] = hi_of[member]
            pool_size += 1
            size += 1
    orbit_size[node] = size
    return pool_label, pool_lo, pool_hi, pool_size


@cached_njit
def _link_child(child, parent, side, node_parent, node_rstart, node_rcount, kids_start, orbit_size):
    """Make ``child`` the first (``side`` 0: the branching label's lower range) or second (1: its orbit's upper
    ranges) child of ``parent``, pointing at the restrictions :func:`_write_children` wrote for it."""
    node_parent[child] = parent
    if side == 0:
        node_rstart[child] = kids_start[parent]
        node_rcount[child] = 1
    else:
        node_rstart[child] = kids_start[parent] + 1
        node_rcount[child] = orbit_size[parent]


@cached_njit
def _heap_push(heap, heap_size, node, node_bound):
    """Insert ``node`` into the max-heap ``heap[:heap_size]`` ordered by ``node_bound``; returns the new size."""
    h = heap_size
    heap[h] = node
    heap_size += 1
    while h > 0:
        parent = (h - 1) // 2
        if node_bound[heap[parent]] >= node_bound[heap[h]]:
            break
        heap[parent], heap[h] = heap[h], heap[parent]
        h = parent
    return heap_size


@cached_njit
def _heap_pop(heap, heap_size, node_bound):
    """Remove the top of the max-heap ``heap[:heap_size]`` (read it from ``heap[0]`` before); returns the new
    size."""
    heap_size -= 1
    heap[0] = heap[heap_size]
    h = 0
    while True:
        left = 2 * h + 1
        right = left + 1
        largest = h
        if left < heap_size and node_bound[heap[left]] > node_bound[heap[largest]]:
            largest = left
        if right < heap_size and node_bound[heap[right]] > node_bound[heap[largest]]:
            largest = right
        if largest == h:
            break
        heap[largest], heap[h] = heap[h], heap[largest]
        h = largest
    return heap_size


@cached_njit
def _reset_scratch(touched, n_touched, restricted, lo_of, hi_of, start_of, cand_ptr, root_start):
    """Undo a node's restrictions in the scratch arrays (back to the root's full ranges and chain starts)."""
    for j in range(n_touched):
        k = touched[j]
        restricted[k] = False
        lo_of[k] = cand_ptr[k]
        hi_of[k] = cand_ptr[k + 1]
        start_of[k] = root_start[k]


@cached_njit
def branch_and_bound(
    cand_ptr,
    tp,
    cut,
    n_relevant,
    precision,
    recall,
    root_label,
    root_from,
    root_to,
    root_key,
    root_start,
    class_ptr,
    class_member,
    label_class,
    incumbent,
    b2,
    gap_tol,
    max_nodes,
):
    """Best-first branch and bound for max F-macro over one candidate per label.

    A node restricts some labels to a contiguous range of their candidates (a range of one candidate =
    a fixed label). Its bound is the max of F over the Minkowski average of the upper-right hulls of every
    label's range (fixed labels contribute their point: a shift), traced exactly by sweeping all chain edges
    in angle order; every state visited by the sweep is achievable and feeds the incumbent. Where the hull
    maximiser lies inside an edge (a -> b) of label k, k is the fractional label and its range [lo, hi) is
    split at a + 1: candidates up to a / from a + 1 on (the second part keeps the non-vertex candidates
    between a and b, so they are never lost). Nodes whose bound is <= incumbent + gap_tol are pruned; a
    node whose maximiser is a vertex is solved (that vertex is achievable).

    Symmetry (orbital branching): the labels of k's class (``class_ptr``/``class_member``: identical
    candidates) that have the same range as k at the node are interchangeable there (its orbit O). Some
    member of O in [lo, a] can be moved to k by a permutation that keeps F and the node, so the children
    are "k in [lo, a]" and "every member of O in [a + 1, hi)" -- without this, n identical labels would
    need a number of nodes exponential in n.

    ``root_*`` are the root chain edges in sweep order (label, from / to candidate, key; the i-th edge of a
    label in that order must join its chain vertices i and i + 1) and every label's chain start;
    ``incumbent`` (candidate per label) is the starting solution and is updated in place.
    Returns (lower, upper, nodes, proved): the incumbent's F, a rigorous upper bound on the optimum (max of
    the incumbent, the open nodes' bounds and the pruned nodes' bounds), the number of evaluated nodes and
    whether the search finished (upper <= lower + gap_tol) rather than running out of nodes.

    Steps: a node is evaluated by :func:`_gather_restrictions`, :func:`_restricted_edges`,
    :func:`_merge_edges` and :func:`_sweep_node` (bound and best visited state); an open node gets its
    children's restrictions (:func:`_write_children`) and enters the heap; then both children of the best
    open node (:func:`_heap_pop`, :func:`_link_child`) are evaluated in turn.
    """
    n = len(cand_ptr) - 1
    inv_n = 1.0 / n
    n_root = len(root_label)
    n_cand = len(tp)
    inc_f = _choice_f(incumbent, precision, recall, inv_n, b2)

    # nodes: node c adds the restrictions pool[node_rstart[c] : + node_rcount[c]] (label -> [lo, hi)) to its
    # parent's; an expanded node's two children's restriction lists are written when it is pushed
    capacity = max_nodes + 1
    node_parent = np.empty(capacity, dtype=np.int64)
    node_rstart = np.empty(capacity, dtype=np.int64)
    node_rcount = np.empty(capacity, dtype=np.int64)
    node_bound = np.empty(capacity)
    kids_start = np.empty(capacity, dtype=np.int64)  # child 1: 1 restriction there, child 2: the orbit after it
    orbit_size = np.empty(capacity, dtype=np.int64)
    pool_label = np.empty(1024, dtype=np.int64)
    pool_lo = np.empty(1024, dtype=np.int64)
    pool_hi = np.empty(1024, dtype=np.int64)
    pool_size = 0
    heap = np.empty(capacity, dtype=np.int64)  # max-heap of node ids by node_bound
    heap_size = 0

    # scratch of one node evaluation
    lo_of = cand_ptr[:-1].copy()
    hi_of = cand_ptr[1:].copy()
    restricted = np.zeros(n, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)
    start_of = root_start.copy()
    sub_chain = np.empty(n_cand, dtype=np.int64)
    extra_label = np.empty(n_cand, dtype=np.int64)
    extra_from = np.empty(n_cand, dtype=np.int64)
    extra_to = np.empty(n_cand, dtype=np.int64)
    extra_key = np.empty(n_cand)
    merged_label = np.empty(n_root + n_cand, dtype=np.int64)
    merged_from = np.empty(n_root + n_cand, dtype=np.int64)
    merged_to = np.empty(n_root + n_cand, dtype=np.int64)
    current = np.empty(n, dtype=np.int64)

    evaluated = 0
    max_pruned = -1.0
    proved = False

    node_parent[0] = -1  # the root: no restriction
    node_rstart[0] = 0
    node_rcount[0] = 0
    n_nodes_made = 1
    node = 0  # the node to evaluate
    expand = -1  # the node whose children are evaluated
    side = 2  # which child of ``expand`` comes next (2: both done)

    while True:
        n_touched = _gather_restrictions(node, node_parent, node_rstart, node_rcount, pool_label, pool_lo,
                                         pool_hi, restricted, lo_of, hi_of, touched)
        n_extra = _restricted_edges(touched, n_touched, lo_of, hi_of, tp, cut, n_relevant, precision, recall,
                                    sub_chain, start_of, extra_label, extra_from, extra_to, extra_key)
        n_merged = _merge_edges(root_label, root_from, root_to, root_key, restricted, extra_label, extra_from,
                                extra_to, extra_key, n_extra, merged_label, merged_from, merged_to)
        best_f, best_step, upper_f, upper_segment, upper_t = _sweep_node(
            start_of, merged_from, merged_to, n_merged, precision, recall, inv_n, b2
        )
        evaluated += 1
        if best_f > inc_f:  # the best visited state is achievable: a new incumbent?
            _state_after(best_step, start_of, merged_label, merged_to, current)
            f_exact = _choice_f(current, precision, recall, inv_n, b2)
            if f_exact > inc_f:
                inc_f = f_exact
                incumbent[:] = current
        # a child's hull lies inside its parent's: its bound cannot be higher
        if node > 0 and node_bound[node_parent[node]] < upper_f:
            upper_f = node_bound[node_parent[node]]
        node_bound[node] = upper_f
        if upper_t > VERTEX_TOL and upper_t < 1.0 - VERTEX_TOL and upper_f > inc_f + gap_tol:
            # open node: its maximiser is inside an edge of the fractional label; split that label there
            pool_label, pool_lo, pool_hi, pool_size = _write_children(
                node, merged_label[upper_segment], merged_from[upper_segment] + 1, lo_of, hi_of, cand_ptr,
                class_ptr, class_member, label_class, pool_label, pool_lo, pool_hi, pool_size, kids_start,
                orbit_size,
            )
            heap_size = _heap_push(heap, heap_size, node, node_bound)
        elif upper_f > max_pruned:  # solved (the maximiser is a vertex) or pruned
            max_pruned = upper_f
        _reset_scratch(touched, n_touched, restricted, lo_of, hi_of, start_of, cand_ptr, root_start)

        if side == 2:  # both children of ``expand`` evaluated: expand the best open node, or stop
            if heap_size == 0:
                proved = True
                break
            top = heap[0]
            if node_bound[top] <= inc_f + gap_tol:
                proved = True
                if node_bound[top] > max_pruned:
                    max_pruned = node_bound[top]
                break
            if evaluated + 2 > max_nodes:
                break
            heap_size = _heap_pop(heap, heap_size, node_bound)
            expand = top
            side = 0
        node = n_nodes_made
        n_nodes_made += 1
        _link_child(node, expand, side, node_parent, node_rstart, node_rcount, kids_start, orbit_size)
        side += 1

    upper = inc_f
    if max_pruned > upper:
        upper = max_pruned
    if heap_size > 0 and node_bound[heap[0]] > upper:
        upper = node_bound[heap[0]]
    return inc_f, upper, evaluated, proved
