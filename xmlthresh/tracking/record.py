"""The local run record: what a tracked run logs, written beside its files (``run_record.json``) before
anything reaches MLflow.

Why: importing mlflow and opening its store costs a job seconds of CPU, while the run itself may take a
fraction of that. So a run writes its params, metrics, tags, artifact list, status and times into a JSON
file in its run directory -- the record is the source of truth -- and :mod:`xmlthresh.tracking.sync`
sends it to MLflow through ``MlflowClient`` later: a sweep's launching process sends all of its jobs' records
once, when the jobs are done; a single run's record goes in a background process (``tracking.sync``), and
``xmlthresh sync`` sends anything left over (a killed syncer, a store that was down).

A record is written when the run starts (status ``RUNNING``, with the process id, host and process start
time, so that a record whose process is gone is sent as ``KILLED``) and again when it ends. Every record
not yet sent has a pending marker in ``<runs dir>/unsynced/``, so nothing is lost when a process dies.
No mlflow import here.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from xmlthresh import __version__
from xmlthresh._util.errors import UserFacingError
from xmlthresh._util.files import write_text_atomic
from xmlthresh._util.paths import runs_dir

log = logging.getLogger(__name__)

RECORD_FILE = "run_record.json"
#: folder of ``<runs dir>`` with one marker per record not yet sent to MLflow
UNSYNCED_DIR = "unsynced"
#: version of the record's layout (a reader refuses layouts it does not know)
RECORD_FORMAT = 1
#: MLflow's limit for a param value
MAX_PARAM_LENGTH = 6000
#: how a single run's record reaches MLflow: ``background`` (a detached process, the user does not wait),
#: ``foreground`` (before the command returns), ``off`` (left pending for ``xmlthresh sync``); the jobs of a
#: sweep are always sent by the sweep's launching process
from xmlthresh._util.environment import SYNC_MODES  # noqa: E402  (re-exported: tracking.sync's words)


def now_ms() -> int:
    return int(time.time() * 1000)


def write_record(path: Path, record: Mapping[str, Any]) -> None:
    write_text_atomic(Path(path), json.dumps(record, indent=1, default=str) + "\n")


def read_record(path: Path) -> dict[str, Any]:
    """The record at ``path``; ValueError naming the file when it is not a record this version can read."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"run record {path}: cannot be read ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise ValueError(f"run record {path}: not a run record of format {RECORD_FORMAT}")
    return record


def pending_dir() -> Path:
    return runs_dir() / UNSYNCED_DIR


def marker_path(record_path: Path) -> Path:
    """The pending marker of a record (named by a digest of the record's absolute path)."""
    digest = hashlib.sha256(str(Path(record_path).resolve()).encode()).hexdigest()[:24]
    return pending_dir() / f"{digest}.json"


def mark_pending(record_path: Path) -> None:
    write_text_atomic(marker_path(record_path), json.dumps({"record": str(Path(record_path).resolve())}) + "\n")


def clear_pending(record_path: Path) -> None:
    marker_path(record_path).unlink(missing_ok=True)


def pending_records() -> list[Path]:
    """The records with a pending marker (markers whose record is gone are removed, each with a warning: a run
    that will never reach MLflow is said, not dropped in silence)."""
    folder = pending_dir()
    if not folder.is_dir():
        return []
    found = []
    for marker in sorted(folder.glob("*.json")):
        try:
            record = Path(json.loads(marker.read_text())["record"])
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("ignoring the unreadable pending marker %s", marker)
            continue
        if record.is_file():
            found.append(record)
        else:
            log.warning("dropped a pending run that was never sent to MLflow: its record %s is gone (its run "
                        "folder deleted or moved?)", record)
            marker.unlink(missing_ok=True)
    return found


