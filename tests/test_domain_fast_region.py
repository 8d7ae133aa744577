"""``domain_fast``'s region where F exceeds the lower bound (Table 6, Fig. 3.8b of the reference work): it
holds every achievable point at least as good as the lower bound (the optimum above all), and its reported
spreads are the extents of the set itself (checked against a dense raster of the outer polygon)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle import small_instances
from test_domain_fast import achievable_points
from xmlthresh.datasets.synthetic import generate_ranked_lists
from xmlthresh.metrics import f_beta
from xmlthresh.report.plots import fan_plot
from xmlthresh.strategies import STRATEGIES

TOL = 1e-9


def fit(lists, beta=1.0, n_angles=12):
    return STRATEGIES.get("domain_fast")(beta=beta, n_angles=n_angles).fit_lists(lists)


def inside(model, p, r, lower):
    """Raster test: (p, r) satisfies every supporting inequality w_j . x <= h_j and F >= lower."""
    w = np.column_stack([np.cos(model.directions_), np.sin(model.directions_)])
    h = np.sum(model.support_points_ * w, axis=1)
    ok = np.all(np.outer(p, w[:, 0]) + np.outer(r, w[:, 1]) <= h + 1e-12, axis=1)
    return ok & (f_beta(p, r, model.beta) >= lower)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(max_labels=4, max_docs=6), st.integers(3, 30))
def test_every_achievable_point_above_the_lower_bound_is_in_the_region(instance, n_angles):
    lists, beta = instance
    model = fit(lists, beta, n_angles)
    info = model.info_
    points = achievable_points(lists)
    good = points[f_beta(points[:, 0], points[:, 1], beta) >= model.lower_bound_ - 1e-12]
    assert len(good)  # the returned thresholds themselves
    for name, values in (("P", good[:, 0]), ("R", good[:, 1]), ("radius", np.hypot(*good.T)),
                         ("angle", np.arctan2(good[:, 1], good[:, 0]))):
        assert np.all(values >= info[f"region_{name}_min"] - TOL), name
        assert np.all(values <= info[f"region_{name}_max"] + TOL), name
    assert info["region_dF"] == pytest.approx(model.upper_bound_ - model.lower_bound_, abs=1e-15)


@pytest.mark.parametrize("n_angles", [7, 20, 100])
def test_spreads_are_the_extents_of_the_region(n_angles):
    lists = generate_ranked_lists(n_labels=20, num_docs=120, seed=4)
    model = fit(lists, 1.0, n_angles)
    info = model.info_
    # a raster of a box around the reported extents (1.5 times as large): nothing outside them is in the
    # region, and the region's points reach them (to 3 % of the extent: the region ends in thin tips)
    (p0, p1), (r0, r1) = (info["region_P_min"], info["region_P_max"]), (info["region_R_min"], info["region_R_max"])
    p, r = (a.ravel() for a in np.meshgrid(np.linspace(p0 - 0.25 * (p1 - p0), p1 + 0.25 * (p1 - p0), 1001),
                                           np.linspace(r0 - 0.25 * (r1 - r0), r1 + 0.25 * (r1 - r0), 1001)))
    hit = inside(model, p, r, model.lower_bound_)
    assert hit.any()
    for name, values in (("P", p[hit]), ("R", r[hit]), ("radius", np.hypot(p[hit], r[hit]))):
        low, high = info[f"region_{name}_min"], info[f"region_{name}_max"]
        slack = 0.03 * (high - low)
        assert low - TOL <= values.min() <= low + slack, name
        assert high - slack <= values.max() <= high + TOL, name
    assert info["region_dP"] == pytest.approx(info["region_P_max"] - info["region_P_min"])
    # the boundary drawn in the picture encloses the raster's points (on the region's extents)
    boundary = model.region_boundary_
    assert np.all(np.isfinite(boundary))
    assert boundary[:, 0].min() == pytest.approx(info["region_P_min"], abs=1e-6)


def test_the_exact_optimum_is_in_the_region_and_the_picture_is_drawn(tmp_path):
    lists = generate_ranked_lists(n_labels=40, num_docs=150, seed=2)
    model = fit(lists, 1.0, 40)
    exact = STRATEGIES.get("domain")().fit_lists(lists)
    p, r = exact.metrics_["precision"], exact.metrics_["recall"]
    info = model.info_
    assert info["region_P_min"] - TOL <= p <= info["region_P_max"] + TOL
    assert info["region_R_min"] - TOL <= r <= info["region_R_max"] + TOL
    assert info["region_angle_min"] - TOL <= np.arctan2(r, p) <= info["region_angle_max"] + TOL
    fitted = model.fitted()
    assert fitted.fan is not None and len(fitted.fan["support_points"]) == len(model.directions_)
    figure = fan_plot(fitted)
    figure.savefig(tmp_path / "domain_fast.png", dpi=40)
    assert (tmp_path / "domain_fast.png").read_bytes().startswith(b"\x89PNG")
    zoom = figure.axes[1]  # the zoom panel shows the whole region
    assert zoom.get_xlim()[0] <= info["region_P_min"] and zoom.get_xlim()[1] >= info["region_P_max"]
