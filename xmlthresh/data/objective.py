"""What a label-based strategy optimises over its candidates: a precision floor and precision smoothing.

The empirical optimum of F-macro drifts to the ends of the PR curves -- precision 1 from the top one or
two validation documents, or "predict all" -- which is exactly what does not transfer to new documents
(docs/theory.md#consistency-and-precision-floor). Two controls act on a
:class:`~xmlthresh.data.candidates.Candidates` set before any optimiser sees it, so every strategy (and its
certified bounds) works unchanged on the controlled problem:

* :func:`smoothed` -- Beta-binomial shrinkage of each cut's precision towards the label's prior
  pi_k = s_k / m: p~ = (tp + a pi_k) / (cut + a), ``a`` pseudo-documents (the posterior mean of the
  precision under a Beta(a pi_k, a (1 - pi_k)) prior). Recall is unchanged. A cut that wins on one or two
  documents no longer looks perfect. Cut 0 ("predict nothing") keeps p = 0. Smoothing re-scores the
  candidate cuts of the empirical problem (just after a relevant document, or predict all); it never makes
  a cut that found no relevant document a candidate.
* :func:`with_predicted_cap` -- only cuts of at most ``ratio`` x s_k documents remain (a label predicts at
  most ``ratio`` times as many documents as it has fit positives, so the rule's predictions are at most
  ``ratio`` times the fit positives in total and micro precision stays >= micro recall / ``ratio``); a label
  left with none (its first relevant document ranks below the cap) gets the cap itself, its top
  floor(ratio s_k) documents. This is what stops F-macro from being won by predicting every document: with
  F-macro's arithmetic, "predict all" is worth recall 1 at precision pi_k to a label whose ranking is weak.
* :func:`with_precision_floor` -- only candidates whose (estimated) precision is at least ``floor`` remain;
  a label with none gets one explicit "predict nothing" candidate (cut 0, p = r = 0). The lower bound on
  precision is the class of threshold rules in which the empirical optimum is consistent (reference work,
  section 1.3). Bounds computed on the result certify the constrained problem.

:func:`choice_diagnostics` counts where the chosen cuts sit (predict all, precision one, at the floor,
predict nothing) for ``result.json``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xmlthresh.data.candidates import Candidates


def check_min_precision(value: object) -> float:
    """``min_precision`` as a float in [0, 1] (booleans and non-numbers are an error)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"min_precision must be a number in [0, 1], got {value!r}")
    return float(value)


