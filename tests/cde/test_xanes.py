"""The XANES FeSiO4 loader: real download code (verified against the shared cache through a loopback
server), parsing, split/PCA/box, target errors, and estimators on the real data (skipped without data)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import data_dir_with, no_data, serve_directory

from xmlthresh.cde import CDE_DATASETS, ESTIMATORS, run_benchmark
from xmlthresh.cde.datasets.xanes import BASE_URL, SHA256, remote_files
from xmlthresh.data.download import DataUnavailableError

from .conftest import ESTIMATOR_NAMES, fast_params


def test_remote_files_point_at_the_pinned_commit():
    files = remote_files("sample3")
    assert files["spectra.txt"].url == (
        "https://raw.githubusercontent.com/gudasergey/pyFitIt/7bdf56ae59180604d54bdc78bdbbbf522b2a4d3c/"
        "Examples/FeSiO4%20descriptors/samples/sample3/spectra.txt"
    )
    assert files["params.txt"].relpath == "xanes_fesio4/sample3/params.txt"
    assert BASE_URL.endswith("samples") and sorted(SHA256) == [f"sample{i}" for i in range(2, 7)]


def test_checksums_match_the_shared_manifest():
    root = data_dir_with("SHA256SUMS")
    if root is None:
        pytest.skip(no_data("SHA256SUMS", "the data cache's checksum manifest"))
    sums = root / "SHA256SUMS"
    listed = dict(reversed(line.split()) for line in sums.read_text().splitlines() if "xanes_fesio4" in line)
    ours = {f"xanes_fesio4/{s}/{f}": digest for s, files in SHA256.items() for f, digest in files.items()}
    assert ours == listed


def test_missing_files_offline_say_where_to_get_them(tmp_path, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_DATA", str(tmp_path))
    monkeypatch.setenv("XMLTHRESH_OFFLINE", "1")
    with pytest.raises(DataUnavailableError, match=r"xanes_fesio4/sample3/spectra.txt.*raw.githubusercontent.com"):
        CDE_DATASETS.get("xanes")().load()


@pytest.fixture
def mirror(shared_xanes):
    """A loopback HTTP server serving the shared cache's xanes_fesio4 folder (stands in for GitHub)."""
    with serve_directory(shared_xanes) as url:
        yield url


@pytest.mark.realdata
def test_download_verifies_and_loads(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_DATA", str(tmp_path))
    monkeypatch.delenv("XMLTHRESH_OFFLINE", raising=False)
    data = CDE_DATASETS.get("xanes")(sample="sample5", targets=["d2"], base_url=mirror).load(seed=0)
    assert (tmp_path / "xanes_fesio4" / "sample5" / "spectra.txt").is_file()
    assert data.Z_train.shape[1] == 1 and data.target_names == ("d2",)


@pytest.mark.realdata
def test_load_split_pca_and_box(xanes_data):
    gen = CDE_DATASETS.get("xanes")(n_components=6)
    data = gen.load(seed=2)
    assert data.X_train.shape == (375, 6) and data.X_test.shape == (125, 6)
    assert data.Z_train.shape == (375, 2) and data.target_names == ("r1", "r2")
    assert data.true_density is None and data.bounds.shape == (2, 2)
    assert np.all(data.Z_train > data.bounds[:, 0]) and np.all(data.Z_train < data.bounds[:, 1])
    energies = data.info["energies"]
    assert energies.size == 293 and np.all(np.diff(energies) > 0)
    # PCA fitted on the training spectra only: train scores are centred, test scores are not exactly
    np.testing.assert_allclose(data.X_train.mean(axis=0), 0.0, atol=1e-10)
    again = gen.load(seed=2)
    np.testing.assert_array_equal(again.X_test, data.X_test)
    assert not np.array_equal(gen.load(seed=3).Z_test, data.Z_test)


@pytest.mark.realdata
def test_unknown_targets_list_the_available_ones(xanes_data):
    message = r"unknown target\(s\) \['r3'\] for XANES sample3; available parameters: phi, r1, r2"
    with pytest.raises(ValueError, match=message):
        CDE_DATASETS.get("xanes")(targets=["r1", "r3"]).load()


@pytest.mark.realdata
@pytest.mark.parametrize("name", ESTIMATOR_NAMES)  # the built-ins (plugins test themselves)
def test_estimators_on_real_data_keep_their_mass_in_the_box(name, xanes_data):
    data = CDE_DATASETS.get("xanes")(targets=["phi", "r1", "r2"]).load(seed=0)
    est = ESTIMATORS.get(name)(**fast_params(name), bounds=data.bounds).fit(data.X_train, data.Z_train)
    dens = est.predict_density(data.X_test, data.Z_test)
    assert np.all(np.isfinite(dens)) and np.mean(dens > 0) > 0.95
    quad = est.quadrature(data.X_test[:20], n_samples=64, random_state=0)
    pts = np.broadcast_to(quad.points, (20,) + quad.points.shape[1:])
    assert np.all((pts >= data.bounds[:, 0]) & (pts <= data.bounds[:, 1]))


@pytest.mark.realdata
def test_benchmark_on_real_data(xanes_data):
    result = run_benchmark("ckde", "xanes", seed=0, estimator_params=fast_params("ckde"), n_samples=64)
    assert result["loss_direct"] is None and result["rel_loss_approx"] is None
    assert result["loss_approx"] < 0 and np.isfinite(result["nll"])
    assert 0.0 <= result["coverage50"] <= result["coverage90"] <= 1.0
