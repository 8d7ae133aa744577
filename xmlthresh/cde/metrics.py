"""Quality measures of a conditional density estimate f^(z | x) on test pairs (x_i, z_i).

CDE loss. The integrated squared error  L = E_X int (f^(z|x) - f(z|x))^2 dz  expands into
E_X int f^2 - 2 E_X int f^ f + E_X int f^2(true). Two estimates are reported, both *shifted* by the last,
estimator-free constant  C = E_X int f(z|x)^2 dz  so that they estimate the same number:

* direct (synthetic data, true f known):  l_i = int f^(z|x_i)^2 dz - 2 int f^(z|x_i) f(z|x_i) dz;
* approximate (held-out samples only):     l_i = int f^(z|x_i)^2 dz - 2 f^(z_i|x_i),

since E[f^(Z|x) | x] = int f^ f dz when Z ~ f(. | x). Both are averages over test points, with standard
error std(l_i) / sqrt(m). ``loss = mean(l_i) = L - C``; the zero estimator scores 0 and a perfect one -C.

Relative loss: rel = loss / C, with C = mean_i int f(z|x_i)^2 dz over the same test points from the true
density (C is treated as a constant, so SE(rel) = SE(loss) / C). The zero estimator scores 0, the true
density -1; rel = L / C - 1 is the integrated squared error in units of the zero estimator's. On real
data C is unknown and only the absolute (shifted) approximate loss is reported.

The other measures: negative log-likelihood -log f^(z_i|x_i) (floored at the smallest positive float);
coverage of the 50% / 90% highest-density regions (z_i is inside HDR_a when the estimated mass denser
than f^(z_i|x_i) is at most a); PIT per coordinate (estimated marginal CDF at z_ik) and its
Kolmogorov–Smirnov distance from Uniform(0, 1), plus the KS distance of the HPD values themselves
(uniform for a calibrated estimate). All integrals against f^ go through the estimator's ``quadrature``
(Monte Carlo, so they cost the same in 1, 2 or 3 dimensions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from scipy.stats import kstest

from xmlthresh.cde.base import CDEstimator
from xmlthresh.cde.mixture import blocks
from xmlthresh.cde.quadrature import Quadrature
from xmlthresh.cde.validation import check_features, check_same_length, check_targets

_TINY = np.finfo(np.float64).tiny


def mean_se(values: np.ndarray) -> tuple[float, float]:
    """Mean and its standard error std / sqrt(n) (SE 0 for a single value)."""
    values = np.asarray(values, dtype=np.float64)
    se = float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else 0.0
    return float(values.mean()), se


def paired_difference(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean and SE of a_i - b_i (per-point losses of two estimators on the same test points)."""
    return mean_se(np.asarray(a) - np.asarray(b))


def true_cross_term(quadrature: Quadrature, X: np.ndarray, true_density: Callable) -> np.ndarray:
    """int f^(z|x_i) f(z|x_i) dz for each query -> (m,), through the estimator's quadrature."""
    m, n = quadrature.weights.shape
    out = np.empty(m)
    for sl in blocks(m, n * 8):
        pts = quadrature.points_of(sl)
        rows = pts.shape[0]
        dens = np.asarray(true_density(np.repeat(X[sl], n, axis=0), pts.reshape(rows * n, -1)), dtype=np.float64)
        if dens.shape != (rows * n,):
            raise ValueError(f"true_density must return one value per point (shape ({rows * n},)), got {dens.shape}")
        out[sl] = (quadrature.weights[sl] * dens.reshape(rows, n)).sum(axis=1)
    return out


def hpd_values(quadrature: Quadrature, density_at_z: np.ndarray) -> np.ndarray:
    """Estimated mass of {z : f^(z|x_i) > f^(z_i|x_i)} -> (m,) (uniform on (0, 1) when calibrated)."""
    return (quadrature.weights * (quadrature.density > density_at_z[:, None])).sum(axis=1)


def hdr_coverage(hpd: np.ndarray, level: float) -> float:
    """Fraction of test targets inside the estimated highest-density region of mass ``level``."""
    return float(np.mean(np.asarray(hpd) <= level))


