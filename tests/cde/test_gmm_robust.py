"""gmm on a target box: a query far from the training rows must not get a spike of density at the box's edge.

The conditional mean of a joint Gaussian mixture is linear in x, so it extrapolates; through the logit map
of a box a component centred far outside the targets lands at the edge, where the Jacobian turns it into a
huge, narrow density (on XANES sample5 one test point once had a CDE loss of 5e8). ``clip_means`` keeps the
means in the training targets' range and ``reg_covar_grid`` starts at 1e-2, which bounds the conditional
variances from below.
"""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.cde.registry import ESTIMATORS

FAST = {"n_components_grid": (1, 2), "n_pca_grid": (2,)}


def _linear_box_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(400, 2))
    Z = np.clip(0.2 + 0.6 * X[:, :1] + 0.05 * rng.standard_normal((400, 1)), 0.01, 0.99)
    return X, Z


@pytest.mark.parametrize("clip", [True, False])
def test_far_query_gets_no_spike_at_the_box_edge(clip):
    X, Z = _linear_box_data()
    est = ESTIMATORS.build("gmm", {**FAST, "reg_covar_grid": [1e-3], "clip_means": clip, "bounds": [[0.0, 1.0]]})
    est.fit(X, Z)
    far = np.array([[40.0, 0.5]])  # 40 training ranges beyond the data: the linear mean leaves the box
    near = X[:50]
    peak_far = est.squared_norm(far, random_state=0)[0]
    peak_near = np.median(est.squared_norm(near, random_state=0))
    mix = est._mixture(far)
    centre = est.transform_.inverse(mix.means[0])
    if clip:
        assert np.all((centre >= Z.min() - 1e-9) & (centre <= Z.max() + 1e-9)), centre
        assert peak_far < 3 * peak_near, (peak_far, peak_near)
    else:  # the unclipped conditioning shows the defect the default avoids
        assert peak_far > 100 * peak_near, (peak_far, peak_near)


def test_the_default_regularisation_bounds_the_conditional_spread():
    X, Z = _linear_box_data(1)
    est = ESTIMATORS.build("gmm", {**FAST, "bounds": [[0.0, 1.0]]}).fit(X, Z)
    assert est.reg_covar_ in (1e-2, 1e-1)
    mix = est._mixture(X[:20])
    sd_u = np.sqrt(np.diagonal(mix.covariances, axis1=-2, axis2=-1)) / est.u_scale_
    assert np.all(sd_u >= np.sqrt(est.reg_covar_) - 1e-12)


def test_clip_means_must_be_a_boolean():
    for bad in ("maybe", 3):
        with pytest.raises(ValueError, match="gmm: clip_means must be true or false, got") as err:
            ESTIMATORS.build("gmm", {"clip_means": bad})
        assert "\n" not in str(err.value)
