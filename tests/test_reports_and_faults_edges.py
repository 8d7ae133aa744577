"""Reports and studies read every job's result.json by one rule and answer in one line; a sweep folder is
held by one sweep at a time; what the background syncer repairs is said by the next command; CDE inputs
that are not finite, sparse, or more than the data allow are named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from xmlthresh._util.notices import IgnoredSettingWarning
from xmlthresh.cde.registry import CDE_DATASETS, ESTIMATORS
from xmlthresh.report import comparison
from xmlthresh.report.result_files import ResultFileError, read_result
from xmlthresh.report.studies import main as studies_main
from xmlthresh.report.tables import results_table
from xmlthresh.run.sweep import SWEEP_LOCK, hold_sweep_folder, release_sweep_folder
from xmlthresh.tracking.store import BROKEN_INFIX, NOTICE_SUFFIX, announce_store_notices
from xmlthresh.validation import InputError

THRESHOLDS_JOB = {"task": "thresholds", "strategy": "domain", "dataset": "synthetic", "f_macro": 0.5, "beta": 1.0}
CDE_JOB = {"task": "cde", "estimator": "nnkcde", "dataset": "surd", "rel_loss_direct": -0.5, "seed": 0,
           "cde_dataset_params": {"d": 0.1}}


def _sweep(folder, *jobs):
    for number, job in enumerate(jobs):
        (folder / str(number)).mkdir(parents=True)
        text = job if isinstance(job, str) else json.dumps(job)
        (folder / str(number) / "result.json").write_text(text)
    return folder


@pytest.mark.fast
@pytest.mark.parametrize("text, message", [
    ("[]", r"is not a JSON object but a list; re-run that job or delete its folder"),
    ('{"f_macro": 0.5', r"is not valid JSON"),
    ('{"f_macro": "abc"}', r": f_macro must be a number, got 'abc'"),
    ('{"rel_loss_direct": "n/a"}', r": rel_loss_direct must be a number, got 'n/a'"),
])
def test_a_result_file_jobs_do_not_write_is_named(tmp_path, text, message):
    path = tmp_path / "result.json"
    path.write_text(text)
    with pytest.raises(ResultFileError, match=message):
        read_result(path)


@pytest.mark.fast
@pytest.mark.parametrize("study, jobs, message", [
    ("cde_sweep", [THRESHOLDS_JOB], "the cde_sweep study reads CDE jobs (task=cde), and"),
    ("transfer", [CDE_JOB], "the transfer study reads thresholds jobs, and"),
    ("cde_sweep", [CDE_JOB, "[]"], "is not a JSON object but a list"),
    ("cde_sweep", [CDE_JOB, {**CDE_JOB, "rel_loss_direct": "n/a"}], "rel_loss_direct must be a number, got 'n/a'"),
    ("cde_sweep", [CDE_JOB, CDE_JOB], "no swept numeric data-set parameter among the jobs"),
])
def test_a_study_of_jobs_it_cannot_read_is_one_line(tmp_path, capsys, study, jobs, message):
    sweep = _sweep(tmp_path / "sw", *jobs)
    assert studies_main([study, str(sweep)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("xmlthresh.report.studies: error: ") and message in err[0], err


@pytest.mark.fast
def test_the_comparison_page_leaves_out_a_job_it_cannot_read_and_says_so(tmp_path, caplog):
    sweep = _sweep(tmp_path / "sw", THRESHOLDS_JOB, "[]", {**THRESHOLDS_JOB, "f_macro": "abc"})
    table = results_table(sweep)
    assert list(table["run_id"]) == ["0"]
    assert "left out of the report" in caplog.text and "is not a JSON object" in caplog.text
    assert "f_macro must be a number, got 'abc'" in caplog.text


@pytest.mark.fast
def test_an_interrupted_report_is_one_line(monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(comparison, "report", interrupted)
    assert comparison.main(["--results", "."]) == 130
    assert capsys.readouterr().err.strip() == "python -m xmlthresh.report: interrupted; no report was written"


@pytest.mark.fast
def test_a_sweep_folder_is_held_by_one_sweep_at_a_time(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from xmlthresh.run.sweep import hold_sweep_folder; "
        f"assert hold_sweep_folder(Path({str(tmp_path)!r})) is None; print('held', flush=True); time.sleep(30)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        problem = hold_sweep_folder(tmp_path)
        assert problem == (f"{tmp_path}: another sweep is running in this folder; wait for it to end, or give this "
                           "one another hydra.sweep.dir")
    finally:
        holder.kill()
        holder.wait()
    deadline = time.monotonic() + 10  # a launcher killed with kill -9 frees the folder
    while hold_sweep_folder(tmp_path) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (tmp_path / SWEEP_LOCK).exists()
    release_sweep_folder()


@pytest.mark.fast
def test_a_store_the_background_syncer_moved_aside_is_said_once(tmp_path, caplog):
    store = tmp_path / "mlflow.db"
    notice = tmp_path / f"mlflow.db{BROKEN_INFIX}20261206-120000-1{NOTICE_SUFFIX}"
    notice.write_text("tracking store sqlite:///x could not be used (...): moved it aside to y\n")
    announce_store_notices(store)
    assert "while syncing in the background: tracking store sqlite:///x could not be used" in caplog.text
    assert not notice.exists()
    caplog.clear()
    announce_store_notices(store)
    assert "while syncing" not in caplog.text


@pytest.mark.fast
@pytest.mark.parametrize("params, message", [
    ({"alpha": [np.inf, 0.3]}, r"cde_dataset\.alpha must be a list of finite numbers, got \[inf, 0\.3\]"),
    ({"phi": np.nan}, r"cde_dataset\.phi must be a finite number, got nan"),
])
def test_numbers_that_are_not_finite_are_named_in_lists_too(params, message):
    with pytest.raises(InputError, match=message):
        CDE_DATASETS.build("surd", params)


@pytest.mark.fast
def test_a_sparse_feature_matrix_to_a_density_estimator_says_to_densify():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"X is a sparse matrix, which the density estimators do not take; pass "
                                         r"X\.toarray\(\)"):
        ESTIMATORS.build("nnkcde", {}).fit(sp.csr_matrix(rng.random((40, 3))), rng.random((40, 1)))


@pytest.mark.fast
def test_more_xanes_components_than_the_data_allow_are_said(real_data, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_DATA", str(real_data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = CDE_DATASETS.build("xanes", {"n_components": 100000}).load(0)
    said = [str(w.message) for w in caught if issubclass(w.category, IgnoredSettingWarning)]
    assert said and said[0].startswith("cde_dataset.n_components=100000 is more than the data allow")
    assert data.info["n_components"] == data.X_train.shape[1] < 100000
