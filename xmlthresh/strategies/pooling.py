"""Partial pooling of score thresholds across labels of similar fit frequency (empirical Bayes).

Why: a label with a handful of fit positives gets a threshold from those few documents alone, and most of
the gap between fitted and best thresholds on new documents sits in such labels. Labels with a similar
number of fit positives tend to need similar thresholds, so each label's fitted threshold t_k is shrunk
towards the reference T of its frequency group:

    t_k' = w_k t_k + (1 - w_k) T,    w_k = s_k / (s_k + lambda),

with s_k the label's number of fit positives. This is the posterior mean of the normal model
t_k = theta_k + noise, Var(noise) = sigma^2 / s_k, theta_k ~ (T, tau^2), with lambda = sigma^2 / tau^2
(Efron & Morris 1975; Morris 1983; docs/theory.md#partial-pooling-of-rare-labels). The noise of a fitted
F-optimal threshold does not follow that model closely (a label with one positive takes that document's
score), so ``strength="auto"`` does not trust the model's moments: it chooses lambda from
:data:`STRENGTH_GRID` by cross-fitting on the fit split (:func:`cross_fitted_strength`: thresholds fitted on
two thirds of the fit documents, pooled, scored by F-macro on the remaining third, over three folds). So
the strength comes from the fit data, never from a test split. ``strength=0`` leaves every threshold as it
is (bit for bit), ``strength=inf`` gives every label its group's reference.

Groups are powers of two of s_k (1, 2-3, 4-7, ...); a group with fewer than :data:`MIN_GROUP` finite
thresholds borrows those of the neighbouring groups. The reference is the group's median (robust to the
labels whose optimum is an extreme cut). Infinite thresholds (predict all, predict nothing) are neither
shrunk nor used in references. A label without a fit positive has no threshold of its own: ``fallback``
says what it gets -- ``never`` (+inf, predict nothing), ``pooled`` (the reference of the rarest group),
``native`` (the ranker's own decision threshold, when the scores declare one) or ``top`` (the score of the
label's best fit document: new documents ranked at least that high). Under F-macro a label that predicts
nothing has precision and recall 0, so a few predictions for it can only raise the mean; ``top`` spends the
fewest. A label whose best fit scores are tied (a ranker that gives a label without training positives one
constant score) gets nothing from ``top`` or rank-space ``pooled``: on new documents its threshold would
predict every one of them, which is the "predict all" win on labels without evidence.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

#: what labels without a fit positive get
FALLBACKS = ("never", "pooled", "native", "top")
#: what is pooled: the score thresholds themselves, or the log of the cut per fit positive (log(cut_k / s_k),
#: free of the scale of each label's scores), turned back into a threshold on the label's fit ranking
SPACES = ("score", "rank")
#: fewest finite thresholds a group's reference is taken from (smaller groups borrow from their neighbours)
MIN_GROUP = 5
#: the strengths ``pooling="auto"`` chooses from (pseudo-positives; the smallest of equally good ones wins)
STRENGTH_GRID = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, math.inf)
#: folds of the cross-fitting that chooses the strength (documents dealt out in turn: no random choice)
STRENGTH_FOLDS = 3


def check_pooling(strength: Any, fallback: Any, space: Any = "score") -> float:
    """``strength`` as a float (``"auto"`` -> nan, estimated at fit time), ``fallback`` and ``space`` checked."""
    if space not in SPACES:
        raise ValueError(f"pooling_space must be one of {', '.join(SPACES)}, got {space!r}")
    if space == "rank" and fallback in ("native", "top"):
        raise ValueError(f"fallback={fallback} gives a score threshold: use it with pooling_space=score")
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback must be one of {', '.join(FALLBACKS)}, got {fallback!r}")
    if isinstance(strength, str):
        if strength != "auto":
            raise ValueError(f"pooling must be a number >= 0 (pseudo-positives) or 'auto', got {strength!r}")
        return math.nan
    if isinstance(strength, bool) or not isinstance(strength, (int, float)) or math.isnan(strength) or strength < 0:
        raise ValueError(f"pooling must be a number >= 0 (pseudo-positives) or 'auto', got {strength!r}")
    return float(strength)


def frequency_groups(n_relevant: np.ndarray) -> np.ndarray:
    """floor(log2 s_k) per label (0 for s = 1, 1 for 2-3, ...), -1 for labels without a positive."""
    s = np.asarray(n_relevant, dtype=np.int64)
    groups = np.full(s.shape, -1, dtype=np.int64)
    positive = s > 0
    groups[positive] = np.floor(np.log2(s[positive])).astype(np.int64)
    return groups


def group_references(thresholds: np.ndarray, groups: np.ndarray) -> dict[int, float]:
    """The median finite threshold per group, each taken over at least :data:`MIN_GROUP` thresholds where
    the data have that many (a small group widens to its nearest groups, one step at a time)."""
    finite = np.isfinite(thresholds) & (groups >= 0)
    present = sorted(set(groups[groups >= 0].tolist()))
    if not finite.any():
        return {}
    references = {}
    for group in present:
        low = high = group
        members = finite & (groups == group)
        while np.count_nonzero(members) < MIN_GROUP and (low > min(present) or high < max(present)):
            low, high = low - 1, high + 1
            members = finite & (groups >= low) & (groups <= high)
        if members.any():
            references[group] = float(np.median(thresholds[members]))
    return references


def top_document_thresholds(ranking: Any) -> np.ndarray:
    """Per label the score of its best fit document, +inf where there is no scored document or the best two
    scores tie (no ranking to trust: see the module docstring)."""
    lengths = np.diff(ranking.score_ptr)
    out = np.full(len(lengths), np.inf)
    start = ranking.score_ptr[:-1]
    scored = lengths > 0
    out[scored] = ranking.sorted_score[start[scored]]
    tied = (lengths > 1) & scored
    tied[tied] = ranking.sorted_score[start[tied] + 1] >= ranking.sorted_score[start[tied]]
    out[tied] = np.inf
    return out


def untied_cuts(ranking: Any, cuts: np.ndarray) -> np.ndarray:
    """``cuts`` with every cut whose last document ties the next one set to 0 (the threshold would take every
    tied document, on new documents too)."""
    cuts = np.asarray(cuts, dtype=np.int64).copy()
    lengths = np.diff(ranking.score_ptr)
    inside = (cuts > 0) & (cuts < lengths)
    at = ranking.score_ptr[:-1][inside] + cuts[inside] - 1
    tie = ranking.sorted_score[at + 1] >= ranking.sorted_score[at]
    cuts[np.flatnonzero(inside)[tie]] = 0
    return cuts


def pool_thresholds(thresholds: np.ndarray, n_relevant: np.ndarray, strength: float, fallback: str,
                    native: float | None = None, top: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """The pooled thresholds (module docstring) and what was done (``info``: the strength used, how many
    labels moved, how many labels without a positive got a finite fallback threshold). ``top``: the
    thresholds of :func:`top_document_thresholds` (for ``fallback="top"``)."""
    thresholds = np.asarray(thresholds, dtype=np.float64)
    n_relevant = np.asarray(n_relevant, dtype=np.int64)
    groups = frequency_groups(n_relevant)
    references = group_references(thresholds, groups)
    reference = np.array([references.get(int(g), np.nan) for g in groups], dtype=np.float64)
    if math.isnan(strength):
        raise ValueError("pool_thresholds needs a strength; 'auto' is resolved by cross_fitted_strength")
    lam = strength
    out = thresholds.copy()
    movable = np.isfinite(thresholds) & np.isfinite(reference) & (n_relevant > 0)
    if lam > 0:
        s = n_relevant[movable].astype(np.float64)
        weight = np.zeros_like(s) if math.isinf(lam) else s / (s + lam)
        out[movable] = weight * thresholds[movable] + (1.0 - weight) * reference[movable]
    empty = n_relevant == 0
    if fallback == "pooled" and references:
        out[empty] = references[min(references)]
    elif fallback == "top":
        if top is None:
            raise ValueError("fallback=top needs the fit ranking (top_document_thresholds)")
        out[empty] = top[empty]
    elif fallback == "native":
        if native is None:
            raise ValueError("fallback=native needs the ranker's own decision threshold, and these scores "
                             "declare none: give it (a score file's key native_threshold, fit_thresholds(..., "
                             "native_threshold=0.5)), or use fallback=pooled or never")
        out[empty] = float(native)
    info = {"pooling_strength": lam, "n_labels_pooled": int(np.count_nonzero(out[movable] != thresholds[movable])),
            "n_labels_fallback": int(np.count_nonzero(empty & np.isfinite(out))) if fallback != "never" else 0,
            "fallback": fallback}
    return out, info


def cross_fitted_strength(fit: Callable[[Any], Any], pool: Callable[[Any, Any, float], np.ndarray], split: Any,
                          beta: float) -> tuple[float, dict[float, float]]:
    """The strength of :data:`STRENGTH_GRID` whose pooled thresholds score the best mean F-macro on held-out
    fit documents: ``fit(train_split)`` gives the unpooled fit of a training part, ``pool(train_split, fit,
    strength)`` its pooled score thresholds; the documents are dealt into :data:`STRENGTH_FOLDS` folds in
    turn. Returns (strength, {strength: mean held-out F-macro})."""
    from xmlthresh.metrics import evaluate

    fold = np.arange(split.n_docs) % STRENGTH_FOLDS
    totals = np.zeros(len(STRENGTH_GRID))
    for held_out in range(STRENGTH_FOLDS):
        train, test = rows(split, fold != held_out), rows(split, fold == held_out)
        unpooled = fit(train)
        kept = test.n_relevant > 0
        for i, lam in enumerate(STRENGTH_GRID):
            tp, predicted = test.counts_at(pool(train, unpooled, lam))
            totals[i] += evaluate(tp[kept], predicted[kept], test.n_relevant[kept], beta)["f_macro"]
    means = totals / STRENGTH_FOLDS
    best = int(np.argmax(means))  # the first maximum: the weakest pooling among equals
    return STRENGTH_GRID[best], dict(zip(STRENGTH_GRID, means.tolist()))


def rows(split: Any, mask: np.ndarray) -> Any:
    """The documents ``mask`` of a scored split, as a split of its own."""
    from dataclasses import replace

    index = np.flatnonzero(mask)
    return replace(split, scores=split.scores[index], labels=split.labels[index], name=f"{split.name}[part]")


def pool_cuts(cuts: np.ndarray, n_relevant: np.ndarray, n_scored: np.ndarray, n_docs: int, strength: float,
              fallback: str) -> tuple[np.ndarray, dict[str, Any]]:
    """Pooling in rank space: x_k = log(cut_k / s_k) pooled as :func:`pool_thresholds` pools thresholds, the
    pooled cut round(s_k exp(x_k')) kept between 1 and the label's scored documents. Cuts of 0 (predict
    nothing) and of every document (predict all) are neither moved nor used in references. ``fallback=pooled``
    gives a label without a fit positive the cut of the rarest group for one positive (``native`` is a score,
    see :func:`pool_thresholds`)."""
    cuts = np.asarray(cuts, dtype=np.int64)
    n_relevant = np.asarray(n_relevant, dtype=np.int64)
    ratio = np.full(len(cuts), np.nan)
    inside = (cuts > 0) & (cuts < n_docs) & (n_relevant > 0)
    ratio[inside] = np.log(cuts[inside] / n_relevant[inside])
    finite = np.where(np.isnan(ratio), np.inf, ratio)
    pooled, info = pool_thresholds(finite, n_relevant, strength, "pooled" if fallback == "pooled" else "never")
    out = cuts.copy()
    moved = inside.copy()
    out[moved] = np.rint(n_relevant[moved] * np.exp(pooled[moved])).astype(np.int64)
    empty = n_relevant == 0
    if fallback == "pooled" and np.isfinite(pooled[empty]).any():
        out[empty] = np.rint(np.exp(pooled[empty])).astype(np.int64)
        moved |= empty & np.isfinite(pooled)
    # at least one document, at most the label's scored ones (a label without any scored document: none)
    out[moved] = np.minimum(np.maximum(out[moved], 1), n_scored[moved])
    info["n_labels_pooled"] = int(np.count_nonzero(out[inside] != cuts[inside]))
    return out, info
