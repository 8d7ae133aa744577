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

import os
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from multiprocessing import get_context

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


#: (dataset, estimator) pairs, the costliest first (fit + evaluation: 5-9 s each, 0.3-4 s for the others), so
#: that two workers finish at about the same time
PAIRS = [(ds, name) for name in ["flexcode", "rfcde", "nnkcde", "marginal", "ckde", "gmm"] for ds in sorted(DATASETS)]


@lru_cache(maxsize=None)
def _data(ds: str):
    return CDE_DATASETS.get(ds)(**DATASETS[ds]).load(seed=SEED)


def evaluate(pair: tuple[str, str]):
    """Fit one estimator (default settings) on one data set and evaluate it: a CDEEvaluation."""
    ds, name = pair
    data = _data(ds)
    est = ESTIMATORS.get(name)(random_state=SEED).fit(data.X_train, data.Z_train)
    return evaluate_cde(
        est,
        data.X_test,
        data.Z_test,
        true_density=data.true_density,
        true_squared_norm=data.true_squared_norm,
        n_samples=N_SAMPLES,
        random_state=SEED,
    )


@pytest.fixture(scope="module")
def evaluations():
    """{dataset: {estimator: CDEEvaluation}} with default estimator settings, computed once.

    The 12 independent fits (about 45 s of CPU in all) run in two worker processes when two cores are
    there: the same seeded computations (bit-identical results), 36.9 -> 26.1 s wall on an idle 2-core
    machine (the in-process loop used the second core only in BLAS calls). Each worker limits BLAS /
    OpenMP to one thread, so two workers do not oversubscribe a 2-core machine."""
    workers = min(2, len(os.sched_getaffinity(0)))
    if workers < 2:
        results = map(evaluate, PAIRS)
    else:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=_one_thread)
        with pool:
            results = list(pool.map(evaluate, PAIRS))
    out = {ds: {} for ds in DATASETS}
    for (ds, name), evaluation in zip(PAIRS, results):
        out[ds][name] = evaluation
    return out


def _one_thread() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)


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
