"""``br_logreg``: binary relevance -- one logistic regression per label (scikit-multilearn ``BinaryRelevance``).

The score of a label is the predicted probability of its logistic regression. ``standardize`` scales the
features to unit variance on the training split first (centred too when dense): unscaled numeric features
(Mulan's emotions) keep lbfgs from converging in 1000 iterations, while scaling sparse binary bag-of-words
features hurts (Corel5k test P@1 0.19 scaled vs 0.38 unscaled at C = 0.1). The default ``"auto"`` scales
dense features only. A label that has no positive
(or no negative) document in the training data cannot be fitted; it gets the constant score of its training
frequency (0.0, or 1.0 when every document has it) instead of a crash. After fitting, the per-label
coefficients are stacked into one matrix, so scoring is a single sparse/dense product, not a loop over labels.

Needs scikit-multilearn (``pip install scikit-multilearn-ng``); imported only when the ranker is fitted.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from threadpoolctl import threadpool_limits

from xmlthresh.validation import check_int, check_number
from xmlthresh.rankers.base import Ranker
from xmlthresh.rankers.registry import RANKERS


@RANKERS.register("br_logreg")
class BinaryRelevanceLogReg(Ranker):
    """Binary relevance over ``LogisticRegression(C, max_iter, class_weight)``; scores are probabilities."""

    requirements = ("skmultilearn",)
    install_hint = "install it with: pip install scikit-multilearn-ng"
    native_threshold = 0.5  # LogisticRegression.predict: probability >= 1/2

    def __init__(self, C: float = 0.1, max_iter: int = 1000, class_weight: str | dict | None = None,
                 standardize: bool | str = "auto", top_k: int | None = None, random_state: int | None = None):
        self.C = C
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.standardize = standardize
        self.top_k = top_k
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number("ranker.C", self.C, 0, strict_minimum=True)
        check_int("ranker.max_iter", self.max_iter, 1)
        check_int("ranker.random_state", self.random_state, 0, optional=True)
        if self.standardize not in (True, False, "auto"):
            raise ValueError(f"standardize must be true, false or 'auto', got {self.standardize!r}")

    def _fit(self, X, Y: sp.csr_matrix) -> None:
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler
        from skmultilearn.problem_transform import BinaryRelevance

        # unit variance (and zero mean for dense features; sparse ones stay sparse), learnt on train only
        scale = (not sp.issparse(X)) if self.standardize == "auto" else bool(self.standardize)
        self.scaler_ = StandardScaler(with_mean=not sp.issparse(X)).fit(X) if scale else None
        X = self.scaler_.transform(X) if self.scaler_ is not None else X
        n_docs = Y.shape[0]
        positives = np.asarray(Y.sum(axis=0)).ravel()
        fittable = (positives > 0) & (positives < n_docs)
        self.constant_score_ = positives / n_docs  # used for the labels that cannot be fitted
        self.fitted_labels_ = np.flatnonzero(fittable)
        self.n_constant_labels_ = int(np.count_nonzero(~fittable))
        self.coef_ = np.zeros((len(self.fitted_labels_), X.shape[1]))
        self.intercept_ = np.zeros(len(self.fitted_labels_))
        self.estimator_ = None
        if len(self.fitted_labels_) == 0:
            return
        classifier = LogisticRegression(C=self.C, max_iter=self.max_iter, class_weight=self.class_weight,
                                        random_state=self.random_state)
        estimator = BinaryRelevance(classifier=classifier, require_dense=[False, True])
        # one BLAS thread: the per-label problems are small, and on a shared machine threaded BLAS made the
        # fits 10-25x slower (spinning threads); int64 labels: scikit-learn misreads narrow integer types
        with threadpool_limits(limits=1, user_api="blas"):
            estimator.fit(X, Y[:, self.fitted_labels_].astype(np.int64))
        self.coef_ = np.vstack([clf.coef_ for clf in estimator.classifiers_])
        self.intercept_ = np.concatenate([clf.intercept_ for clf in estimator.classifiers_])
        self.estimator_ = estimator

    def _scores(self, X) -> np.ndarray:
        X = self.scaler_.transform(X) if self.scaler_ is not None else X
        scores = np.empty((X.shape[0], self.n_labels_))
        scores[:] = self.constant_score_
        if len(self.fitted_labels_):
            scores[:, self.fitted_labels_] = expit(np.asarray(X @ self.coef_.T) + self.intercept_)
        return scores
