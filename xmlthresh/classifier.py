"""``ThresholdClassifier``: per-label decision thresholds for any multi-label scikit-learn classifier,
chosen to maximise F-macro (in the spirit of scikit-learn's ``TunedThresholdClassifierCV``, which tunes one
threshold of a binary classifier).

``fit(X, Y)``:

1. out-of-fold scores of ``estimator``: ``KFold(cv, shuffle=True, random_state=random_state)`` (not
   stratified: the target is multi-label), or any splitter / iterable of (train, test) whose test parts
   partition the samples; each fold fits a clone and scores its held-out part with ``decision_function``, else
   ``predict_proba`` (``response_method``). The list of (n, n_classes) arrays of multi-output
   ``predict_proba`` (KNeighborsClassifier, RandomForestClassifier, ...) becomes one column per label: the
   probability of class 1;
2. the strategy's thresholds on those scores and Y (:func:`xmlthresh.fit_thresholds`): ``result_``,
   ``thresholds_``; the scores declare the estimator's own decision threshold (0 for ``decision_function``,
   0.5 for ``predict_proba``), which ``strategy_params={"fallback": "native"}`` gives the labels without an
   out-of-fold positive;
3. ``estimator_``: a clone refitted on all of (X, Y).

``cv="prefit"``: ``estimator`` is already fitted and (X, Y) is held-out data: its scores on X are used
directly and ``estimator_`` is ``estimator`` itself (not refitted).

``predict(X)`` applies the thresholds to ``estimator_``'s scores. Output format, as scikit-learn's
``OneVsRestClassifier``: a dense array with Y's dtype (0/1 ``int64`` for the usual indicator matrices --
what ``f1_score``, ``make_scorer`` and the other scikit-learn metrics expect) when Y was dense, a CSR
matrix when Y was sparse (for many labels, fit with a sparse Y).
``score(X, Y)`` is F-macro (what the thresholds maximise), not subset accuracy.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import make_scorer
from sklearn.model_selection import KFold, check_cv
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, indexable

from xmlthresh._util.errors import first_line
from xmlthresh._util.typed_params import MAX_SEED
from xmlthresh.api import align_frames, fit_thresholds, make_strategy
from xmlthresh.metrics import f_macro_score
from xmlthresh.result import ThresholdResult
from xmlthresh.validation import InputError, check_beta, check_labels

RESPONSE_METHODS = ("auto", "decision_function", "predict_proba")



def _n_samples(X: Any) -> int:
    """The number of samples of ``X`` (an array, a sparse matrix, a DataFrame, an array-like or a list of
    samples)."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    if hasattr(X, "__array__"):
        return int(np.asarray(X).shape[0])
    try:
        return len(X)
    except TypeError:
        raise TypeError(f"expected a sequence of samples or an array, got {type(X).__name__}") from None

def f_macro_scorer(beta: float = 1.0):
    """A scikit-learn scorer of F-macro, for ``GridSearchCV``, ``cross_val_score`` or ``cross_validate``.

    It scores an estimator's ``predict`` with :func:`xmlthresh.f_macro_score`; labels without a relevant
    document in the fold are left out.

    Parameters
    ----------
    beta : float, default 1.0
        The beta of F_beta (recall weighs beta times as much as precision).

    Returns
    -------
    callable
        A scorer ``scorer(estimator, X, Y) -> float`` (``sklearn.metrics.make_scorer``).

    Examples
    --------
    >>> from sklearn.datasets import make_multilabel_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.multiclass import OneVsRestClassifier
    >>> import xmlthresh
    >>> X, Y = make_multilabel_classification(n_samples=200, n_classes=5, random_state=0)
    >>> folds = cross_val_score(OneVsRestClassifier(LogisticRegression(max_iter=1000)), X, Y, cv=3,
    ...                         scoring=xmlthresh.f_macro_scorer())
    >>> len(folds), bool(((0 < folds) & (folds < 1)).all())
    (3, True)
    """
    return make_scorer(f_macro_score, beta=check_beta(beta))  # checked now: at scoring time a bad beta is a NaN


