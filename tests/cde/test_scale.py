"""No n x n matrices (issue 16): the estimators' memory stays O(n) at training sizes where an n x n float
matrix would need gigabytes, and the tiled pair sums equal the untiled ones."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from xmlthresh.cde import CDE_DATASETS, ESTIMATORS
from xmlthresh.cde.mixture import DiagKernelMixture, gaussian_pair_sum
from xmlthresh.cde.tuning import kernel_cde_losses


def test_marginal_fits_20k_points_without_an_n_by_n_matrix():
    # before: the tuning formed a 15,000 x 15,000 float64 matrix (1.8 GB) and squared_norm a 20,000^2 one
    data = CDE_DATASETS.get("surd")(n_train=20000, n_test=50).load(seed=0)
    est = ESTIMATORS.build("marginal", {"bandwidth_grid": (0.05, 0.1, 0.2)})
    tracemalloc.start()
    est.fit(data.X_train, data.Z_train)
    norm = est.squared_norm(data.X_test[:3])
    dens = est.predict_density(data.X_test, data.Z_test)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 250 * 2**20, f"peak {peak / 2**20:.0f} MB"
    assert est.centres_.shape == (4000, 2) and np.all(np.isfinite(norm)) and np.all(dens >= 0)


def test_tiled_pair_sums_equal_the_full_matrix():
    rng = np.random.default_rng(0)
    K = 2300  # K^2 above the tile budget: the tiled branch of squared_norm runs
    means, w = rng.standard_normal((K, 2)), rng.random(K)
    w /= w.sum()
    full = np.exp(-((means[:, None] - means[None]) ** 2).sum(-1) / (2 * 0.3**2))
    assert gaussian_pair_sum(means, w, 0.3) == pytest.approx(float(w @ full @ w), rel=1e-10)
    mix = DiagKernelMixture(w[None], means[None], np.array([0.2, 0.2]))
    expected = float(w @ np.exp(-((means[:, None] - means[None]) ** 2).sum(-1) / (4 * 0.04)) @ w) / (4 * np.pi * 0.04)
    assert mix.squared_norm()[0] == pytest.approx(expected, rel=1e-10)
    U_val = rng.standard_normal((40, 2))
    losses = kernel_cde_losses(w[None, None], means[None], U_val, np.ones(2), [0.2])[0, 0]
    cross = np.exp(-((U_val[:, None] - means[None]) ** 2).sum(-1) / (2 * 0.04)) @ w / (2 * np.pi * 0.04)
    assert losses == pytest.approx(expected - 2 * cross.mean(), rel=1e-9)


@pytest.mark.parametrize("name, cap", [("marginal", "max_centres"), ("gmm", "max_tune"), ("gmm", "max_fit"),
                                       ("rfcde", "max_samples")])
def test_size_caps_are_checked_before_fitting(name, cap):
    with pytest.raises(ValueError, match=f"{cap} must be None or an integer"):
        ESTIMATORS.build(name, {cap: 1})


def test_cde_scaling_script_writes_a_row_per_point(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "cde_scaling.py"
    out = tmp_path / "cde_scaling.md"
    proc = subprocess.run([sys.executable, str(script), "--sizes", "150,300", "--estimators", "marginal,nosuch",
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line for line in out.read_text().splitlines() if line.startswith("| marginal") or line.startswith("| nosuch")]
    assert len(rows) == 4
    cells = rows[1].split(" | ")
    assert cells[1] == "300" and float(cells[2]) > 0 and float(cells[-1].rstrip(" |")) < 0  # fit CPU, loss
    assert "unknown estimator 'nosuch'" in rows[2]  # a failing point is a row with its reason, not a crash
