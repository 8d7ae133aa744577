"""The optional ``flow`` estimator (plugin plugins/xmlthresh-flow, PyTorch + zuko): skipped, with the reason,
when the plugin, torch or zuko is not installed here."""

from __future__ import annotations

import numpy as np
import pytest

flow = pytest.importorskip(
    "xmlthresh_flow", reason="plugin xmlthresh-flow not installed (pip install -e plugins/xmlthresh-flow --no-deps)"
)

from xmlthresh._util.registry import ConfigError, UnavailableError  # noqa: E402
from xmlthresh.cde.benchmark import make_estimator, run_benchmark  # noqa: E402

#: one small transform and few epochs: every fit below takes about a second
FAST = {"transforms_grid": (1,), "hidden_grid": (8, 16), "max_epochs": 40, "patience": 6, "n_mc": 16}
SMALL_SURD = {"n_train": 1000, "n_test": 200}  # at 300 points the flow overfits and loses to the marginal KDE


def _torch():
    pytest.importorskip("zuko", reason="zuko not installed (pip install zuko==1.6.0)")
    return pytest.importorskip("torch", reason="torch not installed (pip install torch==2.13.0, the CPU wheel)")


@pytest.mark.parametrize("d", [1, 2, 3])
def test_fit_predict_shapes_and_positive_densities(small_data, d):
    _torch()
    data = small_data[d]
    est = make_estimator("flow", data, 0, **FAST).fit(data.X_train, data.Z_train)
    m = data.X_test.shape[0]
    dens = est.predict_density(data.X_test, data.Z_test)
    assert dens.shape == (m,) and np.all(np.isfinite(dens)) and np.all(dens > 0)
    assert est.density_on_grid(data.X_test[:4], data.Z_train[:7]).shape == (4, 7)
    quad = est.quadrature(data.X_test[:5], n_samples=32, random_state=1)
    assert quad.points.shape == (5, 32, d) and quad.density.shape == (5, 32)
    draws = est.sample(data.X_test[:3], n_samples=11, random_state=2)
    assert draws.shape == (3, 11, d)
    if data.bounds is not None:  # the logit transform keeps every draw inside the box
        assert np.all((draws > data.bounds[:, 0]) & (draws < data.bounds[:, 1]))
    assert est.tuning_losses_.shape == (1, 2, 1, 1) and est.hidden_ in FAST["hidden_grid"]


@pytest.mark.parametrize("boxed", [False, True])
def test_density_integrates_to_one_on_a_grid_and_agrees_with_points(small_data, boxed):
    _torch()
    data = small_data[1]  # 1-D SURD; boxed: through the logit transform of a box around the targets
    lo, hi = data.Z_train.min() - 0.5, data.Z_train.max() + 0.5
    params = {**FAST, "bounds": [[lo, hi]]} if boxed else FAST
    est = make_estimator("flow", data, 0, **params).fit(data.X_train, data.Z_train)
    if not boxed:
        lo, hi = lo - 3, hi + 3
    h = (hi - lo) / 20000
    grid = (lo + h * (np.arange(20000) + 0.5))[:, None]
    on_grid = est.density_on_grid(data.X_test[:5], grid)
    np.testing.assert_allclose(on_grid.sum(1) * h, 1.0, atol=5e-3)
    at = est.predict_density(data.X_test[:5], np.repeat(grid[[7777]], 5, axis=0))
    np.testing.assert_allclose(at, on_grid[:, 7777], rtol=1e-10)


def test_quadrature_density_is_the_density_at_its_nodes(small_data):
    _torch()
    data = small_data[2]
    est = make_estimator("flow", data, 0, **FAST).fit(data.X_train, data.Z_train)
    quad = est.quadrature(data.X_test[:3], n_samples=8, random_state=0)
    again = np.stack([est.predict_density(np.repeat(data.X_test[[i]], 8, axis=0), quad.points[i]) for i in range(3)])
    np.testing.assert_allclose(quad.density, again, rtol=1e-8)


