"""The estimator contract every threshold strategy follows (scikit-learn estimators on score data).

**Public contract** (every registered strategy, peers included):

* ``fit(scores, labels, *, include_predict_all=True) -> self`` -- ``scores`` documents x labels, a dense
  array or a sparse top-k CSR matrix (missing entries are unscored); ``labels`` 0/1 of the same shape,
  dense or sparse. Validated once here (:mod:`xmlthresh.validation`); ``include_predict_all`` says whether
  "predict all" is a candidate (a property of the problem, kept on the split it builds).
* ``predict(scores) -> scipy.sparse.csr_matrix`` (bool, documents x labels) -- needs no labels; the number of
  label columns must be the fitted one (``n_features_in_``: the score columns are the estimator's features).
* ``score(scores, labels) -> float`` -- F-macro of ``predict(scores)`` (labels without relevant documents
  excluded), so ``GridSearchCV`` can tune strategy parameters.
* ``sklearn.utils.validation.check_is_fitted`` works (``__sklearn_is_fitted__``); ``predict``, ``score``,
  ``report`` and ``evaluate_scores`` before ``fit`` raise ``sklearn.exceptions.NotFittedError``.
  (The estimator protocol comes from :mod:`xmlthresh.strategies.params`: scikit-learn's semantics without
  importing scikit-learn in a run.)
* ``report()`` -- metrics on the fit data, ``lower_bound`` / ``upper_bound`` (None without a certificate) and
  strategy diagnostics: what the CLI writes to ``result.json``.

**What a subclass implements** (the split-level hooks; a :class:`ScoredSplit` is validated already):

* ``fit_scores(split) -> self`` -- fit on ``split`` (reading ``split.include_predict_all``), then call
  ``self._set_fit_results(split)`` (ScoreStrategy) to set ``metrics_``, ``f_macro_``, bounds, ``kept_labels_``,
  ``n_labels_dropped_`` and ``n_features_in_`` from ``counts(split)``; set ``info_`` before it.
* ``predict_split(split) -> 0/1 matrix`` -- predictions on a split whose ``labels`` may be ``None``. The
  default applies ``score_thresholds_`` (one score threshold per label, predict score >= t, -inf = all,
  +inf = none): a rule that sets ``score_thresholds_`` needs no ``predict_split`` of its own.
* ``counts(split) -> (tp, predicted)`` per label -- optional: the default counts ``predict_split(split)``
  against ``split.labels``; override it when counting is cheaper than materialising predictions.
* ``rule_state() -> dict`` / ``restore_rule(state, n_labels)`` -- only for rules without
  ``score_thresholds_``: the fitted state ``predict_split`` needs, so a saved result can predict.

**Ranked lists** (no scores, so no score thresholds): :class:`ThresholdStrategy` (domain, independent,
coordinate, ...) also fits ranked lists with ``fit_lists(lists)``, choosing one cut per label (the number of
top documents predicted, ``cuts_``); ``evaluate_lists(lists)`` / ``score_lists(lists)`` measure those cuts.
On score data its ``fit_scores`` fits the split's ranking and turns the cuts into ``score_thresholds_``.
:class:`ScoreStrategy` (rcut, pcut, scut, peers) needs per-document scores.

Both say with ``skip(data)`` when they cannot run on a kind of data (benchopt style: ``(True, reason)``).
Parameters are plain constructor arguments, so ``get_params``/``set_params``, ``clone`` and grid search work.

Shared conventions: labels with s_k = 0 are excluded (cut 0, counted in ``n_labels_dropped_``); the
candidates are the Pareto-reduced cuts of ``xmlthresh.data.candidates``; the reported ``f_macro_`` is
always recomputed from the returned cuts, never taken from an optimiser's running value.
"""

from __future__ import annotations

from typing import Any, ClassVar

import math

import numpy as np

from xmlthresh.data.candidates import Candidates, build_candidates
from xmlthresh.data.objective import (FlooredCandidates, check_min_precision, check_predicted_cap, check_smoothing,
                                      choice_diagnostics, smoothed, with_precision_floor, with_predicted_cap)
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.data.evaluation import evaluate_cuts
from xmlthresh._util.lazy_imports import lazy_module
from xmlthresh._util.notices import IgnoredSettingWarning, PredictAllWarning, warn
from xmlthresh._util.registry import constructor_defaults
from xmlthresh.metrics import EMPIRICAL_OBJECTIVE, evaluate, f_beta_raw
from xmlthresh.validation import InputError, check_beta, check_labels, check_scores
from xmlthresh.strategies.fitted import FittedRule
from xmlthresh.strategies.params import EstimatorParams, not_fitted

