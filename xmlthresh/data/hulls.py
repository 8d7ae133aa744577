"""Per-label upper-right convex hull chains and their edges sorted by angle, computed once per candidate set.

Only the upper-right part of each label's hull matters (F increases in p and r). The chain of label k runs
from its max-precision vertex to its max-recall vertex; the convex hull of all achievable (P, R) is the
Minkowski average of these chains, whose boundary is traced by merging all chain edges by angle.
Every strategy that needs hulls (domain, domain_fast, ...) reads them from :func:`hull_chains`, which
caches the result on the :class:`Candidates` object.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from xmlthresh.data.candidates import Candidates
from xmlthresh._util.jit import cached_njit


@dataclass(frozen=True)
class HullChains:
    """Chains (candidate indices, CSR by label) and their edges; ``order`` sorts the edges by angle.

    Edges are stored label by label in chain order (the edges of label k at ``chain_ptr[k] - k`` onward).
    The sorted order is computed on first use: the exact domain sweep does not need it (it selects).
    """

    chain_ptr: np.ndarray
    chain: np.ndarray
    edge_label: np.ndarray
    edge_dp: np.ndarray
    edge_dr: np.ndarray
    edge_key: np.ndarray  # -dp/dr: tangent of the normal direction where the edge becomes the better move

    @cached_property
    def order(self) -> np.ndarray:
        """Edges sorted by key, then by edge vector (dr, dp), then by label, each label's own edges in chain
        order -- ``np.lexsort((label, dp, dr, key))`` at a third of its cost, with the chain-order fix."""
        return canonical_edge_order(np.argsort(self.edge_key, kind="stable"), self.edge_key, self.edge_dr,
                                    self.edge_dp, self.edge_label, self.chain_ptr)

    @cached_property
    def sorted_label(self) -> np.ndarray:
        return self.edge_label[self.order]

    @cached_property
    def sorted_dp(self) -> np.ndarray:
        """The sweep's increments laid out in sweep order (a sequential pass, no gathers)."""
        return self.edge_dp[self.order]

    @cached_property
    def sorted_dr(self) -> np.ndarray:
        return self.edge_dr[self.order]

    @property
    def n_edges(self) -> int:
        return len(self.edge_label)

    @property
    def start(self) -> np.ndarray:
        """Candidate index of every label's max-precision vertex."""
        return self.chain[self.chain_ptr[:-1]]


def hull_chains(candidates: Candidates) -> HullChains:
    """The hull chains of ``candidates`` (computed on first use, then cached on the object)."""
    cached = candidates.__dict__.get("_hull_chains")
    if cached is not None:
        return cached
    precision, recall = candidates.precision, candidates.recall
    chain_ptr, chain = upper_right_chains(candidates.cand_ptr, precision, recall)
    label, dp, dr, key = chain_edges(chain_ptr, chain, candidates.tp, candidates.cut, candidates.n_relevant,
                                     precision, recall, candidates.exact)
    hulls = HullChains(chain_ptr, chain, label, dp, dr, key)
    object.__setattr__(candidates, "_hull_chains", hulls)
    return hulls


@cached_njit
def upper_right_chains(cand_ptr, precision, recall):
    """Vertices of every label's upper-right convex hull chain, from its max-precision vertex to its
    max-recall vertex (candidate indices, CSR by label).

    The chain starts at the candidate of highest precision (the last one among ties, i.e. the one with the
    highest recall) and continues with the upper hull of the later candidates (recall strictly increasing);
    collinear middle points are dropped, so every chain edge has dp < 0 < dr and slopes strictly decrease.
    """
    n = len(cand_ptr) - 1
    chain_ptr = np.zeros(n + 1, dtype=np.int64)
    chain = np.empty(len(precision), dtype=np.int64)
    out = 0
    for k in range(n):
        lo, hi = cand_ptr[k], cand_ptr[k + 1]
        start = lo
        for i in range(lo, hi):
            if precision[i] >= precision[start]:
                start = i
        base = out
        chain[out] = start
        out += 1
        for i in range(start + 1, hi):
            # pop while the last two chain points and i do not make a strict clockwise (right) turn in (r, p)
            while out - base >= 2:
                o = chain[out - 2]
                a = chain[out - 1]
                cross = (recall[a] - recall[o]) * (precision[i] - precision[o]) - (precision[a] - precision[o]) * (
                    recall[i] - recall[o]
                )
                if cross >= 0.0:
                    out -= 1
                else:
                    break
            chain[out] = i
            out += 1
        chain_ptr[k + 1] = out
    return chain_ptr, chain[:out].copy()


