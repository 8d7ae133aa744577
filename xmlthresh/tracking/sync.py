"""Sending run records (:mod:`xmlthresh.tracking.record`) to MLflow, through ``MlflowClient`` only:
``create_run``, ``log_batch``, ``log_text``, ``log_artifact``, ``set_terminated``.

A record is sent under its own file lock, so that a background syncer, a sweep's launcher and
``xmlthresh sync`` never send one record twice; the MLflow run's id is written into the record as soon as
the run exists, so a send that was interrupted continues the same run instead of creating a second. Once
the run exists, the run directory's ``result.json`` names it (``mlflow_run_id``), before it is uploaded.

``python -m xmlthresh.tracking.sync RECORD`` is the background syncer a single run starts (detached: the
user does not wait for mlflow's import); ``xmlthresh sync [--wait]`` sends every pending record.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from xmlthresh.tracking.record import (clear_pending, now_ms, pending_dir, pending_records, read_record,
                                       write_record)

log = logging.getLogger(__name__)

#: tag of a sweep job's child run that reuses the result of an earlier run (the id of the run that computed it)
REUSED_TAG = "xmlthresh.reused_run_id"
#: tags of a reused run that describe that run itself, not the result the new child shares
_OWN_TAGS = ("mlflow.parentRunId", "mlflow.runName", "mlflow.note.content", "xmlthresh.pid", "xmlthresh.host",
             "xmlthresh.pid_start", "xmlthresh.overrides")
#: seconds to wait for another process that is sending the same record
LOCK_WAIT = 600.0
#: the background syncer's log, in the runs directory
SYNC_LOG = "sync.log"


class RecordBusy(Exception):
    """Another process is sending this record right now."""


def sync_record(path: Path, wait: bool = True, parent_run_id: str | None = None) -> dict[str, Any]:
    """Send the record at ``path`` to its MLflow store (see the module docstring) and return it as sent;
    a record that was sent already is returned as it is. A ``RUNNING`` record whose process is gone (on this
    host) is sent as ``KILLED``; one whose process still runs is left pending (returned unchanged).
    ``wait=False`` raises :class:`RecordBusy` instead of waiting when another process sends it.
    ``parent_run_id`` sets the sweep parent of a record that has none yet."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(path) + ".lock")
    try:
        lock.acquire(timeout=LOCK_WAIT if wait else 0)
    except Timeout:
        raise RecordBusy(str(path)) from None
    try:
        record = read_record(path)
        if record.get("synced"):
            clear_pending(path)
            return record
        if parent_run_id and not record.get("parent_run_id"):
            record["parent_run_id"] = parent_run_id
            record["tags"]["mlflow.parentRunId"] = parent_run_id
        if record["status"] == "RUNNING":
            if owner_alive(record["tags"]):
                return record
            record.update(status="KILLED", end_time=record.get("end_time") or now_ms())
            record["tags"]["error"] = (f"process {record['tags'].get('xmlthresh.pid')} on "
                                       f"{record['tags'].get('xmlthresh.host')} ended without closing this run "
                                       "(killed?); its record was sent later")
        _send(path, record)
        record["synced"] = True
        write_record(path, record)
        clear_pending(path)
        return record
    finally:
        lock.release()


def owner_alive(tags: Mapping[str, str]) -> bool:
    """Whether the process that wrote a RUNNING record still runs (a process of another host is assumed to)."""
    from xmlthresh.tracking.mlflow_runs import process_alive

    pid = tags.get("xmlthresh.pid", "")
    if tags.get("xmlthresh.host") != socket.gethostname():
        return True
    return pid.isdigit() and process_alive(int(pid), tags.get("xmlthresh.pid_start", ""))


def _send(path: Path, record: dict[str, Any]) -> None:
    """Create (or continue) the record's MLflow run and log everything in it."""
    from mlflow.entities import Metric, Param, RunTag

    from xmlthresh.tracking.mlflow_runs import client_for, experiment_id_for
    from xmlthresh.tracking.store import retry_when_locked

    uri = record["uri"]
    client = client_for(uri)
    params, metrics, tags = dict(record["params"]), dict(record["metrics"]), dict(record["tags"])
    if record.get("reused_run_id"):
        origin = retry_when_locked(lambda: client.get_run(record["reused_run_id"]), "reading the reused run")
        params = {**dict(origin.data.params), **params}
        metrics = {**dict(origin.data.metrics), **metrics}
        tags = reused_tags(dict(origin.data.tags), record["reused_run_id"], record.get("parent_run_id"), tags)
    run_id = record.get("mlflow_run_id")
    continued = bool(run_id)  # an earlier send created the run (and may have marked it FAILED: _fail_half_sent)
    if not run_id:
        experiment_id = experiment_id_for(uri, record["experiment"])
        run_name = record.get("run_name") or tags.get("mlflow.runName")
        run = retry_when_locked(lambda: client.create_run(experiment_id, start_time=record["start_time"],
                                                          tags={}, run_name=run_name), f"creating a run in {uri}")
        run_id = run.info.run_id
        record["mlflow_run_id"] = run_id
        write_record(path, record)  # a send interrupted from here on continues this run
    _name_run_in_result(path.parent, run_id, record)
    stamp = record.get("end_time") or now_ms()
    try:
        retry_when_locked(lambda: client.log_batch(
            run_id, metrics=[Metric(k, float(v), stamp, 0) for k, v in metrics.items()],
            params=[Param(k, str(v)) for k, v in params.items()], tags=[RunTag(k, str(v)) for k, v in tags.items()]),
            "logging the run")
        for name, text in record.get("texts", {}).items():
            client.log_text(run_id, text, name)
        for artifact in record.get("artifacts", []):
            if Path(artifact).is_file():
                client.log_artifact(run_id, artifact)
            else:
                log.warning("run %s: the artifact %s is gone; not logged", run_id, artifact)
    except Exception as exc:
        raise _fail_half_sent(client, run_id, path, exc) from exc
    retry_when_locked(lambda: client.set_terminated(run_id, status=record["status"], end_time=stamp),
                      "ending the run")
    if continued and "error" not in tags:  # the error of an earlier, half-done send is not the run's
        try:
            client.delete_tag(run_id, "error")
        except Exception:  # noqa: BLE001 - no such tag (the earlier send failed before setting it)
            pass


