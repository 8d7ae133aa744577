"""Local run records and their way into MLflow (xmlthresh.tracking.record, xmlthresh.tracking.sync): nothing is
lost when a process dies, nothing is sent twice, a single run does not wait for mlflow, `xmlthresh sync`
sends what is left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xmlthresh.tracking import mlflow_runs as tracking
from xmlthresh.tracking.record import RECORD_FILE, pending_records, read_record, tracked_run
from xmlthresh.tracking.sync import RecordBusy, sync_record


def _runs(uri: str):
    import mlflow

    client = mlflow.MlflowClient(uri)
    experiment = client.get_experiment_by_name("exp")
    return [] if experiment is None else client.search_runs([experiment.experiment_id])


def test_a_run_is_recorded_before_anything_reaches_mlflow(tmp_path, isolated_home):
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    with tracked_run(True, uri, "exp", run_name="r", run_dir=tmp_path / "run", sync="off") as tracker:
        tracker.log_params({"a": 1, "b": None})
        tracker.log_metrics({"f": 0.25})
        tracker.set_tags({"t": "x"})
        tracker.log_text("k: v\n", "config.yaml")
        record = read_record(tmp_path / "run" / RECORD_FILE)
        assert record["status"] == "RUNNING" and record["tags"]["xmlthresh.pid"] == str(os.getpid())
    record = read_record(tmp_path / "run" / RECORD_FILE)
    assert record["status"] == "FINISHED" and record["params"] == {"a": "1", "b": "null"}
    assert record["metrics"] == {"f": 0.25} and record["texts"] == {"config.yaml": "k: v\n"}
    assert record["end_time"] >= record["start_time"] and not record["synced"]
    assert pending_records() == [(tmp_path / "run" / RECORD_FILE).resolve()]
    assert not (tmp_path / "store.db").exists() or _runs(uri) == []  # off: nothing sent yet

    sent = sync_record(tmp_path / "run" / RECORD_FILE)
    assert sent["synced"] and pending_records() == []
    (run,) = _runs(uri)
    assert run.info.run_id == sent["mlflow_run_id"] and run.info.status == "FINISHED"
    assert run.info.start_time == record["start_time"] and run.info.end_time == record["end_time"]
    assert run.data.params == {"a": "1", "b": "null"} and run.data.metrics == {"f": 0.25}
    assert run.data.tags["t"] == "x" and run.data.tags["mlflow.runName"] == "r"
    assert sync_record(tmp_path / "run" / RECORD_FILE)["mlflow_run_id"] == run.info.run_id  # never twice
    assert len(_runs(uri)) == 1


def test_a_failed_run_is_recorded_failed_with_its_error_and_the_params_it_would_have_logged(tmp_path, isolated_home):
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    with pytest.raises(ZeroDivisionError):
        with tracked_run(True, uri, "exp", run_dir=tmp_path / "run", failure_params={"beta": -1}) as tracker:
            1 / 0
    (run,) = _runs(uri)
    assert run.info.status == "FAILED" and "ZeroDivisionError" in run.data.tags["error"]
    assert run.data.params == {"beta": "-1"} and tracker.run_id == run.info.run_id


def test_an_interrupted_send_continues_the_same_run(tmp_path, isolated_home, monkeypatch):
    """The MLflow run's id is written into the record as soon as the run exists: a send that dies after that
    (here: uploading an artifact) continues the same run the next time, instead of creating a second."""
    import mlflow

    uri = f"sqlite:///{tmp_path / 'store.db'}"
    artifact = tmp_path / "run" / "thresholds.csv"
    artifact.parent.mkdir()
    artifact.write_text("label,threshold\n0,0.5\n")
    with tracked_run(True, uri, "exp", run_dir=tmp_path / "run", sync="off") as tracker:
        tracker.log_metrics({"f": 0.5})
        tracker.log_artifact(artifact)
    path = tmp_path / "run" / RECORD_FILE

    def broken(self, run_id, local_path, artifact_path=None):
        raise OSError("disk full")

    monkeypatch.setattr(mlflow.MlflowClient, "log_artifact", broken)
    from xmlthresh.tracking.sync import SendFailedError

    with pytest.raises(SendFailedError, match=r"could not be completed \(OSError: disk full\): it is marked FAILED"):
        sync_record(path)
    half = read_record(path)
    assert half["mlflow_run_id"] and not half["synced"] and pending_records() == [path.resolve()]
    assert [run.info.status for run in _runs(uri)] == ["FAILED"]  # was left RUNNING
    monkeypatch.undo()
    sent = sync_record(path)
    assert sent["mlflow_run_id"] == half["mlflow_run_id"]
    (run,) = _runs(uri)
    assert run.info.status == "FINISHED" and run.data.metrics == {"f": 0.5}
    assert [a.path for a in mlflow.MlflowClient(uri).list_artifacts(run.info.run_id)] == ["thresholds.csv"]


def test_a_record_whose_process_is_gone_is_sent_killed_and_a_live_one_waits(tmp_path, isolated_home):
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    script = (f"import os, sys\nfrom xmlthresh.tracking.record import tracked_run\n"
              f"with tracked_run(True, {uri!r}, 'exp', run_name='victim', run_dir=sys.argv[1], sync='off'):\n"
              f"    print('started', flush=True)\n    os._exit(9)\n")
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "dead")], check=False, capture_output=True,
                   env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=120)
    with tracked_run(True, uri, "exp", run_dir=tmp_path / "alive", sync="off"):
        live = sync_record(tmp_path / "alive" / RECORD_FILE)  # this process still runs it
        assert live["status"] == "RUNNING" and not live["synced"]
        dead = sync_record(tmp_path / "dead" / RECORD_FILE)
    assert dead["status"] == "KILLED" and dead["synced"]
    (run,) = [run for run in _runs(uri) if run.info.run_name == "victim"]
    assert run.info.status == "KILLED" and "ended without closing this run" in run.data.tags["error"]


def test_a_record_another_process_sends_is_not_sent_twice(tmp_path, isolated_home):
    from filelock import FileLock

    uri = f"sqlite:///{tmp_path / 'store.db'}"
    with tracked_run(True, uri, "exp", run_dir=tmp_path / "run", sync="off"):
        pass
    path = tmp_path / "run" / RECORD_FILE
    with FileLock(str(path) + ".lock"):
        script = ("import sys\nfrom xmlthresh.tracking.sync import RecordBusy, sync_record\n"
                  "try:\n    sync_record(sys.argv[1], wait=False)\nexcept RecordBusy:\n    print('busy')\n")
        proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert proc.stdout.strip() == "busy", proc.stderr
    assert isinstance(RecordBusy("x"), Exception)
    assert sync_record(path)["synced"] and len(_runs(uri)) == 1


def test_a_single_run_is_sent_in_the_background_and_sync_wait_waits_for_it(tmp_path, isolated_home):
    """The default for a single run: the command returns before mlflow is imported; a detached process sends
    the record (and notes its own CPU time); ``xmlthresh sync --wait`` waits for it."""
    env = {**os.environ, "XMLTHRESH_TRACKING_SYNC": "background", "PYTHONPATH": os.pathsep.join(sys.path)}
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", "strategy=independent", "plots=false",
                           f"tracking.uri={uri}", "tracking.experiment=exp"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "sending in the background" in proc.stdout and "mlflow run:" not in proc.stdout
    result_path = Path(proc.stdout.split("result: ")[1].split()[0])
    wait = subprocess.run([sys.executable, "-m", "xmlthresh", "sync", "--wait"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert wait.returncode == 0, wait.stderr
    deadline = time.monotonic() + 120
    record = read_record(result_path.parent / RECORD_FILE)
    while "sync_cpu_seconds" not in record and time.monotonic() < deadline:  # noted after the send
        time.sleep(0.2)
        record = read_record(result_path.parent / RECORD_FILE)
    assert record["synced"] and record["sync_cpu_seconds"] > 0
    assert json.loads(result_path.read_text())["mlflow_run_id"] == record["mlflow_run_id"]
    (run,) = _runs(uri)
    assert run.info.run_id == record["mlflow_run_id"] and run.info.status == "FINISHED"
    assert run.data.metrics["f_macro"] == json.loads(result_path.read_text())["f_macro"]
    assert (isolated_home / "runs" / "sync.log").is_file()


def test_xmlthresh_sync_sends_what_was_left_and_says_so(tmp_path, isolated_home):
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    for name in ("a", "b"):
        with tracked_run(True, uri, "exp", run_name=name, run_dir=tmp_path / name, sync="off"):
            pass
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", "sync"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "2 run(s) sent" in proc.stdout
    assert sorted(run.info.run_name for run in _runs(uri)) == ["a", "b"] and pending_records() == []


def test_an_unknown_sync_mode_is_one_clear_error(tmp_path, isolated_home):
    from xmlthresh._util.registry import ConfigError

    with pytest.raises(ConfigError, match="tracking.sync must be one of background, foreground, off"):
        with tracked_run(True, None, "exp", run_dir=tmp_path, sync="later"):
            pass
    assert tracking.default_tracking_uri().endswith("mlflow.db")


def test_a_pending_run_whose_folder_is_gone_is_dropped_with_a_warning(isolated_home, tmp_path, caplog):
    """Its record deleted with its folder, a run can never reach MLflow: ``xmlthresh sync`` said "0 run(s) sent"
    and removed its marker in silence."""
    import shutil

    with tracked_run(True, f"sqlite:///{tmp_path / 'store.db'}", "exp", run_name="r", run_dir=tmp_path / "run",
                     sync="off") as tracker:
        tracker.log_metrics({"f": 0.25})
    shutil.rmtree(tmp_path / "run")
    with caplog.at_level("WARNING"):
        assert pending_records() == []
    assert f"its record {tmp_path / 'run' / RECORD_FILE} is gone" in caplog.text
    assert pending_records() == [] and "never sent" not in caplog.text.split("gone", 1)[1]  # said once
