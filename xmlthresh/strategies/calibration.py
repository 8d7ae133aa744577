"""Scores -> calibrated probabilities eta_k(s) ~ P(y_k = 1 | score s), per label, shrunk towards a pooled fit.

The population-optimal F-macro classifier thresholds the posterior eta_k(x)
(docs/theory.md#thresholding-the-posterior); a ranker's scores become estimates of it through a monotone map
fitted on a labelled split:

* ``isotonic`` -- per label, the isotonic (pool-adjacent-violators) regression of y on the score: a
  non-decreasing step function. Tied scores are pooled first, so they share one value; at the fit scores the
  values are scikit-learn's ``IsotonicRegression``'s. A new score gets the value of the largest fit score at or
  below it (the first value below all of them), where scikit-learn interpolates linearly: eta then changes only
  at fit scores (``tests/test_calibration.py``);
* ``platt`` -- per label, a logistic curve sigma(a s + b) fitted by Newton's method (vectorised over
  labels, ridge ``1e-6``), with Platt's target smoothing;
* ``pooled`` -- one isotonic map fitted on every (score, y) pair of every label;
* ``none`` -- the scores already are probabilities (a calibrated model, or the true eta of a synthetic
  generator): they are used as they are and must lie in [0, 1].

A label with few positives cannot support its own map, so the per-label maps are shrunk towards the pooled
isotonic one: eta_k = w_k f_k + (1 - w_k) f_pooled with w_k = s_k / (s_k + ``shrinkage``) (s_k = the label's
positives in the fit split). A label without positives gets the pooled map alone,
which is 0 at the scores below its first positive step (then the label has no expected positive).
A label whose scores are all equal cannot be fitted on its own: it gets the pooled map (counted in
``n_labels_pooled_only``). The whole calibration cannot be fitted when the fit split has no positive at all or
a single distinct score; that is a ``ValueError``.

Sparse (top-k) scores: a document without a score for a label gets that label's *unscored* probability,
the fraction of positives among its unscored fit documents, shrunk the same way towards the pooled fraction.
Everything is vectorised over labels (numba kernels over CSC segments), never a Python loop over labels.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.entries import LabelEntries, entry_truth, label_entries
from xmlthresh.data.scores import ScoredSplit
from xmlthresh._util.jit import cached_njit

CALIBRATIONS = ("isotonic", "platt", "pooled", "none")


class ScoreCalibration:
    """A fitted map from each label's scores to probabilities (see the module docstring)."""

    def __init__(self, method: str = "isotonic", shrinkage: float = 10.0) -> None:
        if method not in CALIBRATIONS:
            raise ValueError(f"calibration must be one of {', '.join(CALIBRATIONS)}, got {method!r}")
        if isinstance(shrinkage, bool) or not isinstance(shrinkage, (int, float)) or not 0 <= shrinkage < np.inf:
            raise ValueError(f"shrinkage must be a finite number >= 0 (pseudo-positives), got {shrinkage!r}")
        self.method = method
        self.shrinkage = float(shrinkage)

    # ------------------------------------------------------------------ fit
    def fit(self, split: ScoredSplit) -> "ScoreCalibration":
        """Fit on a labelled split (its scores and labels)."""
        entries = label_entries(split.scores)
        truth = entry_truth(entries, split.labels)
        if self.method == "none" and entries.score.size and not (0 <= entries.score.min()
                                                                  and entries.score.max() <= 1):
            raise ValueError(f"calibration='none' takes the scores as probabilities, but split {split.name!r} has "
                             f"scores in [{entries.score.min():g}, {entries.score.max():g}]; choose isotonic or platt")
        if self.method != "none" and (entries.score.size == 0 or np.ptp(entries.score) == 0):
            raise ValueError(f"cannot calibrate scores on split {split.name!r}: it has a single distinct score "
                             "(or none); a calibration needs scores that vary")
        positives = np.asarray(split.labels.sum(axis=0)).ravel().astype(np.float64)
        if positives.sum() == 0:
            raise ValueError(f"cannot calibrate scores on split {split.name!r}: it has no positive label at all")
        n = entries.n_labels
        # pooled isotonic map over every entry
        order = np.argsort(entries.score, kind="stable")
        pooled_x, pooled_y = _pav(entries.score[order], truth[order])
        self.pooled_x_, self.pooled_y_ = pooled_x, pooled_y
        per_label_positive = np.bincount(entries.label_of, weights=truth, minlength=n)
        counts = np.diff(entries.label_ptr)
        seg_min, seg_max = _segment_range(entries.label_ptr, entries.score)
        constant = (counts == 0) | (seg_min == seg_max)
        self.weight_ = np.where(constant, 0.0, per_label_positive / (per_label_positive + self.shrinkage)
                                if self.shrinkage > 0 else (per_label_positive > 0).astype(np.float64))
        if self.method == "isotonic":
            self.iso_ptr_, self.iso_x_, self.iso_y_ = _per_label_pav(entries.label_ptr, entries.score, truth)
        elif self.method == "platt":
            self.platt_a_, self.platt_b_ = _platt_per_label(entries.label_of, entries.score, truth, n,
                                                             per_label_positive, counts.astype(np.float64))
        else:  # pooled, or none (the pooled map is then unused)
            self.weight_ = np.zeros(n)
        # unscored probability (sparse top-k): positives outside the scored entries, per label and pooled
        unscored = split.n_docs - counts
        hidden_pos = positives - per_label_positive
        pooled_rate = hidden_pos.sum() / unscored.sum() if unscored.sum() > 0 else 0.0
        # Beta prior worth ``shrinkage`` pseudo-positives at the pooled rate
        pseudo_docs = self.shrinkage / pooled_rate if pooled_rate > 0 else 0.0
        denominator = unscored + pseudo_docs
        self.unscored_eta_ = np.divide(hidden_pos + pseudo_docs * pooled_rate, denominator, out=np.zeros(n),
                                       where=denominator > 0)
        self.n_labels_ = n
        self.n_labels_pooled_only_ = int(np.count_nonzero(self.weight_ == 0))
        return self

    # ------------------------------------------------------------------ state (saved thresholds files)
    _STATE = ("pooled_x_", "pooled_y_", "weight_", "unscored_eta_", "iso_ptr_", "iso_x_", "iso_y_", "platt_a_",
              "platt_b_")

    def state(self) -> dict:
        """The fitted maps as numbers, strings and arrays (for a saved result)."""
        state = {"method": self.method, "shrinkage": self.shrinkage, "n_labels": int(self.n_labels_),
                 "n_labels_pooled_only": int(self.n_labels_pooled_only_)}
        state.update({name: getattr(self, name) for name in self._STATE if hasattr(self, name)})
        return state

    @classmethod
    def from_state(cls, state: dict) -> "ScoreCalibration":
        calibration = cls(str(state["method"]), float(state["shrinkage"]))
        for name in cls._STATE:
            if name in state:
                setattr(calibration, name, np.asarray(state[name]))
        calibration.n_labels_ = int(state["n_labels"])
        calibration.n_labels_pooled_only_ = int(state.get("n_labels_pooled_only", 0))
        return calibration

    # ------------------------------------------------------------------ transform
    def transform_entries(self, entries: LabelEntries) -> np.ndarray:
        """eta of every entry (same order as ``entries.score``)."""
        if entries.n_labels != self.n_labels_:
            raise ValueError(f"calibration fitted on {self.n_labels_} labels, got {entries.n_labels}")
        if self.method == "none":
            return np.clip(entries.score, 0.0, 1.0)
        pooled = _step_eval(self.pooled_x_, self.pooled_y_, entries.score)
        if self.method == "isotonic":
            own = _per_label_step_eval(self.iso_ptr_, self.iso_x_, self.iso_y_, entries.label_ptr, entries.score)
        elif self.method == "platt":
            label = entries.label_of
            own = _sigmoid(self.platt_a_[label] * entries.score + self.platt_b_[label])
        else:
            return pooled
        w = self.weight_[entries.label_of]
        return w * own + (1.0 - w) * pooled

    def transform(self, scores: np.ndarray | sp.spmatrix) -> np.ndarray | sp.csr_matrix:
        """eta with the layout of ``scores`` (dense array, or CSR with the same stored entries)."""
        entries = label_entries(scores)
        eta = self.transform_entries(entries)
        if sp.issparse(scores):
            return sp.csc_matrix((eta, entries.doc, entries.label_ptr), shape=scores.shape).tocsr()
        return eta.reshape(scores.shape[1], scores.shape[0]).T.copy()


