"""The contract of a first-stage ranker (scikit-learn style) and the helpers every ranker shares.

``fit(X, Y)`` learns from features ``X`` (documents x features, dense or CSR) and labels ``Y`` (documents x
labels, 0/1, made CSR bool here) and returns ``self``; ``predict_scores(X)`` returns one score per document
and label: a dense ``(m, n)`` float64 array when ``top_k`` is ``None``, else a CSR matrix holding the
``top_k`` best-scored labels of every document (missing entries are *unscored*, see ``xmlthresh.data.scores``).

Subclasses implement ``_fit(X, Y)`` and ``_scores(X)`` on validated inputs; ``_scores`` may return a dense
array or a CSR matrix. With ``top_k`` set the base class scores the documents in row blocks and keeps the
best ``top_k`` of each block, so a dense ``m x n`` matrix never exists at once.

Optional dependencies are declared, not imported at module level: ``requirements`` (import names) and
``install_hint``. ``native_threshold`` declares the decision threshold the ranker's own classifier uses on
its scores (what ``fallback=native`` gives labels without a fit positive). A ranker whose dependency is missing stays registered, is reported by
``unavailable_reason()`` and raises :class:`RankerUnavailableError` when fitted.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array

from xmlthresh.validation import check_int

#: scores of at most this many (document, label) cells are held densely at once when ``top_k`` is set
BLOCK_CELLS = 1 << 22


class RankerUnavailableError(ImportError):
    """A ranker's optional dependency is missing; the message says what to install."""


@lru_cache(maxsize=None)
def _import_error(module: str) -> str:
    """'' when ``module`` imports, else the import error as text (cached: each module is tried once)."""
    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001  (a broken install is as unavailable as a missing one)
        return f"{type(exc).__name__}: {exc}"
    return ""