sp = lazy_module("scipy.sparse")  # loaded on first use: ranked-list runs never need it


#: warn when more than this share of the labels predicts every document at the chosen cuts
PREDICT_ALL_WARNING_SHARE = 0.5
#: ... among at least this many labels (a share of a handful of labels says nothing)
PREDICT_ALL_WARNING_MIN_LABELS = 10


def tiny_scored_split() -> ScoredSplit:
    """A 4 x 3 scored split with ties, used to warm up kernels (with a native threshold, so that a strategy
    with ``fallback="native"`` warms up too)."""
    scores = np.array([[0.9, 0.1, 0.5], [0.5, 0.5, 0.2], [0.5, 0.7, 0.9], [0.2, 0.7, 0.1]])
    labels = np.array([[1, 0, 0], [0, 1, 1], [1, 1, 0], [0, 0, 1]], dtype=bool)
    return ScoredSplit(scores, labels, name="warm-up", native_threshold=0.5)


class BaseStrategy(EstimatorParams):
    """What every strategy offers: the score-matrix estimator API (fit / predict / score), beta, parameter
    checks, scored-split evaluation, skip, warm-up, report."""

    #: registry name (set by the ``@STRATEGIES.register`` decorator)
    registry_name: ClassVar[str] = ""
    #: whether the strategy reports certified lower and upper bounds on the optimum
    certified: ClassVar[bool] = False
    #: whether the strategy needs per-document scores (cannot run on ranked lists)
    requires_scores: ClassVar[bool] = False
    #: what kind of method it is: "deterministic", "randomized", or "uses test scores" (it looks at the
    #: scores of the split it is evaluated on, which a fair comparison must state)
    kind: ClassVar[str] = "deterministic"

    def __init__(self, beta: float = 1.0) -> None:
        self.beta = beta

    # ------------------------------------------------------------------ public API (score matrices)
    def fit(self, scores: Any, labels: Any, *, include_predict_all: bool = True) -> "BaseStrategy":
        """Fit the rule on a score matrix and its 0/1 label matrix.

        Parameters
        ----------
        scores : array-like or scipy.sparse CSR matrix, shape (documents, labels)
            Dense scores, or the sparse top-k scores of an extreme classifier (never densified).
        labels : array-like or scipy.sparse matrix, shape (documents, labels)
            0/1 or bool relevance of the same documents and labels.
        include_predict_all : bool, default True
            Whether "predict every document" is a candidate for a label.

        Returns
        -------
        BaseStrategy
            ``self``, fitted: ``metrics_``, ``f_macro_``, ``lower_bound_`` / ``upper_bound_`` (certified
            strategies) and, for threshold rules, ``score_thresholds_``.

        Raises
        ------
        InputError
            Scores or labels of the wrong shape or dtype, NaN, labels that are not 0/1.

        Examples
        --------
        >>> import numpy as np
        >>> from xmlthresh.strategies import STRATEGIES
        >>> scores = np.array([[0.9, 0.2], [0.8, 0.7], [0.3, 0.6], [0.1, 0.1]])
        >>> labels = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
        >>> model = STRATEGIES.get("domain")(beta=1.0).fit(scores, labels)
        >>> model.score_thresholds_, model.f_macro_
        (array([0.8, 0.6]), 1.0)
        """
        scores = check_scores(scores)
        labels = check_labels(labels, scores.shape)
        return self.fit_scores(ScoredSplit(scores, labels, include_predict_all=bool(include_predict_all)))

    def predict(self, scores: Any) -> sp.csr_matrix:
        """Predict with the fitted rule; needs no labels.

        Parameters
        ----------
        scores : array-like or scipy.sparse CSR matrix, shape (documents, labels)
            Scores of the fitted labels, in the same order.

        Returns
        -------
        scipy.sparse.csr_matrix of bool, shape (documents, labels)
            True where a label is predicted for a document.

        Examples
        --------
        >>> import numpy as np
        >>> from xmlthresh.strategies import STRATEGIES
        >>> scores = np.array([[0.9, 0.2], [0.8, 0.7], [0.3, 0.6], [0.1, 0.1]])
        >>> labels = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
        >>> model = STRATEGIES.get("domain")(beta=1.0).fit(scores, labels)
        >>> model.predict(np.array([[0.85, 0.5]])).toarray()
        array([[ True, False]])
        """
        self._check_fitted()
        scores = check_scores(scores, n_labels=self.n_features_in_)
        return _as_bool_csr(self.predict_split(ScoredSplit(scores, name="predict")))

    def score(self, scores: Any, labels: Any) -> float:
        """F-macro of ``predict(scores)`` against ``labels`` (higher is better, as scikit-learn expects).

        Parameters
        ----------
        scores : array-like or scipy.sparse CSR matrix, shape (documents, labels)
            Scores of the fitted labels.
        labels : array-like or scipy.sparse matrix, shape (documents, labels)
            Their true 0/1 labels.

        Returns
        -------
        float
            F-macro over the labels with a relevant document.

        Examples
        --------
        >>> import numpy as np
        >>> from xmlthresh.strategies import STRATEGIES
        >>> scores = np.array([[0.9, 0.2], [0.8, 0.7], [0.3, 0.6], [0.1, 0.1]])
        >>> labels = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
        >>> model = STRATEGIES.get("domain")(beta=1.0).fit(scores, labels)
        >>> model.score(scores, labels)
        1.0
        """
        self._check_fitted()
        scores = check_scores(scores, n_labels=self.n_features_in_)
        split = ScoredSplit(scores, check_labels(labels, scores.shape), name="score")
        return self.evaluate_scores(split)["f_macro"]

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "metrics_")

    # ------------------------------------------------------------------ split-level hooks
    def fit_scores(self, split: ScoredSplit) -> "BaseStrategy":
        """Fit on a validated scored split (see the module docstring)."""
        raise NotImplementedError

    def predict_split(self, split: ScoredSplit) -> Any:
        """0/1 predictions (documents x labels) on ``split`` (whose labels may be None): by default the
        fitted score thresholds."""
        if not hasattr(self, "score_thresholds_"):
            raise not_fitted(f"{type(self).__name__} was fitted on ranked lists (cuts, no score thresholds); "
                                 "fit it on scores to predict")
        return split.predict(self.score_thresholds_)

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        """(true positives, predicted documents) per label of the fitted rule on ``split``."""
        return split.counts_of(self.predict_split(split))

    def rule_state(self) -> dict[str, Any]:
        """The fitted state ``predict_split`` needs when the rule is not ``score_thresholds_`` (those are saved
        as they are): numbers, strings and numpy arrays, written to a thresholds file by ThresholdResult."""
        raise NotImplementedError(f"{type(self).__name__} cannot export its fitted rule")

    def restore_rule(self, state: dict[str, Any], n_labels: int) -> "BaseStrategy":
        """Set the attributes ``predict_split`` needs from :meth:`rule_state`'s output (a loaded file)."""
        raise NotImplementedError(f"{type(self).__name__} cannot restore a fitted rule")

    # ------------------------------------------------------------------ evaluation, report
    def skip(self, data: Any) -> tuple[bool, str]:
        """``(True, reason)`` when the strategy cannot run on ``data`` (a RankedLists or ScoreData)."""
        if self.requires_scores and isinstance(data, RankedLists):
            return True, (
                f"{self.registry_name or type(self).__name__} needs per-document scores; "
                f"data set {data.name!r} provides ranked lists only"
            )
        return False, ""

    def evaluate_scores(self, split: ScoredSplit) -> dict[str, float]:
        """Metrics of the fitted rule on a scored split (labels without relevant documents excluded)."""
        self._check_fitted()
        if split.n_labels != self.n_features_in_:
            raise ValueError(f"fitted on {self.n_features_in_} labels, got a split with {split.n_labels}")
        tp, predicted = self.counts(split)
        kept = split.n_relevant > 0
        return evaluate(tp[kept], predicted[kept], split.n_relevant[kept], self.beta)

    def report(self) -> dict[str, Any]:
        """What the strategy knows about its result: metrics, bounds and strategy-specific diagnostics."""
        self._check_fitted()
        return {
            **self.metrics_,
            "lower_bound": self.lower_bound_,
            "upper_bound": self.upper_bound_,
            "n_candidates": getattr(self, "n_candidates_", None),
            "n_labels_dropped": self.n_labels_dropped_,
            **self.info_,
        }

    def fitted(self) -> FittedRule:
        """The declared result of the fit (:class:`~xmlthresh.strategies.fitted.FittedRule`): what the job, the
        plots and the reports read, so none of them probes attributes or refits."""
        self._check_fitted()
        state = vars(self)
        return FittedRule(
            strategy=self.registry_name or type(self).__name__, kind=self.kind, beta=float(self.beta),
            metrics=dict(self.metrics_), kept_labels=self.kept_labels_, lower_bound=self.lower_bound_,
            upper_bound=self.upper_bound_, cuts=state.get("cuts_"), fit_lists=state.get("fit_lists_"),
            score_thresholds=state.get("score_thresholds_"), info=dict(state.get("info_", {})),
            **self._fitted_extras(),
        )

    def thresholds_for(self, split: ScoredSplit) -> np.ndarray | None:
        """The per-label score thresholds the rule applies to ``split`` (the fitted ones by default; a
        transductive rule computes them from ``split``'s scores), or None for a rule that is not a threshold
        per label."""
        self._check_fitted()
        return vars(self).get("score_thresholds_")

    def _fitted_extras(self) -> dict[str, Any]:
        """Hook: further :class:`FittedRule` fields a strategy has (``grid``)."""
        return {}

    def warm_up(self, lists: bool = True, scores: bool = True) -> None:
        """Take one-off costs (JIT compilation, loading compiled kernels) out of the timing of ``fit``, for the
        kind of data the run fits on: ranked ``lists`` and/or ``scores`` (a strategy of this base class fits
        scores only)."""
        if scores:
            self.unfitted_copy().fit_scores(tiny_scored_split())

    def _check_params(self) -> None:
        check_beta(self.beta)

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            raise not_fitted(f"{type(self).__name__} is not fitted yet; call fit first")


