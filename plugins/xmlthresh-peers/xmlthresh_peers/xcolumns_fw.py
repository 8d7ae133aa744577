"""``xcolumns_fw``: xCOLUMNs' Frank-Wolfe search for a randomized classifier (Schultheis et al., "Consistent
algorithms for multi-label classification with macro-at-k metrics", ICLR 2024; github.com/mwydmuch/xCOLUMNs).

Fit: scores of the fit split -> probabilities by per-label Platt scaling (``_platt``); Frank-Wolfe
(``xcolumns.frank_wolfe.find_classifier_using_fw``, the general function: the 0.0.2 convenience wrappers
crash) maximises the objective on the fit split's expected confusion matrix, with no budget (k = 0). The
result is a **randomized** classifier: a distribution over linear rules with gains a_j eta_j + b_j, one rule
drawn per document. ``counts`` draws with ``seed``, so a fitted model predicts the same matrix every time.

Sparse top-k scores stay CSR end to end (calibration, Frank-Wolfe, prediction: xCOLUMNs' CSR paths), memory
O(nnz + labels x iterations); an unscored entry has no probability and is never predicted. Dense scores use
xCOLUMNs' dense paths. What xCOLUMNs 0.0.2 predicts differs between the two: a label is predicted where its
gain is **>= 0 on CSR** scores and **> 0 on dense** scores (the initial rule ``top``, a = 1, b = -1/2:
eta >= 1/2 or eta > 1/2).

``objective="f_macro"`` is F_beta(mean precision, mean recall) written on per-label tp, fp, fn;
``"macro_f"`` the mean of per-label F_beta. Both average over the labels with relevant documents in the fit
split. The others weigh 0, so every Frank-Wolfe rule after the initial one gives them the **zero rule**
a = b = 0, gain 0: on CSR scores they are predicted at **every stored entry** (in the documents that draw
such a rule), on dense scores never -- and in both where the initial rule fires (tested on a tiny instance:
``test_frank_wolfe_labels_without_validation_positive_get_the_zero_rule``). The rules are not cuts of a
ranking, so the data set's ``include_predict_all`` does not apply to them.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.exceptions import NotFittedError
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies.registry import STRATEGIES

from ._common import (
    PlattCalibration,
    XColumnsStrategy,
    f_macro_objective,
    import_xcolumns,
    macro_f_objective,
    xcolumns_labels,
    xcolumns_scores,
)

INITS = ("top", "random")


@STRATEGIES.register("xcolumns_fw")
class XColumnsFrankWolfe(XColumnsStrategy):
    """Frank-Wolfe randomized classifier for F-macro or macro-F (optional dependency: xcolumns)."""

    kind: ClassVar[str] = "randomized"

    def __init__(self, beta: float = 1.0, objective: str = "f_macro", max_iters: int = 50,
                 init: str = "top", alpha_search_step: float = 0.001, seed: int = 0) -> None:
        super().__init__(beta=beta)
        self.objective = objective
        self.max_iters = max_iters
        self.init = init
        self.alpha_search_step = alpha_search_step
        self.seed = seed

    def _check_params(self) -> None:
        super()._check_params()
        if self.init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {self.init!r}")
        if not (isinstance(self.max_iters, int) and self.max_iters >= 1):
            raise ValueError(f"max_iters must be an integer >= 1, got {self.max_iters!r}")
        if not 0 < self.alpha_search_step < 1:
            raise ValueError(f"alpha_search_step must lie in (0, 1), got {self.alpha_search_step!r}")
        if not isinstance(self.seed, (int, np.integer)):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")

    def fit_scores(self, split: ScoredSplit) -> "XColumnsFrankWolfe":
        self._check_params()
        frank_wolfe = import_xcolumns("frank_wolfe")
        scores, labels = xcolumns_scores(split.scores), xcolumns_labels(split)
        self.calibration_ = PlattCalibration().fit(scores, split.labels)
        kept = split.n_relevant > 0
        weights = kept / max(int(kept.sum()), 1)
        make = f_macro_objective if self.objective == "f_macro" else macro_f_objective
        metric = make(weights, float(self.beta))
        classifier, meta = frank_wolfe.find_classifier_using_fw(
            labels, self.calibration_.transform(scores), metric, k=0, max_iters=self.max_iters,
            init_classifier=self.init, maximize=True, search_for_best_alpha=True, alpha_search_algo="uniform",
            alpha_uniform_search_step=self.alpha_search_step, skip_tn=True, seed=int(self.seed),
            return_meta=True,
        )
        self.classifier_ = classifier
        utilities = [float(u) for u in meta.get("utilities", [])]
        self.info_ = {
            "kind": self.kind,
            "objective": self.objective,
            "calibration": "platt per label (fit split)",
            "fw_iterations": int(meta.get("iters", 0)),
            "fw_classifiers": int(len(classifier.p)),
            "fw_expected_objective": utilities[-1] if utilities else None,
            "seed": int(self.seed),
        }
        self._set_fit_results(split)
        return self

    def rule_state(self) -> dict:
        classifier = self.classifier_
        return {**self.calibration_.state(), "k": int(classifier.k), "a": np.asarray(classifier.a),
                "b": np.asarray(classifier.b), "p": np.asarray(classifier.p)}

    def restore_rule(self, state: dict, n_labels: int) -> "XColumnsFrankWolfe":
        frank_wolfe = import_xcolumns("frank_wolfe")
        self.calibration_ = PlattCalibration.from_state(state)
        self.classifier_ = frank_wolfe.RandomizedWeightedClassifier(int(state["k"]), np.asarray(state["a"]),
                                                                    np.asarray(state["b"]), np.asarray(state["p"]))
        self.n_features_in_ = n_labels
        return self

    def predict_split(self, split: ScoredSplit) -> np.ndarray:
        """0/1 predictions (documents x labels) of the randomized classifier, drawn with ``seed``."""
        if not hasattr(self, "classifier_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit first")
        eta = self.calibration_.transform(xcolumns_scores(split.scores))
        return self.classifier_.predict(eta, seed=int(self.seed))
