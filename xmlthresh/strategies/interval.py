"""An interval for the F-macro that fitted thresholds reach on new documents (out-of-bootstrap refits).

Why: a strategy's certificate (lower and upper bounds) holds on the fit documents; on new documents of the
same distribution the fitted thresholds lose some of it (the fit's optimism) and vary with the fit sample.
The interval repeats the whole fit on bootstrap resamples of the fit documents and scores each refitted
rule on the documents its resample left out (Efron & Tibshirani 1997: the out-of-bootstrap estimate of a
rule's error, which carries the refit's optimism instead of hiding it; docs/theory.md#population-interval).
A resample holds only about 63.2 % of the distinct fit documents, so the out-of-bag values are pessimistic;
as in Efron's .632 estimator the interval -- the central ``level`` range of the out-of-bag F-macros over
the labels the resample saw -- is moved by 0.368 (apparent F-macro - mean out-of-bag F-macro), the
apparent one being that of the fit on all fit documents. Labels that occur in new documents without a
positive in the fit split score 0 there; :func:`seen_label_share` estimates their share (Good-Turing) and
scales the interval by it. It is computed from the fit
split alone, so it can be checked against a test split (its coverage: tests and the transfer study).
The resamples follow ``seed``: the same seed gives the same interval bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: central probability of the interval
DEFAULT_LEVEL = 0.9
#: bootstrap refits behind one interval
DEFAULT_RESAMPLES = 30


def check_interval(level: Any, resamples: Any) -> tuple[float, int]:
    """``level`` in (0, 1) and ``resamples`` an integer >= 2, or a ValueError saying so."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"interval level must be a number in (0, 1), got {level!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 2:
        raise ValueError(f"interval resamples must be an integer >= 2, got {resamples!r}")
    return float(level), int(resamples)


def out_of_bootstrap_interval(strategy: Any, split: Any, level: float = DEFAULT_LEVEL,
                              resamples: int = DEFAULT_RESAMPLES, seed: int = 0, apparent: float | None = None,
                              new_documents: int | None = None) -> dict[str, Any]:
    """``f_macro_interval`` [low, high] at ``level`` for the thresholds ``strategy`` (unfitted or fitted: its
    parameters are used) fits on the scored ``split``, when applied to ``new_documents`` new documents
    (default: as many as ``split`` has), with ``interval_level``, ``interval_resamples`` (the refits that had
    out-of-bag documents), ``interval_method``, ``f_macro_interval_out_of_bag`` (the out-of-bag range over
    the labels the resample saw, before the shift and the share), ``interval_shift`` and
    ``interval_seen_label_share`` (:func:`seen_label_share`). ``apparent``: the F-macro of the fit on all of
    ``split`` when the caller has it (else it is fitted here)."""
    from xmlthresh.metrics import evaluate
    from xmlthresh.strategies.pooling import rows

    level, resamples = check_interval(level, resamples)
    rng = np.random.default_rng(seed)
    n_docs = split.n_docs
    values = []
    for _ in range(resamples):
        drawn = rng.integers(0, n_docs, n_docs)
        out_of_bag = np.ones(n_docs, dtype=bool)
        out_of_bag[drawn] = False
        resample, held_out = _resample(split, drawn), rows(split, out_of_bag)
        seen = (held_out.n_relevant > 0) & (resample.n_relevant > 0)
        if not seen.any():
            continue
        refit = strategy.unfitted_copy().fit_scores(resample)
        tp, predicted = refit.counts(held_out)
        values.append(evaluate(tp[seen], predicted[seen], held_out.n_relevant[seen], strategy.beta)["f_macro"])
    if len(values) < 2:
        return {"f_macro_interval": None, "interval_level": level, "interval_resamples": len(values),
                "interval_method": "out-of-bootstrap refits (too few documents)"}
    if apparent is None:
        apparent = strategy.unfitted_copy().fit_scores(split).f_macro_
    tail = (1.0 - level) / 2.0
    values_array = np.asarray(values)
    shift = 0.368 * (float(apparent) - float(values_array.mean()))
    share = seen_label_share(split.n_relevant, n_docs, new_documents or n_docs)
    raw_low, raw_high = np.quantile(values_array, [tail, 1.0 - tail])
    low, high = (raw_low + shift) * share, (raw_high + shift) * share
    return {"f_macro_interval": [float(min(max(low, 0.0), 1.0)), float(min(max(high, 0.0), 1.0))],
            "interval_level": level, "interval_resamples": len(values),
            "interval_method": "out-of-bootstrap refits, .632 shift, seen-label share",
            "f_macro_interval_out_of_bag": [float(raw_low), float(raw_high)], "interval_shift": shift,
            "interval_seen_label_share": share}


def seen_label_share(n_relevant: np.ndarray, n_fit: int, n_new: int) -> float:
    """The expected share, among the labels that occur in ``n_new`` new documents, of those with a fit
    positive. F-macro is homogeneous in the per-label precisions and recalls, and a label without a fit
    positive scores 0 on new documents, so the F-macro over all occurring labels is that over the seen ones
    times this share.

    A seen label k occurs with probability 1 - (1 - s_k / n_fit)^n_new. The labels without a fit positive
    share the Good-Turing estimate of the unseen mass (Good 1953): of the fit's label occurrences, the
    fraction N1 / N belongs to labels seen once, and as much of the future occurrences is expected to fall on
    labels not seen yet -- N1 n_new / n_fit occurrences in the new documents, spread evenly over the Z
    unseen labels (each occurs with probability 1 - exp(-N1 n_new / (n_fit Z)))."""
    s = np.asarray(n_relevant, dtype=np.float64)
    seen = s[s > 0]
    expected_seen = float(np.sum(1.0 - (1.0 - seen / n_fit) ** n_new))
    unseen = int(np.count_nonzero(s == 0))
    once = int(np.count_nonzero(s == 1))
    expected_unseen = unseen * (1.0 - np.exp(-once * n_new / (n_fit * unseen))) if unseen else 0.0
    total = expected_seen + expected_unseen
    return expected_seen / total if total > 0 else 1.0


def _resample(split: Any, drawn: np.ndarray) -> Any:
    """The documents ``drawn`` (with repeats) of a scored split, as a split of its own."""
    from dataclasses import replace

    return replace(split, scores=split.scores[drawn], labels=split.labels[drawn], name=f"{split.name}[bootstrap]")
