"""Acceptance: on SURD(nx=10, ny=1, nz=2, d=[0.1, 1], a=0.01, alpha=[0.3, 0.3], phi=pi) and on
Fork(nx=10, ny=1, m=2, a=1), each with 2000 training and 1000 test points and default estimator settings,

* the direct and the approximate CDE loss of every estimator agree within 2 standard errors (SE of the
  paired per-point difference, whose expectation is exactly 0);
* every estimator beats ``marginal`` by more than 2 standard errors (SE of the paired per-point loss
  difference), for the direct and for the approximate loss.

These are statistical statements: each check fails with probability ~5% on an unlucky draw even when
everything is right, so the test pins the data seed (0, the first one tried). Over seeds 0-9 the
direct/approximate gaps of the marginal KDE, in SE units, look like N(0, 1) draws (one of 20 beyond 2).
"""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.cde import CDE_DATASETS, ESTIMATORS
from xmlthresh.cde.metrics import evaluate_cde, paired_difference

SEED = 0
N_SAMPLES = 256
ESTIMATORS_UNDER_TEST = ["nnkcde", "ckde", "gmm", "rfcde", "flexcode"]
DATASETS = {
    "surd": dict(nx=10, ny=1, nz=2, d=[0.1, 1.0], a=0.01, alpha=[0.3, 0.3], phi=np.pi, n_train=2000, n_test=1000),
    "fork": dict(nx=10, ny=1, m=2, a=1.0, n_train=2000, n_test=1000),
}


@pytest.fixture(scope="module")
def evaluations():
    """{dataset: {estimator: CDEEvaluation}} with default estimator settings, computed once."""
    out = {}
    for ds, params in DATASETS.items():
        data = CDE_DATASETS.get(ds)(**params).load(seed=SEED)
        out[ds] = {}
        for name in ["marginal"] + ESTIMATORS_UNDER_TEST:
            est = ESTIMATORS.get(name)(random_state=SEED).fit(data.X_train, data.Z_train)
            out[ds][name] = evaluate_cde(
                est,
                data.X_test,
                data.Z_test,
                true_density=data.true_density,
                true_squared_norm=data.true_squared_norm,
                n_samples=N_SAMPLES,
                random_state=SEED,
            )
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", ["marginal"] + ESTIMATORS_UNDER_TEST)
@pytest.mark.parametrize("ds", sorted(DATASETS))
def test_direct_and_approximate_losses_agree(ds, name, evaluations):
    s = evaluations[ds][name].summary
    assert abs(s["direct_minus_approx"]) <= 2 * s["direct_minus_approx_se"], s
    assert -1.0 < s["rel_loss_direct"] < 0.0  # better than the zero estimator, worse than the truth


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["loss_direct", "loss_approx"])
@pytest.mark.parametrize("name", ESTIMATORS_UNDER_TEST)
@pytest.mark.parametrize("ds", sorted(DATASETS))
def test_every_estimator_beats_the_marginal(ds, name, kind, evaluations):
    gain, se = paired_difference(evaluations[ds][name].per_point[kind], evaluations[ds]["marginal"].per_point[kind])
    assert gain < -2 * se, (gain, se)
