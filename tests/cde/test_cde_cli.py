"""task=cde from the command line: unknown estimator / data set names and unknown parameters are one clear
error (exit code 1, no traceback), not KeyError / TypeError tracebacks (issue 16)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TINY = ("cde_dataset.n_train=60", "cde_dataset.n_test=20", "tracking.enabled=false", "plots=false")


def run_cde(*overrides: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "XMLTHRESH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "xmlthresh", "task=cde", *overrides, *TINY], capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.mark.parametrize("override, expected", [
    ("estimator=nosuch", "Could not find 'estimator/nosuch'"),  # Hydra lists the available options
    ("cde_dataset=nosuch", "Could not find 'cde_dataset/nosuch'"),
    ("estimator.name=nosuch", "xmlthresh: error: unknown estimator 'nosuch'; known: ckde, flexcode"),
    ("+estimator.bogus=1", "xmlthresh: error: estimator 'nnkcde' has no parameter(s) bogus; its parameters:"),
    ("+cde_dataset.bogus=1", "xmlthresh: error: cde_dataset 'surd' has no parameter(s) bogus"),
    ("estimator=flexcode estimator.floor_grid=[0.0]", "xmlthresh: error: flexcode: every value of floor_grid"),
    ("estimator.tune=false", "xmlthresh: error: nnkcde: tune=false fixes the hyper-parameters, so every grid"),
])
def test_bad_names_and_parameters_are_one_clear_error(override, expected, isolated_home):
    proc = run_cde(*override.split(), home=isolated_home)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert expected in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "KeyError" not in proc.stderr
    if expected.startswith("Could not find"):
        group = expected.split("'")[1].split("/")[0]
        assert f"Available options in '{group}'" in proc.stderr
        assert {"estimator": "\tnnkcde", "cde_dataset": "\tsurd"}[group] in proc.stderr


@pytest.mark.slow  # a Python start with joblib and a 2-worker pool: about 5 s
def test_the_process_ends_soon_after_a_joblib_sweep_with_idle_workers():
    """console() runs the exit handlers itself; with the joblib launcher's loky workers still alive,
    multiprocessing's handler used to wait for their 300 s idle timeout (every joblib sweep ended 5 min late)."""
    code = ("import sys, time\n"
            "from joblib import Parallel, delayed\n"
            "Parallel(n_jobs=2, backend='loky')(delayed(int)(1) for _ in range(4))  # as the joblib launcher\n"
            "sys.argv = ['xmlthresh', '--help']\n"
            "from xmlthresh.cli import console\n"
            "console()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Usage: xmlthresh" in proc.stdout