class SendFailedError(ValueError):
    """A record whose MLflow run exists but could not be completed (its artifacts could not be stored, the
    store refused a write): the run is ended FAILED and the record stays pending; the message names the
    problem and what to do (one line at every entry point)."""


def _fail_half_sent(client: Any, run_id: str, path: Path, exc: BaseException) -> SendFailedError:
    """End the run ``run_id`` FAILED (it stayed RUNNING for ever when its artifacts could not be stored), with an
    ``error`` tag, and return the one-line error to raise; ``xmlthresh sync`` completes it later (the record
    keeps the run's id, so the same run is continued and ends with the record's status)."""
    from xmlthresh._util.errors import first_line

    where = f"{exc.filename}: {exc.strerror}" if isinstance(exc, OSError) and exc.filename else first_line(exc)
    problem = f"MLflow run {run_id} could not be completed ({type(exc).__name__}: {where})"
    try:
        client.set_tag(run_id, "error", f"{problem}; its record {path} stays pending"[:5000])
        client.set_terminated(run_id, status="FAILED", end_time=now_ms())
    except Exception as second:  # noqa: BLE001 - the store refuses everything: the record still stays pending
        log.warning("could not mark MLflow run %s FAILED: %s", run_id, second)
    return SendFailedError(f"{problem}: it is marked FAILED and the run's record stays pending; fix that place "
                           f"(make it writable, free space) and run xmlthresh sync, which completes the run "
                           f"(the results are in {path.parent})")


def _name_run_in_result(run_dir: Path, run_id: str, record: Mapping[str, Any]) -> None:
    """Write the MLflow run's id into the run's ``result.json`` (where it says ``mlflow_run_id: null``)."""
    from xmlthresh._util.files import write_json_atomic

    result_path = run_dir / "result.json"
    if str(result_path.resolve()) not in record.get("artifacts", []) or not result_path.is_file():
        return
    try:
        result = json.loads(result_path.read_text())
    except (OSError, ValueError):
        return
    if isinstance(result, dict) and "mlflow_run_id" in result and not result["mlflow_run_id"]:
        write_json_atomic(result_path, {**result, "mlflow_run_id": run_id})


def reused_tags(origin: Mapping[str, str], reused: str, parent_run_id: str | None,
                own: Mapping[str, str] | None = None) -> dict[str, str]:
    """The tags of a reused job's child run: the reused run's own, less those describing that run itself,
    plus the job's ``own`` process and override tags and :data:`REUSED_TAG` naming the run that computed it
    (a reused run's result came from its own origin)."""
    computed_by = origin.get(REUSED_TAG, reused)
    tags = {key: value for key, value in origin.items() if key not in _OWN_TAGS}
    tags.update({key: value for key, value in (own or {}).items() if key in _OWN_TAGS or key == "error"})
    tags.update({REUSED_TAG: computed_by, "mlflow.note.content": f"reuses run {computed_by}: the same "
                 "configuration finished there"})
    if parent_run_id:
        tags["mlflow.parentRunId"] = parent_run_id
    return tags


def sync_records(paths: Iterable[Path], wait: bool = True, parent_run_id: str | None = None
                 ) -> tuple[list[dict[str, Any]], list[tuple[Path, str]]]:
    """Send every record of ``paths``; returns (records as they are now, [(path, problem)] not sent)."""
    done, problems = [], []
    for path in paths:
        try:
            done.append(sync_record(Path(path), wait=wait, parent_run_id=parent_run_id))
        except RecordBusy:
            problems.append((Path(path), "another process is sending it" if not wait else
                             f"another process is still sending it after {LOCK_WAIT:.0f} s: gave up waiting"))
        except Exception as exc:  # noqa: BLE001 - one bad record must not keep the others from MLflow
            problems.append((Path(path), f"{type(exc).__name__}: {exc}"))
    return done, problems


