"""The canonical edge order of the Minkowski sweep (xmlthresh.data.hulls.canonical_edge_order) against its
definition with numpy's stable sorts: ties in the key, in the edge vector and across labels included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from xmlthresh.data.hulls import canonical_edge_order


def reference_order(key, dr, dp, label, chain_ptr):
    """np.lexsort((label, dp, dr, key)) -- stable by key, then by (dr, dp) -- with every label's edges put back
    in chain order among the positions they occupy (the definition in canonical_edge_order's docstring)."""
    order = np.lexsort((np.arange(len(key)), dp, dr, key))  # the edge index keeps the sort stable
    seen = np.zeros(len(chain_ptr) - 1, dtype=np.int64)
    out = np.empty_like(order)
    for i, edge in enumerate(order):
        k = label[edge]
        out[i] = chain_ptr[k] - k + seen[k]
        seen[k] += 1
    return out


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=12), st.integers(0, 2**32 - 1))
def test_canonical_order_is_the_stable_lexicographic_order(edges_per_label, seed):
    rng = np.random.default_rng(seed)
    n_edges = sum(edges_per_label)
    label = np.repeat(np.arange(len(edges_per_label)), edges_per_label)
    chain_ptr = np.concatenate([[0], np.cumsum(np.array(edges_per_label) + 1)])  # chains hold one more point
    key = rng.integers(0, 3, n_edges).astype(float)  # few values: long groups of equal keys
    dr = rng.integers(0, 3, n_edges).astype(float)
    dp = rng.integers(0, 3, n_edges).astype(float)
    order = np.argsort(key, kind="stable")
    got = canonical_edge_order(order.copy(), key, dr, dp, label, chain_ptr)
    assert np.array_equal(got, reference_order(key, dr, dp, label, chain_ptr))
