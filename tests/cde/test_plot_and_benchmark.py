"""run_benchmark's record and the density plot."""

from __future__ import annotations

import json

import numpy as np
import pytest

from xmlthresh.cde import CDE_DATASETS, ESTIMATORS, run_benchmark
from xmlthresh.cde.plot import plot_densities

from .conftest import fast_params

SMALL_SURD = {"n_train": 400, "n_test": 200}


def _small_run() -> dict:
    return run_benchmark(
        "nnkcde", "surd", seed=3, estimator_params=fast_params("nnkcde"), dataset_params=SMALL_SURD, n_samples=64
    )


def test_run_benchmark_record():
    result = _small_run()
    for key in (
        "loss_direct", "loss_direct_se", "loss_approx", "loss_approx_se", "rel_loss_direct", "rel_loss_direct_se",
        "rel_loss_approx", "rel_loss_approx_se", "nll", "nll_se", "coverage50", "coverage90", "pit_ks", "hpd_ks",
        "fit_seconds",
    ):
        assert isinstance(result[key], float), key
    assert result["estimator"] == "nnkcde" and result["dataset"] == "surd" and result["n_test"] == 200
    assert result["tuned"]["k_"] in (10, 40)
    assert result["rel_loss_direct"] == pytest.approx(result["loss_direct"] / result["zero_loss"])
    json.dumps(result)  # the CLI stores it as JSON
    again = _small_run()
    assert again["loss_direct"] == result["loss_direct"]


def test_run_benchmark_can_return_the_fitted_estimator():
    record, est, data = run_benchmark(
        "marginal", "fork", seed=1, estimator_params=fast_params("marginal"),
        dataset_params={"n_train": 200, "n_test": 50}, n_samples=32, return_fitted=True,
    )
    assert record["n_test"] == 50 and est.n_targets_ == 2 and data.X_test.shape == (50, 11)
    assert record["tuned"]["bandwidth_"] == est.bandwidth_.tolist()


def test_run_benchmark_unknown_names():
    with pytest.raises(KeyError, match="unknown estimator 'nope'"):
        run_benchmark("nope", "surd")


def test_plot_densities(tmp_path):
    data = CDE_DATASETS.get("fork")(n_train=300, n_test=10).load(seed=0)
    est = ESTIMATORS.get("ckde")(**fast_params("ckde")).fit(data.X_train, data.Z_train)
    path = plot_densities(est, data, data.X_test[:3], tmp_path / "plots" / "fork.png", grid_size=40)
    assert path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="xs has 3 features"):
        plot_densities(est, data, np.zeros((2, 3)), tmp_path / "bad.png")
    one_d = CDE_DATASETS.get("surd")(nz=1, d=[0.2], alpha=[0.1], n_train=50, n_test=5).load(seed=0)
    with pytest.raises(ValueError, match="2-D targets only"):
        plot_densities(est, one_d, one_d.X_test[:1], tmp_path / "bad.png")