class Ranker(BaseEstimator):
    """Base class of the rankers; subclasses implement ``_fit`` and ``_scores`` (see module docstring)."""

    #: registry name (set by the ``@RANKERS.register`` decorator)
    registry_name: ClassVar[str] = ""
    #: modules (import names) the ranker needs beyond the core dependencies
    requirements: ClassVar[tuple[str, ...]] = ()
    #: how to install them
    install_hint: ClassVar[str] = ""
    #: the ranker's own decision threshold on its scores (0.5 for probabilities, 0 for margins; None: no
    #: natural one), carried by the scored splits for ``fallback=native``
    native_threshold: ClassVar[float | None] = None
    #: the version of the scores this ranker computes: raised when a change of its code changes them, so that
    #: scores cached by the earlier code are not served (part of the score cache's key)
    scores_version: ClassVar[int] = 1

    top_k: int | None

    # ------------------------------------------------------------------ availability
    @classmethod
    def unavailable_reason(cls) -> str:
        """'' when the ranker can run here, else why not and what to install."""
        for module in cls.requirements:
            error = _import_error(module)
            if error:
                return f"ranker {cls.registry_name!r} needs the module {module!r} ({error}); {cls.install_hint}"
        return cls._environment_problem()

    @classmethod
    def _environment_problem(cls) -> str:
        """Hook: '' or a reason why an installed dependency cannot be used (e.g. an incompatible fork)."""
        return ""

    @classmethod
    def check_available(cls) -> None:
        reason = cls.unavailable_reason()
        if reason:
            raise RankerUnavailableError(reason)

    # ------------------------------------------------------------------ public API
    def fit(self, X, Y) -> "Ranker":
        """Learn from features ``X`` (m x d, dense or sparse) and 0/1 labels ``Y`` (m x n, dense or sparse)."""
        self.check_available()
        self._check_params()
        X = check_features(X)
        Y = check_label_matrix(Y, n_docs=X.shape[0])
        self.n_features_in_ = X.shape[1]
        self.n_labels_ = Y.shape[1]
        self._fit(X, Y)
        return self

    def predict_scores(self, X) -> np.ndarray | sp.csr_matrix:
        """Scores of every label for the documents ``X``: dense (m, n) float64, or top-``k`` CSR."""
        if not hasattr(self, "n_labels_"):
            raise RuntimeError(f"{type(self).__name__} is not fitted yet; call fit(X, Y) first")
        X = check_features(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the ranker was fitted with {self.n_features_in_}")
        if self.top_k is None:
            scores = self._scores(X)
            return scores.toarray() if sp.issparse(scores) else np.asarray(scores, dtype=np.float64)
        rows_per_block = max(1, BLOCK_CELLS // max(1, self.n_labels_))
        blocks = [top_k_per_row(self._scores(X[start:start + rows_per_block]), int(self.top_k))
                  for start in range(0, X.shape[0], rows_per_block)]
        if not blocks:
            return sp.csr_matrix((0, self.n_labels_), dtype=np.float64)
        return sp.vstack(blocks, format="csr") if len(blocks) > 1 else blocks[0]

    # ------------------------------------------------------------------ subclass hooks
    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: sp.csr_matrix) -> None:
        raise NotImplementedError

    def _scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
        raise NotImplementedError

    def _check_params(self) -> None:
        check_int("ranker.top_k", self.top_k, 1, optional=True)  # null: dense scores


# ---------------------------------------------------------------------- shared helpers
def check_features(X) -> np.ndarray | sp.csr_matrix:
    """Features as float64, dense C-ordered or CSR, finite, 2-D with at least one row."""
    return check_array(X, accept_sparse="csr", dtype=np.float64, ensure_all_finite=True,
                       ensure_min_samples=1, input_name="X")


def check_label_matrix(Y, n_docs: int | None = None) -> sp.csr_matrix:
    """Labels as CSR bool (documents x labels); values must be 0/1 (or bool)."""
    Y = sp.csr_matrix(Y)
    if Y.ndim != 2:
        raise ValueError(f"labels must be a 2-D (documents x labels) matrix, got {Y.ndim}-D")
    if Y.dtype != bool:
        values = Y.data
        bad = (values != 0) & (values != 1)
        if np.any(bad):
            raise ValueError(f"labels must be 0/1, found {int(np.count_nonzero(bad))} other value(s), "
                             f"e.g. {values[bad][0]!r}")
    Y = Y.astype(bool)
    Y.eliminate_zeros()
    Y.sort_indices()
    if n_docs is not None and Y.shape[0] != n_docs:
        raise ValueError(f"X has {n_docs} documents but the labels have {Y.shape[0]} rows")
    return Y


def top_k_per_row(scores: np.ndarray | sp.csr_matrix, k: int) -> sp.csr_matrix:
    """The ``k`` highest scores of every row as CSR (sorted indices); rows with fewer entries keep all.

    Ties at the k-th place are broken towards the smaller label index (deterministic)."""
    if sp.issparse(scores):
        csr = sp.csr_matrix(scores, dtype=np.float64)
        csr.sort_indices()
        counts = np.diff(csr.indptr)
        row_of = np.repeat(np.arange(csr.shape[0]), counts)
        # stable sort by (row, -score); equal scores keep the column order
        order = np.lexsort((csr.indices, -csr.data, row_of))
        rank_in_row = np.arange(len(order)) - np.repeat(csr.indptr[:-1], counts)
        keep = np.sort(order[rank_in_row < k])  # back to row-major, column-sorted order
        indptr = np.zeros(csr.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.minimum(counts, k), out=indptr[1:])
        return sp.csr_matrix((csr.data[keep], csr.indices[keep], indptr), shape=csr.shape)
    dense = np.asarray(scores, dtype=np.float64)
    m, n = dense.shape
    k = min(k, n)
    if k == 0 or m == 0:
        return sp.csr_matrix((m, n), dtype=np.float64)
    # stable descending order restricted to the best k: argsort is O(n log n) per row but exact on ties
    top = np.argsort(-dense, axis=1, kind="stable")[:, :k] if k > n // 2 else _argtop_k(dense, k)
    top.sort(axis=1)
    indptr = np.arange(m + 1, dtype=np.int64) * k
    return sp.csr_matrix((np.take_along_axis(dense, top, axis=1).ravel(), top.ravel(), indptr), shape=(m, n))


def _argtop_k(dense: np.ndarray, k: int) -> np.ndarray:
    """Column indices of the k largest values per row; ties at the boundary go to the smaller index."""
    part = np.argpartition(-dense, k - 1, axis=1)[:, :k]
    kth = np.take_along_axis(dense, part, axis=1).min(axis=1, keepdims=True)  # the k-th largest value
    above = dense > kth
    n_above = above.sum(axis=1)
    if np.all(n_above + (dense == kth).sum(axis=1) == k):
        return part  # no tie crosses the boundary: the partition is the unique answer
    # resolve boundary ties: all strictly-above entries, then the tied ones with the smallest indices
    tied = dense == kth
    tied_rank = np.cumsum(tied, axis=1)
    chosen = above | (tied & (tied_rank <= (k - n_above)[:, None]))
    return np.nonzero(chosen)[1].reshape(dense.shape[0], k)
