"""An interval for the F-macro that fitted thresholds reach on new documents (out-of-bootstrap refits).

Why: a strategy's certificate (lower and upper bounds) holds on the fit documents; on new documents of the
same distribution the fitted thresholds lose some of it (the fit's optimism), vary with the fit sample and
are scored on a sample of their own. The interval repeats the whole fit on bootstrap resamples of the fit
documents and scores each refitted rule on a set of "new documents": as many documents as the evaluation
will have, drawn with replacement from those its resample left out (Efron & Tibshirani 1997: the
out-of-bootstrap estimate of a rule's performance carries the refit's optimism instead of hiding it; the
draw of a test-sized set adds the evaluation's own sampling noise). F-macro is taken over the labels
present in that set, as a test split is scored. ``f_macro_interval`` is the central ``level`` range of these
values (docs/theory.md#population-interval).

Two corrections were measured and are reported only in ``interval_variants``: the .632 and .632+ shifts
towards the apparent F-macro (a resample holds about 63.2 % of the distinct fit documents, so its refits
see less data than the real fit), and the Good-Turing share of labels that occur in new documents without
any fit positive (:func:`seen_label_share`). On the development collection both lowered the coverage of
the test F-macro (docs/interval.md): a resample's own unseen labels already stand in for the fit split's,
and where holdout test splits differ from their validation splits the shifts move the interval the wrong
way. It is computed from the fit split alone, so it can be checked against a test split. The resamples
follow ``seed``: the same seed gives the same interval bit for bit.
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
    out-of-bag documents), ``interval_method``, ``interval_shift`` and ``interval_variants`` (the same
    interval computed the ways :data:`VARIANTS` lists, for the coverage study). ``apparent``: the F-macro of
    the fit on all of ``split`` when the caller has it (else it is fitted here)."""
    from xmlthresh.metrics import evaluate
    from xmlthresh.strategies.pooling import rows

    level, resamples = check_interval(level, resamples)
    rng = np.random.default_rng(seed)
    n_docs = split.n_docs
    n_new = int(new_documents or n_docs)
    full = strategy.unfitted_copy().fit_scores(split)
    if apparent is None:
        apparent = full.f_macro_
    seen_values, new_values, apparent_values = [], [], []
    for _ in range(resamples):
        drawn = rng.integers(0, n_docs, n_docs)
        out_of_bag = np.ones(n_docs, dtype=bool)
        out_of_bag[drawn] = False
        pool = np.flatnonzero(out_of_bag)
        if len(pool) == 0:
            continue
        resample, held_out = _resample(split, drawn), rows(split, out_of_bag)
        new = _resample(split, pool[rng.integers(0, len(pool), n_new)])  # new documents drawn from the out-of-bag
        in_sample = _resample(split, rng.integers(0, n_docs, n_new))  # as many drawn from all fit documents
        seen = (held_out.n_relevant > 0) & (resample.n_relevant > 0)
        refit = strategy.unfitted_copy().fit_scores(resample)
        if seen.any():
            tp, predicted = refit.counts(held_out)
            seen_values.append(evaluate(tp[seen], predicted[seen], held_out.n_relevant[seen], strategy.beta)["f_macro"])
        new_values.append(_f_macro_present(refit, new, strategy.beta, evaluate))
        apparent_values.append(_f_macro_present(full, in_sample, strategy.beta, evaluate))
    if len(new_values) < 2 or len(seen_values) < 2:
        return {"f_macro_interval": None, "interval_level": level, "interval_resamples": len(new_values),
                "interval_method": "out-of-bootstrap refits (too few documents)"}
    tail = (1.0 - level) / 2.0
    share = seen_label_share(split.n_relevant, n_docs, n_new)

    def shifted(values: list[float], shift: float, scale: float = 1.0) -> list[float]:
        low, high = np.quantile(np.asarray(values), [tail, 1.0 - tail])
        return [float(min(max((low + shift) * scale, 0.0), 1.0)), float(min(max((high + shift) * scale, 0.0), 1.0))]

    apparent_new, out_of_bag_new = float(np.mean(apparent_values)), float(np.mean(new_values))
    shifts = {"none": 0.0, ".632": 0.368 * (apparent_new - out_of_bag_new),
              ".632+": (1.0 - _weight_632_plus(apparent_new, out_of_bag_new, _no_information_f_macro(full, split)))
              * (apparent_new - out_of_bag_new)}
    variants = {
        "seen_632_share": shifted(seen_values, 0.368 * (float(apparent) - float(np.mean(seen_values))), share),
        "new": shifted(new_values, shifts["none"]),
        "new_632": shifted(new_values, shifts[".632"]),
        "new_632_share": shifted(new_values, shifts[".632"], share),
        "new_632plus": shifted(new_values, shifts[".632+"]),
        "new_632plus_share": shifted(new_values, shifts[".632+"], share),
    }
    return {"f_macro_interval": variants[REPORTED_VARIANT], "interval_level": level,
            "interval_resamples": len(new_values), "interval_method": VARIANTS[REPORTED_VARIANT],
            "interval_shift": shifts[_SHIFT_OF[REPORTED_VARIANT]], "interval_seen_label_share": share,
            "interval_variants": variants}


