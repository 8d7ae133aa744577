"""The population (PU) F-macro of score thresholds when the generative model is known in closed form.

For ``synthetic_xmc`` with dense scores (``top_k = None``) every (document, label) pair scores
``signal * y + N(0, 1)`` independently, and label k is relevant to a document with probability

    pi_k = 1 - (1 - q_k) exp(-(L - 1) q_k),

where q_k = r_k^-a / sum_j r_j^-a is its draw probability (popularity rank r_k, ``zipf_exponent`` a) and a
document makes 1 + Poisson(L - 1) draws (L = ``labels_per_doc``): P(k never drawn) = E[(1 - q_k)^D] =
(1 - q_k) E[(1 - q_k)^Poisson(L-1)]. Hence, with mu = ``signal`` and Phi the normal CDF:

* the posterior eta_k(s) = P(y_k = 1 | s) = sigmoid(mu s - mu^2 / 2 + logit pi_k);
* the rule "predict score >= t" has recall r_k(t) = 1 - Phi(t - mu) and precision
  p_k(t) = pi_k (1 - Phi(t - mu)) / (pi_k (1 - Phi(t - mu)) + (1 - pi_k) (1 - Phi(t)));
  t = +inf predicts nothing (p = r = 0 by convention), t = -inf everything (p = pi_k, r = 1).

F-macro_PU(t) = F_beta(mean_k p_k(t_k), mean_k r_k(t_k)) over every label (all have pi_k > 0). Its optimum
(:func:`xmlthresh.run.population_metrics.population_optimum`) is the exact domain sweep over the candidates of
:meth:`XmcPopulation.grid_candidates`, a fine grid of thresholds per label.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xmlthresh.data.candidates import Candidates
from xmlthresh.metrics import f_beta_raw
from xmlthresh._util import detmath
from xmlthresh._util.lazy_imports import lazy_module

special = lazy_module("scipy.special")  # imported when the posterior is first evaluated

#: thresholds per label in the grid of ``grid_candidates`` (spaced uniformly in [-6, signal + 6])
GRID_POINTS = 4001


def popularity_weights(popularity_rank: np.ndarray, zipf_exponent: float) -> np.ndarray:
    """r ** -zipf_exponent, through :mod:`xmlthresh._util.detmath`: the same bits on every CPU (numpy's own power
    differs between AVX512 and AVX2 loops, and the alias table compares uniforms against these weights)."""
    return detmath.power(popularity_rank.astype(np.float64), -zipf_exponent)



def xmc_label_prior(n_labels: int, labels_per_doc: float, zipf_exponent: float, seed: int) -> np.ndarray:
    """pi_k of ``synthetic_xmc`` (same popularity permutation as the generator, stream ``[seed, 0]``)."""
    popularity_rank = np.random.default_rng([seed, 0]).permutation(n_labels) + 1
    weight = popularity_weights(popularity_rank, zipf_exponent)  # the generator's own weights
    q = weight / weight.sum()
    return 1.0 - (1.0 - q) * np.exp(-(labels_per_doc - 1.0) * q)


@dataclass(frozen=True)
class XmcPopulation:
    """Closed-form population of the dense ``synthetic_xmc`` model (see the module docstring)."""

    prior: np.ndarray  # pi_k per label
    signal: float

    @property
    def n_labels(self) -> int:
        return len(self.prior)

    def eta(self, scores: np.ndarray) -> np.ndarray:
        """The true posterior P(y_k = 1 | score) of a dense (documents x labels) score matrix."""
        mu = self.signal
        return special.expit(mu * np.asarray(scores, dtype=np.float64) - 0.5 * mu * mu + special.logit(self.prior)[None, :])

    def precision_recall(self, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Population p_k(t_k), r_k(t_k) of per-label score thresholds (predict score >= t)."""
        t = np.asarray(thresholds, dtype=np.float64)
        if t.shape != self.prior.shape:
            raise ValueError(f"need one threshold per label ({self.n_labels}), got shape {t.shape}")
        hit_pos = special.ndtr(self.signal - t)  # P(s >= t | y = 1)
        hit_neg = special.ndtr(-t)  # P(s >= t | y = 0)
        predicted = self.prior * hit_pos + (1.0 - self.prior) * hit_neg
        precision = np.divide(self.prior * hit_pos, predicted, out=np.zeros_like(t), where=predicted > 0)
        return precision, hit_pos

    def f_macro(self, thresholds: np.ndarray, beta: float = 1.0) -> float:
        precision, recall = self.precision_recall(thresholds)
        return float(f_beta_raw(precision.mean(), recall.mean(), beta))

    def grid_candidates(self, grid_points: int = GRID_POINTS) -> tuple[np.ndarray, Candidates]:
        """The thresholds of a grid per label (``grid_points`` from signal + 6 down to -6, then -inf = predict
        all; flat, label after label; of thresholds whose recall rounds to the same value only the highest)
        and their population precision and recall as candidates."""
        grid = np.linspace(self.signal + 6.0, -6.0, grid_points)  # decreasing threshold = increasing recall
        n = self.n_labels
        t = np.tile(np.r_[grid, -np.inf], n)
        label = np.repeat(np.arange(n), grid_points + 1)
        hit_pos = special.ndtr(self.signal - t)
        # recall rounds to exactly 1 below t = signal - 8.3 (signal >= 2.3): of equal recalls keep the highest
        # threshold (the highest precision), since candidates need a strictly increasing recall per label
        kept = np.r_[True, (np.diff(hit_pos) > 0) | (np.diff(label) != 0)]
        t, label, hit_pos = t[kept], label[kept], hit_pos[kept]
        hit_neg = special.ndtr(-t)
        prior = self.prior[label]
        predicted = prior * hit_pos + (1 - prior) * hit_neg
        precision = np.divide(prior * hit_pos, predicted, out=np.zeros_like(t), where=predicted > 0)
        ptr = np.r_[0, np.cumsum(np.bincount(label, minlength=n))].astype(np.int64)
        candidates = Candidates(ptr, hit_pos, np.ones(len(t), dtype=np.int64), np.ones(n), grid_points,
                                objective_precision=precision, objective_recall=hit_pos)
        return t, candidates
