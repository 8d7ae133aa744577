"""FlexCode's post-processing (issue 16): no test target gets density 0, the tuned values are logged, and
the grid operations (bump removal, cell lookup, the floor) do what ``series_post`` says."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.cde import ESTIMATORS, run_benchmark
from xmlthresh.cde.series_post import Floor, bump_regions, kept_cells, point_cells
from xmlthresh._util.registry import ConfigError

from .conftest import fast_params

#: a small Fork instance on which the clipped series is 0 at some test targets (16 of 400 with seed 0)
SMALL_FORK = {"n_train": 600, "n_test": 400}
FAST_POST = {**fast_params("flexcode"), "bump_threshold_grid": (0.0, 0.05), "sharpen_grid": (1.0, 1.5)}


@pytest.fixture(scope="module")
def fork_record():
    return run_benchmark("flexcode", "fork", seed=0, estimator_params=FAST_POST, dataset_params=SMALL_FORK,
                         n_samples=64, return_fitted=True)


def test_every_fork_test_target_gets_a_positive_density(fork_record):
    record, est, data = fork_record
    raw = est.predict_raw_density(data.X_test, data.Z_test)
    assert np.sum(raw <= 0) > 0, "the instance must show the defect the post-processing removes"
    assert record["n_zero_density_raw"] == int(np.sum(raw <= 0))
    assert record["n_zero_density"] == 0
    assert np.all(est.predict_density(data.X_test, data.Z_test) > 0)
    assert record["nll"] < 6.0  # a floored NLL (-log of the smallest float: 708 per zero) would be far above


def test_the_post_processing_parameters_are_tuned_and_logged(fork_record):
    record, est, _ = fork_record
    tuned = record["tuned"]
    assert tuned["bump_threshold_"] in (0.0, 0.05) and tuned["sharpen_"] in (1.0, 1.5)
    assert tuned["floor_"] in FAST_POST.get("floor_grid", ESTIMATORS.get("flexcode")().floor_grid)
    assert est.bump_losses_.shape == (2, 4) and est.sharpen_losses_.shape == (2, 4)
    i_a, i_e = np.unravel_index(np.argmin(est.sharpen_losses_), est.sharpen_losses_.shape)
    assert est.sharpen_ == (1.0, 1.5)[i_a]


def test_other_estimators_report_no_raw_count():
    record = run_benchmark("marginal", "fork", seed=0, estimator_params=fast_params("marginal"),
                           dataset_params={"n_train": 200, "n_test": 50}, n_samples=16)
    assert record["n_zero_density_raw"] is None and record["n_zero_density"] == 0


def test_a_zero_floor_is_refused_before_fitting():
    with pytest.raises(ValueError, match="floor_grid must be in \\(0, 1\\)"):
        ESTIMATORS.build("flexcode", {"floor_grid": [0.0, 0.01]})
    with pytest.raises(ValueError, match="sharpen_grid must be positive"):
        ESTIMATORS.build("flexcode", {"sharpen_grid": [-1.0]})
    with pytest.raises(ConfigError, match="no parameter"):
        ESTIMATORS.build("flexcode", {"alpha": 1.0})


def test_bump_removal_keeps_the_heaviest_region_and_drops_light_ones():
    # one row on a 1-D grid of 10 cells: regions {0, 1} (mass 0.8), {4} (0.15), {8} (0.05); volume 1
    p = np.array([[0.5, 0.3, 0, 0, 0.15, 0, 0, 0, 0.05, 0]])
    ids, masses = bump_regions(p, (10,), 1.0)
    assert len(set(ids[0][p[0] > 0])) == 3 and np.all(ids[0][p[0] == 0] == 0)
    np.testing.assert_array_equal(kept_cells(ids, masses, 0.1)[0], p[0] != 0.05)
    np.testing.assert_array_equal(kept_cells(ids, masses, 0.0)[0], np.ones(10, bool))
    assert kept_cells(ids, masses, 0.99)[0][:2].all()  # the heaviest region survives any threshold
    # diagonal neighbours are one region in 2-D
    ids2, _ = bump_regions(np.eye(3).reshape(1, 9), (3, 3), 1.0)
    assert len(set(ids2[0][ids2[0] > 0])) == 1


def test_point_cells_and_the_floor():
    box = np.array([[0.0, 1.0], [0.0, 2.0]])
    flat, inside = point_cells(np.array([[0.05, 0.05], [0.95, 1.95], [1.5, 1.0]]), box, 10)
    np.testing.assert_array_equal(flat, [0, 99, 9 * 10 + 5])
    np.testing.assert_array_equal(inside, [True, True, False])
    uniform = Floor(box)
    assert uniform.pdf(np.array([[0.5, 1.0], [2.0, 1.0]])).tolist() == [0.5, 0.0]
    assert uniform.squared_norm() == pytest.approx(0.5)
    rng = np.random.default_rng(0)
    gauss = Floor(box, rng.standard_normal((5000, 2)) * [1.0, 2.0])
    draws = gauss.sample((20000,), rng)
    assert draws.std(axis=0) == pytest.approx([1.0, 2.0], rel=0.05)
    assert gauss.squared_norm() == pytest.approx(1.0 / (4 * np.pi * 2.0), rel=0.05)
    assert gauss.pdf(np.array([[6.0, 0.0]]))[0] > 0  # positive far outside any box
