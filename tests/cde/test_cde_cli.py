"""task=cde from the command line: unknown estimator / data set names and unknown parameters are one clear
error (exit code 1, no traceback), not KeyError / TypeError tracebacks (issue 16). The command line runs in
this process (``xmlthresh.cli.entry.main``: a fresh interpreter would spend 3-4 s on imports per case); the
console script's own one-line exit is tested through a real process in tests/test_user_errors.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import run_cli

TINY = ("cde_dataset.n_train=60", "cde_dataset.n_test=20", "tracking.enabled=false", "plots=false")


def run_cde(*overrides: str, home: Path) -> subprocess.CompletedProcess:
    return run_cli(["task=cde", *overrides, *TINY], env={"XMLTHRESH_HOME": str(home)})


@pytest.mark.parametrize("override, expected", [
    ("estimator=nosuch", "xmlthresh: error: unknown estimator option 'nosuch'; known: ckde, flexcode, "),
    ("cde_dataset=nosuch", "xmlthresh: error: unknown cde_dataset option 'nosuch'; known: direct_vs_approx/fork, "),
    ("estimator.name=nosuch", "xmlthresh: error: estimator.name=nosuch: estimator.name is what the chosen estimator "
                              "option builds, set by the option itself; choose the option instead: estimator=nosuch"),
    ("+estimator.bogus=1", "xmlthresh: error: estimator 'nnkcde' has no parameter(s) bogus; its parameters:"),
    ("+cde_dataset.bogus=1", "xmlthresh: error: cde_dataset 'surd' has no parameter(s) bogus"),
    ("estimator=flexcode estimator.floor_grid=[0.0]", "xmlthresh: error: flexcode: every value of floor_grid"),
    ("estimator.tune=false", "xmlthresh: error: nnkcde: tune=false fixes the hyper-parameters, so every grid"),
])
def test_bad_names_and_parameters_are_one_clear_error(override, expected, isolated_home, monkeypatch):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    proc = run_cde(*override.split(), home=isolated_home)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert expected in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "KeyError" not in proc.stderr
    if "option 'nosuch'" in expected:  # one line, checked before Hydra composes (not its dozen lines)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
