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
    ("estimator=nosuch", "xmlthresh: error: unknown estimator option 'nosuch'; known: ckde, flexcode, gmm"),
    ("cde_dataset=nosuch", "xmlthresh: error: unknown cde_dataset option 'nosuch'; known: direct_vs_approx/fork, "),
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
    if "option 'nosuch'" in expected:  # one line, checked before Hydra composes (not its dozen lines)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
