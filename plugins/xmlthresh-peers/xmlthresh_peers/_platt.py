"""Per-label Platt scaling of scores to probabilities (xCOLUMNs wants eta in [0, 1]), on dense or CSR scores.

Scores of label k are standardised with the fit split's mean and standard deviation, z = (s - mean_k) /
sd_k, and eta = sigmoid(a_k z + b_k) with (a_k, b_k) maximising the log-likelihood of Platt's smoothed
targets (relevant documents (N+ + 1) / (N+ + 2), the others 1 / (N- + 2); finite even for perfectly
separated labels), by Newton's method with backtracking, all labels at once. The slope is kept
non-negative (a_k < 0 falls back to a_k = 0, b_k = logit(base rate)), so eta never reverses the ranker's
order. The same (mean, sd, a, b) map the scores of any other split.

Sparse top-k scores: an unscored entry ranks below every scored document; for the fit it has the score
(smallest scored value of the split - 1), as if the matrix were densified -- but it is never built: the
fit works on weighted samples, the scored entries (weight 1) plus, per label, two samples at that fill
score weighted by its unscored relevant and unscored irrelevant documents. Time and memory are
O(nnz + labels), and the parameters are those of the densified fit (tested). ``transform`` of CSR scores
maps the stored entries only (an unscored entry has no probability: xCOLUMNs never predicts it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Samples:
    """Flat weighted samples of all labels: score, label index, weight, 0/1 relevance."""

    score: np.ndarray
    label: np.ndarray
    weight: np.ndarray
    relevant: np.ndarray
    n_labels: int
    n_docs: int

    def sum(self, values: np.ndarray) -> np.ndarray:
        """Per-label weighted sum of ``values`` (one per sample)."""
        return np.bincount(self.label, weights=self.weight * values, minlength=self.n_labels)


def unscored_fill(scores: sp.spmatrix) -> float:
    """The score an unscored entry of sparse scores has for the fit: below every scored one."""
    return float(scores.data.min() - 1.0) if scores.nnz else 0.0


def samples_of(scores, labels) -> Samples:
    """The weighted samples of a dense or CSR score matrix and its 0/1 labels (dense or sparse)."""
    n_docs, n_labels = scores.shape
    labels = sp.csr_matrix(labels, dtype=bool)
    if not sp.issparse(scores):
        dense = np.asarray(scores, dtype=np.float64)
        return Samples(dense.ravel(), np.tile(np.arange(n_labels), n_docs), np.ones(dense.size),
                       labels.toarray().ravel().astype(np.float64), n_labels, n_docs)
    coo = sp.coo_matrix(scores)
    # (scipy's fancy indexing with two empty index arrays returns no plain array: a score matrix without a
    # stored entry has no scored sample)
    scored_relevant = (np.asarray(labels[coo.row, coo.col]).ravel().astype(np.float64) if coo.nnz
                       else np.zeros(0))
    n_relevant = np.asarray(labels.sum(axis=0)).ravel().astype(np.float64)
    n_scored = np.bincount(coo.col, minlength=n_labels).astype(np.float64)
    relevant_scored = np.bincount(coo.col, weights=scored_relevant, minlength=n_labels)
    unscored_relevant = n_relevant - relevant_scored
    unscored_irrelevant = n_docs - n_scored - unscored_relevant
    fill = np.full(n_labels, unscored_fill(scores))
    k = np.arange(n_labels)
    return Samples(
        score=np.concatenate([coo.data.astype(np.float64), fill, fill]),
        label=np.concatenate([coo.col.astype(np.int64), k, k]),
        weight=np.concatenate([np.ones(coo.nnz), unscored_relevant, unscored_irrelevant]),
        relevant=np.concatenate([scored_relevant, np.ones(n_labels), np.zeros(n_labels)]),
        n_labels=n_labels, n_docs=n_docs,
    )


class PlattCalibration:
    """Per-label Platt scaling (module docstring); ``fit(scores, labels)``, ``transform(scores)``."""

    def __init__(self, max_iter: int = 100, ridge: float = 1e-6) -> None:
        self.max_iter = max_iter
        self.ridge = ridge

    def fit(self, scores, labels) -> "PlattCalibration":
        """Fit (mean, sd, slope, intercept) per label on dense or CSR ``scores`` and their 0/1 ``labels``."""
        samples = samples_of(scores, labels)
        m = samples.n_docs
        self.center_ = samples.sum(samples.score) / m
        sd = np.sqrt(np.maximum(samples.sum((samples.score - self.center_[samples.label]) ** 2) / m, 0.0))
        self.scale_ = np.where(sd > 0, sd, 1.0)
        z = (samples.score - self.center_[samples.label]) / self.scale_[samples.label]
        n_pos = samples.sum(samples.relevant)
        target = np.where(samples.relevant > 0, ((n_pos + 1.0) / (n_pos + 2.0))[samples.label],
                          (1.0 / (m - n_pos + 2.0))[samples.label])
        base = samples.sum(target) / m
        a, b = self._newton(samples, z, target, base)
        reversed_ = a < 0
        a[reversed_] = 0.0
        b[reversed_] = np.log(base[reversed_] / (1.0 - base[reversed_]))
        self.slope_, self.intercept_ = a, b
        self.n_reversed_ = int(np.count_nonzero(reversed_))
        return self

    def _newton(self, samples: Samples, z: np.ndarray, target: np.ndarray,
                base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Newton's method on (a, b) per label, halving the step of every label whose loss would grow
        (heavy-tailed scores make plain Newton oscillate)."""
        a = np.zeros(samples.n_labels)
        b = np.log(base / (1.0 - base))
        ridge = self.ridge * samples.n_docs
        loss = _platt_loss(samples, z, target, a, b, ridge)
        for self.n_iter_ in range(1, self.max_iter + 1):
            eta = _sigmoid(z * a[samples.label] + b[samples.label])
            w = eta * (1.0 - eta)
            residual = eta - target
            g_a = samples.sum(residual * z) + ridge * a
            g_b = samples.sum(residual)
            h_aa = samples.sum(w * z * z) + ridge
            h_ab = samples.sum(w * z)
            h_bb = samples.sum(w) + 1e-12
            det = h_aa * h_bb - h_ab * h_ab
            step_a = (h_bb * g_a - h_ab * g_b) / det
            step_b = (h_aa * g_b - h_ab * g_a) / det
            factor = np.ones_like(a)
            for _ in range(60):
                new_a, new_b = a - factor * step_a, b - factor * step_b
                new_loss = _platt_loss(samples, z, target, new_a, new_b, ridge)
                worse = new_loss > loss + 1e-12 * np.abs(loss)
                if not worse.any():
                    break
                factor[worse] *= 0.5
            accept = ~worse
            a[accept], b[accept], loss[accept] = new_a[accept], new_b[accept], new_loss[accept]
            if np.max(np.abs(factor * step_a) + np.abs(factor * step_b)) < 1e-9:
                break
        return a, b

    def transform(self, scores):
        """eta of dense scores (dense), or of the stored entries of CSR scores (CSR, same structure)."""
        if sp.issparse(scores):
            csr = sp.csr_matrix(scores, dtype=np.float64, copy=True)
            col = csr.indices
            csr.data = _sigmoid((csr.data - self.center_[col]) / self.scale_[col] * self.slope_[col]
                                + self.intercept_[col])
            return csr
        return _sigmoid((scores - self.center_) / self.scale_ * self.slope_ + self.intercept_)

    #: the fitted arrays that define the map (saved with a strategy's rule)
    STATE = ("center_", "scale_", "slope_", "intercept_")

    def state(self) -> dict[str, np.ndarray]:
        return {f"calibration_{name.rstrip('_')}": getattr(self, name) for name in self.STATE}

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> "PlattCalibration":
        calibration = cls()
        for name in cls.STATE:
            setattr(calibration, name, np.asarray(state[f"calibration_{name.rstrip('_')}"], dtype=np.float64))
        return calibration


def _platt_loss(samples: Samples, z: np.ndarray, target: np.ndarray, a: np.ndarray, b: np.ndarray,
                ridge: float) -> np.ndarray:
    """Per-label cross-entropy of sigmoid(a z + b) against the smoothed targets, plus ridge a^2 / 2."""
    u = z * a[samples.label] + b[samples.label]
    per_sample = target * np.logaddexp(0.0, -u) + (1.0 - target) * np.logaddexp(0.0, u)
    return samples.sum(per_sample) + 0.5 * ridge * a * a


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # overflow-free logistic
