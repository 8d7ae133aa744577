"""MLflow runs written straight into MLflow's own SQLite store, without importing mlflow.

Why: importing mlflow and opening its SQLAlchemy store costs about 2 s of CPU per process (measured: 1.2 s
for ``import mlflow``, 0.7 s for the store), two thirds of a tracked single run and most of a sweep job, to
write a few dozen rows. A run of this project needs only a handful of statements: one row in ``runs`` with
its tags when it starts, its params, metrics and tags in one transaction, its status at the end, and its
artifacts copied into the run's artifact directory. :class:`DirectStore` does exactly what MLflow's
``SqlAlchemyStore`` does for those calls (``create_run``, ``log_batch``, ``set_terminated``, the local
artifact repository's ``log_artifact`` / ``log_text``), row for row, and reads runs back the same way.

It is used only where it is exact (:meth:`DirectStore.for_uri` returns None otherwise, and the caller uses
MLflow): a ``sqlite:///`` store that exists, whose schema revision (``alembic_version``) is one of
:data:`VERIFIED_REVISIONS` -- the schemas this code was checked against, row for row, by
``tests/test_tracking_direct.py`` (written by both paths, read back by MLflow's client) -- and an experiment
whose artifact location is a local directory. A new store, a store migrated by another MLflow version, a
tracking server or remote artifacts go through MLflow as before. The MLflow UI, ``mlflow.search_runs``
and every other MLflow reader see the same runs either way.

Names and values follow MLflow's rules (:func:`checked_key`; values longer than MLflow's limits are
truncated as MLflow does by default); writes wait for SQLite's lock (``timeout``) like MLflow's, and run in
``BEGIN IMMEDIATE`` transactions so that parallel sweep workers never interleave half a batch.
"""

from __future__ import annotations

import math
import os
import posixpath
import re
import shutil
import sqlite3
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple

from xmlthresh.tracking.store import sqlite_path

#: ``alembic_version`` of MLflow stores whose tables this module writes exactly as MLflow does (MLflow 3.17);
#: a test fails when the installed MLflow's newest revision is not listed, so that it is checked again
VERIFIED_REVISIONS = frozenset({"dc11669786a5"})

#: MLflow's limits (mlflow.utils.validation): longer values are truncated, longer keys refused
MAX_PARAM_VALUE, MAX_TAG_VALUE, MAX_KEY = 6000, 8000, 250
#: MLflow's rule for param, metric and tag names (POSIX)
_VALID_NAME = re.compile(r"^[/\w.\- :]*$")
_LARGEST_FLOAT = 1.7976931348623157e308
#: seconds a write waits for another process's transaction (MLflow's SQLite engine waits too)
BUSY_TIMEOUT = 60.0
RUN_NAME_TAG, USER_TAG, PARENT_TAG = "mlflow.runName", "mlflow.user", "mlflow.parentRunId"


class Experiment(NamedTuple):
    """An active experiment of the store: its id (a string, as MLflow's) and local artifact root."""

    experiment_id: str
    artifact_root: Path


class RunRecord(NamedTuple):
    """What a report or a resumed job reads of a run: MLflow's ``run.info`` fields and ``run.data``."""

    run_id: str
    experiment_id: str
    name: str
    status: str
    start_time: int
    end_time: int | None
    artifact_uri: str
    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]


def checked_key(kind: str, key: str) -> str:
    """``key`` when MLflow accepts it as a param, metric or tag name; else the ValueError MLflow would raise."""
    key = str(key)
    norm = posixpath.normpath(key)
    if (not _VALID_NAME.match(key) or norm != key or norm == "." or norm.startswith(("..", "/"))
            or len(key) > MAX_KEY):
        raise ValueError(f"invalid MLflow {kind} name {key!r}: names may only contain alphanumerics, underscores, "
                         f"dashes, periods, spaces, colons and slashes, at most {MAX_KEY} characters, not a path "
                         "that leaves its directory")
    return key


def local_artifact_root(location: str | None) -> Path | None:
    """The directory of a local artifact location (``file://`` URI or absolute path), None for remote ones."""
    if not location:
        return None
    parsed = urllib.parse.urlparse(location)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost") and not parsed.query:
        return Path(urllib.parse.unquote(parsed.path))  # url2pathname on POSIX, without importing urllib.request
    if parsed.scheme == "" and os.path.isabs(location):
        return Path(location)
    return None


