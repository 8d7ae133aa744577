"""A resumed CDE sweep job brings the files its report needs (per_point.npz), or runs again when they are gone.

Before, a cde_xanes sweep killed, its folder deleted and run again on the same store "resumed" its finished
jobs by copying result.json alone; the report then failed asking for cde.save_per_point=true, which was on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import mlflow
import numpy as np

JOBS = ("task=cde", "estimator=marginal", "estimator.bandwidth_grid=[0.1,0.3]", "cde_dataset=surd",
        "cde_dataset.n_train=100", "cde_dataset.n_test=40", "cde.n_samples=16", "cde.save_per_point=true",
        "plots=false", "seed=0,1")


def _sweep(home: Path, folder: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "XMLTHRESH_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", "-m", *JOBS, f"hydra.sweep.dir={folder}"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc


def _resumed(proc: subprocess.CompletedProcess) -> int:
    """The resumed count of the sweep's closing line ("sweep finished: children 2, ..., resumed 2, ...")."""
    line = next(line for line in proc.stdout.splitlines() if "sweep finished:" in line)
    return int(line.split("resumed ")[1].split(",")[0])


def _per_point_files(folder: Path) -> dict[int, Path]:
    import json

    found = {}
    for result in folder.glob("*/result.json"):
        found[json.loads(result.read_text())["seed"]] = result.parent / "per_point.npz"
    return found


def test_resumed_jobs_copy_their_per_point_files_or_run_again(isolated_home):
    first = isolated_home / "sweep_a"
    _sweep(isolated_home, first)
    original = {seed: np.load(path)["loss_approx"] for seed, path in _per_point_files(first).items()}
    assert sorted(original) == [0, 1]
    shutil.rmtree(first)  # the sweep's folder deleted; its runs stay FINISHED in the store

    again = _sweep(isolated_home, isolated_home / "sweep_b")
    assert _resumed(again) == 2 and "running the job again" not in again.stdout + again.stderr
    for seed, path in _per_point_files(isolated_home / "sweep_b").items():
        np.testing.assert_array_equal(np.load(path)["loss_approx"], original[seed])  # copied from the store

    # the store loses seed 0's per-point file (what a killed sweep whose folder was deleted left behind)
    mlflow.set_tracking_uri(f"sqlite:///{isolated_home / 'runs' / 'mlflow.db'}")
    runs = mlflow.search_runs(experiment_names=["xmlthresh"])
    computed = runs[runs["tags.xmlthresh.reused_run_id"].isna() & runs["params.seed"].eq("0")
                    & runs["tags.xmlthresh.sweep"].ne("parent")]
    assert len(computed) == 1
    artifact = Path(unquote(urlparse(computed["artifact_uri"].iloc[0]).path)) / "per_point.npz"
    artifact.unlink()

    third = _sweep(isolated_home, isolated_home / "sweep_c")
    assert _resumed(third) == 1  # seed 1 resumed, seed 0 ran again
    assert "per_point.npz is gone from the store" in third.stdout + third.stderr
    files = _per_point_files(isolated_home / "sweep_c")
    assert sorted(files) == [0, 1] and all(path.is_file() for path in files.values())
    np.testing.assert_array_equal(np.load(files[0])["loss_approx"], original[0])  # the same seed, recomputed
