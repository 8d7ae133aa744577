"""An interval for the F-macro that fitted thresholds reach on new documents (out-of-bootstrap refits).

Why: a strategy's certificate (lower and upper bounds) holds on the fit documents; on new documents of the
same distribution the fitted thresholds lose some of it (the fit's optimism) and vary with the fit sample.
The interval repeats the whole fit on bootstrap resamples of the fit documents and scores each refitted
rule on the documents its resample left out (Efron & Tibshirani 1997: the out-of-bootstrap estimate of a
rule's error, which carries the refit's optimism instead of hiding it; docs/theory.md#population-interval).
A resample holds only about 63.2 % of the distinct fit documents, so the out-of-bag values are pessimistic;
as in Efron's .632 estimator the interval -- the central ``level`` range of the out-of-bag F-macros -- is
moved by 0.368 (apparent F-macro - mean out-of-bag F-macro), the apparent one being that of the fit on all
fit documents. It is computed from the fit
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
                              resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                              apparent: float | None = None) -> dict[str, Any]:
    """``f_macro_interval`` [low, high] at ``level`` for the thresholds ``strategy`` (unfitted or fitted: its
    parameters are used) fits on the scored ``split``, with ``interval_level``, ``interval_resamples`` (the
    refits that had out-of-bag documents), ``interval_method`` and ``f_macro_interval_out_of_bag`` (the range
    before the .632 shift). ``apparent``: the F-macro of the fit on
    all of ``split`` when the caller has it (else it is fitted here)."""
    from xmlthresh.strategies.pooling import rows

    level, resamples = check_interval(level, resamples)
    rng = np.random.default_rng(seed)
    n_docs = split.n_docs
    values = []
    for _ in range(resamples):
        drawn = rng.integers(0, n_docs, n_docs)
        out_of_bag = np.ones(n_docs, dtype=bool)
        out_of_bag[drawn] = False
        held_out = rows(split, out_of_bag)
        if not out_of_bag.any() or not (held_out.n_relevant > 0).any():
            continue
        refit = strategy.unfitted_copy().fit_scores(_resample(split, drawn))
        values.append(refit.evaluate_scores(held_out)["f_macro"])
    if len(values) < 2:
        return {"f_macro_interval": None, "interval_level": level, "interval_resamples": len(values),
                "interval_method": "out-of-bootstrap refits (too few documents)"}
    if apparent is None:
        apparent = strategy.unfitted_copy().fit_scores(split).f_macro_
    tail = (1.0 - level) / 2.0
    values_array = np.asarray(values)
    shift = 0.368 * (float(apparent) - float(values_array.mean()))
    raw_low, raw_high = np.quantile(values_array, [tail, 1.0 - tail])
    low, high = raw_low + shift, raw_high + shift
    return {"f_macro_interval": [float(max(low, 0.0)), float(min(high, 1.0))], "interval_level": level,
            "interval_resamples": len(values), "interval_method": "out-of-bootstrap refits, .632 shift",
            "f_macro_interval_out_of_bag": [float(raw_low), float(raw_high)]}


def _resample(split: Any, drawn: np.ndarray) -> Any:
    """The documents ``drawn`` (with repeats) of a scored split, as a split of its own."""
    from dataclasses import replace

    return replace(split, scores=split.scores[drawn], labels=split.labels[drawn], name=f"{split.name}[bootstrap]")
