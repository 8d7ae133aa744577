"""The CDE study reports (``report.kind``: cde_sweep, cde_density_at_x) on jobs written like a sweep's, and
the density slice a job saves for them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xmlthresh.cde import CDE_DATASETS, ESTIMATORS
from xmlthresh.cde.slices import density_slice, feature_point, training_sample
from xmlthresh.report.cde_studies import load_cde_results, sweep_axes
from xmlthresh.report.studies import write_study_report

from .conftest import fast_params


def _job(sweep: Path, num: int, **fields) -> Path:
    job = sweep / str(num)
    job.mkdir(parents=True)
    record = {"task": "cde", "dataset": "surd", "nll": 1.0, "fit_seconds": 0.1, **fields}
    (job / "result.json").write_text(json.dumps(record))
    return job


def test_cde_sweep_report_averages_seeds_per_swept_value_and_panel(tmp_path):
    num = 0
    for d in ([1.0, 1.0], [0.1, 1.0]):
        for alpha in (0.1, 0.3):
            for seed in (0, 1, 2):
                for estimator, shift in (("marginal", 0.0), ("nnkcde", -0.1)):
                    loss = -0.5 + shift - alpha + 0.01 * seed
                    _job(tmp_path, num, estimator=estimator, seed=seed, rel_loss_direct=loss,
                         cde_dataset_params={"d": d, "alpha": alpha, "nz": 2})
                    num += 1
    results = load_cde_results(tmp_path)
    assert sweep_axes(results) == ("data.alpha", ["data.d[0]"])
    paths = write_study_report("cde_sweep", tmp_path)
    assert paths["png"].read_bytes().startswith(b"\x89PNG")
    import pandas as pd

    table = pd.read_csv(paths["csv"])
    assert len(table) == 2 * 2 * 2 and set(table["n_seeds"]) == {3}
    row = table[(table["data.d[0]"] == 0.1) & (table["data.alpha"] == 0.3) & (table["estimator"] == "nnkcde")]
    assert row["rel_loss_direct"].item() == pytest.approx(-0.5 - 0.1 - 0.3 + 0.01)
    assert row["rel_loss_direct_se"].item() == pytest.approx(0.01 / np.sqrt(3))


def test_a_swept_coordinate_of_a_list_parameter_is_the_x_axis(tmp_path):
    for num, (d1, seed) in enumerate([(0.2, 0), (0.2, 1), (0.6, 0), (0.6, 1), (0.9, 0), (0.9, 1)]):
        _job(tmp_path, num, estimator="ckde", seed=seed, rel_loss_direct=-d1, cde_dataset_params={"d": [d1, 1.0]})
    assert sweep_axes(load_cde_results(tmp_path)) == ("data.d[0]", [])


def test_cde_sweep_report_needs_a_swept_parameter(tmp_path):
    _job(tmp_path, 0, estimator="marginal", seed=0, rel_loss_direct=-0.2, cde_dataset_params={"alpha": 0.1})
    _job(tmp_path, 1, estimator="nnkcde", seed=0, rel_loss_direct=-0.3, cde_dataset_params={"alpha": 0.1})
    with pytest.raises(ValueError, match="no swept numeric data-set parameter"):
        write_study_report("cde_sweep", tmp_path)


def test_density_slice_and_its_report(tmp_path):
    data = CDE_DATASETS.get("surd")(n_train=300, n_test=20).load(seed=0)
    for num, name in enumerate(("marginal", "nnkcde")):
        est = ESTIMATORS.get(name)(**fast_params(name)).fit(data.X_train, data.Z_train)
        slice_ = density_slice(est, data, 0.0, grid_size=30)
        assert slice_["estimated"].shape == slice_["true"].shape == (30, 30)
        assert np.all(slice_["x"] == 0.0) and slice_["ise"] > 0
        true_at = data.true_density(np.zeros((1, data.X_train.shape[1])), np.array([[slice_["z1"][3], slice_["z2"][5]]]))
        assert slice_["true"][5, 3] == pytest.approx(true_at[0])  # row = z2, column = z1
        job = _job(tmp_path, num, estimator=name, seed=0, rel_loss_direct=-0.2, ise_at_x=float(slice_["ise"]))
        np.savez_compressed(job / "density_at_x.npz", **slice_)
    paths = write_study_report("cde_density_at_x", tmp_path)
    assert paths["png"].read_bytes().startswith(b"\x89PNG")
    assert "| marginal |" in paths["markdown"].read_text() and "ise_at_x" in paths["markdown"].read_text()
    with pytest.raises(ValueError, match=r"x must be one number \(every feature\) or 11"):
        feature_point([0.0, 1.0], 11)


def test_panel_a_draws_the_data_set_coloured_by_its_relevance_summary(tmp_path):
    """Fig. 4.1(a): the job saves its training targets with s(x); the report draws them before the densities."""
    from xmlthresh.cde.datasets.base import relevance_summary
    from xmlthresh.report.cde_studies import density_at_x_panels, density_at_x_plot

    data = CDE_DATASETS.get("surd")(nx=3, ny=2, n_train=300, n_test=20).load(seed=0)
    sample = training_sample(data, 3, max_points=250)
    assert sample["sample_z"].shape == (250, 2) and str(sample["sample_colour"]) == "s(x)"
    np.testing.assert_array_equal(sample["sample_s"], relevance_summary(data.X_train[:250], 3))
    assert str(training_sample(data, None)["sample_colour"]) == "x1"  # the number of relevant features unknown
    est = ESTIMATORS.get("marginal")(**fast_params("marginal")).fit(data.X_train, data.Z_train)
    job = _job(tmp_path, 0, estimator="marginal", seed=0, rel_loss_direct=-0.2)
    np.savez_compressed(job / "density_at_x.npz", **density_slice(est, data, 0.0, grid_size=20), **sample)
    first, estimated = density_at_x_panels(load_cde_results(tmp_path))
    assert first["sample_z"].shape == (250, 2)
    from PIL import Image
    import io

    with_data = Image.open(io.BytesIO(density_at_x_plot(first, estimated))).size
    without = Image.open(io.BytesIO(density_at_x_plot({k: v for k, v in first.items() if not k.startswith("sample")},
                                                      estimated))).size
    assert with_data[0] > without[0]  # one more panel: true, marginal and the data


def test_direct_vs_approx_report_labels_settings_and_pairs_the_difference(tmp_path):
    settings = [("surd", {"nz": 2, "d": [0.1, 1.0], "a": 0.0}), ("surd", {"nz": 3, "d": [1.0, 1.0, 1.0], "a": 0.0}),
                ("fork", {"nx": 10, "m": 2, "a": 1.0})]
    num = 0
    for dataset, params in settings:
        for estimator in ("marginal", "gmm"):
            _job(tmp_path, num, dataset=dataset, estimator=estimator, seed=0, cde_dataset_params=params,
                 rel_loss_direct=-0.5, rel_loss_direct_se=0.01, rel_loss_approx=-0.52, rel_loss_approx_se=0.05,
                 direct_minus_approx=0.04, direct_minus_approx_se=0.1, zero_loss=2.0)
            num += 1
    paths = write_study_report("cde_direct_vs_approx", tmp_path)
    import pandas as pd

    table = pd.read_csv(paths["csv"])
    assert set(table["setting"]) == {"surd nz=2 d=[0.1, 1.0]", "surd nz=3 d=[1.0, 1.0, 1.0]", "fork"}
    assert table["rel_direct_minus_approx"].tolist() == pytest.approx([0.02] * 6)  # 0.04 / zero_loss 2
    assert table["z"].tolist() == pytest.approx([0.4] * 6)
    assert paths["png"].read_bytes().startswith(b"\x89PNG") and "|z| <= 2" in paths["markdown"].read_text()


def test_xanes_report_needs_the_per_point_losses(tmp_path):
    _job(tmp_path, 0, dataset="xanes", estimator="marginal", seed=0,
         cde_dataset_params={"sample": "sample3", "targets": ["r1"]})
    with pytest.raises(ValueError, match="cde.save_per_point=true"):
        write_study_report("cde_xanes", tmp_path)


def test_xanes_report_pairs_per_point_losses_pooled_over_seeds(tmp_path):
    rng = np.random.default_rng(0)
    base = {seed: rng.normal(size=50) for seed in (0, 1)}
    num = 0
    for seed in (0, 1):
        for estimator, shift in (("marginal", 0.3), ("gmm", 0.0), ("ckde", 0.1)):
            job = _job(tmp_path, num, dataset="xanes", estimator=estimator, seed=seed,
                       cde_dataset_params={"sample": "sample3", "targets": ["r1", "r2"]})
            np.savez_compressed(job / "per_point.npz", loss_approx=base[seed] + shift, nll=base[seed] + 2 * shift,
                                hpd=np.linspace(0, 1, 50))
            num += 1
    paths = write_study_report("cde_xanes", tmp_path)
    import pandas as pd

    table = pd.read_csv(paths["csv"]).set_index("estimator")
    assert set(table["target_set"]) == {"sample3: r1,r2 (2-D)"} and set(table["n_test_points"]) == {100}
    assert table.loc["gmm", "minus_best"] == 0 and table.loc["marginal", "minus_best"] == pytest.approx(0.3)
    assert table.loc["ckde", "minus_best_se"] == pytest.approx(0.0, abs=1e-12)  # a constant paired shift
    assert table.loc["marginal", "loss_approx_se"] > 0.05  # the unpaired SE is that of the losses themselves
    assert "| sample3: r1,r2 (2-D) | gmm |" in paths["markdown"].read_text()


def test_the_comparison_report_of_real_data_runs_plots_the_approximate_loss(tmp_path):
    """Real data has no true density, so no relative loss: the comparison plot shows loss_approx (it used
    to fail with 'no numeric data to plot', and the sweep's study report was then never written)."""
    import pandas as pd

    from xmlthresh.report.comparison import write_report  # _cde_table: what load_runs returns for CDE runs
    from xmlthresh.report.tables import _cde_table

    runs = pd.DataFrame({"tags.task": "cde", "status": "FINISHED", "params.cde_dataset": "xanes",
                         "params.estimator": ["marginal", "gmm", "marginal", "gmm"], "params.seed": ["0", "0", "1", "1"],
                         "metrics.loss_approx": [-1.0, -1.5, -1.1, -1.4], "run_id": list("abcd")})
    paths = write_report(_cde_table(runs, []), tmp_path, reference="none")
    assert paths["png"].read_bytes().startswith(b"\x89PNG")
    assert "loss_approx" in paths["markdown"].read_text()
