"""The tracking store survives concurrent starts and says in one line why it cannot be used (issue 17):
three processes on a new sqlite store all succeed; a store MLflow cannot open is repaired by MLflow or moved
aside (only MLflow's public client and command touch its tables); a directory, a read-only file,
a file that is not a database, an unwritable place and an unreachable server are one error naming the URI,
within seconds; ``tracking.enabled=false`` needs no store."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from xmlthresh.tracking import mlflow_runs as tracking
from xmlthresh.tracking.record import tracked_run
from xmlthresh.tracking import store as tracking_store
from xmlthresh.tracking.store import TrackingStoreError, retry_when_locked

ROOT = Path(__file__).resolve().parents[1]

#: one process of the race: import what a run imports, say it is ready, wait until every racer is, then one
#: tracked run with a metric -- so the processes hit the new store together, however long their imports take
RACER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import mlflow
    from xmlthresh.tracking.record import tracked_run
    uri, barrier, n = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    (barrier / f"ready-{sys.argv[4]}").touch()
    deadline = time.time() + 120
    while len(list(barrier.glob("ready-*"))) < n and time.time() < deadline:
        time.sleep(0.005)
    with tracked_run(True, uri, "race", run_dir=barrier / f"run-{sys.argv[4]}", sync="foreground") as tracker:
        tracker.log_metrics({"x": 1.0})
""")

#: rounds of the three-process race on a new sqlite store (issue 17's acceptance: 10; the default suite: 1)
RACE_ROUNDS = int(os.environ.get("XMLTHRESH_RACE_ROUNDS", "1"))


def _race(uri: str, barrier: Path, n: int = 3) -> list[subprocess.CompletedProcess]:
    """``n`` processes that open the store ``uri`` at the same moment (a file barrier in ``barrier``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "XMLTHRESH_HOME": str(barrier)}  # the runs' pending markers
    barrier.mkdir(parents=True)
    procs = [subprocess.Popen([sys.executable, "-c", RACER, uri, str(barrier), str(n), str(k)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(n)]
    return [subprocess.CompletedProcess(p.args, p.wait(timeout=300), *p.communicate()) for p in procs]


def _finished_runs(uri: str) -> int:
    import mlflow

    client = mlflow.MlflowClient(uri)
    experiment = client.get_experiment_by_name("race")
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    return sum(run.info.status == "FINISHED" and run.data.metrics.get("x") == 1.0 for run in runs)


def _race_rounds(tmp_path: Path, rounds: int) -> None:
    for repetition in range(rounds):  # each round on a new store
        uri = f"sqlite:///{tmp_path / f'new{repetition}.db'}"
        results = _race(uri, tmp_path / f"barrier{repetition}")
        for result in results:
            assert result.returncode == 0, result.stderr[-3000:]
        assert _finished_runs(uri) == 3


def test_three_processes_starting_at_once_on_a_new_sqlite_store_all_succeed(tmp_path, mlflow_server):
    """Without the lock the losers died with 'table ... already exists' and the store stayed half-migrated.
    Without it the race was lost in most rounds (2 of 3 stores broken), so one round of processes released
    together by a barrier catches it; the issue's 10 rounds: the slow test below."""
    _race_rounds(tmp_path, 1)


@pytest.mark.slow
@pytest.mark.skipif(RACE_ROUNDS < 2, reason="set XMLTHRESH_RACE_ROUNDS=10 for issue 17's 10 rounds of the race")
def test_the_race_repeated_on_new_stores(tmp_path):
    """Issue 17's acceptance: the three-process race repeated on new stores: 3 runs recorded each time."""
    _race_rounds(tmp_path, RACE_ROUNDS)


def _store_with_a_run(tmp_path: Path) -> tuple[Path, str, str]:
    """A store made by MLflow's public client, holding one finished run: (file, URI, the run's id)."""
    import mlflow

    db = tmp_path / "old.db"
    uri = f"sqlite:///{db}"
    client = mlflow.MlflowClient(uri)
    experiment = client.create_experiment("kept", artifact_location=str(tmp_path / "artifacts"))
    run = client.create_run(experiment)
    client.set_terminated(run.info.run_id)
    return db, uri, run.info.run_id