def _as_bool_csr(predictions: Any) -> sp.csr_matrix:
    """A prediction matrix (dense 0/1 or sparse) as a canonical boolean CSR matrix."""
    out = sp.csr_matrix(predictions, dtype=bool)
    out.eliminate_zeros()
    out.sort_indices()
    return out


class ScoreStrategy(BaseStrategy):
    """A rule that needs per-document scores (RCut, PCut, SCut, the peers): subclasses implement
    ``fit_scores`` (ending with ``_set_fit_results(split)``) and, unless they set ``score_thresholds_``,
    ``predict_split``; ``counts`` only when cheaper than the default."""

    requires_scores = True

    def _set_fit_results(self, split: ScoredSplit) -> None:
        """Common fitted attributes once the rule is fixed: metrics on the fit split, no bounds."""
        self.n_features_in_ = split.n_labels
        self.kept_labels_ = split.n_relevant > 0
        self.n_labels_dropped_ = int(np.count_nonzero(~self.kept_labels_))
        self.lower_bound_ = None
        self.upper_bound_ = None
        self.metrics_ = {}  # marks the strategy as fitted for evaluate_scores
        self.metrics_ = self.evaluate_scores(split)
        self.f_macro_ = self.metrics_["f_macro"]


def _score_only_settings(strategy: Any) -> dict[str, Any]:
    """The settings of ``strategy`` that act on scores only and are on: the pooling of score thresholds, and a
    ``fallback`` other than the strategy's default (``pooled``'s own default is not the user's choice; on lists
    every label of the fit has a relevant document or is left out, so a fallback has nothing to change)."""
    pooling = getattr(strategy, "pooling", 0)
    settings = {"pooling": pooling} if pooling not in (0, 0.0) else {}
    fallback = getattr(strategy, "fallback", None)
    if fallback is not None and fallback != constructor_defaults(type(strategy)).get("fallback", fallback):
        settings["fallback"] = fallback
    return settings