def _estimator_has(attribute: str):
    def check(self) -> bool:
        return hasattr(self.estimator_ if hasattr(self, "estimator_") else self.estimator, attribute)

    return check


class ThresholdClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Per-label decision thresholds for a multi-label scikit-learn classifier, chosen to maximise F-macro.

    ``fit`` computes out-of-fold scores of ``estimator``, fits the thresholds on them
    (:func:`xmlthresh.fit_thresholds`) and refits the estimator on all data; ``predict`` applies the
    thresholds to its scores (details in the module :mod:`xmlthresh.classifier`). A scikit-learn
    meta-estimator: ``clone``, ``Pipeline`` and ``GridSearchCV`` work.

    Parameters
    ----------
    estimator : estimator
        A multi-label classifier with ``decision_function`` or ``predict_proba`` (e.g.
        ``OneVsRestClassifier(LogisticRegression())``).
    strategy : str, default "pooled"
        A registered strategy name. ``pooled`` is the rule recommended for thresholds applied to new
        documents: ``domain`` with precision smoothing, a cap on the documents predicted per positive and a
        fallback for labels without an out-of-fold positive (:mod:`xmlthresh.strategies.pooled`); ``domain``
        gives the certified optimum of the out-of-fold scores themselves.
    beta : float, default 1.0
        The beta of F_beta.
    cv : int, cross-validation splitter, iterable or "prefit", default 5
        The number of shuffled folds (``KFold``), a splitter, an iterable of (train, test) index arrays whose
        test parts cover every sample once, or ``"prefit"``: ``estimator`` is fitted already and (X, Y) are
        held-out data, scored directly.
    strategy_params : dict, optional
        The strategy's other parameters (``{"smoothing": 5}``, ``{"refine": "bnb"}``, ...).
    response_method : {"auto", "decision_function", "predict_proba"}, default "auto"
        Which scores to threshold; ``"auto"`` takes ``decision_function``, else ``predict_proba``.
    random_state : int, RandomState instance or None, default None
        The shuffling of the folds when ``cv`` is an integer.

    Attributes
    ----------
    estimator_ : estimator
        The estimator refitted on all data (``estimator`` itself for ``cv="prefit"``).
    result_ : ThresholdResult
        The thresholds fitted on the out-of-fold scores, with their F-macro, certified bounds and report.
    thresholds_ : numpy.ndarray or None
        One score threshold per label (None for a strategy whose rule is not thresholds).
    classes_ : numpy.ndarray
        The label indices 0..n-1.
    n_features_in_, feature_names_in_
        Those of the estimator, when it has them.

    See Also
    --------
    xmlthresh.fit_thresholds : thresholds for a score matrix you already have.

    Examples
    --------
    >>> from sklearn.datasets import make_multilabel_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.multiclass import OneVsRestClassifier
    >>> import xmlthresh
    >>> X, Y = make_multilabel_classification(n_samples=200, n_classes=5, random_state=0)
    >>> classifier = xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression(max_iter=1000)),
    ...                                            cv=3, random_state=0).fit(X, Y)
    >>> classifier.thresholds_.shape, classifier.result_.strategy
    ((5,), 'pooled')
    >>> classifier.predict(X[:3]).shape
    (3, 5)
    """

    def __init__(self, estimator: Any, strategy: str = "pooled", beta: float = 1.0, cv: Any = 5,
                 strategy_params: dict[str, Any] | None = None, response_method: str = "auto",
                 random_state: Any = None) -> None:
        self.estimator = estimator
        self.strategy = strategy
        self.beta = beta
        self.cv = cv
        self.strategy_params = strategy_params
        self.response_method = response_method
        self.random_state = random_state

    def fit(self, X: Any, y: Any, *, groups: Any = None, **fit_params: Any) -> "ThresholdClassifier":
        """Fit the thresholds on out-of-fold scores, then refit the estimator on all data.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (samples, features)
            The training samples, in any form the estimator takes.
        y : array-like or sparse matrix, shape (samples, labels)
            The multi-label indicator matrix (0/1); a DataFrame's column names become the label names.
        groups : array-like, optional
            The samples' groups, for a ``cv`` splitter that needs them (``GroupKFold``).
        **fit_params
            Passed to the estimator's ``fit``.

        Returns
        -------
        ThresholdClassifier
            ``self``, fitted.

        Raises
        ------
        InputError
            ``y`` is not a multi-label indicator matrix, ``strategy_params`` holds an argument set here, the
            estimator gives no scores of shape (samples, labels), or a fold's training part cannot be fitted
            (the message names the labels and what to do).

        Examples
        --------
        >>> from sklearn.datasets import make_multilabel_classification
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.multiclass import OneVsRestClassifier
        >>> import xmlthresh
        >>> X, Y = make_multilabel_classification(n_samples=200, n_classes=5, random_state=0)
        >>> classifier = xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression(max_iter=1000)),
        ...                                            cv=3, random_state=0).fit(X, Y)
        >>> classifier.result_.n_labels, classifier.estimator_ is not classifier.estimator
        (5, True)
        """
        if self.response_method not in RESPONSE_METHODS:
            raise ValueError(f"response_method must be one of {RESPONSE_METHODS}, got {self.response_method!r}")
        params = dict(self.strategy_params or {})
        taken = sorted(set(params) & set(ARGUMENTS_SET_HERE))
        if taken:
            raise InputError(f"strategy_params must not hold {', '.join(map(repr, taken))}: "
                             f"{'; '.join(ARGUMENTS_SET_HERE[key] for key in taken)}")
        make_strategy(self.strategy, self.beta, params)  # fail before any fitting
        _check_random_state(self.random_state)
        if y is None:
            raise ValueError("ThresholdClassifier requires y to be passed, but the target y is None")
        X, Y = indexable(X, y)
        labels = _check_targets(Y, _n_samples(X))
        if isinstance(self.cv, str) and self.cv == "prefit":
            try:
                check_is_fitted(self.estimator)
            except NotFittedError as exc:
                raise NotFittedError("cv='prefit' needs an estimator that is already fitted") from exc
            estimator = self.estimator
            scores = _response(estimator, X, self.response_method, labels.shape)
        else:
            scores = self._out_of_fold_scores(X, Y, labels.shape, fit_params, groups)
            estimator = _fit_clone(self.estimator, X, Y, fit_params, "all samples")
        native = NATIVE_THRESHOLDS[_response_method(estimator, self.response_method)]
        _, _, names = align_frames(scores, Y)  # a DataFrame y names the labels
        self.result_: ThresholdResult = fit_thresholds(scores, labels, self.strategy, self.beta, label_names=names,
                                                        native_threshold=native, **params)
        self.estimator_ = estimator
        self.thresholds_ = self.result_.thresholds
        self.classes_ = np.arange(labels.shape[1])
        self._sparse_output = sp.issparse(Y)
        self._output_dtype = Y.dtype if sp.issparse(Y) else np.asarray(Y).dtype
        for attribute in ("n_features_in_", "feature_names_in_"):
            if hasattr(estimator, attribute):
                setattr(self, attribute, getattr(estimator, attribute))
        return self

    def _out_of_fold_scores(self, X, Y, shape: tuple[int, int], fit_params: dict, groups: Any) -> np.ndarray:
        if isinstance(self.cv, Integral) and not isinstance(self.cv, bool):
            if self.cv < 2:
                raise ValueError(f"cv must be at least 2 folds (or 'prefit'), got {self.cv}")
            splitter = KFold(n_splits=int(self.cv), shuffle=True, random_state=self.random_state)
        else:
            splitter = check_cv(self.cv, classifier=False)  # a splitter or an iterable of (train, test)
        scores = np.full(shape, np.nan)
        covered = np.zeros(shape[0], dtype=np.int64)
        for fold, (train, test) in enumerate(splitter.split(X, Y, groups)):
            model = _fit_clone(self.estimator, _safe_indexing(X, train), _safe_indexing(Y, train), fit_params,
                               f"the training part of fold {fold} ({len(train)} samples)")
            scores[test] = _response(model, _safe_indexing(X, test), self.response_method, (len(test), shape[1]))
            covered[test] += 1
        if np.any(covered != 1):
            raise ValueError("cv must split the samples into test parts that cover every sample exactly once "
                             f"(out-of-fold scores); {int(np.count_nonzero(covered != 1))} sample(s) are not")
        return scores

    def predict(self, X: Any) -> np.ndarray | sp.csr_matrix:
        """Predict the labels of new samples: the fitted thresholds applied to the estimator's scores.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (samples, features)
            The samples to predict.

        Returns
        -------
        numpy.ndarray or scipy.sparse.csr_matrix, shape (samples, labels)
            0/1 predictions with the fitted ``y``'s dtype: dense when ``y`` was dense, CSR when it was sparse.

        Examples
        --------
        >>> from sklearn.datasets import make_multilabel_classification
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.multiclass import OneVsRestClassifier
        >>> import xmlthresh
        >>> X, Y = make_multilabel_classification(n_samples=200, n_classes=5, random_state=0)
        >>> classifier = xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression(max_iter=1000)),
        ...                                            cv=3, random_state=0).fit(X, Y)
        >>> predictions = classifier.predict(X[:4])
        >>> predictions.shape, predictions.dtype, set(predictions.ravel().tolist()) <= {0, 1}
        ((4, 5), dtype('int64'), True)
        """
        check_is_fitted(self, "result_")
        scores = _response(self.estimator_, X, self.response_method, (_n_samples(X), len(self.classes_)))
        pred = self.result_.predict(scores)
        if self._sparse_output:
            return pred.astype(self._output_dtype)
        return pred.toarray().astype(self._output_dtype)

    def score(self, X: Any, y: Any) -> float:
        """F-macro (with ``beta``) of ``predict(X)`` against ``y``: what the thresholds maximise.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (samples, features)
            The samples.
        y : array-like or sparse matrix, shape (samples, labels)
            Their true labels (0/1).

        Returns
        -------
        float
            F-macro over the labels with a relevant sample in ``y``.

        Examples
        --------
        >>> from sklearn.datasets import make_multilabel_classification
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.multiclass import OneVsRestClassifier
        >>> import xmlthresh
        >>> X, Y = make_multilabel_classification(n_samples=200, n_classes=5, random_state=0)
        >>> classifier = xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression(max_iter=1000)),
        ...                                            cv=3, random_state=0).fit(X, Y)
        >>> 0.5 < classifier.score(X, Y) <= 1.0
        True
        """
        return f_macro_score(self._in_fit_order(y), self.predict(X), beta=self.beta)

    def _in_fit_order(self, y: Any) -> Any:
        """``y`` with a DataFrame's columns in the order of the labels of the fit (named by the fit's y
        DataFrame): a y with its columns in another order was scored against the wrong labels, without a word."""
        check_is_fitted(self, "result_")
        if not (type(y).__module__.startswith("pandas") and hasattr(y, "columns")):
            return y
        names = np.asarray(self.result_.label_names).tolist()
        if list(y.columns) == names:
            return y
        if set(y.columns) == set(names) and len(y.columns) == len(names):
            return y[names]
        fitted_by_name = not np.array_equal(np.asarray(self.result_.label_names), np.arange(len(names)))
        if not fitted_by_name:  # fitted on an array: its labels have no names to match
            return y
        unknown = [c for c in y.columns if c not in set(names)][:3]
        raise InputError(f"y's columns {unknown} are not labels of the fit (its labels: {names[:6]}"
                         f"{' ...' if len(names) > 6 else ''}); give y the columns of the fit")

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X: Any) -> Any:
        """The fitted estimator's ``predict_proba`` (no thresholds applied).

        Available when the estimator has ``predict_proba``.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (samples, features)
            The samples.

        Returns
        -------
        array-like
            What ``estimator_.predict_proba(X)`` returns.

        Examples
        --------
        >>> from sklearn.datasets import make_multilabel_classification
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.multiclass import OneVsRestClassifier
        >>> import xmlthresh
        >>> X, Y = make_multilabel_classification(n_samples=200, n_classes=5, random_state=0)
        >>> classifier = xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression(max_iter=1000)),
        ...                                            cv=3, random_state=0).fit(X, Y)
        >>> classifier.predict_proba(X[:2]).shape
        (2, 5)
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X: Any) -> Any:
        """The fitted estimator's ``decision_function`` (the scores the thresholds apply to).

        Available when the estimator has ``decision_function``.

        Parameters
        ----------
        X : array-like or sparse matrix, shape (samples, features)
            The samples.

        Returns
        -------
        array-like
            What ``estimator_.decision_function(X)`` returns.

        Examples
        --------
        >>> from sklearn.datasets import make_multilabel_classification
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.multiclass import OneVsRestClassifier
        >>> import xmlthresh
        >>> X, Y = make_multilabel_classification(n_samples=200, n_classes=5, random_state=0)
        >>> classifier = xmlthresh.ThresholdClassifier(OneVsRestClassifier(LogisticRegression(max_iter=1000)),
        ...                                            cv=3, random_state=0).fit(X, Y)
        >>> import numpy as np
        >>> scores = classifier.decision_function(X[:2])
        >>> bool(((scores >= classifier.thresholds_).astype(int) == classifier.predict(X[:2])).all())
        True
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        tags.classifier_tags.multi_label = True
        tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse
        return tags


#: fit_thresholds' arguments that ThresholdClassifier sets itself, with where they come from
ARGUMENTS_SET_HERE = {
    "beta": "give it as ThresholdClassifier(beta=...)",
    "strategy": "give it as ThresholdClassifier(strategy=...)",
    "native_threshold": "it is the estimator's own decision threshold (0 for decision_function, 0.5 for "
                        "predict_proba)",
    "label_names": "they come from the columns of a DataFrame y",
    "scores": "the scores are the estimator's out-of-fold responses",
    "labels": "the labels are y",
}


def _fit_clone(estimator: Any, X: Any, Y: Any, fit_params: dict, part: str) -> Any:
    """A fitted clone of ``estimator``; when the fit fails on a part where some label column holds one class
    only (many classifiers refuse that with a message naming no label), the error names those labels."""
    try:
        return clone(estimator).fit(X, Y, **fit_params)
    except ValueError as exc:
        constant = _single_class_labels(Y)
        if not len(constant):
            tags = get_tags(estimator)
            if not (tags.target_tags.multi_output or (tags.classifier_tags and tags.classifier_tags.multi_label)):
                name = type(estimator).__name__
                raise InputError(
                    f"{name} could not be fitted on {part} ({first_line(exc)}): by scikit-learn's tags it takes one "
                    f"target column, and ThresholdClassifier gives it the label matrix; wrap it, e.g. "
                    f"OneVsRestClassifier({name}()) or MultiOutputClassifier({name}())") from exc
            raise
        shown = ", ".join(str(k) for k in constant[:5]) + (", ..." if len(constant) > 5 else "")
        raise InputError(
            f"{type(estimator).__name__} could not be fitted on {part}: {len(constant)} label column(s) hold a "
            f"single class there (label {shown}), and it refused them ({first_line(exc)}); use fewer folds (cv), "
            "a splitter that keeps positives in every training part, drop those labels, or wrap the model in "
            "OneVsRestClassifier, which predicts a constant for such labels") from exc


def _single_class_labels(Y: Any) -> np.ndarray:
    """Indices of the label columns of ``Y`` that are all 0 or all 1."""
    if sp.issparse(Y):
        positives = np.asarray(sp.csc_matrix(Y).astype(bool).sum(axis=0)).ravel()
    else:
        positives = np.count_nonzero(np.asarray(Y), axis=0)
    n = Y.shape[0]
    return np.flatnonzero((positives == 0) | (positives == n))


def _check_targets(Y: Any, n_samples: int) -> sp.csr_matrix:
    """Y as a boolean CSR indicator matrix (samples x labels), or a readable error ("Unknown label type",
    scikit-learn's phrase for a target a classifier cannot take)."""
    if not sp.issparse(Y):
        try:
            array = np.asarray(Y)
        except ValueError:  # ragged: lists of label ids per sample
            array = np.asarray(Y, dtype=object)
        if array.dtype == object and array.ndim == 1:
            raise InputError("Unknown label type: ThresholdClassifier needs a 0/1 multi-label indicator matrix "
                             "(samples x labels); for a list of label sets per sample use "
                             "sklearn.preprocessing.MultiLabelBinarizer().fit_transform(y)")
        if array.ndim != 2:
            raise InputError(f"Unknown label type: ThresholdClassifier needs a 2-D multi-label indicator y "
                             f"(samples x labels), got shape {array.shape}; for a single binary target use "
                             "y.reshape(-1, 1) or scikit-learn's TunedThresholdClassifierCV")
        Y = array
    if Y.shape[0] != n_samples:
        raise InputError(f"X has {n_samples} samples but y has {Y.shape[0]} rows")
    try:
        return check_labels(Y, Y.shape, what="y")
    except InputError as exc:
        message = str(exc)
    raise InputError(f"Unknown label type: ThresholdClassifier needs a 0/1 multi-label indicator matrix; {message}")


#: the decision threshold an estimator's own ``predict`` applies to each response (``fallback="native"``)
NATIVE_THRESHOLDS = {"decision_function": 0.0, "predict_proba": 0.5}


def _response_method(estimator: Any, response_method: str) -> str:
    """The method that gives the scores: ``response_method``, or for ``"auto"`` decision_function, else
    predict_proba."""
    methods = ("decision_function", "predict_proba") if response_method == "auto" else (response_method,)
    method = next((name for name in methods if hasattr(estimator, name)), None)
    if method is None:
        raise InputError(f"{type(estimator).__name__} has no {' nor '.join(methods)}: the thresholds need scores")
    return method


def _response(estimator: Any, X: Any, response_method: str, shape: tuple[int, int]) -> np.ndarray:
    """Scores (samples x labels) of a fitted multi-label estimator: decision_function, else predict_proba."""
    method = _response_method(estimator, response_method)
    out = getattr(estimator, method)(X)
    if isinstance(out, list):  # multi-output predict_proba: one (samples, n_classes_k) array per label
        classes = getattr(estimator, "classes_", None)
        columns = []
        for k, proba in enumerate(out):
            label_classes = np.asarray(classes[k]) if isinstance(classes, list) else np.arange(proba.shape[1])
            positive = np.flatnonzero(label_classes == 1)
            columns.append(np.asarray(proba)[:, positive[0]] if len(positive) else np.zeros(len(proba)))
        out = np.column_stack(columns) if columns else np.empty((shape[0], 0))
    out = out.toarray() if sp.issparse(out) else np.asarray(out, dtype=np.float64)
    if out.ndim == 1 and shape[1] == 1:
        out = out[:, None]
    if out.shape != tuple(shape):
        raise InputError(f"{type(estimator).__name__}.{method} returned shape {out.shape}, expected (samples, "
                         f"labels) = {tuple(shape)}: ThresholdClassifier needs a multi-label classifier (e.g. "
                         "OneVsRestClassifier(LogisticRegression()))")
    return out


def _check_random_state(value: Any) -> None:
    """What scikit-learn's splitters take as ``random_state``: None, a seed in [0, 2**32 - 1] or a
    ``numpy.random.RandomState``; their own refusals named no parameter ("Seed must be between 0 and 2**32 - 1")
    and a ``numpy.random.Generator`` is not among them."""
    if value is None or isinstance(value, np.random.RandomState):
        return
    if isinstance(value, Integral) and not isinstance(value, bool) and 0 <= value <= MAX_SEED:
        return
    raise InputError(f"random_state must be None, a seed in [0, {MAX_SEED}] or a numpy.random.RandomState (what "
                     f"scikit-learn's splitters take), got {value!r}"
                     + ("; for a Generator g, pass int(g.integers(2**32))" if isinstance(value, np.random.Generator)
                        else ""))
