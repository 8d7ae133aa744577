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
    ('{"f_macro": 1.7}', r": f_macro must be a number in \[0, 1\] \(an F-measure, a precision or a recall\), got 1\.7"),
    ('{"upper_bound": NaN}', r": upper_bound must be a number in \[0, 1\]"),
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


@pytest.mark.fast
@pytest.mark.parametrize("name, params, message", [
    ("nnkcde", {"k_grid": [5000]}, "nnkcde: k_grid value(s) [5000] exceed the rows the grid is fitted on (150); "
                                   "used as 150"),
    ("flexcode", {"k_grid": [5000, 5]}, "flexcode: k_grid value(s) [5000] exceed"),
    ("gmm", {"n_components_grid": [500]}, "gmm: n_components_grid value(s) [500] exceed half the rows"),
    ("ckde", {"n_neighbors": 100000}, "ckde: n_neighbors value(s) [100000] exceed the training rows (200)"),
])
def test_a_grid_value_above_what_the_data_allow_is_said(name, params, message):
    rng = np.random.default_rng(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ESTIMATORS.build(name, params).fit(rng.random((200, 3)), rng.random((200, 1)))
    said = [str(w.message) for w in caught if issubclass(w.category, IgnoredSettingWarning)]
    assert any(text.startswith(message) for text in said), said


@pytest.mark.fast
def test_the_default_grids_adapt_to_small_data_without_a_word():
    rng = np.random.default_rng(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ESTIMATORS.build("nnkcde", {}).fit(rng.random((60, 3)), rng.random((60, 1)))
    assert not [w for w in caught if issubclass(w.category, IgnoredSettingWarning)]


@pytest.mark.fast
def test_an_argv_study_without_argv_files_is_one_line(tmp_path, capsys):
    sweep = _sweep(tmp_path / "sw", THRESHOLDS_JOB)
    assert studies_main(["argv", str(sweep)]) == 1
    err = capsys.readouterr().err
    assert "the argv study reads the argv.csv its jobs draw, and no job of" in err and "plots=true" in err


def test_a_tracking_server_that_refuses_the_api_is_one_line(isolated_home):
    import http.server
    import threading

    from helpers import run_cli

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        uri = f"http://127.0.0.1:{server.server_address[1]}"
        proc = run_cli([f"tracking.uri={uri}", "tracking.sync=foreground", "plots=false", "dataset.n_labels=8",
                        "dataset.num_docs=60"], env={"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"})
    finally:
        server.shutdown()
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"xmlthresh: error: the tracking store {uri} refused a request (") and \
        "fix tracking.uri" in last


def test_a_job_run_given_as_the_sweep_points_to_its_sweep(isolated_home, capsys):
    from helpers import run_cli
    from xmlthresh.tracking.mlflow_runs import client_for, default_tracking_uri

    proc = run_cli(["-m", "strategy=domain,independent", "dataset.n_labels=8", "dataset.num_docs=60", "plots=false",
                    "tracking.sync=foreground"])
    assert proc.returncode == 0, proc.stderr
    client = client_for(default_tracking_uri())
    runs = client.search_runs([client.get_experiment_by_name("xmlthresh").experiment_id])
    job = next(run for run in runs if run.data.tags.get("mlflow.parentRunId"))
    parent = job.data.tags["mlflow.parentRunId"]
    capsys.readouterr()
    assert comparison.main(["--sweep", job.info.run_id]) == 1
    assert capsys.readouterr().err.strip() == (f"python -m xmlthresh.report: error: {job.info.run_id!r} is the run of "
                                               f"one job of the sweep {parent}; pass --sweep {parent}")


def test_ctrl_c_in_a_report_command_is_one_line_wherever_it_lands():
    code = ("import os, signal, time; from xmlthresh.report.interrupt import end_at_interrupt; "
            "end_at_interrupt('python -m xmlthresh.report'); os.kill(os.getpid(), signal.SIGINT); time.sleep(5)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 130
    assert proc.stderr.strip() == "python -m xmlthresh.report: interrupted; no report was written"


def test_no_density_points_draws_no_density_picture(isolated_home):
    from helpers import run_cli

    proc = run_cli(["task=cde", "cde_dataset.n_train=120", "cde_dataset.n_test=30", "cde.n_samples=8",
                    "cde.n_plot_points=0", "plots=true", "tracking.enabled=false"])
    assert proc.returncode == 0, proc.stderr
    assert list(isolated_home.rglob("result.json")) and not list(isolated_home.rglob("densities.png"))


@pytest.mark.fast
def test_a_cde_study_names_a_job_array_it_cannot_read_and_refuses_other_data(tmp_path, capsys):
    job = {**CDE_JOB, "dataset": "xanes", "cde_dataset_params": {"targets": ["a"]}}
    sweep = _sweep(tmp_path / "sw", job)
    (sweep / "0" / "per_point.npz").write_bytes(b"PK\x03\x04 cut short")
    assert studies_main(["cde_xanes", str(sweep)]) == 1
    err = capsys.readouterr().err
    assert f"{sweep / '0' / 'per_point.npz'} cannot be read" in err and "re-run that job" in err
    other = _sweep(tmp_path / "surd", CDE_JOB)
    assert studies_main(["cde_xanes", str(other)]) == 1
    assert "the cde_xanes study reads jobs on the XANES data (cde_dataset=xanes), and" in capsys.readouterr().err