#: (strategy class, settings) already warned about in this process (a run fits the same rule more than once)
_WARNED_SCORE_ONLY: set[tuple[str, str]] = set()


class PoolingMixin:
    """``pooling`` (the strength of the partial pooling of score thresholds across labels of similar fit
    frequency, in pseudo-positives, or ``"auto"``: estimated from the fit data by empirical Bayes) and
    ``fallback`` (what labels without a fit positive predict: ``never``, ``pooled``, ``native``, ``top``) for a
    :class:`ThresholdStrategy` fitted on scores; see :mod:`xmlthresh.strategies.pooling`. With ``pooling=0``
    and ``fallback="never"`` nothing changes. The certified bounds stay those of the unpooled fit problem;
    ``f_macro`` and the metrics are those of the pooled thresholds on the fit split."""

    pooling: float | str
    fallback: str
    pooling_space: str
    #: an infinite pooling strength gives every label its group's reference (the typed schema refuses
    #: infinities elsewhere)
    infinite_params: ClassVar[tuple[str, ...]] = ("pooling",)

    def _check_pooling(self) -> None:
        from xmlthresh.strategies.pooling import check_pooling

        check_pooling(self.pooling, self.fallback, self.pooling_space)

    def _pool(self, split: ScoredSplit) -> None:
        from xmlthresh.strategies.pooling import check_pooling, cross_fitted_strength

        strength = check_pooling(self.pooling, self.fallback, self.pooling_space)
        if strength == 0 and self.fallback == "never":
            return
        chosen = {}
        if math.isnan(strength):  # "auto": chosen by cross-fitting on the fit split

            def unpooled(part: ScoredSplit) -> "ThresholdStrategy":
                plain = self.unfitted_copy()
                plain.pooling, plain.fallback = 0.0, "never"
                return plain.fit_scores(part)

            def pool(part: ScoredSplit, fitted: "ThresholdStrategy", lam: float) -> np.ndarray:
                return self._pooled_thresholds(part, fitted.cuts_, fitted.score_thresholds_, lam)[0]

            strength, means = cross_fitted_strength(unpooled, pool, split, self.beta)
            chosen = {"pooling_auto_f_macro": {f"{k:g}": v for k, v in means.items()}}
        pooled, info = self._pooled_thresholds(split, self.cuts_, self.score_thresholds_, strength)
        info.update(chosen)
        self.score_thresholds_ = pooled
        _, predicted = split.counts_at(pooled)
        self.cuts_ = predicted.astype(np.int64)
        self.metrics_ = self.evaluate_scores(split)
        self.f_macro_ = self.metrics_["f_macro"]
        self.info_.update(info)  # type: ignore[attr-defined]

    def _pooled_thresholds(self, split: ScoredSplit, cuts: np.ndarray, thresholds: np.ndarray,
                           strength: float) -> tuple[np.ndarray, dict[str, Any]]:
        """The pooled score thresholds of a fit on ``split`` (its ``cuts`` and ``thresholds``)."""
        from xmlthresh.strategies.pooling import pool_cuts, pool_thresholds, top_document_thresholds, untied_cuts

        if self.pooling_space == "rank":
            ranking = split.ranking()
            pooled_cuts, info = pool_cuts(cuts, split.n_relevant, np.diff(ranking.score_ptr), split.n_docs, strength,
                                          self.fallback)
            empty = split.n_relevant == 0
            pooled_cuts[empty] = untied_cuts(ranking, pooled_cuts)[empty]
            return ranking.thresholds_for_cuts(pooled_cuts), info
        top = top_document_thresholds(split.ranking()) if self.fallback == "top" else None
        return pool_thresholds(thresholds, split.n_relevant, strength, self.fallback,
                               getattr(split, "native_threshold", None), top)


