"""The MLflow UI: starts on loopback against a store, serves a sweep's runs through its REST API, stops."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request

from xmlthresh.job import run_job
from xmlthresh.ui import server_command


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_ui_serves_runs_over_rest(tmp_path, isolated_home):
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    cfg = {"strategy": {"name": "domain"}, "dataset": {"loader": "synthetic", "n_labels": 20, "num_docs": 100},
           "warm_up": False, "plots": False, "tracking": {"enabled": True, "uri": uri, "experiment": "xmlthresh"}}
    result = run_job(cfg, tmp_path / "run")
    port = free_port()
    command, env = server_command(uri, port)
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}/api/2.0/mlflow"
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/experiments/get-by-name?experiment_name=xmlthresh", timeout=5) as r:
                    experiment_id = json.load(r)["experiment"]["experiment_id"]
                break
            except OSError:
                assert server.poll() is None, "the UI server exited"
                assert time.monotonic() < deadline, "the UI did not come up within 120 s"
                time.sleep(0.5)
        request = urllib.request.Request(f"{base}/runs/search", method="POST",
                                         data=json.dumps({"experiment_ids": [experiment_id]}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            runs = json.load(response)["runs"]
        assert [run["info"]["run_id"] for run in runs] == [result["mlflow_run_id"]]
        metrics = {m["key"]: m["value"] for m in runs[0]["data"]["metrics"]}
        assert abs(metrics["f_macro"] - result["f_macro"]) < 1e-12
    finally:
        server.terminate()
        server.wait(timeout=30)
