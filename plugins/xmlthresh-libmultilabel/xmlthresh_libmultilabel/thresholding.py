"""``strategy=lml_thresholding``: LibMultiLabel's micromacro-freq thresholding rule on the fit split's scores.

LibMultiLabel's ``linear.train_thresholding`` (the micromacro-freq method of "On the Thresholding Strategy for
Infrequent Labels in Multi-label Classification", CIKM 2023, Section 4.3) visits the labels in order of
decreasing frequency and gives each the cut of its decision values that maximises

    Micro-F1(this label's counts + those of the labels visited before) + F1(this label) / (labels visited),

so that a rare label's threshold also answers to the micro-averaged counts of the frequent ones. It chooses
the cut on three internal folds of the training documents, with models it trains on the other two, and
averages the three thresholds. Here the rule is applied to the scores xmlthresh's protocols give every
strategy -- the fit split of holdout, or out-of-fold scores under crossfit -- so that it is compared with
the other strategies on the same scores; the fold average is not needed on scores that are already held out.

With ``beta`` other than 1 both terms are F_beta instead of F1 (LibMultiLabel's rule is the case beta = 1).

Conventions: LibMultiLabel keeps the later of two cuts that tie on the objective (fewer predictions); cuts
inside a group of equal scores are not admissible here (they are not threshold rules); the threshold of a
cut is the midpoint between the last score left out and the first one kept, as LibMultiLabel places it;
"predict every document" is a candidate unless the split forbids it. The labels are visited in a Python loop
(the rule is sequential: each label's objective depends on the ones before it), each label in vectorised
numpy: O(documents log documents) per label.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies.base import ScoreStrategy
from xmlthresh.strategies.registry import STRATEGIES


def _column(scores, k: int) -> np.ndarray:
    """Label k's scores over all documents; the unscored documents of a CSR matrix at -inf (below all)."""
    if not sp.issparse(scores):
        return np.asarray(scores[:, k], dtype=np.float64)
    column = scores.getcol(k).tocsc()
    x = np.full(scores.shape[0], -np.inf)
    x[column.indices] = column.data
    return x


def micromacro_cuts(x: np.ndarray, relevant: np.ndarray, micro: tuple[int, int, int], labels_seen: int,
                    include_predict_all: bool, beta: float = 1.0) -> tuple[float, int, int, int, float]:
    """The micromacro-freq choice for one label: (threshold, tp, fp, fn, objective) of the best cut of its
    scores ``x`` (``relevant``: its relevant documents, bool), given the micro counts (tp, fp, fn) of the
    labels visited before and how many labels are visited with this one."""
    order = np.argsort(x, kind="stable")
    sx, sy = x[order], relevant[order]
    n, positives = len(x), int(relevant.sum())
    # cut i (i = -1..n-1) leaves out the i + 1 lowest scores: predictions are the documents above it
    removed_pos = np.r_[0, np.cumsum(sy)]
    tp = positives - removed_pos
    fp = (n - positives) - (np.arange(n + 1) - removed_pos)
    fn = positives - tp
    admissible = np.ones(n + 1, dtype=bool)
    admissible[1:n] = sx[:-1] < sx[1:]  # between two different scores only
    if not include_predict_all:
        admissible[0] = False
    micro_tp, micro_fp, micro_fn = micro
    w = 1.0 + beta * beta  # F_beta = (1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp)
    with np.errstate(divide="ignore", invalid="ignore"):
        label_f = np.nan_to_num(w * tp / (w * tp + beta * beta * fn + fp))
        all_tp, all_fp, all_fn = tp + micro_tp, fp + micro_fp, fn + micro_fn
        micro_f = np.nan_to_num(w * all_tp / (w * all_tp + beta * beta * all_fn + all_fp))
    objective = np.where(admissible, micro_f + label_f / labels_seen, -np.inf)
    best = int(n - np.argmax(objective[::-1]))  # the later of tying cuts, as LibMultiLabel keeps them
    if best == 0:
        threshold = -np.inf  # every document, the unscored ones of a sparse matrix too
    elif best == n:
        threshold = np.inf
    else:
        low, high = sx[best - 1], sx[best]
        threshold = float((low + high) / 2) if np.isfinite(low) else float(high)
    return threshold, int(tp[best]), int(fp[best]), int(fn[best]), float(objective[best])


@STRATEGIES.register("lml_thresholding")
class LibMultiLabelThresholding(ScoreStrategy):
    """LibMultiLabel's micromacro-freq rule on the fit split's scores (module docstring)."""

    kind: ClassVar[str] = "deterministic"

    def __init__(self, beta: float = 1.0) -> None:
        super().__init__(beta=beta)

    def fit_scores(self, split: ScoredSplit) -> "LibMultiLabelThresholding":
        self._check_params()
        labels = split.labels.tocsc()
        frequency = np.diff(labels.indptr)
        order = np.argsort(-frequency, kind="stable")  # most frequent first, ties by position
        thresholds = np.full(split.n_labels, np.inf)
        micro = (0, 0, 0)
        objective = 0.0
        for seen, k in enumerate(order, start=1):
            relevant = np.zeros(split.n_docs, dtype=bool)
            relevant[labels.indices[labels.indptr[k]:labels.indptr[k + 1]]] = True
            threshold, tp, fp, fn, objective = micromacro_cuts(_column(split.scores, k), relevant, micro, seen,
                                                               split.include_predict_all, float(self.beta))
            thresholds[k] = threshold
            micro = (micro[0] + tp, micro[1] + fp, micro[2] + fn)
        self.score_thresholds_ = thresholds
        name = "F1" if float(self.beta) == 1.0 else f"F_{float(self.beta):g}"
        self.info_ = {"kind": self.kind, "objective": f"Micro-{name} + Macro-{name} (LibMultiLabel micromacro-freq)",
                      "micro_plus_macro_on_fit": float(objective)}
        self._set_fit_results(split)
        return self

    def counts(self, split: ScoredSplit) -> tuple[np.ndarray, np.ndarray]:
        return split.counts_at(self.score_thresholds_)