class ThresholdStrategy(BaseStrategy):
    """Base class: subclasses implement ``_choose(candidates, lists)`` -> candidate index per label.

    ``lists`` are the ranked lists of the kept labels (s_k > 0), in the order of ``candidates``; strategies
    that need every cut position (not only the Pareto candidates) read them from there.
    """

    # ------------------------------------------------------------------ public API
    def _note_score_only_settings(self) -> None:
        """Ranked lists have no scores: say so, and record it, when pooling or a fallback was asked for (they
        were ignored without a word; ``strategy.pooling=50`` gave the thresholds of ``pooling=0``)."""
        unused = _score_only_settings(self)
        if unused:
            settings = ", ".join(f"{key}={value}" for key, value in unused.items())
            if (type(self).__name__, settings) not in _WARNED_SCORE_ONLY:
                _WARNED_SCORE_ONLY.add((type(self).__name__, settings))
                warn(f"{type(self).__name__}: {settings} acts on scores only; ranked lists are fitted without it",
                     IgnoredSettingWarning, stacklevel=3)
            self.info_["not_applied_on_ranked_lists"] = settings

    def fit_lists(self, lists: RankedLists) -> "ThresholdStrategy":
        """Choose the cuts (how many top documents each label predicts) on ranked lists.

        Parameters
        ----------
        lists : RankedLists
            One ranked list per label (``xmlthresh.load_dataset("espgame")``, or
            ``RankedLists.from_relevance_lists``).

        Returns
        -------
        ThresholdStrategy
            ``self``, fitted: ``cuts_`` (one per label), ``metrics_``, ``f_macro_``, ``lower_bound_`` /
            ``upper_bound_`` (certified strategies) and ``info_`` (diagnostics).

        Examples
        --------
        >>> from xmlthresh.data.ranked_lists import RankedLists
        >>> from xmlthresh.strategies import STRATEGIES
        >>> lists = RankedLists.from_relevance_lists([[1, 0, 1, 0], [0, 1, 1, 0]], [2, 2], num_docs=4)
        >>> model = STRATEGIES.get("domain")().fit_lists(lists)
        >>> model.cuts_.tolist(), round(model.f_macro_, 4), model.upper_bound_ >= model.f_macro_
        ([3, 3], 0.8, True)
        """
        if not isinstance(lists, RankedLists):  # a score matrix given here failed on a missing attribute
            raise InputError(f"fit_lists takes RankedLists (xmlthresh.load_dataset, RankedLists.from_relevance_lists), "
                             f"got {type(lists).__name__}; for a score matrix and its labels use fit(scores, labels) "
                             "or xmlthresh.fit_thresholds")
        self._check_params()
        kept = lists.n_relevant > 0
        kept_lists = lists if kept.all() else lists.select_labels(kept)
        self.lower_bound_: float | None = None
        self.upper_bound_: float | None = None
        self.info_: dict[str, Any] = {}
        candidates, floored = self._objective_candidates(kept_lists)
        choice = self._choose(candidates, kept_lists)
        cuts = np.zeros(lists.n_labels, dtype=np.int64)
        cuts[kept] = candidates.cut[choice]
        self.cuts_ = cuts
        self.fit_lists_ = lists  # a reference (for plots and diagnostics), not a copy
        self.__dict__.pop("score_thresholds_", None)  # a refit on lists has cuts only (fit_scores sets them)
        self.n_features_in_ = lists.n_labels
        self.kept_labels_ = kept
        self.n_labels_dropped_ = int(np.count_nonzero(~kept))
        self.n_candidates_ = candidates.n_candidates
        self.metrics_ = evaluate(candidates.tp[choice], candidates.cut[choice], candidates.n_relevant, self.beta)
        self.f_macro_ = self.metrics_["f_macro"]
        self.objective_f_macro_ = float(f_beta_raw(candidates.precision[choice].mean(), candidates.recall[choice].mean(),
                                               self.beta)) if len(choice) else 0.0
        self.info_.update(choice_diagnostics(candidates, choice, floored))
        if not candidates.exact:
            self.info_["objective_f_macro"] = self.objective_f_macro_
        _warn_predict_all(self.info_, len(choice), type(self).__name__)
        if not getattr(self, "_fitting_scores", False):
            self._note_score_only_settings()
        self._after_fit(candidates, choice)
        return self

    def evaluate_lists(self, lists: RankedLists) -> dict[str, float]:
        """Metrics of the fitted cuts on ``lists`` (same labels as in fit)."""
        self._check_fitted()
        if lists.n_labels != len(self.cuts_):
            raise ValueError(f"fitted on {len(self.cuts_)} labels, got {lists.n_labels}")
        kept = self.kept_labels_ & (lists.n_relevant > 0)
        return evaluate_cuts(lists.select_labels(kept), self.cuts_[kept], self.beta)

    def score_lists(self, lists: RankedLists) -> float:
        """F-macro of the fitted cuts on ``lists`` (higher is better)."""
        return self.evaluate_lists(lists)["f_macro"]

    def fit_scores(self, split: ScoredSplit) -> "ThresholdStrategy":
        """Fit on the ranking of a scored split; ``score_thresholds_`` reproduce the cuts as score thresholds
        (predict score >= threshold; -inf = predict all, +inf = predict nothing) for use on other splits.
        A strategy with partial pooling (:class:`PoolingMixin`) then pools them across labels."""
        ranking = split.ranking()
        self._fitting_scores = True  # the score-only settings apply below: not "ignored on ranked lists"
        try:
            self.fit_lists(ranking.lists)
        finally:
            del self._fitting_scores
        self.score_thresholds_ = ranking.thresholds_for_cuts(self.cuts_)
        self._pool(split)
        return self

    def _pool(self, split: ScoredSplit) -> None:
        """Hook of :class:`PoolingMixin` (no pooling by default)."""

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        """Counted from the score thresholds directly ("predict all" columns are never materialised)."""
        if not hasattr(self, "score_thresholds_"):
            raise not_fitted(f"{type(self).__name__} was fitted on ranked lists; fit it on scores for score data")
        return split.counts_at(self.score_thresholds_)

    def warm_up(self, lists: bool = True, scores: bool = True) -> None:
        """Compile (or load) the numba kernels on a tiny instance so that timing ``fit`` excludes JIT cost: those
        of ``fit_lists`` for ranked ``lists``, those of ``fit_scores`` (which ranks, then fits the lists) for
        ``scores`` -- a run on ranked lists loads no score-matrix kernel (nor scipy.sparse)."""
        if lists:
            tiny = RankedLists.from_relevance_lists([[1, 0, 1, 0], [0, 1, 1, 0], [0, 0, 0, 1]], [2, 3, 1], num_docs=5)
            self.unfitted_copy().fit_lists(tiny)
        if scores:
            self.unfitted_copy().fit_scores(tiny_scored_split())

    # ------------------------------------------------------------------ subclass hooks
    def _objective_candidates(self, lists: RankedLists) -> tuple[Candidates, FlooredCandidates | None]:
        """The candidates the strategy optimises over (default: the Pareto-reduced empirical ones)."""
        return build_candidates(lists), None

    def _choose(self, candidates: Candidates, lists: RankedLists) -> np.ndarray:
        raise NotImplementedError

    def _after_fit(self, candidates: Candidates, choice: np.ndarray) -> None:
        """Hook for strategies that derive bounds from the recomputed metrics."""


