"""The optional ``mdn`` estimator (plugin plugins/xmlthresh-mdn, PyTorch): skipped, with the reason, when the
plugin or torch is not installed here. Its mixture algebra is checked without torch."""

from __future__ import annotations

import numpy as np
import pytest

mdn = pytest.importorskip(
    "xmlthresh_mdn", reason="plugin xmlthresh-mdn not installed (pip install -e plugins/xmlthresh-mdn --no-deps)"
)

from xmlthresh.cde.benchmark import make_estimator, run_benchmark  # noqa: E402
from xmlthresh._util.registry import ConfigError  # noqa: E402

#: small networks and few epochs: every fit below takes well under a second
FAST = {"n_components_grid": (3, 6), "hidden_grid": (16,), "max_epochs": 60, "patience": 8}
SMALL_SURD = {"n_train": 300, "n_test": 200}


def _torch():
    return pytest.importorskip("torch", reason="torch not installed (pip install torch==2.13.0, the CPU wheel)")


# ---------------------------------------------------------------- mixture algebra (numpy only)
def _random_mixture(rng, q=3, K=4, d=2):
    w = rng.random((q, K)) + 0.1
    return mdn.DiagGaussianMixture(w / w.sum(1, keepdims=True), rng.normal(size=(q, K, d)),
                                   0.2 + rng.random((q, K, d)))


def test_mixture_density_integrates_to_one_and_matches_its_squared_norm():
    mix = _random_mixture(np.random.default_rng(0))
    h = 0.03
    axis = np.arange(-9, 9, h) + h / 2
    grid = np.stack(np.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)
    dens = mix.pdf(grid[None])
    np.testing.assert_allclose(dens.sum(1) * h * h, 1.0, atol=1e-6)
    np.testing.assert_allclose(mix.squared_norm(), (dens**2).sum(1) * h * h, rtol=1e-6)


def test_mixture_samples_follow_its_moments():
    mix = _random_mixture(np.random.default_rng(1))
    draws = mix.sample(40000, np.random.default_rng(2), stratified=True)
    mean = np.einsum("qk,qkd->qd", mix.weights, mix.means)
    np.testing.assert_allclose(draws.mean(1), mean, atol=0.03)


def test_mixture_rejects_mismatched_or_nonpositive_scales():
    with pytest.raises(ValueError, match="positive"):
        mdn.DiagGaussianMixture(np.ones((1, 1)), np.zeros((1, 1, 1)), np.zeros((1, 1, 1)))
    with pytest.raises(ValueError, match="do not match"):
        mdn.DiagGaussianMixture(np.ones((1, 2)), np.zeros((1, 1, 1)), np.ones((1, 1, 1)))


# ---------------------------------------------------------------- the estimator (torch)
def test_mdn_beats_the_marginal_on_small_surd():
    _torch()
    ours = run_benchmark("mdn", "surd", seed=0, estimator_params=FAST, dataset_params=SMALL_SURD)
    base = run_benchmark("marginal", "surd", seed=0, dataset_params=SMALL_SURD)
    assert ours["loss_direct"] < base["loss_direct"] - 0.1, (ours["loss_direct"], base["loss_direct"])
    assert ours["n_zero_density"] == 0
    tuned = ours["tuned"]
    assert tuned["n_components_"] in FAST["n_components_grid"] and tuned["hidden_"] == 16
    assert 1 <= tuned["best_epoch_"] <= tuned["n_epochs_"] <= FAST["max_epochs"]


def test_same_seed_same_numbers_and_the_global_torch_rng_is_untouched(small_data):
    torch = _torch()
    data = small_data[1]
    before = torch.random.get_rng_state()
    fits = [make_estimator("mdn", data, seed, **FAST).fit(data.X_train, data.Z_train) for seed in (5, 5, 6)]
    assert torch.equal(before, torch.random.get_rng_state())
    dens = [est.predict_density(data.X_test, data.Z_test) for est in fits]
    np.testing.assert_array_equal(dens[0], dens[1])
    assert not np.array_equal(dens[0], dens[2])


def test_density_on_grid_agrees_with_points_and_integrates_to_one(small_data):
    _torch()
    data = small_data[1]  # 1-D SURD
    est = make_estimator("mdn", data, 0, **FAST).fit(data.X_train, data.Z_train)
    lo, hi = data.Z_train.min() - 3, data.Z_train.max() + 3
    h = (hi - lo) / 4000
    grid = (lo + h * (np.arange(4000) + 0.5))[:, None]
    on_grid = est.density_on_grid(data.X_test[:5], grid)
    np.testing.assert_allclose(on_grid.sum(1) * h, 1.0, atol=2e-3)
    at = est.predict_density(data.X_test[:5], np.repeat(grid[[1234]], 5, axis=0))
    np.testing.assert_allclose(at, on_grid[:, 1234], rtol=1e-12)


def test_tune_false_trains_the_one_combination(small_data):
    _torch()
    data = small_data[1]
    fixed = {**FAST, "n_components_grid": [4], "tune": False}
    est = make_estimator("mdn", data, 0, **fixed).fit(data.X_train, data.Z_train)
    assert est.n_components_ == 4 and est.tuning_losses_.shape == (1, 1, 1, 1)
    with pytest.raises(ValueError, match="tune=false fixes the hyper-parameters"):
        make_estimator("mdn", data, 0, **{**FAST, "tune": False})


def test_unknown_parameter_and_bad_values_are_one_line_errors(small_data):
    with pytest.raises(ConfigError, match="estimator 'mdn' has no parameter\\(s\\) bogus") as err:
        make_estimator("mdn", small_data[1], 0, bogus=1)
    assert "\n" not in str(err.value)
    for bad, match in (({"hidden_grid": [0]}, "hidden_grid must hold positive integers"),
                       ({"lr_grid": [-1.0]}, "lr_grid must hold positive numbers"),
                       ({"max_fit": 3}, "max_fit must be None or an integer >= 10")):
        with pytest.raises(ValueError, match=match) as err:
            make_estimator("mdn", small_data[1], 0, **bad)
        assert "\n" not in str(err.value)


def test_xmlthresh_list_shows_mdn():
    from xmlthresh.config.plugins import describe

    listing = describe(check=True)
    assert any(line.split()[:1] == ["mdn"] for line in listing.splitlines()), listing  # the option
    assert "estimator mdn" in listing and "xmlthresh_mdn.estimator" in listing  # the registered class
    reason = mdn.estimator.MDNCDE.unavailable_reason()
    assert reason is None or "pip install torch==2.13.0" in reason


def test_without_torch_the_estimator_is_unavailable_with_the_install_hint(monkeypatch, small_data):
    from xmlthresh._util.registry import UnavailableError

    monkeypatch.setattr(mdn.estimator.importlib.util, "find_spec", lambda name: None)
    assert "pip install torch==2.13.0" in mdn.estimator.MDNCDE.unavailable_reason()
    with pytest.raises(UnavailableError, match="estimator 'mdn' is unavailable: torch not installed"):
        make_estimator("mdn", small_data[1], 0)
