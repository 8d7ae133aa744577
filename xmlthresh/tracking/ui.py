"""``xmlthresh ui``: MLflow's web UI on the project's tracking store, on the loopback interface.

The store is the one runs are tracked to (``runs/mlflow.db`` of the project root unless ``--uri`` names
another); a store that does not exist yet is refused (there is nothing to show) rather than created. Every
experiment in it that has no kind yet is marked as a model-training experiment (``mlflow.experimentKind``,
through ``MlflowClient.set_experiment_tag``), so the UI opens its runs table rather than the GenAI view.
MLflow's UI cannot be told which metric columns to show, so the command prints the ones to add. The UI
itself is MLflow's public command, ``python -m mlflow server`` (one worker, no job runner), run in a child
process until Ctrl-C.
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import subprocess
import sys

from xmlthresh._util.errors import first_line, user_error_types

PROG = "xmlthresh ui"
#: the metric and param columns worth adding in the runs table, in the order they read best
METRIC_COLUMNS = ("f_macro", "lower_bound", "upper_bound", "gap", "macro_f", "micro_f", "fit_seconds")
PARAM_COLUMNS = ("strategy", "dataset", "beta")
#: the UI's address of the model-training view (MLflow 3 opens on its GenAI view otherwise)
MODEL_TRAINING_VIEW = "#/experiments?workflowType=machine_learning"
DEFAULT_PORT = 5000


def port_problem(host: str, port: int) -> str | None:
    """Why the UI could not listen on ``host:port`` (in use, not allowed), or None when it can."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"port {port} is in use (another UI or server?); choose another with --port"
            return f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose another --port"
    return None


def mark_model_training(uri: str) -> int:
    """Give every experiment of the store without a kind the model-training kind; returns how many changed."""
    from xmlthresh.tracking.mlflow_runs import EXPERIMENT_KIND_TAG, EXPERIMENT_TAGS, client_for

    client = client_for(uri)
    changed = 0
    for experiment in client.search_experiments():
        if EXPERIMENT_KIND_TAG not in experiment.tags:
            client.set_experiment_tag(experiment.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_TAGS[EXPERIMENT_KIND_TAG])
            changed += 1
    return changed


def ui_command(uri: str, host: str, port: int) -> list[str]:
    """The command line of MLflow's server on the store ``uri``: one worker, artifacts beside a sqlite store."""
    from xmlthresh.tracking.mlflow_runs import artifact_root_for

    argv = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri, "--host", host, "--port", str(port),
            "--workers", "1"]
    artifacts = artifact_root_for(uri)
    return argv + (["--default-artifact-root", artifacts] if artifacts else [])


def command(args: list[str]) -> int:
    """``xmlthresh ui [--uri URI] [--port N]``: serve the runs until Ctrl-C; exit code 1 with one line when the
    store does not exist or cannot be read, or the port is taken."""
    parser = argparse.ArgumentParser(prog=PROG, description=(
        "Start MLflow's web UI on the project's tracking store (runs/mlflow.db unless --uri), on 127.0.0.1."))
    parser.add_argument("--uri", help="tracking store (default: the project's runs/mlflow.db)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    parser.add_argument("--dry-run", action="store_true", help="check the store and print the command, start nothing")
    options = parser.parse_args(args)
    if not 0 < options.port < 65536:
        parser.error(f"--port must be in 1..65535, got {options.port}")
    host = "127.0.0.1"
    try:
        from xmlthresh.tracking.mlflow_runs import default_tracking_uri, mlflow_error_types, open_store
        from xmlthresh.tracking.store import check_store_exists

        uri = options.uri or default_tracking_uri()
        check_store_exists(uri)
        open_store(uri, repair=False)
        mark_model_training(uri)
    except (*user_error_types(), *mlflow_error_types()) as exc:
        print(f"{PROG}: error: {first_line(exc)}", file=sys.stderr)
        return 1
    problem = port_problem(host, options.port)
    if problem is not None:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 1
    print(f"{PROG}: MLflow's UI on {uri} at http://{host}:{options.port}/{MODEL_TRAINING_VIEW} (Ctrl-C stops it)")
    print(f"{PROG}: in an experiment's runs table, add once under Columns the metrics {', '.join(METRIC_COLUMNS)} "
          f"and the params {', '.join(PARAM_COLUMNS)} (MLflow's UI cannot be told which to show; the browser keeps "
          "the choice)")
    argv = ui_command(uri, host, options.port)
    if options.dry_run:
        print(" ".join(argv))
        return 0
    try:  # no job runner: the UI only shows runs
        return subprocess.call(argv, env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"})
    except KeyboardInterrupt:  # the child got the same Ctrl-C and stops on its own
        return 0