def _refusing(uri: str, times: float):
    """An ``open_uri`` for which MLflow refuses the store ``uri`` ``times`` times (as it refuses a store of an
    older schema), then opens it; other stores (a new one being created) open at once."""
    import mlflow
    from mlflow.exceptions import MlflowException

    refused = [0]

    def open_uri(target: str) -> None:
        if target == uri and refused[0] < times:
            refused[0] += 1
            raise MlflowException("Detected out-of-date database schema (found version a, but expected b)")
        mlflow.MlflowClient(target).search_experiments(max_results=1)

    return open_uri


def _warnings(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]


def test_a_store_mlflow_refuses_is_repaired_by_mlflow_db_upgrade_and_a_copy_kept(tmp_path, caplog):
    import mlflow

    db, uri, run_id = _store_with_a_run(tmp_path)
    tracking_store.prepare_sqlite_store(db, uri, _refusing(uri, times=1))
    (kept,) = [path for path in tmp_path.iterdir() if ".broken-" in path.name]
    (line,) = _warnings(caplog)
    assert line.startswith(f"tracking store {uri} could not be used (MLflow ") and line.endswith(
        f"repaired by mlflow db upgrade; the store as it was is kept at {kept}")
    assert mlflow.MlflowClient(uri).get_run(run_id).info.status == "FINISHED"


def test_a_store_mlflow_cannot_repair_is_moved_aside_as_it_was_and_replaced(tmp_path, caplog):
    """What a run killed while an older version created the store left behind: kept, and a new store made."""
    import mlflow

    db, uri, run_id = _store_with_a_run(tmp_path)
    tracking_store.prepare_sqlite_store(db, uri, _refusing(uri, times=float("inf")))
    (kept,) = [path for path in tmp_path.iterdir() if ".broken-" in path.name]
    (line,) = _warnings(caplog)
    assert f"moved it aside to {kept} (kept as it was, with the runs made before) and created a new one" in line
    assert mlflow.MlflowClient(f"sqlite:///{kept}").get_run(run_id).info.status == "FINISHED"  # nothing lost
    assert db.is_file() and not list(tmp_path.glob("old.db.creating-*"))


def test_a_command_that_only_reads_refuses_a_store_mlflow_cannot_open_and_leaves_it_alone(tmp_path):
    db, uri, _ = _store_with_a_run(tmp_path)
    before = sorted(path.name for path in tmp_path.iterdir())
    with pytest.raises(TrackingStoreError, match=r"cannot be read: MLflow \S+ cannot open it: Detected out-of-date "
                                                  r"database schema .*; back it up, then try MLflow's repair: "
                                                  r"mlflow db upgrade sqlite:///"):
        tracking_store.prepare_sqlite_store(db, uri, _refusing(uri, times=float("inf")), repair=False)
    assert sorted(path.name for path in tmp_path.iterdir()) == before


#: a user's first run: import what a run imports, then one tracked run on a new store
FIRST_RUN = textwrap.dedent("""
    import sys
    from pathlib import Path
    from xmlthresh.tracking.record import tracked_run
    with tracked_run(True, sys.argv[1], "first", run_dir=Path(sys.argv[2]), sync="foreground") as tracker:
        tracker.log_metrics({"x": 1.0})
""")

#: trials of a first run killed while its new store is being created (the acceptance: 10; the default suite: 2)
KILL_TRIALS = int(os.environ.get("XMLTHRESH_KILL_TRIALS", "2"))


def _kill_during_creation(tmp_path: Path, trial: int, delay: float) -> str:
    """Start a first run on a new store, kill -9 it ``delay`` seconds after its store creation began (the
    store's file, or its temporary ``<db>.creating-<pid>``, appears); return the store's URI."""
    db = tmp_path / f"first{trial}.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "XMLTHRESH_HOME": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-c", FIRST_RUN, f"sqlite:///{db}", str(tmp_path / f"run{trial}")],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (db.exists() or list(tmp_path.glob(f"first{trial}.db.creating-*"))) and process.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(delay)
    process.kill()
    process.wait()
    return f"sqlite:///{db}"


