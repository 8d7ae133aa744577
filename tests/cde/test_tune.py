"""``tune=false``: the hyper-parameters are fixed at the one value of each grid, no validation split is
made, and a grid with several values is a one-line error naming it (issue 16)."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.cde import ESTIMATORS
from xmlthresh.cde.base import target_scale
from xmlthresh._util.registry import ConfigError

from .conftest import ESTIMATOR_NAMES, fast_params

#: one value per grid, and what the fitted estimator must then hold
FIXED = {
    "marginal": ({"bandwidth_grid": [0.2]}, {}),
    "nnkcde": ({"k_grid": [25], "bandwidth_grid": [0.2]}, {"k_": 25}),
    "ckde": ({"x_bandwidth_grid": [0.45], "bandwidth_grid": [0.2]}, {}),
    "gmm": ({"n_components_grid": [3], "n_pca_grid": [2], "reg_covar_grid": [0.01]},
            {"n_components_": 3, "n_pca_": 2, "reg_covar_": 0.01}),
    "rfcde": ({"bandwidth_grid": [0.2]}, {}),
    "flexcode": ({"n_basis_grid": [8], "k_grid": [30], "bump_threshold_grid": [0.01], "sharpen_grid": [1.5],
                  "floor_grid": [0.01]}, {"n_basis_": 8, "k_": 30, "bump_threshold_": 0.01, "sharpen_": 1.5,
                                          "floor_": 0.01}),
}


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_tune_false_fits_with_the_given_values_and_no_validation_split(name, small_data):
    data = small_data[2]
    grids, expected = FIXED[name]
    params = {**fast_params(name), **grids, "tune": False}
    est = ESTIMATORS.build(name, params).fit(data.X_train, data.Z_train)
    for key, value in expected.items():
        assert getattr(est, key) == value, key
    assert not hasattr(est, "tuning_losses_")  # nothing was tuned
    if hasattr(est, "bandwidth_"):
        scale = target_scale(est.transform_.forward(data.Z_train))
        assert est.bandwidth_ == pytest.approx(0.2 * scale)
    density = est.predict_density(data.X_test, data.Z_test)
    assert np.all(np.isfinite(density)) and np.all(density > 0)
    tuned = ESTIMATORS.build(name, fast_params(name)).fit(data.X_train, data.Z_train)
    assert hasattr(tuned, "tuning_losses_")


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_tune_false_with_a_grid_of_several_values_is_a_clear_error(name):
    with pytest.raises(ValueError, match=f"{name}: tune=false fixes the hyper-parameters.*grid needs exactly one"):
        ESTIMATORS.build(name, {"tune": False})


def test_tune_must_be_a_boolean():
    """("no" is false, as for every switch of the typed schema; a word that means neither is refused.)"""
    with pytest.raises((ValueError, ConfigError), match="tune must be true or false"):
        ESTIMATORS.build("marginal", {"tune": "maybe"})
    assert ESTIMATORS.build("marginal", {"tune": "no", "bandwidth_grid": [0.1]}).tune is False