# ---------------------------------------------------------------------- kernels
def _sigmoid(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    positive = x >= 0
    out[positive] = 1.0 / (1.0 + np.exp(-x[positive]))
    ex = np.exp(x[~positive])
    out[~positive] = ex / (1.0 + ex)
    return out


def _platt_per_label(label: np.ndarray, score: np.ndarray, truth: np.ndarray, n: int, positives: np.ndarray,
                     counts: np.ndarray, iterations: int = 50, ridge: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Per-label logistic fits sigma(a s + b) by damped Newton steps, all labels at once (segment sums)."""
    # Platt's smoothed targets: (N+ + 1) / (N+ + 2) for positives, 1 / (N- + 2) for negatives
    t_pos = (positives + 1.0) / (positives + 2.0)
    t_neg = 1.0 / (counts - positives + 2.0)
    target = np.where(truth > 0, t_pos[label], t_neg[label])
    # standardise scores per label for a well-conditioned Newton iteration
    mean = np.bincount(label, weights=score, minlength=n) / np.maximum(counts, 1)
    var = np.bincount(label, weights=(score - mean[label]) ** 2, minlength=n) / np.maximum(counts, 1)
    scale = np.where(var > 0, np.sqrt(var), 1.0)
    z = (score - mean[label]) / scale[label]
    prior = np.clip(positives / np.maximum(counts, 1), 1e-6, 1 - 1e-6)
    a = np.zeros(n)
    b = np.log(prior / (1 - prior))
    for _ in range(iterations):
        p = _sigmoid(a[label] * z + b[label])
        w = np.maximum(p * (1 - p), 1e-12)
        r = p - target
        ga = np.bincount(label, weights=r * z, minlength=n) + ridge * a
        gb = np.bincount(label, weights=r, minlength=n) + ridge * b
        haa = np.bincount(label, weights=w * z * z, minlength=n) + ridge
        hab = np.bincount(label, weights=w * z, minlength=n)
        hbb = np.bincount(label, weights=w, minlength=n) + ridge
        det = haa * hbb - hab * hab
        det = np.where(det > 1e-300, det, 1e-300)
        step_a = (hbb * ga - hab * gb) / det
        step_b = (haa * gb - hab * ga) / det
        a -= np.clip(step_a, -5, 5)
        b -= np.clip(step_b, -5, 5)
        if max(np.abs(step_a).max(initial=0), np.abs(step_b).max(initial=0)) < 1e-10:
            break
    # back to raw scores: a z + b = (a / scale) s + (b - a mean / scale)
    return a / scale, b - a * mean / scale


@cached_njit
def _pav(x_sorted, y):
    """Isotonic regression of y on sorted x (pool adjacent violators); equal x are pooled first.
    Returns the block starts (their smallest x) and block means: a non-decreasing step function."""
    n = len(y)
    xs = np.empty(n)
    sums = np.empty(n)
    weights = np.empty(n)
    blocks = 0
    i = 0
    while i < n:
        j = i
        total = 0.0
        while j < n and x_sorted[j] == x_sorted[i]:
            total += y[j]
            j += 1
        xs[blocks] = x_sorted[i]
        sums[blocks] = total
        weights[blocks] = j - i
        blocks += 1
        while blocks > 1 and sums[blocks - 2] / weights[blocks - 2] >= sums[blocks - 1] / weights[blocks - 1]:
            sums[blocks - 2] += sums[blocks - 1]
            weights[blocks - 2] += weights[blocks - 1]
            blocks -= 1
        i = j
    return xs[:blocks].copy(), sums[:blocks] / weights[:blocks]


@cached_njit
def _per_label_pav(label_ptr, score, truth):
    """``_pav`` of every label's entries; the step functions as CSR arrays (ptr, x, y)."""
    n = len(label_ptr) - 1
    ptr = np.zeros(n + 1, dtype=np.int64)
    xs = np.empty(len(score))
    ys = np.empty(len(score))
    out = 0
    for k in range(n):
        lo, hi = label_ptr[k], label_ptr[k + 1]
        if hi > lo:
            order = np.argsort(score[lo:hi], kind="mergesort")
            bx, by = _pav(score[lo:hi][order], truth[lo:hi][order])
            xs[out:out + len(bx)] = bx
            ys[out:out + len(bx)] = by
            out += len(bx)
        ptr[k + 1] = out
    return ptr, xs[:out].copy(), ys[:out].copy()


@cached_njit
def _step_eval(bx, by, query):
    """Value of the step function (block starts bx, values by) at each query: the block of the largest start
    <= query; below the first start, the first value."""
    out = np.empty(len(query))
    for i in range(len(query)):
        j = np.searchsorted(bx, query[i], side="right") - 1
        out[i] = by[0] if j < 0 else by[j]
    return out


@cached_njit
def _per_label_step_eval(ptr, bx, by, label_ptr, query):
    out = np.zeros(len(query))
    for k in range(len(label_ptr) - 1):
        lo, hi = ptr[k], ptr[k + 1]
        if hi == lo:
            continue  # no fitted entries: its weight is 0, the pooled map decides
        for i in range(label_ptr[k], label_ptr[k + 1]):
            j = np.searchsorted(bx[lo:hi], query[i], side="right") - 1
            out[i] = by[lo] if j < 0 else by[lo + j]
    return out


@cached_njit
def _segment_range(label_ptr, values):
    """(min, max) of every label's segment of ``values`` (0, 0 for an empty segment)."""
    n = len(label_ptr) - 1
    low = np.zeros(n)
    high = np.zeros(n)
    for k in range(n):
        if label_ptr[k + 1] > label_ptr[k]:
            low[k] = values[label_ptr[k]:label_ptr[k + 1]].min()
            high[k] = values[label_ptr[k]:label_ptr[k + 1]].max()
    return low, high