def test_same_seed_same_densities_and_the_global_torch_rng_is_untouched(small_data):
    torch = _torch()
    data = small_data[2]
    before = torch.random.get_rng_state()
    fits = [make_estimator("flow", data, seed, **FAST).fit(data.X_train, data.Z_train) for seed in (5, 5, 6)]
    dens = [est.predict_density(data.X_test, data.Z_test) for est in fits]
    quads = [est.quadrature(data.X_test, n_samples=16, random_state=3).density for est in fits]
    assert torch.equal(before, torch.random.get_rng_state())
    np.testing.assert_array_equal(dens[0], dens[1])
    np.testing.assert_array_equal(quads[0], quads[1])
    assert not np.array_equal(dens[0], dens[2])


def test_flow_beats_the_marginal_on_small_surd():
    _torch()
    ours = run_benchmark("flow", "surd", seed=0, estimator_params={**FAST, "max_epochs": 100, "patience": 10},
                         dataset_params=SMALL_SURD, n_samples=64)
    base = run_benchmark("marginal", "surd", seed=0, dataset_params=SMALL_SURD, n_samples=64)
    assert ours["loss_direct"] < base["loss_direct"] - 0.1, (ours["loss_direct"], base["loss_direct"])
    assert ours["n_zero_density"] == 0
    tuned = ours["tuned"]
    assert 1 <= tuned["best_epoch_"] <= tuned["n_epochs_"] <= 100


def test_tune_false_trains_the_one_combination(small_data):
    _torch()
    data = small_data[1]
    est = make_estimator("flow", data, 0, **{**FAST, "hidden_grid": [8], "tune": False})
    est.fit(data.X_train, data.Z_train)
    assert est.hidden_ == 8 and est.tuning_losses_.shape == (1, 1, 1, 1)
    with pytest.raises(ValueError, match="tune=false fixes the hyper-parameters"):
        make_estimator("flow", data, 0, **{**FAST, "tune": False})


def test_unknown_parameter_and_bad_values_are_one_line_errors(small_data):
    _torch()  # without torch or zuko the build stops earlier, at "unavailable" (tested below)
    with pytest.raises(ConfigError, match="estimator 'flow' has no parameter\\(s\\) bogus") as err:
        make_estimator("flow", small_data[1], 0, bogus=1)
    assert "\n" not in str(err.value)
    for bad, match in (({"transforms_grid": [0]}, "transforms_grid must hold positive integers"),
                       ({"lr_grid": [-1.0]}, "lr_grid must hold positive numbers"),
                       ({"weight_decay_grid": [-1e-3]}, "weight_decay_grid must hold non-negative numbers"),
                       ({"bins": 0}, "bins must hold positive integers"),
                       ({"max_fit": 3}, "max_fit must be None or an integer >= 10")):
        with pytest.raises(ValueError, match=match) as err:
            make_estimator("flow", small_data[1], 0, **bad)
        assert "\n" not in str(err.value)


def test_xmlthresh_list_shows_flow():
    from xmlthresh.config.plugins import describe

    listing = describe(check=True)
    assert any(line.split()[:1] == ["flow"] for line in listing.splitlines()), listing  # the option
    assert "estimator flow" in listing and "xmlthresh_flow.estimator" in listing  # the registered class


def test_without_torch_or_zuko_the_estimator_is_unavailable_with_the_install_hint(monkeypatch, small_data):
    real = flow.estimator.importlib.util.find_spec
    monkeypatch.setattr(flow.estimator.importlib.util, "find_spec", lambda name: None if name == "zuko" else real(name))
    reason = flow.FlowCDE.unavailable_reason()
    assert reason.startswith("zuko not installed") and "pip install zuko==1.6.0" in reason
    with pytest.raises(UnavailableError, match="estimator 'flow' is unavailable: zuko not installed"):
        make_estimator("flow", small_data[1], 0)