class Tracker:
    """What one run logs, collected into its record; use :func:`tracked_run` to get one. A disabled tracker
    (``record_path`` None) does nothing.

    ``run_id`` is the MLflow run's id once the record was sent (foreground), else None."""

    def __init__(self, record_path: Path | None, record: dict[str, Any] | None = None) -> None:
        self.record_path = record_path
        self.record = record if record is not None else {}
        self.logged_params: set[str] = set()

    @property
    def enabled(self) -> bool:
        return self.record_path is not None

    @property
    def run_id(self) -> str | None:
        return self.record.get("mlflow_run_id")

    def log_params(self, params: Mapping[str, Any]) -> None:
        if self.enabled:
            clean = {k: ("null" if v is None else str(v)[:MAX_PARAM_LENGTH]) for k, v in params.items()}
            self.record["params"].update(clean)
            self.logged_params.update(clean)

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        if self.enabled:
            self.record["metrics"].update({k: float(v) for k, v in metrics.items()})

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        if self.enabled:
            self.record["tags"].update({k: str(v) for k, v in tags.items()})

    def log_artifact(self, path: Path) -> None:
        """Send the file ``path`` as an artifact (its name in MLflow is the file name)."""
        if self.enabled:
            resolved = str(Path(path).resolve())
            if resolved not in self.record["artifacts"]:
                self.record["artifacts"].append(resolved)

    def log_text(self, text: str, name: str) -> None:
        """Send ``text`` as the artifact file ``name``."""
        if self.enabled:
            self.record["texts"][name] = text

    def save(self) -> None:
        if self.enabled:
            write_record(self.record_path, self.record)


def new_record(uri: str, experiment: str, run_name: str | None, parent_run_id: str | None,
               tags: Mapping[str, str]) -> dict[str, Any]:
    return {"format": RECORD_FORMAT, "uri": uri, "experiment": experiment, "run_name": run_name,
            "parent_run_id": parent_run_id, "tags": dict(tags), "params": {}, "metrics": {}, "artifacts": [],
            "texts": {}, "status": "RUNNING", "start_time": now_ms(), "end_time": None, "reused_run_id": None,
            "mlflow_run_id": None, "synced": False}


@contextmanager
def tracked_run(
    enabled: bool,
    uri: str | None,
    experiment: str,
    run_name: str | None = None,
    parent_run_id: str | None = None,
    tags: Mapping[str, Any] | None = None,
    failure_params: Mapping[str, Any] | None = None,
    sweep: Any = None,
    run_dir: Path | None = None,
    sync: str = "foreground",
) -> Iterator[Tracker]:
    """A tracked run for the duration of the block, written to its record (``<run_dir>/run_record.json``;
    without ``run_dir``, a folder of its own under ``<runs dir>/records/``); an exception marks it FAILED
    with an ``error`` tag (and is re-raised).

    ``parent_run_id`` makes it a child of a sweep's parent run. ``failure_params`` (the params the job would
    log, read from its config) are logged when the block fails before logging them itself -- a job refused
    for a bad parameter still says in MLflow what it was. ``sweep`` (:class:`~xmlthresh.tracking.mlflow_runs.SweepStore`:
    what the sweep's launching process found once) gives the source tags without asking git again.
    ``sync`` (one of :data:`SYNC_MODES`, or ``deferred`` for a sweep's job, sent by its launcher) says when
    the record reaches MLflow; the store is checked when the run starts in every mode, so that a store that
    cannot be used fails the run at once with one line."""
    from xmlthresh.tracking.mlflow_runs import default_tracking_uri, process_tags, source_tags
    from xmlthresh.tracking.store import check_experiment_name, check_store

    if not enabled:
        yield Tracker(None)
        return
    if sync not in (*SYNC_MODES, "deferred"):
        from xmlthresh._util.registry import ConfigError

        raise ConfigError(f"tracking.sync must be one of {', '.join(SYNC_MODES)}, got {sync!r}")
    uri = uri or default_tracking_uri()
    check_store(uri)
    check_experiment_name(experiment)
    source = sweep.source_tags if sweep is not None and sweep.uri == uri else source_tags()
    run_tags = {**source, "xmlthresh_version": __version__, **process_tags(), **(tags or {})}
    if run_name:
        run_tags["mlflow.runName"] = run_name
    if parent_run_id:
        run_tags["mlflow.parentRunId"] = parent_run_id
    folder = Path(run_dir) if run_dir is not None else runs_dir() / "records" / uuid.uuid4().hex
    folder.mkdir(parents=True, exist_ok=True)
    record_path = folder / RECORD_FILE
    settle_earlier_record(record_path)
    tracker = Tracker(record_path, new_record(uri, experiment, run_name, parent_run_id,
                                              {k: str(v) for k, v in run_tags.items()}))
    mark_pending(record_path)
    tracker.save()
    try:
        yield tracker
    except BaseException as exc:
        missing = {k: v for k, v in (failure_params or {}).items() if k not in tracker.logged_params}
        if missing:
            tracker.log_params(missing)
        tracker.set_tags({"error": f"{type(exc).__name__}: {exc}"[:5000]})
        try:
            _end(tracker, "KILLED" if isinstance(exc, KeyboardInterrupt) else "FAILED", sync)
        except Exception as problem:  # noqa: BLE001 - never hide the run's own error behind the store's
            log.warning("the failed run's record %s stays pending (xmlthresh sync sends it): %s",
                        tracker.record_path, problem)
        raise
    else:
        _end(tracker, "FINISHED", sync)


