"""Every CDE reference-study preset (``experiment=cde_*``) runs end to end on a tiny version of itself (a
few points, two cheap estimators, tiny data) and its study report holds finite numbers (issue 16).

Each test runs the real command line (``xmlthresh experiment=...``, in this process: ``xmlthresh.cli.entry.main``,
which spares a fresh interpreter's 3-4 s of imports per preset) with overrides that shrink the sweep, then
writes the study report from the jobs' result.json files (as the sweep callback does when
tracking is on) and checks the markdown, the CSV and the PNG.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import run_cli

from xmlthresh.report.studies import write_study_report

TINY = ("cde.n_samples=32", "tracking.enabled=false", "estimator.bandwidth_grid=[0.05,0.2,0.5]")
SMALL = ("cde_dataset.n_train=100", "cde_dataset.n_test=40")  # the synthetic data sets
TWO = "estimator=marginal,nnkcde"
#: preset -> (overrides that shrink it, study kind, columns that must be finite)
PRESETS = {
    "cde_density_at_x": ((TWO, "cde.slice_grid=20"), "cde_density_at_x", ("ise_at_x", "rel_loss_direct")),
    "cde_sweep_alpha": ((TWO, "cde_dataset.alpha=0.1,0.5", "cde_dataset.d=[0.1,1.0]", "seed=0"), "cde_sweep",
                        ("rel_loss_direct", "nll")),
    "cde_sweep_d": ((TWO, "cde_dataset.d=[0.1,1.0],[0.7,1.0]", "seed=0"), "cde_sweep", ("rel_loss_direct",)),
    "cde_sweep_phi": ((TWO, "cde_dataset.phi=0.3,3.0", "seed=0"), "cde_sweep", ("rel_loss_direct",)),
    "cde_sweep_noise": (("estimator=marginal", "cde_dataset.ny=1,3", "seed=0,1"), "cde_sweep",
                        ("rel_loss_direct", "rel_loss_direct_se")),
    "cde_direct_vs_approx": ((TWO, "cde_dataset=direct_vs_approx/surd_cube,direct_vs_approx/fork", "seed=0"),
                             "cde_direct_vs_approx",
                             ("rel_loss_direct", "rel_loss_approx", "rel_direct_minus_approx_se")),
}


def run_preset(preset: str, overrides: tuple[str, ...], home: Path) -> Path:
    """Run the shrunk preset; its sweep directory."""
    proc = run_cli([f"experiment={preset}", *overrides, *TINY], env={"XMLTHRESH_HOME": str(home)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    (sweep,) = [p.parent for p in (home / "runs" / "multirun").glob("*/*/multirun.yaml")]
    return sweep


def check_report(sweep: Path, kind: str, finite: tuple[str, ...]) -> pd.DataFrame:
    paths = write_study_report(kind, sweep)
    assert paths["png"].read_bytes().startswith(b"\x89PNG") and paths["png"].stat().st_size > 5000
    assert paths["markdown"].read_text().startswith("# ")
    table = pd.read_csv(paths["csv"])
    assert len(table) > 0
    for column in finite:
        assert np.isfinite(table[column].to_numpy(float)).all(), (column, table[column].tolist())
    return table


@pytest.mark.slow  # a command-line sweep of 2-8 tiny jobs: 6-15 s (unloaded)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_tiny_version_of_the_preset_writes_its_figure_and_table(preset, isolated_home):
    overrides, kind, finite = PRESETS[preset]
    sweep = run_preset(preset, overrides + SMALL, isolated_home)
    table = check_report(sweep, kind, finite)
    if preset == "cde_sweep_noise":  # both families, ny the x axis, 2 seeds that reach the generator
        assert set(table["dataset"]) == {"surd", "fork"} and set(table["data.ny"]) == {1, 3}
        assert set(table["n_seeds"]) == {2}
        results = [json.loads(p.read_text()) for p in sweep.glob("*/result.json")]
        for dataset in ("surd", "fork"):
            by_seed = {r["seed"]: r for r in results if r["dataset"] == dataset and r["cde_dataset_params"]["ny"] == 3}
            assert by_seed[0]["seeds"]["cde_generator"] == 0 and by_seed[1]["seeds"]["cde_generator"] == 1
            assert by_seed[0]["rel_loss_direct"] != by_seed[1]["rel_loss_direct"]
    if preset == "cde_direct_vs_approx":
        assert set(table["setting"]) == {"surd", "fork"} and set(table["estimator"]) == {"marginal", "nnkcde"}


@pytest.mark.slow
def test_a_tiny_version_of_the_xanes_preset_pairs_estimators_on_the_same_test_points(xanes_data, isolated_home):
    overrides = (TWO, "cde_dataset=xanes_targets/s3_phi_r1_r2", "seed=0")
    sweep = run_preset("cde_xanes", overrides, isolated_home)
    assert all((job / "per_point.npz").is_file() for job in sweep.glob("[0-9]*"))
    table = check_report(sweep, "cde_xanes", ("loss_approx", "loss_approx_se", "nll", "coverage90", "minus_best"))
    assert set(table["target_set"]) == {"sample3: phi,r1,r2 (3-D)"} and set(table["n_test_points"]) == {125}
    for _, part in table.groupby("target_set"):
        assert (part["minus_best"] >= 0).all() and (part["minus_best"] == 0).sum() == 1
        assert np.isclose(part["minus_best"], part["loss_approx"] - part["loss_approx"].min()).all()
    markdown = (sweep / "report" / "cde_xanes.md").read_text()
    assert "## Winners" in markdown
