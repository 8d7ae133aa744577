"""``mlknn``: ML-kNN (Zhang & Zhou, 2007) as implemented by scikit-multilearn-ng's ``MLkNN``.

For every label, ML-kNN estimates from the training data the prior P(label) and, for each count c = 0..k of
the k nearest neighbours having the label, P(c | label) and P(c | not label) (Laplace smoothing ``s``); the
score of a document is the posterior P(label | c). Neighbours are scikit-learn's ``NearestNeighbors``
(Euclidean); as in the library, a training document is its own first neighbour when the tables are fitted.

The estimator is a subclass of the library's ``MLkNN`` whose two hot paths -- the conditional tables in
``fit`` and ``predict_proba``, Python loops over documents x labels in the library -- are replaced by the same
arithmetic on sparse neighbour-count matrices (tested equal to the library). Needs scikit-multilearn-ng
(``pip install scikit-multilearn-ng``); the original scikit-multilearn 0.2.0 fails with current scikit-learn.
"""

from __future__ import annotations

import importlib.metadata
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from xmlthresh.validation import check_int, check_number
from xmlthresh.rankers.base import Ranker
from xmlthresh.rankers.registry import RANKERS


@RANKERS.register("mlknn")
class MLkNNRanker(Ranker):
    """ML-kNN posterior probabilities with ``k`` neighbours and smoothing ``s`` (> 0)."""

    requirements = ("skmultilearn",)
    install_hint = "install it with: pip install scikit-multilearn-ng"
    native_threshold = 0.5  # MLkNN.predict: posterior >= 1/2

    def __init__(self, k: int = 10, s: float = 1.0, top_k: int | None = None):
        self.k = k
        self.s = s
        self.top_k = top_k

    @classmethod
    def _environment_problem(cls) -> str:
        try:
            importlib.metadata.version("scikit-multilearn-ng")
        except importlib.metadata.PackageNotFoundError:
            return ("ranker 'mlknn' needs scikit-multilearn-ng: the installed scikit-multilearn 0.2.0 MLkNN fails "
                    "with current scikit-learn; run: pip uninstall scikit-multilearn && pip install "
                    "scikit-multilearn-ng")
        return ""

    def _check_params(self) -> None:
        super()._check_params()
        check_int("ranker.k", self.k, 1)
        check_number("ranker.s", self.s, 0, strict_minimum=True)  # smoothing

    def _fit(self, X, Y: sp.csr_matrix) -> None:
        if self.k > X.shape[0]:
            raise ValueError(f"k = {self.k} neighbours but only {X.shape[0]} training documents")
        self.estimator_ = vectorised_mlknn_class()(k=int(self.k), s=float(self.s)).fit(X, Y)

    def _scores(self, X) -> np.ndarray:
        return self.estimator_.predict_proba(X)


def neighbour_label_counts(neighbours: np.ndarray, labels: sp.csr_matrix) -> sp.csr_matrix:
    """(documents x labels) CSR int64: how many of each document's neighbours (rows of ``neighbours``,
    indices into the rows of ``labels``) have the label; zeros are not stored."""
    m, k = neighbours.shape
    adjacency = sp.csr_matrix((np.ones(m * k, dtype=np.int64), neighbours.ravel(), np.arange(m + 1) * k),
                              shape=(m, labels.shape[0]))
    counts = (adjacency @ sp.csr_matrix(labels, dtype=np.int64)).tocsr()
    counts.eliminate_zeros()
    return counts


@lru_cache(maxsize=None)
def vectorised_mlknn_class() -> type:
    """scikit-multilearn-ng's ``MLkNN`` with vectorised ``fit`` tables and ``predict_proba`` (imported on use)."""
    from skmultilearn.adapt import MLkNN

    class VectorisedMLkNN(MLkNN):
        """``MLkNN`` whose fit and prediction use sparse neighbour counts; ``predict_proba`` returns a dense
        (documents x labels) array, ``predict`` a CSR 0/1 matrix."""

        def fit(self, X, y):
            y = sp.csr_matrix(y, dtype=np.int64)
            self._label_cache = y
            self._num_instances, self._num_labels = y.shape
            self._prior_prob_true, self._prior_prob_false = self._compute_prior(y)
            self._cond_prob_true, self._cond_prob_false = self._compute_cond(X, y)
            self.classes_ = [np.array([0, 1])] * self._num_labels
            return self

        def _neighbour_counts(self, X) -> sp.csr_matrix:
            neighbours = self.knn_.kneighbors(X, self.k + self.ignore_first_neighbours, return_distance=False)
            return neighbour_label_counts(neighbours[:, self.ignore_first_neighbours:], self._label_cache)

        def _compute_cond(self, X, y):
            self.knn_.fit(X)
            n_bins = self.k + 1
            counts = self._neighbour_counts(X)
            n_docs, n_labels = y.shape
            # c[label, count]: relevant training documents with `count` neighbours having the label
            relevant = counts.multiply(y).tocoo()
            c = np.bincount(relevant.col * n_bins + relevant.data,
                            minlength=n_labels * n_bins).reshape(n_labels, n_bins)
            c[:, 0] = np.asarray(y.sum(axis=0)).ravel() - c[:, 1:].sum(axis=1)
            everyone = counts.tocoo()
            total = np.bincount(everyone.col * n_bins + everyone.data,
                                minlength=n_labels * n_bins).reshape(n_labels, n_bins)
            total[:, 0] = n_docs - total[:, 1:].sum(axis=1)
            cn = total - c
            cond_true = (self.s + c) / (self.s * n_bins + c.sum(axis=1, keepdims=True))
            cond_false = (self.s + cn) / (self.s * n_bins + cn.sum(axis=1, keepdims=True))
            return cond_true, cond_false

        def _posterior_table(self) -> np.ndarray:
            """(labels, k+1): P(label | count of neighbours having it)."""
            p_true = self._prior_prob_true[:, None] * self._cond_prob_true
            p_false = self._prior_prob_false[:, None] * self._cond_prob_false
            return p_true / (p_true + p_false)

        def predict_proba(self, X) -> np.ndarray:
            table = self._posterior_table()
            counts = self._neighbour_counts(X).tocoo()
            proba = np.empty((X.shape[0], self._num_labels))
            proba[:] = table[:, 0]
            proba[counts.row, counts.col] = table[counts.col, counts.data]
            return proba

        def predict(self, X) -> sp.csr_matrix:
            p_true = self._prior_prob_true[:, None] * self._cond_prob_true
            p_false = self._prior_prob_false[:, None] * self._cond_prob_false
            decide = p_true >= p_false
            counts = self._neighbour_counts(X).tocoo()
            dense = np.empty((X.shape[0], self._num_labels), dtype=bool)
            dense[:] = decide[:, 0]
            dense[counts.row, counts.col] = decide[counts.col, counts.data]
            return sp.csr_matrix(dense)

    return VectorisedMLkNN