class RunFolderInUseError(UserFacingError):
    """The run folder holds the record of another run that is not in MLflow yet and cannot be sent now (it is
    still running, or its store refuses it): a new record there would replace it."""


def settle_earlier_record(record_path: Path) -> None:
    """Make room for a new run's record at ``record_path`` (a run folder used a second time: the same
    ``hydra.run.dir`` given twice). The record of the earlier run is sent to MLflow first, in this process,
    waiting for a background syncer that is sending it -- before the new run overwrites the record or the
    files it lists; the new run then gets an MLflow run of its own. Without this, the earlier run's background
    syncer sent the new run's record as its own run (both runs were one MLflow run, the second's results lost).

    An earlier run that is still running (its process alive) or whose record cannot be sent raises
    :class:`RunFolderInUseError` (one line): each run then needs a folder of its own."""
    if not record_path.is_file():
        return
    try:
        earlier = read_record(record_path)
    except ValueError:
        return  # not a record this version can read: nothing of it would be sent anyway
    if earlier.get("synced"):
        return
    folder = record_path.parent
    from xmlthresh.tracking.sync import owner_alive, sync_record

    if earlier.get("status") == "RUNNING" and owner_alive(earlier.get("tags", {})):
        raise RunFolderInUseError(
            f"{folder}: another run (process {earlier['tags'].get('xmlthresh.pid', '?')}) is running in this folder; "
            "give each run a folder of its own (hydra.run.dir), or wait for it to end")
    try:
        sync_record(record_path)
    except Exception as exc:  # noqa: BLE001 - any failure: the earlier record must not be overwritten
        from xmlthresh._util.errors import first_line

        raise RunFolderInUseError(
            f"{folder} holds the record of an earlier run that is not in MLflow yet and cannot be sent now "
            f"({first_line(exc)}); a new run there would replace it: give this run another folder "
            "(hydra.run.dir), or send it first with xmlthresh sync") from None


def _end(tracker: Tracker, status: str, sync: str) -> None:
    """Close the record and send it as ``sync`` says; a record that could not be sent stays pending."""
    tracker.record.update(status=status, end_time=now_ms())
    tracker.save()
    if sync == "foreground":
        from xmlthresh.tracking.sync import sync_record

        tracker.record = {**tracker.record, **sync_record(tracker.record_path)}
    elif sync == "background":
        from xmlthresh.tracking.sync import start_background_sync

        try:
            start_background_sync(tracker.record_path)
        except OSError as exc:  # the run is done and recorded: its record waits for `xmlthresh sync`
            log.warning("could not start the background sync of %s (%s); `xmlthresh sync` sends it",
                        tracker.record_path, exc)
