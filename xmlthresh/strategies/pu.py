"""``pu``: exact F-macro optimisation of the population (plug-in) objective (docs/theory.md#population-view).

1. Calibrate the ranker's scores into probabilities eta_k on the fit split (:mod:`xmlthresh.strategies.calibration`:
   per-label isotonic or Platt maps shrunk towards a pooled map, or the pooled map alone).
2. On a target set of scored documents, build each label's expected counts: E tp_k(t) = sum of eta over the
   documents scored >= t, E pred_k(t) = their number, E pos_k = sum of eta over all of them
   (:mod:`xmlthresh.data.expected_counts`); with ``min_precision``, only cuts whose estimated precision
   E tp / E pred reaches the floor remain (a label with none predicts nothing).
3. Run the exact domain sweep on these fractional curves: ``lower_bound`` / ``upper_bound`` certify the
   optimum of the plug-in objective F_beta(mean E tp/E pred, mean E tp/E pos) on the target set.

``target='fit'`` (inductive): the target set is the fit split itself; the result is one score threshold per
label, applied to any other split like every other rule. Its probabilities are **cross-fitted**
(``calibration_folds``, default 5): each document's eta comes from a calibration fitted on the other folds,
so the expected counts of the fit split do not reuse its own labels (an isotonic map fitted and evaluated on
the same documents reproduces their labels at the top of the list: the empirical overfit again). Folds are
drawn with ``seed``. ``target='eval'`` (transductive, ``kind = "uses test
scores"``): the calibration comes from the fit split, but the expectation is taken over the scores of the
split being predicted -- no labels of that split are used -- the fair comparison with ``xcolumns_bca``.

A label without a positive in the fit split gets the pooled calibration map alone. That gives it a finite
threshold only where its scores reach the pooled map's first positive step: a ranker trained without a
positive for a label usually scores it below every positive of every other label (br_logreg on genbase: at most
0.0008 where the pooled map is 0 below 0.0049), so its eta is 0 everywhere, its expected number of positives
is 0 and it predicts nothing (``n_labels_no_expected_positive``). ``fallback`` decides for such labels as in
:mod:`xmlthresh.strategies.pooling`: ``never`` (default: the plug-in thresholds as they are), ``pooled``
(the threshold shared by the labels with the fewest fit positives), ``native`` (the ranker's own decision
threshold) or ``top`` (the score of the label's best fit document, none when its best two tie). A label the
fallback gives a finite threshold takes it (under ``target='eval'`` too, in place of the plug-in's); the
certified bounds stay those of the plug-in problem.

The plug-in objective is over-confident out of sample: its expected precision at the chosen cuts exceeds the
test precision (the winner's curse of cuts chosen on noisy isotonic maps), which is why ``pooled``, not
``pu``, is the rule recommended for new documents (docs/pooled.md). The reported ``f_macro`` of a fit is always the
empirical one, measured with the fit split's labels.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from xmlthresh.strategies.calibration import CALIBRATIONS, ScoreCalibration
from xmlthresh.data.entries import LabelEntries, label_entries
from xmlthresh.data.expected_counts import expected_candidates
from xmlthresh.data.objective import check_min_precision, choice_diagnostics, with_precision_floor
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.metrics import f_beta_raw
from xmlthresh.strategies.base import ScoreStrategy, _warn_predict_all
from xmlthresh.strategies.domain import turning_group_sweep
from xmlthresh.strategies.params import not_fitted
from xmlthresh.strategies.pooling import check_pooling, pool_thresholds, top_document_thresholds
from xmlthresh.strategies.registry import STRATEGIES

TARGETS = ("fit", "eval")


@STRATEGIES.register("pu")
class PluginStrategy(ScoreStrategy):
    """Certified optimum of the plug-in F-macro under calibrated probabilities (see module docstring)."""

    certified = True

    def __init__(self, beta: float = 1.0, calibration: str = "isotonic", shrinkage: float = 10.0,
                 target: str = "fit", min_precision: float = 0.0, calibration_folds: int = 5, seed: int = 0,
                 fallback: str = "never") -> None:
        super().__init__(beta=beta)
        self.calibration = calibration
        self.calibration_folds = calibration_folds
        self.seed = seed
        self.shrinkage = shrinkage
        self.target = target
        self.min_precision = min_precision
        self.fallback = fallback

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "uses test scores" if self.target == "eval" else "deterministic"

    def _check_params(self) -> None:
        super()._check_params()
        if self.calibration not in CALIBRATIONS:
            raise ValueError(f"calibration must be one of {', '.join(CALIBRATIONS)}, got {self.calibration!r}")
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {self.target!r}")
        if isinstance(self.shrinkage, bool) or not isinstance(self.shrinkage, (int, float)) \
                or not 0 <= self.shrinkage < np.inf:
            raise ValueError(f"shrinkage must be a finite number >= 0 (pseudo-positives), got {self.shrinkage!r}")
        check_min_precision(self.min_precision)
        check_pooling(0.0, self.fallback)
        folds = self.calibration_folds
        if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 0 or folds == 1:
            raise ValueError(f"calibration_folds must be 0 (no cross-fitting) or an integer >= 2, got {folds!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")

    # ------------------------------------------------------------------ fit / predict
    def fit_scores(self, split: ScoredSplit) -> "PluginStrategy":
        """Calibrate on ``split``; with ``target='fit'`` also choose the score thresholds on it."""
        self._check_params()
        self.include_predict_all_ = bool(split.include_predict_all)
        self.calibration_ = ScoreCalibration(self.calibration, float(self.shrinkage)).fit(split)
        self.info_: dict[str, Any] = {
            "calibration": self.calibration, "target": self.target, "kind": self.kind,
            "n_labels_pooled_only": self.calibration_.n_labels_pooled_only_,
            "objective": "plug-in F-macro (expected counts under calibrated probabilities)"
                         + (f", precision >= {float(self.min_precision):g}" if self.min_precision else ""),
        }
        solved = self._solve(split, eta=self._cross_fitted_eta(split) if self.target == "fit" else None)
        self._fit_fallback(split, solved["thresholds"])
        if self.target == "fit":  # the rule: one score threshold per label
            self.score_thresholds_ = self._with_fallback(solved["thresholds"])
        else:  # the rule is the calibration; these thresholds are those of the fit split only
            self.fit_split_thresholds_ = self._with_fallback(solved["thresholds"])
        self.info_.update(solved["info"])
        self._set_fit_results(split)
        self.lower_bound_, self.upper_bound_ = solved["lower"], solved["upper"]  # of the plug-in objective
        return self

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        return split.counts_at(self.thresholds_for(split))

    def predict_split(self, split: ScoredSplit):
        """0/1 predictions (documents x labels, CSR) on ``split`` (re-optimised on its scores if target=eval;
        its labels are never used)."""
        return split.predict(self.thresholds_for(split))

    def rule_state(self) -> dict[str, Any]:
        """target='eval': the calibration (the thresholds are chosen on the scores being predicted)."""
        return {**self.calibration_.state(), "include_predict_all": bool(self.include_predict_all_),
                "fallback_labels": self.fallback_labels_.tolist(), "fallback_thresholds": self.fallback_thresholds_.tolist()}

    def restore_rule(self, state: dict[str, Any], n_labels: int) -> "PluginStrategy":
        self.calibration_ = ScoreCalibration.from_state(state)
        self.include_predict_all_ = bool(state.get("include_predict_all", True))
        self.fallback_labels_ = np.asarray(state.get("fallback_labels", []), dtype=np.int64)
        self.fallback_thresholds_ = np.asarray(state.get("fallback_thresholds", []), dtype=np.float64)
        self.n_features_in_ = n_labels
        self.info_ = {}
        return self

    def thresholds_for(self, split: ScoredSplit) -> np.ndarray:
        """The score thresholds applied to ``split``: the fitted ones, or (target='eval') the plug-in optimum
        on ``split``'s own scores (its labels are not used); the bounds of that optimum go to ``info_``."""
        if not hasattr(self, "calibration_"):
            raise not_fitted(f"{type(self).__name__} is not fitted yet; call fit first")
        if self.target == "fit":
            return self.score_thresholds_
        solved = self._solve(split)
        self.info_.update({f"eval_{key}": value for key, value in solved["info"].items()})
        self.info_["eval_objective_lower_bound"] = solved["lower"]
        self.info_["eval_objective_upper_bound"] = solved["upper"]
        return self._with_fallback(solved["thresholds"])

    def _fit_fallback(self, split: ScoredSplit, thresholds: np.ndarray) -> None:
        """The labels without a fit positive that ``fallback`` gives a finite threshold, and those thresholds."""
        empty = np.flatnonzero(split.n_relevant == 0)
        self.fallback_labels_ = np.zeros(0, dtype=np.int64)
        self.fallback_thresholds_ = np.zeros(0, dtype=np.float64)
        if self.fallback == "never" or len(empty) == 0:
            self.info_["n_labels_fallback"] = 0
            return
        top = top_document_thresholds(split.ranking()) if self.fallback == "top" else None
        pooled, _ = pool_thresholds(thresholds, split.n_relevant, 0.0, self.fallback,
                                    getattr(split, "native_threshold", None), top)
        finite = np.isfinite(pooled[empty])
        self.fallback_labels_ = empty[finite].astype(np.int64)
        self.fallback_thresholds_ = pooled[self.fallback_labels_]
        self.info_["n_labels_fallback"] = int(finite.sum())

    def _with_fallback(self, thresholds: np.ndarray) -> np.ndarray:
        if len(self.fallback_labels_) == 0:
            return thresholds
        out = np.array(thresholds, dtype=np.float64, copy=True)
        out[self.fallback_labels_] = self.fallback_thresholds_
        return out

    # ------------------------------------------------------------------ internals
    def _cross_fitted_eta(self, split: ScoredSplit) -> np.ndarray | None:
        """eta of every scored entry of ``split`` from calibrations fitted on the other folds of its documents
        (None without cross-fitting, or when the split is too small for the folds)."""
        folds = int(self.calibration_folds)
        if folds < 2 or split.n_docs < 2 * folds:
            self.info_["calibration_cross_fitted"] = False
            return None
        fold_of_doc = np.random.default_rng(int(self.seed)).permutation(split.n_docs) % folds
        entries = label_entries(split.scores)
        entry_fold = fold_of_doc[entries.doc]
        eta = np.empty(len(entries.score))
        fallback = 0
        labels = split.labels.tocsr()
        for fold in range(folds):
            train_rows = np.flatnonzero(fold_of_doc != fold)
            part = ScoredSplit(split.scores[train_rows], labels[train_rows], name=f"{split.name}/fold{fold}")
            try:
                calibration = ScoreCalibration(self.calibration, float(self.shrinkage)).fit(part)
            except ValueError:  # the other folds alone cannot be calibrated: use the whole split's map
                calibration, fallback = self.calibration_, fallback + 1
            selected = entry_fold == fold
            sub = LabelEntries(np.r_[0, np.cumsum(np.bincount(entries.label_of[selected],
                                                              minlength=entries.n_labels))].astype(np.int64),
                               entries.doc[selected], entries.score[selected], entries.n_docs)
            eta[selected] = calibration.transform_entries(sub)
        self.info_["calibration_cross_fitted"] = True
        self.info_["calibration_fold_fallbacks"] = fallback
        return eta

    def _solve(self, split: ScoredSplit, eta: np.ndarray | None = None) -> dict[str, Any]:
        """Plug-in optimum on ``split``'s scores (with the given eta of its entries, else the fitted
        calibration's): thresholds, certified bounds and diagnostics."""
        entries = label_entries(split.scores)
        if eta is None:
            eta = self.calibration_.transform_entries(entries)
        expected = expected_candidates(entries, eta, self.calibration_.unscored_eta_, self.include_predict_all_)
        floored = with_precision_floor(expected.candidates, check_min_precision(self.min_precision))
        candidates = floored.candidates
        thresholds = np.full(split.n_labels, np.inf)
        info: dict[str, Any] = {"n_labels_no_expected_positive": int(np.count_nonzero(~expected.usable)),
                                "n_plugin_candidates": int(candidates.n_candidates)}
        if candidates.n_labels == 0:
            return {"thresholds": thresholds, "lower": 0.0, "upper": 0.0, "info": info}
        choice, upper, sweep_info = turning_group_sweep(candidates, float(self.beta))
        threshold_of_candidate = _floored_thresholds(expected.threshold, expected.candidates, floored.candidates)
        thresholds[expected.usable] = threshold_of_candidate[choice]
        lower = float(f_beta_raw(candidates.precision[choice].mean(), candidates.recall[choice].mean(), self.beta))
        info.update(sweep_info)
        info.update(choice_diagnostics(candidates, choice, floored))
        info["expected_precision"] = float(candidates.precision[choice].mean())
        info["expected_recall"] = float(candidates.recall[choice].mean())
        _warn_predict_all(info, candidates.n_labels, type(self).__name__)
        return {"thresholds": thresholds, "lower": lower, "upper": max(upper, lower), "info": info}


def _floored_thresholds(threshold: np.ndarray, before, after) -> np.ndarray:
    """The score threshold of every candidate that survived the floor (new "predict nothing" ones: +inf).

    Candidates are identified within their label by (cut), which is unique per label."""
    if after is before:
        return threshold
    stride = before.num_docs + 1
    key_before = before.label_of.astype(np.int64) * stride + before.cut
    key_after = after.label_of.astype(np.int64) * stride + after.cut
    position = np.searchsorted(key_before, key_after)
    position = np.minimum(position, len(key_before) - 1)
    found = key_before[position] == key_after
    return np.where(found & (after.cut > 0), threshold[position], np.inf)