def pit_values(quadrature: Quadrature, Z: np.ndarray) -> np.ndarray:
    """Estimated marginal CDF of each coordinate at the test target, P^(Z_k <= z_ik | x_i) -> (m, d)."""
    m, n = quadrature.weights.shape
    out = np.empty((m, Z.shape[1]))
    for sl in blocks(m, n * Z.shape[1]):
        below = quadrature.points_of(sl) <= Z[sl, None, :]
        out[sl] = (quadrature.weights[sl, :, None] * below).sum(axis=1)
    return out


def ks_uniform(values: np.ndarray) -> float:
    """Kolmogorov–Smirnov distance between the sample ``values`` and Uniform(0, 1)."""
    return float(kstest(np.asarray(values, dtype=np.float64), "uniform").statistic)


def negative_log_likelihood(density_at_z: np.ndarray) -> np.ndarray:
    """-log f^(z_i|x_i) per point, with the density floored at the smallest positive float."""
    return -np.log(np.maximum(density_at_z, _TINY))


@dataclass
class CDEEvaluation:
    """Scalar ``summary`` (JSON-friendly) and ``per_point`` arrays (for paired comparisons)."""

    summary: dict[str, Any]
    per_point: dict[str, np.ndarray] = field(default_factory=dict)


def evaluate_cde(
    estimator: CDEstimator,
    X_test,
    Z_test,
    *,
    true_density: Callable | None = None,
    true_squared_norm: Callable | None = None,
    n_samples: int = 256,
    random_state=0,
) -> CDEEvaluation:
    """All measures of a fitted estimator on test pairs; the direct loss needs ``true_density``."""
    X = check_features(X_test, name="X_test")
    Z = check_targets(Z_test, name="Z_test")
    check_same_length(X, Z, ("X_test", "Z_test"))
    quad = estimator.quadrature(X, n_samples=n_samples, random_state=random_state)
    sqnorm = estimator.squared_norm(X, quadrature=quad)
    dens = estimator.predict_density(X, Z)
    per_point: dict[str, np.ndarray] = {"squared_norm": sqnorm, "density": dens, "loss_approx": sqnorm - 2.0 * dens}
    summary: dict[str, Any] = {"n_test": int(X.shape[0]), "n_samples": int(n_samples)}
    summary["loss_approx"], summary["loss_approx_se"] = mean_se(per_point["loss_approx"])
    for key in ("loss_direct", "loss_direct_se", "direct_minus_approx", "direct_minus_approx_se", "zero_loss"):
        summary[key] = None
    for key in ("rel_loss_direct", "rel_loss_direct_se", "rel_loss_approx", "rel_loss_approx_se"):
        summary[key] = None
    if true_density is not None:
        per_point["loss_direct"] = sqnorm - 2.0 * true_cross_term(quad, X, true_density)
        summary["loss_direct"], summary["loss_direct_se"] = mean_se(per_point["loss_direct"])
        diff = paired_difference(per_point["loss_direct"], per_point["loss_approx"])
        summary["direct_minus_approx"], summary["direct_minus_approx_se"] = diff
    if true_squared_norm is not None:
        zero = float(np.mean(true_squared_norm(X)))
        summary["zero_loss"] = zero
        for kind in ("direct", "approx"):
            if summary[f"loss_{kind}"] is not None:
                summary[f"rel_loss_{kind}"] = summary[f"loss_{kind}"] / zero
                summary[f"rel_loss_{kind}_se"] = summary[f"loss_{kind}_se"] / zero
    per_point["nll"] = negative_log_likelihood(dens)
    summary["nll"], summary["nll_se"] = mean_se(per_point["nll"])
    hpd = hpd_values(quad, dens)
    per_point["hpd"] = hpd
    summary["coverage50"], summary["coverage90"] = hdr_coverage(hpd, 0.5), hdr_coverage(hpd, 0.9)
    summary["hpd_ks"] = ks_uniform(hpd)
    pit = pit_values(quad, Z)
    per_point["pit"] = pit
    summary["pit_ks_per_coordinate"] = [ks_uniform(pit[:, k]) for k in range(pit.shape[1])]
    summary["pit_ks"] = max(summary["pit_ks_per_coordinate"])
    return CDEEvaluation(summary, per_point)