def _metric_value(value: float) -> tuple[float, int]:
    """(stored value, is_nan) as MLflow's SqlAlchemyStore stores a metric: NaN as 0 with the flag, +-inf as
    the largest finite float."""
    value = float(value)
    if math.isnan(value):
        return 0.0, 1
    if math.isinf(value):
        return (_LARGEST_FLOAT if value > 0 else -_LARGEST_FLOAT), 0
    return value, 0


def _now_ms() -> int:
    return int(time.time() * 1000)


#: open stores of this process, by (process id, database file): a forked worker opens its own connection
_STORES: dict[tuple[int, str], "DirectStore"] = {}


class DirectStore:
    """One MLflow SQLite store, read and written with :mod:`sqlite3` (see the module docstring)."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self._conn = sqlite3.connect(str(db), timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
        self._artifact_uris: dict[str, str] = {}

    @classmethod
    def for_uri(cls, uri: str) -> "DirectStore | None":
        """The store of ``uri`` when it can be written exactly without MLflow (a ``sqlite:///`` file that exists
        at a verified schema revision), else None (the caller uses MLflow)."""
        db = sqlite_path(uri)
        if db is None or os.environ.get("XMLTHRESH_TRACKING_VIA_MLFLOW") == "1":
            return None
        key = (os.getpid(), str(db))
        if key in _STORES:
            return _STORES[key]
        if not db.is_file() or db.stat().st_size == 0:
            return None
        store = cls(db)
        try:
            revision = store._conn.execute("SELECT version_num FROM alembic_version").fetchall()
        except sqlite3.DatabaseError:
            store.close()
            return None
        if [row[0] for row in revision] not in ([r] for r in VERIFIED_REVISIONS):
            store.close()
            return None
        _STORES[key] = store
        return store

    def close(self) -> None:
        self._conn.close()

    # -- transactions --------------------------------------------------------------------------------------

    def _write(self, statements: Iterable[tuple[str, tuple[Any, ...]]]) -> None:
        """Run ``statements`` in one ``BEGIN IMMEDIATE`` transaction (all or nothing)."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            for sql, args in statements:
                conn.execute(sql, args)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, args).fetchall()

    # -- experiments ---------------------------------------------------------------------------------------

    def experiment(self, name: str) -> Experiment | None:
        """The active experiment ``name`` (MLflow's default workspace) when its artifacts are local, else None."""
        rows = self._rows("SELECT experiment_id, artifact_location, lifecycle_stage FROM experiments "
                          "WHERE name = ? AND workspace = 'default'", (name,))
        if not rows or rows[0][2] != "active":
            return None
        root = local_artifact_root(rows[0][1])
        return None if root is None else Experiment(str(rows[0][0]), root)

    # -- runs ----------------------------------------------------------------------------------------------

    def create_run(self, experiment_id: str, run_name: str, tags: Mapping[str, Any],
                   start_time: int | None = None) -> str:
        """A RUNNING run of the experiment named ``run_name`` with ``tags`` (MLflow's ``create_run``: the
        ``mlflow.runName`` tag added, the user id taken from ``mlflow.user``); returns its id. As in MLflow, the
        tags of a new run are stored as given (``log_batch`` checks names and truncates values)."""
        run_id = uuid.uuid4().hex
        tags = {str(k): str(v) for k, v in tags.items()}
        if tags.setdefault(RUN_NAME_TAG, run_name) != run_name:
            raise ValueError(f"run name {run_name!r} and tag {RUN_NAME_TAG}={tags[RUN_NAME_TAG]!r} differ")
        rows = self._rows("SELECT artifact_location, lifecycle_stage FROM experiments WHERE experiment_id = ?",
                          (int(experiment_id),))
        if not rows or rows[0][1] != "active":
            raise ValueError(f"experiment {experiment_id} of {self.db} is {'deleted' if rows else 'missing'}: "
                             "runs cannot be created in it")
        location = rows[0][0]
        if local_artifact_root(location) is None:
            raise ValueError(f"experiment {experiment_id} keeps its artifacts at {location}, not locally")
        artifact_uri = location.rstrip("/") + f"/{run_id}/artifacts"
        statements = [("INSERT INTO runs (run_uuid, name, source_type, source_name, entry_point_name, user_id, "
                       "status, start_time, end_time, source_version, lifecycle_stage, artifact_uri, experiment_id, "
                       "deleted_time) VALUES (?, ?, 'UNKNOWN', '', '', ?, 'RUNNING', ?, NULL, '', 'active', ?, ?, "
                       "NULL)", (run_id, run_name, tags.get(USER_TAG, "unknown"), start_time or _now_ms(),
                                  artifact_uri, int(experiment_id)))]
        statements += [("INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?)", (k, v, run_id))
                       for k, v in tags.items()]
        self._write(statements)
        self._artifact_uris[run_id] = artifact_uri
        return run_id

    def log_batch(self, run_id: str, params: Mapping[str, Any] = {}, metrics: Mapping[str, float] = {},
                  tags: Mapping[str, Any] = {}, timestamp: int | None = None) -> None:
        """MLflow's ``log_batch`` of one active run, in one transaction: params (a param logged again must keep
        its value), metrics at step 0 (``latest_metrics`` updated as MLflow does) and tags (set or replaced;
        ``mlflow.runName`` renames the run)."""
        self._check_active(run_id)
        timestamp = _now_ms() if timestamp is None else timestamp
        params = {checked_key("param", k): str(v)[:MAX_PARAM_VALUE] for k, v in params.items()}
        tags = {checked_key("tag", k): str(v)[:MAX_TAG_VALUE] for k, v in tags.items()}
        stored = {k: _metric_value(v) for k, v in ((checked_key("metric", k), v) for k, v in metrics.items())}
        if params:
            marks = ",".join("?" * len(params))
            clash = [key for key, value in self._rows(f"SELECT key, value FROM params WHERE run_uuid = ? AND key IN "
                                                      f"({marks})", (run_id, *params)) if params[key] != value]
            if clash:
                raise ValueError(f"changing the value of param(s) {', '.join(clash)} of run {run_id} is not "
                                 "allowed (MLflow keeps the first value)")
        statements = [("INSERT OR IGNORE INTO params (key, value, run_uuid) VALUES (?, ?, ?)", (k, v, run_id))
                      for k, v in params.items()]
        for key, (value, is_nan) in stored.items():
            statements.append(("INSERT OR IGNORE INTO metrics (key, value, timestamp, run_uuid, step, is_nan) "
                               "VALUES (?, ?, ?, ?, 0, ?)", (key, value, timestamp, run_id, is_nan)))
            statements.append((
                "INSERT INTO latest_metrics (key, value, timestamp, step, is_nan, run_uuid) VALUES (?, ?, ?, 0, ?, ?) "
                "ON CONFLICT (key, run_uuid) DO UPDATE SET value = excluded.value, timestamp = excluded.timestamp, "
                "step = excluded.step, is_nan = excluded.is_nan WHERE (excluded.step, excluded.timestamp, "
                "excluded.value) > (latest_metrics.step, latest_metrics.timestamp, latest_metrics.value)",
                (key, value, timestamp, is_nan, run_id)))
        statements += [("INSERT INTO tags (key, value, run_uuid) VALUES (?, ?, ?) ON CONFLICT (key, run_uuid) "
                        "DO UPDATE SET value = excluded.value", (k, v, run_id)) for k, v in tags.items()]
        if RUN_NAME_TAG in tags:
            statements.append(("UPDATE runs SET name = ? WHERE run_uuid = ?", (tags[RUN_NAME_TAG], run_id)))
        if statements:
            self._write(statements)

    def set_terminated(self, run_id: str, status: str = "FINISHED", end_time: int | None = None) -> None:
        """End the run with ``status`` (FINISHED, FAILED, KILLED) at ``end_time`` (now)."""
        if status not in ("FINISHED", "FAILED", "KILLED", "RUNNING", "SCHEDULED"):
            raise ValueError(f"unknown run status {status!r}")
        self._check_active(run_id)
        self._write([("UPDATE runs SET status = ?, end_time = ? WHERE run_uuid = ?",
                      (status, end_time or _now_ms(), run_id))])

    def _check_active(self, run_id: str) -> None:
        rows = self._rows("SELECT lifecycle_stage FROM runs WHERE run_uuid = ?", (run_id,))
        if not rows:
            raise ValueError(f"run {run_id} not found in {self.db}")
        if rows[0][0] != "active":
            raise ValueError(f"run {run_id} is deleted: it cannot be logged to")

    # -- artifacts -----------------------------------------------------------------------------------------

    def artifact_dir(self, run_id: str) -> Path:
        """The local directory of the run's artifacts (its ``artifact_uri``)."""
        uri = self._artifact_uris.get(run_id)
        if uri is None:
            rows = self._rows("SELECT artifact_uri FROM runs WHERE run_uuid = ?", (run_id,))
            if not rows:
                raise ValueError(f"run {run_id} not found in {self.db}")
            uri = self._artifact_uris[run_id] = rows[0][0]
        root = local_artifact_root(uri)
        if root is None:
            raise ValueError(f"run {run_id} keeps its artifacts at {uri}, not in a local directory")
        return root

    def log_artifact(self, run_id: str, path: Path) -> None:
        """Copy the file ``path`` into the run's artifacts (with its permissions and times, as MLflow's local
        artifact repository does), atomically: a reader never sees half a file."""
        target = self.artifact_dir(run_id) / Path(path).name
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and os.path.samefile(path, target):
            return
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        try:
            with os.fdopen(handle, "wb") as out, open(path, "rb") as source:
                shutil.copyfileobj(source, out)
            shutil.copystat(path, temporary)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def log_text(self, run_id: str, text: str, name: str) -> None:
        """Write ``text`` as the artifact file ``name`` of the run (MLflow's ``log_text``)."""
        target = self.artifact_dir(run_id) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.chmod(temporary, 0o666 & ~_umask())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    # -- reading -------------------------------------------------------------------------------------------

    def has_local_artifacts(self, run_id: str) -> bool:
        """Whether the run exists here and keeps its artifacts in a local directory."""
        rows = self._rows("SELECT artifact_uri FROM runs WHERE run_uuid = ?", (run_id,))
        return bool(rows) and local_artifact_root(rows[0][0]) is not None

    def get_run(self, run_id: str) -> RunRecord:
        """The run's info, params, latest metrics (NaN restored) and tags."""
        rows = self._rows("SELECT run_uuid, experiment_id, name, status, start_time, end_time, artifact_uri "
                          "FROM runs WHERE run_uuid = ?", (run_id,))
        if not rows:
            raise ValueError(f"run {run_id} not found in {self.db}")
        run_uuid, experiment_id, name, status, start, end, artifact_uri = rows[0]
        params = dict(self._rows("SELECT key, value FROM params WHERE run_uuid = ?", (run_id,)))
        metrics = {key: (math.nan if is_nan else float(value)) for key, value, is_nan in
                   self._rows("SELECT key, value, is_nan FROM latest_metrics WHERE run_uuid = ?", (run_id,))}
        tags = dict(self._rows("SELECT key, value FROM tags WHERE run_uuid = ?", (run_id,)))
        return RunRecord(run_uuid, str(experiment_id), name or "", status, start, end, artifact_uri, params,
                         metrics, tags)

    def run_ids(self, experiment_id: str, status: str | None = None, tag: tuple[str, str] | None = None,
                limit: int | None = None) -> list[str]:
        """Ids of the active runs of the experiment, oldest first, with ``status`` and the tag ``(key, value)``
        when given (MLflow's ``search_runs`` on those filters, ordered by start time)."""
        sql = "SELECT runs.run_uuid FROM runs"
        args: list[Any] = []
        if tag is not None:
            sql += " JOIN tags ON tags.run_uuid = runs.run_uuid AND tags.key = ? AND tags.value = ?"
            args += list(tag)
        sql += " WHERE runs.experiment_id = ? AND runs.lifecycle_stage = 'active'"
        args.append(int(experiment_id))
        if status is not None:
            sql += " AND runs.status = ?"
            args.append(status)
        sql += " ORDER BY runs.start_time ASC, runs.run_uuid ASC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [row[0] for row in self._rows(sql, tuple(args))]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