def _kill_trials(tmp_path: Path, trials: int) -> None:
    import random

    rng = random.Random(0)  # instants spread over the migration (a few seconds) and just past it
    for trial in range(trials):
        uri = _kill_during_creation(tmp_path, trial, rng.uniform(0.0, 2.0))
        with tracked_run(True, uri, "next", sync="foreground") as tracker:
            tracker.log_metrics({"x": 1.0})
        assert _finished_runs_named(uri, "next") == 1
        assert not list(tmp_path.glob(f"first{trial}.db.creating-*"))


def _finished_runs_named(uri: str, experiment: str) -> int:
    import mlflow

    client = mlflow.MlflowClient(uri)
    runs = client.search_runs([client.get_experiment_by_name(experiment).experiment_id])
    return sum(run.info.status == "FINISHED" for run in runs)


def test_a_first_run_killed_while_its_store_is_created_leaves_a_store_the_next_run_can_use(tmp_path):
    """Before, a kill -9 in the seconds MLflow takes to migrate a new store left it half-migrated: every later
    run failed on it. Now the store is created under a temporary name and renamed into place."""
    _kill_trials(tmp_path, KILL_TRIALS)


@pytest.mark.slow
@pytest.mark.skipif(KILL_TRIALS < 10, reason="set XMLTHRESH_KILL_TRIALS=10 for the acceptance's 10 trials")
def test_ten_first_runs_killed_at_random_instants(tmp_path):
    _kill_trials(tmp_path, KILL_TRIALS)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _garbage(tmp_path: Path) -> Path:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not a database at all\n")
    return path


@pytest.mark.parametrize("make_uri, message", [
    (lambda tmp: f"sqlite:///{tmp}", r"is a directory, not a database file"),
    (lambda tmp: f"sqlite:///{_garbage(tmp)}", r"is not an SQLite database \(it starts with b'this is "),
    (lambda tmp: "sqlite:////proc/no-such-dir/mlflow.db", r"cannot create its directory /proc/no-such-dir"),
    (lambda tmp: "sqlite:////proc/mlflow.db", r"cannot create the lock file /proc/mlflow.db.lock"),
    (lambda tmp: f"http://127.0.0.1:{_free_port()}", r"tracking server http://127.0.0.1:\d+ is not reachable "
                                                     r"\(.*refused\).*tracking.enabled=false"),
])
def test_a_store_that_cannot_be_used_is_one_error_naming_it_within_seconds(tmp_path, isolated_home, make_uri, message):
    """MLflow retried these for ~115 s (sqlite) or minutes (server) before a traceback."""
    uri = make_uri(tmp_path)
    started = time.monotonic()
    with pytest.raises(TrackingStoreError, match=message) as info:
        with tracked_run(True, uri, "bad", sync="foreground"):
            pass
    assert time.monotonic() - started < 10
    assert uri in str(info.value) or uri.replace("sqlite:///", "") in str(info.value)


def test_a_read_only_store_file_is_one_error(tmp_path, monkeypatch):
    """(Faked through os.access: the tests may run as root, for whom chmod does not make a file read-only.)"""
    db = tmp_path / "ro.db"
    sqlite3.connect(db).close()
    real_access = os.access
    monkeypatch.setattr(tracking_store.os, "access",
                        lambda path, mode: False if Path(path) == db and mode & os.W_OK else real_access(path, mode))
    with pytest.raises(TrackingStoreError, match=rf"tracking store sqlite:///{db}: {db} is read-only"):
        tracking.open_store(f"sqlite:///{db}")


def test_tracking_disabled_needs_no_store():
    with tracked_run(False, "http://127.0.0.1:9", "x") as tracker:
        tracker.log_metrics({"x": 1.0})
    assert tracker.run_id is None