def check_smoothing(value: object) -> float:
    """``smoothing`` (pseudo-documents) as a finite float >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not (0.0 <= float(value) < np.inf):
        raise ValueError(f"smoothing must be a finite number >= 0 (pseudo-documents), got {value!r}")
    return float(value)


def check_predicted_cap(value: object) -> float:
    """``max_predicted_per_positive`` as a float > 0 (``None`` or ``inf``: no cap)."""
    if value is None:
        return float("inf")
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or np.isnan(value) or not float(value) > 0.0:
        raise ValueError(f"max_predicted_per_positive must be a number > 0 (documents predicted per fit positive) "
                         f"or null for no cap, got {value!r}")
    return float(value)


def with_predicted_cap(candidates: Candidates, ratio: float, list_length: np.ndarray) -> Candidates:
    """Keep the candidate cuts of at most ``ratio`` x s_k documents (module docstring); a label left with none
    gets one candidate at the cap, min(max(floor(ratio s_k), 1), L_k) documents with no relevant one among
    them. ``ratio = inf`` keeps everything. Apply before :func:`smoothed` (the cap's candidate is smoothed
    like the others)."""
    if not np.isfinite(ratio):
        return candidates
    n = candidates.n_labels
    label = candidates.label_of
    s = np.asarray(candidates.n_relevant, dtype=np.float64)
    keep = candidates.cut <= ratio * s[label]
    empty = np.flatnonzero(np.bincount(label[keep], minlength=n) == 0)
    cap = np.minimum(np.maximum(np.floor(ratio * s[empty]), 1), np.asarray(list_length)[empty]).astype(np.int64)
    new_label = np.concatenate([label[keep], empty])
    order = np.argsort(new_label, kind="stable")
    tp = np.concatenate([candidates.tp[keep], np.zeros(len(empty), dtype=candidates.tp.dtype)])[order]
    cut = np.concatenate([candidates.cut[keep], cap.astype(candidates.cut.dtype)])[order]
    ptr = np.r_[0, np.cumsum(np.bincount(new_label, minlength=n))].astype(np.int64)
    if candidates.objective_precision is not None or candidates.objective_recall is not None:
        raise ValueError("with_predicted_cap acts on the empirical candidates: apply it before smoothed()")
    return Candidates(ptr, tp, cut, candidates.n_relevant, candidates.num_docs)


def smoothed(candidates: Candidates, strength: float) -> Candidates:
    """The candidates with precision shrunk towards each label's prior s_k / m by ``strength`` pseudo-documents.

    Build them from candidates *without* the dominance reduction (``build_candidates(lists, pareto=False)``):
    a candidate dominated on raw precision need not be dominated after smoothing.
    """
    if strength <= 0:
        return candidates
    prior = np.asarray(candidates.n_relevant, dtype=np.float64) / float(candidates.num_docs)
    pseudo_tp = strength * prior[candidates.label_of]
    cut = candidates.cut.astype(np.float64)
    precision = np.where(candidates.cut > 0, (candidates.tp + pseudo_tp) / (cut + strength), 0.0)
    return Candidates(candidates.cand_ptr, candidates.tp, candidates.cut, candidates.n_relevant,
                      candidates.num_docs, objective_precision=precision,
                      objective_recall=np.asarray(candidates.recall, dtype=np.float64).copy())


@dataclass(frozen=True)
class FlooredCandidates:
    """The candidates that meet the floor, and which labels lost a higher-recall candidate to it."""

    candidates: Candidates
    floor: float
    #: per label: some candidate of higher recall than every remaining one was removed by the floor
    floor_limits: np.ndarray
    #: per label: no candidate met the floor, the label predicts nothing
    forced_empty: np.ndarray


def with_precision_floor(candidates: Candidates, floor: float) -> FlooredCandidates:
    """Keep the candidates with (estimated) precision >= ``floor``; a label left with none gets one explicit
    "predict nothing" candidate (cut 0, tp 0, p = r = 0). ``floor = 0`` keeps everything."""
    n = candidates.n_labels
    if floor <= 0:
        return FlooredCandidates(candidates, floor, np.zeros(n, bool), np.zeros(n, bool))
    keep = candidates.precision >= floor
    label = candidates.label_of
    kept_per_label = np.bincount(label[keep], minlength=n)
    forced_empty = kept_per_label == 0
    # the floor limits a label when its last (highest-recall) candidate was removed
    has_any = np.diff(candidates.cand_ptr) > 0
    last = candidates.cand_ptr[1:] - 1
    floor_limits = has_any & ~keep[np.where(has_any, last, 0)] & ~forced_empty

    empty = np.flatnonzero(forced_empty)
    new_label = np.concatenate([label[keep], empty])
    order = np.argsort(new_label, kind="stable")  # labels in order; a label's kept candidates keep their order

    def merged(values: np.ndarray | None, fill: float) -> np.ndarray | None:
        if values is None:
            return None
        return np.concatenate([values[keep], np.full(len(empty), fill, dtype=values.dtype)])[order]

    tp = np.concatenate([candidates.tp[keep], np.zeros(len(empty), dtype=candidates.tp.dtype)])[order]
    cut = np.concatenate([candidates.cut[keep], np.zeros(len(empty), dtype=candidates.cut.dtype)])[order]
    ptr = np.r_[0, np.cumsum(np.bincount(new_label, minlength=n))].astype(np.int64)
    floored = Candidates(ptr, tp, cut, candidates.n_relevant, candidates.num_docs,
                         merged(candidates.objective_precision, 0.0), merged(candidates.objective_recall, 0.0))
    return FlooredCandidates(floored, floor, floor_limits, forced_empty)


def choice_diagnostics(candidates: Candidates, choice: np.ndarray,
                       floored: FlooredCandidates | None = None) -> dict[str, int]:
    """Where the chosen candidates sit: "predict all" (cut = m), precision one (empirical tp == cut > 0;
    for expected counts, estimated precision >= 1 - 1e-12), predict nothing (cut 0) and, with a floor, how
    many labels the floor stopped (their choice is the last candidate that meets it)."""
    cut = candidates.cut[choice]
    if candidates.exact or candidates.objective_precision is not None:
        precision_one = (candidates.tp[choice] == cut) & (cut > 0)
    else:
        precision_one = (candidates.precision[choice] >= 1.0 - 1e-12) & (cut > 0)
    out = {
        "n_labels_predict_all": int(np.count_nonzero(cut == candidates.num_docs)),
        "n_labels_precision_one": int(np.count_nonzero(precision_one)),
        "n_labels_predict_nothing": int(np.count_nonzero(cut == 0)),
    }
    if floored is not None and floored.floor > 0:
        is_last = choice == candidates.cand_ptr[1:] - 1
        out["n_labels_at_floor"] = int(np.count_nonzero(is_last & floored.floor_limits))
        out["n_labels_floor_empty"] = int(np.count_nonzero(floored.forced_empty))
    return out