def _no_information_f_macro(fitted: Any, split: Any) -> float:
    """F-macro of the fitted rule's predictions on ``split`` if they were independent of its labels: per label,
    expected precision s_k / m (0 for an empty prediction) and recall pred_k / m -- the "no-information"
    value of Efron & Tibshirani's .632+ estimator."""
    from xmlthresh.metrics import f_beta_raw

    present = split.n_relevant > 0
    if not present.any():
        return 0.0
    _, predicted = fitted.counts(split)
    m = float(split.n_docs)
    predicted, positives = predicted[present].astype(np.float64), split.n_relevant[present].astype(np.float64)
    precision = np.where(predicted > 0, positives / m, 0.0)
    return float(f_beta_raw(precision.mean(), (predicted / m).mean(), fitted.beta))


def _weight_632_plus(apparent: float, out_of_bag: float, no_information: float) -> float:
    """The weight w of the out-of-bag value in Efron & Tibshirani's .632+ estimator, (1 - w) apparent +
    w out-of-bag, in F (higher is better): w = .632 / (1 - .368 R) with the relative overfitting rate
    R = (apparent - out-of-bag) / (apparent - no-information) clipped to [0, 1] (w = .632 without
    overfitting, 1 when the fit does no better out of bag than a rule that ignores the scores)."""
    if apparent <= out_of_bag or apparent <= no_information:
        rate = 0.0
    else:
        rate = min(max((apparent - out_of_bag) / (apparent - no_information), 0.0), 1.0)
    return 0.632 / (1.0 - 0.368 * rate)


#: the ways the interval can be computed from the same refits (the coverage study compares them)
VARIANTS = {
    "seen_632_share": "out-of-bag documents, labels seen by the resample, .632 shift, seen-label share",
    "new": "new documents drawn from the out-of-bag ones, every label present, no shift",
    "new_632": "new documents drawn from the out-of-bag ones, every label present, .632 shift",
    "new_632_share": "new documents drawn from the out-of-bag ones, every label present, .632 shift, seen-label share",
    "new_632plus": "new documents drawn from the out-of-bag ones, every label present, .632+ shift",
    "new_632plus_share": "new documents drawn from the out-of-bag ones, every label present, .632+ shift, "
                         "seen-label share",
}
_SHIFT_OF = {"seen_632_share": ".632", "new": "none", "new_632": ".632", "new_632_share": ".632",
             "new_632plus": ".632+", "new_632plus_share": ".632+"}
#: the variant reported as ``f_macro_interval``
REPORTED_VARIANT = "new"


def _f_macro_present(fitted: Any, documents: Any, beta: float, evaluate: Any) -> float:
    """F-macro of a fitted strategy on ``documents`` over the labels present there (as the test split is scored)."""
    present = documents.n_relevant > 0
    tp, predicted = fitted.counts(documents)
    return float(evaluate(tp[present], predicted[present], documents.n_relevant[present], beta)["f_macro"])


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