def start_background_sync(record_path: Path) -> None:
    """Send the record in a detached process (its own session: it outlives the command and a Ctrl-C of the
    terminal), logging to ``<runs dir>/sync.log``; then that process sends any other pending record too."""
    folder = pending_dir().parent
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / SYNC_LOG, "ab") as out:
        subprocess.Popen([sys.executable, "-m", "xmlthresh.tracking.sync", str(record_path)], stdin=subprocess.DEVNULL,
                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def background_main(record: str) -> int:
    """The detached syncer: send ``record``, then every other pending record no other process is sending.
    Its own CPU time goes into the record (``sync_cpu_seconds``): benchmarks/cli.py reports it beside the
    command's."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s sync[%(process)d] %(levelname)s %(message)s")
    from xmlthresh.tracking import store

    store.notices_for_later = True  # a store this process repairs is also said by the next command
    path = Path(record)
    code = 0
    try:
        sent = sync_record(path)
        log.info("sent %s as run %s", path, sent.get("mlflow_run_id"))
    except Exception as exc:  # noqa: BLE001 - logged; the record stays pending for xmlthresh sync
        log.error("could not send %s (it stays pending: xmlthresh sync): %s", path, exc)
        code = 1
    _, problems = sync_records([p for p in pending_records() if p.resolve() != path.resolve()], wait=False)
    for other, problem in problems:
        log.info("left pending: %s (%s)", other, problem)
    _note_cpu(path)
    return code


def _note_cpu(path: Path) -> None:
    """Add this process's CPU seconds to the record (for benchmarks), under the record's lock; a record
    another process holds, or one not sent, is left as it is."""
    from filelock import FileLock, Timeout

    try:
        with FileLock(str(path) + ".lock", timeout=5):
            record = read_record(path)
            if record.get("synced"):
                write_record(path, {**record, "sync_cpu_seconds": round(_cpu_seconds(), 3)})
    except (OSError, ValueError, Timeout):
        pass


def close_dead_sweeps(uri: str) -> list[str]:
    """End as KILLED the RUNNING sweep parents, of every experiment of the store ``uri``, whose launcher is gone
    (a sweep killed with kill -9 left its parent RUNNING until the same sweep ran again); the ids ended. A
    store that cannot be read ends nothing (the records' own problems were said above)."""
    from xmlthresh.tracking.mlflow_runs import experiment_names, mark_dead_runs, mlflow_error_types

    try:
        return [run_id for name in experiment_names(uri)
                for run_id in mark_dead_runs(uri, name, when="xmlthresh sync ran")]
    except (OSError, ValueError, *mlflow_error_types()) as exc:
        log.warning("could not look for sweeps left RUNNING in %s: %s", uri, exc)
        return []


def command(args: list[str]) -> int:
    """``xmlthresh sync [--wait]``: send every pending record to MLflow; ``--wait`` also waits for records a
    background syncer is sending. Prints what it did; exit code 1 when a record could not be sent."""
    parser = argparse.ArgumentParser(prog="xmlthresh sync", description=(
        "Send the run records not yet in MLflow (runs whose background sync did not finish, a store that was "
        "down) to their tracking store."))
    parser.add_argument("--wait", action="store_true",
                        help="also wait for records another process is sending right now")
    options = parser.parse_args(args)
    folder = pending_dir()
    if folder.exists() and not folder.is_dir():  # "0 run(s) sent" said nothing about the runs it could not see
        print(f"xmlthresh: error: {folder} is a file, where xmlthresh keeps its list of runs not yet sent to "
              "MLflow; move the file away (runs made since could not be listed there)", file=sys.stderr)
        return 1
    paths = pending_records()
    started = time.monotonic()
    done, problems = sync_records(paths, wait=options.wait)
    from xmlthresh.tracking.mlflow_runs import default_tracking_uri
    from xmlthresh.tracking.store import announce_store_notices, sqlite_path

    uri = default_tracking_uri()
    store = sqlite_path(uri)
    if store is not None:  # what a background syncer repaired (it logs to a file nobody reads)
        announce_store_notices(store)
    closed = close_dead_sweeps(uri) if store is None or store.is_file() else []
    if closed:
        print(f"xmlthresh: sync: {len(closed)} sweep run(s) whose process is gone (killed?) marked KILLED: "
              f"{', '.join(closed)}")
    sent = [r for r in done if r.get("synced")]
    running = [r for r in done if not r.get("synced")]
    print(f"xmlthresh: sync: {len(sent)} run(s) sent, {len(running)} still running, {len(problems)} not sent "
          f"({time.monotonic() - started:.1f} s)")
    for path, problem in problems:
        print(f"  not sent: {path}: {problem}", file=sys.stderr)
    return 1 if any(not problem.endswith("is sending it") for _, problem in problems) else 0


if __name__ == "__main__":
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    sys.exit(background_main(sys.argv[1]))
