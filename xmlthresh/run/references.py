"""The transfer study's two references for a fit on one split and a test on another.

* :func:`ceiling_f_macro` -- ``domain`` fitted on the evaluation split itself, labels included: no rule fitted
  elsewhere can beat it on that split, but no rule can reach it either (it is the in-sample optimum of the
  very documents it is scored on, optimistic by the noise of small test sets).
* :func:`achievable_f_macro` -- the job's own rule fitted on a random labelled half of the evaluation split
  and scored on the other half, both ways, over ``repeats`` halvings: what the rule reaches when fit and
  test documents come from one distribution and one ranker fit, with half as many fit documents as the test
  split has. The gap between the rule's test F-macro and this reference is what a better fit split (no shift
  between validation and test, no refit of the ranker) could still give; the gap between this and the
  ceiling is what no rule fitted on that many documents reaches.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from xmlthresh.strategies import STRATEGIES, BaseStrategy

#: halvings of the evaluation split averaged by :func:`achievable_f_macro` (each scored both ways)
ACHIEVABLE_REPEATS = 3


def ceiling_f_macro(split: Any, beta: float) -> float:
    """F-macro of ``domain`` fitted on ``split`` itself (its labels included)."""
    return float(STRATEGIES.build("domain", {"beta": beta}).fit_scores(split).f_macro_)


def achievable_f_macro(strategy: BaseStrategy, split: Any, seed: int,
                       repeats: int = ACHIEVABLE_REPEATS) -> dict[str, Any]:
    """Mean test F-macro of ``strategy`` (an unfitted copy of it) fitted on one random half of ``split`` and
    scored on the other, both ways, over ``repeats`` halvings drawn from ``seed``. Returns
    ``achievable_f_macro`` and ``achievable_f_macro_se`` (the standard error over the 2 x ``repeats`` values;
    the halves are not independent, so it is a guide, not an interval)."""
    rng = np.random.default_rng([int(seed), 0xAC41])
    values = []
    for _ in range(repeats):
        order = rng.permutation(split.n_docs)
        halves = order[: split.n_docs // 2], order[split.n_docs // 2:]
        for fit_rows, test_rows in (halves, halves[::-1]):
            fitted = strategy.unfitted_copy().fit_scores(_rows(split, fit_rows))
            values.append(float(fitted.evaluate_scores(_rows(split, test_rows))["f_macro"]))
    array = np.asarray(values)
    return {"achievable_f_macro": float(array.mean()),
            "achievable_f_macro_se": float(array.std(ddof=1) / np.sqrt(len(array))) if len(array) > 1 else None,
            "achievable_repeats": int(repeats)}


def _rows(split: Any, index: np.ndarray) -> Any:
    index = np.sort(index)
    return replace(split, scores=split.scores[index], labels=split.labels[index], name=f"{split.name}[half]")
