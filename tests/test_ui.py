"""``xmlthresh ui`` (and ``make ui``): the MLflow UI starts on loopback against the project's store, serves a job's runs through its
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


def test_the_ui_command_runs_one_loopback_worker_without_the_job_runner(isolated_home):
    """``xmlthresh ui --dry-run`` checks the store and prints MLflow's server command: the project's store, its
    artifact root, loopback, one worker; ``make ui`` is that command."""
    cfg = {"strategy": {"name": "domain"}, "dataset": {"loader": "synthetic", "n_labels": 5, "num_docs": 40},
           "warm_up": False, "plots": False, "tracking": {"enabled": True, "experiment": "xmlthresh"}}
    run_job(cfg, isolated_home / "run")
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", "ui", "--port", "5123", "--dry-run"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "http://127.0.0.1:5123/#/experiments?workflowType=machine_learning" in proc.stdout  # Model training
    assert "add once under Columns the metrics f_macro, lower_bound, upper_bound" in proc.stdout
    command = shlex.split(proc.stdout.strip().splitlines()[-1])
    assert command[1:4] == ["-m", "mlflow", "server"]
    flags = dict(zip(command[4::2], command[5::2]))
    assert flags == {"--backend-store-uri": default_tracking_uri(),
                     "--default-artifact-root": artifact_root_for(default_tracking_uri()),
                     "--host": "127.0.0.1", "--port": "5123", "--workers": "1"}
    made = subprocess.run(make_ui("UI_PORT=5123", dry_run=True), capture_output=True, text=True, check=True)
    assert shlex.split(made.stdout.strip())[1:] == ["ui", "--uri", default_tracking_uri(), "--port", "5123"]


def test_the_ui_command_refuses_a_missing_store_in_one_line(tmp_path, isolated_home):
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", "ui", "--uri", f"sqlite:///{tmp_path}/nosuch.db"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stderr.strip().count("\n") == 0 and "does not exist" in proc.stderr
    assert not (tmp_path / "nosuch.db").exists()


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
        # the project's experiment opens in the model-training view
        tags = {t["key"]: t["value"] for t in api(base, f"experiments/get?experiment_id={experiment_id}")[
            "experiment"].get("tags", [])}
        assert tags["mlflow.experimentKind"] == "custom_model_development"
        taken = subprocess.run([sys.executable, "-m", "xmlthresh", "ui", "--port", str(port)],  # the UI holds it
                               capture_output=True, text=True, timeout=120)
        assert taken.returncode == 1 and f"port {port} is in use" in taken.stderr
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
