"""The metrics on estimators whose answers are known: the truth itself (loss -1 relative, calibrated),
the zero density (loss 0) and hand-made quadratures."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.cde import CDE_DATASETS
from xmlthresh.cde.metrics import (
    evaluate_cde,
    hdr_coverage,
    hpd_values,
    ks_uniform,
    mean_se,
    negative_log_likelihood,
    paired_difference,
    pit_values,
)
from xmlthresh.cde.quadrature import Quadrature


class Oracle:
    """``scale`` times the true conditional density of a synthetic generator, dressed as an estimator."""

    def __init__(self, gen, scale: float = 1.0):
        self.gen, self.scale = gen, scale

    def predict_density(self, X, Z):
        return self.scale * self.gen.true_density(X, Z)

    def quadrature(self, X, n_samples=256, random_state=None):
        rng = np.random.default_rng(random_state)
        Xr = np.repeat(X, n_samples, axis=0)
        Z = self.gen.sample_z(Xr, rng)
        dens = self.predict_density(Xr, Z).reshape(len(X), n_samples)
        weights = np.full((len(X), n_samples), self.scale / n_samples)  # mass of scale * f
        return Quadrature(Z.reshape(len(X), n_samples, -1), weights, dens)

    def squared_norm(self, X, quadrature=None, **_):
        return self.scale**2 * self.gen.true_squared_norm(X)


@pytest.fixture(scope="module")
def fork():
    gen = CDE_DATASETS.get("fork")(n_train=10, n_test=2000)
    return gen, gen.load(seed=11)


def _evaluate(est, data, **kw):
    return evaluate_cde(
        est, data.X_test, data.Z_test, true_density=data.true_density, true_squared_norm=data.true_squared_norm, **kw
    )


def test_truth_scores_minus_one_and_is_calibrated(fork):
    gen, data = fork
    s = _evaluate(Oracle(gen), data, n_samples=400).summary
    assert s["rel_loss_direct"] == pytest.approx(-1.0, abs=0.01)
    assert abs(s["rel_loss_approx"] + 1.0) < 3 * s["rel_loss_approx_se"]
    assert abs(s["direct_minus_approx"]) < 3 * s["direct_minus_approx_se"]
    assert s["zero_loss"] == pytest.approx(np.mean(gen.true_squared_norm(data.X_test)))
    assert abs(s["coverage50"] - 0.5) < 3 * np.sqrt(0.25 / 2000)
    assert abs(s["coverage90"] - 0.9) < 3 * np.sqrt(0.09 / 2000)
    assert s["pit_ks"] < 0.04 and s["hpd_ks"] < 0.04
    assert len(s["pit_ks_per_coordinate"]) == 2


def test_scaled_truth_has_the_textbook_loss(fork):
    """f^ = c f has L = (c - 1)^2 int f^2, so the relative (shifted) loss is (c - 1)^2 - 1."""
    gen, data = fork
    for c in (0.0, 0.5, 2.0):
        s = _evaluate(Oracle(gen, scale=c), data, n_samples=200).summary
        assert s["rel_loss_direct"] == pytest.approx((c - 1.0) ** 2 - 1.0, abs=0.02)
    zero = _evaluate(Oracle(gen, scale=0.0), data, n_samples=16).summary
    assert zero["loss_direct"] == 0.0 and zero["loss_approx"] == 0.0
    assert zero["nll"] == pytest.approx(-np.log(np.finfo(float).tiny))


def test_real_data_reports_only_what_it_can(fork):
    gen, data = fork
    s = evaluate_cde(Oracle(gen), data.X_test[:100], data.Z_test[:100], n_samples=32).summary
    assert s["loss_direct"] is None and s["rel_loss_approx"] is None and s["zero_loss"] is None
    assert s["loss_approx"] < 0 and s["nll"] > 0


def test_hand_made_quadrature():
    # one query, nodes 0..3 in 1-D with masses 0.1, 0.2, 0.3, 0.4 and densities 1, 2, 3, 4
    quad = Quadrature(np.arange(4.0)[None, :, None], np.array([[0.1, 0.2, 0.3, 0.4]]), np.array([[1.0, 2.0, 3.0, 4.0]]))
    assert quad.squared_norm()[0] == pytest.approx(3.0)
    hpd = hpd_values(quad, np.array([2.5]))  # mass denser than 2.5: 0.3 + 0.4
    assert hpd[0] == pytest.approx(0.7)
    assert hdr_coverage(hpd, 0.5) == 0.0 and hdr_coverage(hpd, 0.9) == 1.0
    assert pit_values(quad, np.array([[1.0]]))[0, 0] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="inconsistent quadrature shapes"):
        Quadrature(np.zeros((2, 3, 1)), np.zeros((1, 3)), np.zeros((1, 3)))


def test_small_helpers():
    m, se = mean_se(np.array([1.0, 2.0, 3.0, 4.0]))
    assert m == 2.5 and se == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    assert paired_difference(np.array([3.0, 5.0]), np.array([1.0, 2.0]))[0] == 2.5
    assert ks_uniform(np.linspace(0.0005, 0.9995, 1000)) < 0.002
    assert negative_log_likelihood(np.array([1.0, np.e]))[1] == pytest.approx(-1.0)