@cached_njit
def chain_edges(chain_ptr, chain, tp, cut, n_relevant, precision, recall, exact):
    """Every chain edge as (label, dp, dr, key), key = -dp/dr = the tangent of the normal direction at which
    the edge becomes the better move. With ``exact`` (integer counts) the key comes from the counts, so equal
    edges get identical keys; otherwise (an estimated objective: smoothed precision, expected counts) from
    the floating-point (p, r). Chain edges have dp < 0 < dr, so the key is finite and positive."""
    n = len(chain_ptr) - 1
    n_edges = len(chain) - n
    label = np.empty(n_edges, dtype=np.int64)
    dp = np.empty(n_edges, dtype=np.float64)
    dr = np.empty(n_edges, dtype=np.float64)
    key = np.empty(n_edges, dtype=np.float64)
    e = 0
    for k in range(n):
        s = n_relevant[k]
        for j in range(chain_ptr[k], chain_ptr[k + 1] - 1):
            a = chain[j]
            b = chain[j + 1]
            label[e] = k
            dp[e] = precision[b] - precision[a]
            if exact:  # dr from the count difference: one rounding, as the sweep kernels expect
                dr[e] = (tp[b] - tp[a]) / s
            else:
                dr[e] = recall[b] - recall[a]
            if exact and cut[a] > 0:
                # -dp/dr = (tp1 tau2 - tp2 tau1) s / (tau1 tau2 (tp2 - tp1)); integer numerator is exact
                num = float(tp[a] * cut[b] - tp[b] * cut[a]) * s
                den = float(cut[a]) * float(cut[b]) * float(tp[b] - tp[a])
                key[e] = num / den
            else:  # an estimated objective, or from "predict nothing" (cannot happen on a chain)
                key[e] = -dp[e] / dr[e]
            e += 1
    return label, dp, dr, key


@cached_njit
def _stable_sort_by_dr_dp(order, start, stop, dr, dp, scratch):
    """Sort ``order[start:stop]`` in place by (dr, dp) of its edges, stably (equal edges keep their order):
    a bottom-up merge sort through ``scratch``. Written out rather than ``np.argsort(kind="mergesort")``,
    whose generic implementation dominated the first run's numba compilation (the results are the same)."""
    width = 1
    n = stop - start
    source, target = order, scratch
    in_scratch = False  # where the sorted runs of the last pass are
    while width < n:
        for left in range(start, stop, 2 * width):
            mid, right = min(left + width, stop), min(left + 2 * width, stop)
            a, b, out = left, mid, left
            while a < mid and b < right:
                x, y = source[a], source[b]
                if dr[y] < dr[x] or (dr[y] == dr[x] and dp[y] < dp[x]):  # strictly smaller: b first
                    target[out] = y
                    b += 1
                else:
                    target[out] = x
                    a += 1
                out += 1
            while a < mid:
                target[out] = source[a]
                a += 1
                out += 1
            while b < right:
                target[out] = source[b]
                b += 1
                out += 1
        source, target = target, source
        in_scratch = not in_scratch
        width *= 2
    if in_scratch:
        for q in range(start, stop):  # a loop: slice assignment compiles numba's generic setitem (seconds)
            order[q] = scratch[q]


@cached_njit
def canonical_edge_order(order, key, dr, dp, label, chain_ptr):
    """Turn ``order`` (the edges stably sorted by key; edges given label by label, in chain order) into the
    canonical order, in place: inside every group of equal keys, by edge vector (dr, then dp), then by label
    -- what ``np.lexsort((label, dp, dr, key))`` gives, without its four full passes.

    Then every label's own edges are put in chain order among the positions they occupy (they can only be
    out of order inside a group of equal keys: two consecutive chain edges whose exact keys differ by less
    than the rounding), so that the i-th edge of label k in sweep order is its i-th chain edge and every
    prefix of the sweep is an achievable threshold vector -- also for consumers that add up ``sorted_dp``.
    """
    n_edges = len(order)
    scratch = np.empty(n_edges, dtype=order.dtype)
    i = 0
    while i < n_edges:
        j = i + 1
        while j < n_edges and key[order[j]] == key[order[i]]:
            j += 1
        if j - i > 1:
            ordered = True
            for q in range(i + 1, j):
                a, b = order[q - 1], order[q]
                if dr[a] > dr[b] or (dr[a] == dr[b] and dp[a] > dp[b]):
                    ordered = False
                    break
            if not ordered:  # stable by (dr, dp), i.e. two stable passes, least significant first
                _stable_sort_by_dr_dp(order, i, j, dr, dp, scratch)
        i = j
    n = len(chain_ptr) - 1
    seen = np.zeros(n, dtype=np.int64)
    for i in range(n_edges):
        k = label[order[i]]
        order[i] = chain_ptr[k] - k + seen[k]  # edges of label k are stored at [chain_ptr[k] - k, ...)
        seen[k] += 1
    return order