def _warn_predict_all(info: dict[str, Any], n_labels: int, name: str) -> None:
    """A warning when more than half of the labels predict every document (WikiLSHTC's optimum does)."""
    count = info.get("n_labels_predict_all", 0)
    if n_labels >= PREDICT_ALL_WARNING_MIN_LABELS and count > PREDICT_ALL_WARNING_SHARE * n_labels:
        warn(f"{name}: {count} of {n_labels} labels ({100.0 * count / n_labels:.0f} %) predict every document at the "
             "chosen thresholds; such rules rarely transfer (consider strategy='pooled' or min_precision)",
             PredictAllWarning, stacklevel=4)


class PrecisionControlMixin:
    """``min_precision`` (a floor on each cut's estimated precision) and ``smoothing`` (Beta-binomial shrinkage
    of precision towards the label's prior, in pseudo-documents) for a :class:`ThresholdStrategy`; see
    :mod:`xmlthresh.data.objective`. With both at 0 nothing changes. Certified bounds of a strategy with a
    floor certify the constrained problem; with smoothing they are bounds of the smoothed objective
    (``info_['objective']`` names it) -- the reported ``f_macro`` is always the empirical one."""

    min_precision: float
    smoothing: float
    max_predicted_per_positive: float | None
    #: an infinite cap is no cap, like None
    infinite_params: ClassVar[tuple[str, ...]] = ("max_predicted_per_positive",)

    def _check_precision_control(self) -> None:
        check_min_precision(self.min_precision)
        check_smoothing(self.smoothing)
        check_predicted_cap(self.max_predicted_per_positive)

    def _objective_candidates(self, lists: RankedLists) -> tuple[Candidates, FlooredCandidates | None]:
        floor = check_min_precision(self.min_precision)
        strength = check_smoothing(self.smoothing)
        cap = check_predicted_cap(self.max_predicted_per_positive)
        candidates = build_candidates(lists, pareto=strength == 0)
        candidates = with_predicted_cap(candidates, cap, lists.list_length)
        candidates = smoothed(candidates, strength)
        floored = with_precision_floor(candidates, floor)
        objective = EMPIRICAL_OBJECTIVE if strength == 0 else f"F-macro with precision smoothed by {strength:g} pseudo-documents"
        if floor > 0:
            objective += f", precision >= {floor:g}"
        if np.isfinite(cap):
            objective += f", at most {cap:g} predictions per fit positive"
        self.info_["objective"] = objective  # type: ignore[attr-defined]
        return floored.candidates, floored
