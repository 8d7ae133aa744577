"""Random score matrices with labels for the API tests: ESP-like dense scores or sparse top-k CSR."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def random_scores(seed: int, n_docs: int = 150, n_labels: int = 12, top_k: int | None = None,
                  ties: bool = False, empty_label: bool = True):
    """(scores, labels): labels Bernoulli(prior_k) with skewed priors, scores = signal_k * label + N(0, 1).

    ``top_k``: keep each document's k best scores (a CSR; the others are unscored). ``ties``: scores rounded
    to one decimal. ``empty_label``: the last label has no relevant document (excluded from F-macro)."""
    rng = np.random.default_rng(seed)
    prior = np.clip(rng.exponential(0.1, n_labels), 0.02, 0.5)
    labels = rng.random((n_docs, n_labels)) < prior
    labels[rng.integers(n_docs), :] = True  # every label but the empty one has a relevant document
    if empty_label:
        labels[:, -1] = False
    scores = rng.uniform(0.5, 2.5, n_labels) * labels + rng.standard_normal((n_docs, n_labels))
    if ties:
        scores = np.round(scores, 1)
    if top_k is not None:
        order = np.argsort(-scores, axis=1, kind="stable")[:, :top_k]
        rows = np.repeat(np.arange(n_docs), top_k)
        cols = order.ravel()
        values = scores[rows, cols]
        scores = sp.csr_matrix((values, (rows, cols)), shape=scores.shape)
        scores.sort_indices()
    return scores, labels.astype(np.int64)