def test_database_is_locked_is_retried_and_other_errors_are_not():
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError("(sqlite3.OperationalError) database is locked")
        return "done"

    assert retry_when_locked(flaky, "test") == "done" and len(calls) == 3
    with pytest.raises(KeyError):
        retry_when_locked(lambda: {}["x"], "test")
    with pytest.raises(RuntimeError, match="database is locked"):
        retry_when_locked(lambda: (_ for _ in ()).throw(RuntimeError("database is locked")), "test", seconds=0.2)


@pytest.mark.parametrize("sweep", [False, True])
def test_the_cli_says_it_in_one_line_and_a_sweep_launches_no_job(isolated_home, tmp_path, sweep):
    """A sweep's parent run is made in a Hydra callback, whose exceptions Hydra turns into a warning before it
    launches every job anyway; the sweep now stops there."""
    uri = f"http://127.0.0.1:{_free_port()}"
    args = ["-m", "strategy=domain,independent"] if sweep else []
    env = {**os.environ, "XMLTHRESH_HOME": str(isolated_home),
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", *args, "dataset=example", f"tracking.uri={uri}",
                           "plots=false"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [f"xmlthresh: error: tracking server {uri} is not reachable ([Errno 111] Connection refused); "
                     "start it (mlflow server --host ... --port ...), fix tracking.uri, or run with "
                     "tracking.enabled=false"], proc.stderr
    assert "Launching" not in proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory):
    """A local ``mlflow server``, started when the module's first test asks for it (the sqlite race) so
    that its start-up (~20 s of CPU-light waiting) overlaps that test; stopped after the module."""
    import signal

    root = tmp_path_factory.mktemp("server")
    port = _free_port()
    mlflow_cli = Path(sys.executable).parent / "mlflow"
    server = subprocess.Popen(
        [str(mlflow_cli), "server", "--backend-store-uri", f"sqlite:///{root / 'server.db'}",
         "--default-artifact-root", (root / "artifacts").as_uri(), "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1"],
        env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        yield server, f"http://127.0.0.1:{port}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_three_processes_share_a_tracking_server(tmp_path, mlflow_server):
    """The store for many nodes: an MLflow tracking server (``mlflow server``); the same race through it."""
    import urllib.request

    server, uri = mlflow_server
    deadline = time.monotonic() + 180
    while True:
        try:
            urllib.request.urlopen(f"{uri}/health", timeout=5).close()
            break
        except OSError:
            assert server.poll() is None, "mlflow server exited"
            assert time.monotonic() < deadline, "mlflow server did not come up within 180 s"
            time.sleep(0.2)
    for result in _race(uri, tmp_path / "barrier"):
        assert result.returncode == 0, result.stderr[-3000:]
    assert _finished_runs(uri) == 3


def test_a_store_replaced_while_this_process_had_it_open_is_used_anew(tmp_path):
    """A truncated store was moved aside and replaced, and then the same process still read the broken file
    through MLflow's pooled connection ("database disk image is malformed" after a finished run)."""
    import mlflow

    from xmlthresh.tracking import mlflow_runs

    db, uri = tmp_path / "made-elsewhere.db", f"sqlite:///{tmp_path / 'made-elsewhere.db'}"
    subprocess.run([sys.executable, "-c", "import mlflow, sys; mlflow.MlflowClient(sys.argv[1]).create_experiment("
                    "'kept', artifact_location=sys.argv[2])", uri, str(tmp_path / "artifacts")], check=True,
                   timeout=300)  # by another process, as a store is: this one has no connection to it yet
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    mlflow_runs.open_store(uri)
    experiment = mlflow_runs.ensure_experiment(uri, "after")
    run = mlflow.MlflowClient(uri).create_run(experiment)
    assert mlflow.MlflowClient(uri).get_run(run.info.run_id).info.status == "RUNNING"
    assert [path for path in tmp_path.iterdir() if ".broken-" in path.name]
