"""``make ui``: the MLflow UI starts on loopback against the project's store, serves a job's runs through its
REST API with the artifact root xmlthresh.tracking.mlflow_runs uses, and stops."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from xmlthresh.run.job import run_job
from xmlthresh.tracking.mlflow_runs import artifact_root_for, default_tracking_uri

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.executable).parent.parent


def make_ui(*variables: str, dry_run: bool = False) -> list[str]:
    """``make ui`` with this interpreter's environment as the venv (``-o``: never (re)install into it)."""
    return ["make", "-s", "-C", str(ROOT), *(["-n"] if dry_run else []), "-o", str(VENV / ".installed"), "ui",
            f"VENV={VENV}", *variables]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def api(base: str, endpoint: str, payload: dict | None = None) -> dict:
    """GET (no payload) or POST ``payload`` to the MLflow REST API."""
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(f"{base}/{endpoint}", data=data, method="GET" if data is None else "POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def test_make_ui_runs_one_loopback_worker_without_the_job_runner(isolated_home):
    proc = subprocess.run(make_ui("UI_PORT=5123", dry_run=True), capture_output=True, text=True, check=True)
    hints, server = proc.stdout.split("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", 1)
    assert "http://127.0.0.1:5123/#/experiments?workflowType=machine_learning" in hints  # the Model training view
    command = shlex.split("MLFLOW_SERVER_ENABLE_JOB_EXECUTION" + server.replace("\\\n", " "))
    assert command[0] == "MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false"
    assert command[1:3] == [str(VENV / "bin" / "mlflow"), "server"]
    flags = dict(zip(command[3::2], command[4::2]))
    assert flags == {"--backend-store-uri": default_tracking_uri(),
                     "--default-artifact-root": artifact_root_for(default_tracking_uri()),
                     "--host": "127.0.0.1", "--port": "5123", "--workers": "1"}


@pytest.mark.skipif(sys.platform == "win32", reason="make and process groups")
def test_make_ui_serves_the_project_runs_over_rest(isolated_home):
    cfg = {"strategy": {"name": "domain"}, "dataset": {"loader": "synthetic", "n_labels": 20, "num_docs": 100},
           "warm_up": False, "plots": False, "tracking": {"enabled": True, "experiment": "xmlthresh"}}
    result = run_job(cfg, isolated_home / "run")  # into the default store of the project root
    port = free_port()
    server = subprocess.Popen(make_ui(f"UI_PORT={port}"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}/api/2.0/mlflow"
        deadline = time.monotonic() + 120
        while True:
            try:
                experiment_id = api(base, "experiments/get-by-name?experiment_name=xmlthresh")["experiment"][
                    "experiment_id"]
                break
            except OSError:
                assert server.poll() is None, "the UI server exited"
                assert time.monotonic() < deadline, "the UI did not come up within 120 s"
                time.sleep(0.5)
        runs = api(base, "runs/search", {"experiment_ids": [experiment_id]})["runs"]
        assert [run["info"]["run_id"] for run in runs] == [result["mlflow_run_id"]]
        metrics = {m["key"]: m["value"] for m in runs[0]["data"]["metrics"]}
        assert abs(metrics["f_macro"] - result["f_macro"]) < 1e-12
        # an experiment created in the UI keeps its artifacts where the project's runs keep theirs
        created = api(base, "experiments/create", {"name": "from-the-ui"})["experiment_id"]
        location = api(base, f"experiments/get?experiment_id={created}")["experiment"]["artifact_location"]
        assert location == f"{artifact_root_for(default_tracking_uri())}/{created}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
