"""``python -m xmlthresh.ui``: the MLflow UI on 127.0.0.1 against the project's store (``make ui``).

Starts ``mlflow server`` with one worker and without MLflow's background job runner, so it is up in a few
seconds; stop it with Ctrl-C. ``--port`` (default 5000) and ``--uri`` (default runs/mlflow.db) can change.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import Sequence

from .tracking import artifact_root_for, default_tracking_uri


def server_command(uri: str, port: int, host: str = "127.0.0.1") -> tuple[list[str], dict[str, str]]:
    """The command line and environment that serve ``uri`` on host:port."""
    mlflow = shutil.which("mlflow", path=str(Path(sys.executable).parent)) or "mlflow"
    command = [mlflow, "server", "--backend-store-uri", uri, "--host", host, "--port", str(port), "--workers", "1"]
    artifacts = artifact_root_for(uri)
    if artifacts:
        command += ["--default-artifact-root", artifacts]
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    return command, env


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xmlthresh.ui", description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", default=None, help="tracking store (default: sqlite:///<project>/runs/mlflow.db)")
    parser.add_argument("--port", type=int, default=5000)
    args = parser.parse_args(argv)
    uri = args.uri or default_tracking_uri()
    command, env = server_command(uri, args.port)
    print(f"MLflow UI on http://127.0.0.1:{args.port} for {uri} (Ctrl-C stops it)", flush=True)
    os.execvpe(command[0], command, env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
