"""K-fold assignment of documents for cross-fitting (``protocol=crossfit``).

Plain k-fold over documents, shuffled with a seed -- not stratified: multi-label stratification
(:mod:`xmlthresh.data.stratify`) balances rare labels, but out-of-fold scores only need every document to be
scored by a model that did not see it, and a plain shuffle keeps the folds independent of the labels.

The documents are put in the order of ``numpy.random.default_rng(seed).permutation(n_docs)`` and cut into
``folds`` contiguous chunks whose sizes differ by at most one (the first ``n_docs % folds`` chunks hold one
more) -- the same fold sizes as scikit-learn's ``KFold(shuffle=True)``.
"""

from __future__ import annotations

import numpy as np


def check_folds(folds: object, n_docs: int | None = None) -> int:
    """``folds`` as an int when it is an integer >= 2 (and <= ``n_docs`` when given), else a ValueError.

    Strict: booleans, floats (also 5.0) and strings are rejected rather than converted, so ``folds=4.5`` is
    an error instead of silently becoming 4."""
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)):
        raise ValueError(f"protocol.folds must be an integer >= 2, got {folds!r} ({type(folds).__name__})")
    folds = int(folds)
    if folds < 2:
        raise ValueError(f"protocol.folds must be an integer >= 2, got {folds}")
    if n_docs is not None and folds > n_docs:
        raise ValueError(f"protocol.folds = {folds} exceeds the {n_docs} training documents: every fold needs at "
                         "least one document")
    return folds


def kfold_assignment(n_docs: int, folds: int, seed: int = 0) -> np.ndarray:
    """The fold (0 .. folds-1) of each of ``n_docs`` documents: a seeded shuffle cut into near-equal chunks."""
    folds = check_folds(folds, n_docs)
    order = np.random.default_rng(seed).permutation(n_docs)
    fold_of = np.empty(n_docs, dtype=np.int64)
    # contiguous chunks of the shuffled order; the first n_docs % folds chunks hold one document more
    sizes = np.full(folds, n_docs // folds, dtype=np.int64)
    sizes[: n_docs % folds] += 1
    fold_of[order] = np.repeat(np.arange(folds, dtype=np.int64), sizes)
    return fold_of
