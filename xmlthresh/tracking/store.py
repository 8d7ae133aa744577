"""Opening an MLflow tracking store safely: check it before MLflow touches it, create and migrate a sqlite
store once under a file lock, and retry what SQLite refuses with ``database is locked``.

Why: MLflow creates and migrates a new sqlite store in whichever process opens it first, without a lock.
Three runs started at the same moment against a new ``sqlite:///new.db`` each ran the migration; the
losers died (``table trace_info already exists``) and the store was left half-migrated for good
(``_alembic_tmp_*`` tables). And a store that cannot be opened -- a directory, a read-only file, a
file that is not a database, a server nobody listens on -- made MLflow retry for minutes before a
traceback. Here every such case is one :class:`TrackingStoreError` (a ``ValueError``: the CLI prints
it as one line) naming the URI and the problem, within seconds.

A new sqlite store is created under a temporary name and renamed into place (:func:`create_store_atomically`),
so that a run killed during the seconds MLflow takes to migrate it cannot leave a broken store; a store MLflow
cannot open (what an older version left after such a kill, an older schema) is repaired by MLflow's own
``mlflow db upgrade`` or, failing that, moved aside as it was and replaced, with one warning line
(:func:`prepare_sqlite_store`). MLflow's tables are only ever read and written by MLflow.

A store shared by many nodes (SLURM arrays, several machines) should be an MLflow tracking server
(``tracking.uri=http://host:port``, ``mlflow server``): the file lock serialises processes on one file
system, and SQLite over network file systems is not reliable.

No mlflow import here (:mod:`xmlthresh.tracking.mlflow_runs` is the one module that imports it): this module only
checks, locks and retries around the calls that module makes.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from xmlthresh._util.errors import first_line

log = logging.getLogger(__name__)

T = TypeVar("T")

SQLITE_PREFIX = "sqlite:///"
#: the first 16 bytes of every SQLite 3 database file
SQLITE_MAGIC = b"SQLite format 3\x00"
#: seconds to wait for a tracking server's answer, and for the store's file lock (another process creating
#: or migrating the store)
SERVER_TIMEOUT = 5.0
LOCK_TIMEOUT = 300.0
#: how long operations refused with "database is locked" are retried
LOCKED_RETRY_SECONDS = 60.0
#: seconds ``mlflow db upgrade`` may take to repair a store
UPGRADE_TIMEOUT = 300.0
#: a store being created (``<db>.creating-<pid>``) and one moved aside (``<db>.broken-<time>-<pid>``)
CREATING_INFIX, BROKEN_INFIX = ".creating-", ".broken-"


class TrackingStoreError(ValueError):
    """A tracking store that cannot be used; the message names the URI, the problem and what to do."""


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI (None for other stores)."""
    return Path(uri[len(SQLITE_PREFIX):]) if uri.startswith(SQLITE_PREFIX) else None


def absolute_sqlite_uri(uri: str | None, base: str | os.PathLike) -> str | None:
    """``uri`` with a relative sqlite path (``sqlite:///runs.db``) made absolute against ``base``, the directory
    the command was started from: under ``hydra.job.chdir=true`` a job runs in its own folder, and each job
    opened a store of its own there (a sweep's jobs apart from their parent run). Other URIs are returned as
    they are."""
    if uri is None or not uri.startswith(SQLITE_PREFIX):
        return uri
    path = uri[len(SQLITE_PREFIX):]
    if not path or Path(path).is_absolute() or path.startswith(":memory:"):
        return uri
    return SQLITE_PREFIX + str(Path(base) / path)


#: the tracking URI schemes MLflow 3 writes runs to (a file store only with MLFLOW_ALLOW_FILE_STORE=true)
TRACKING_SCHEMES = ("sqlite", "http", "https", "postgresql", "mysql", "mssql", "databricks")
#: MLflow's limit on the length of an experiment's name
EXPERIMENT_NAME_MAX = 500


def check_uri_scheme(uri: str) -> None:
    """Refuse a tracking URI MLflow would refuse only when the run's record is sent -- in the background, after
    the run had reported success: a file store (``file://``, a plain path; MLflow 3 keeps it in maintenance
    mode) and a scheme MLflow does not know."""
    scheme = uri.split("://", 1)[0].split("+", 1)[0].lower() if "://" in uri else ""
    if scheme in TRACKING_SCHEMES:
        return
    if scheme in ("", "file"):
        if os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() in ("1", "true"):
            return
        raise TrackingStoreError(f"tracking.uri={uri}: MLflow 3 does not write runs to a file store; use a "
                                 f"database, e.g. tracking.uri={SQLITE_PREFIX}<absolute path>/mlflow.db (or set "
                                 "MLFLOW_ALLOW_FILE_STORE=true to use the file store anyway)")
    raise TrackingStoreError(f"tracking.uri={uri}: unknown scheme {scheme!r}; use {SQLITE_PREFIX}<path>, "
                             f"http(s)://host:port or a database URL ({', '.join(TRACKING_SCHEMES)})")


def check_experiment_name(name: str) -> None:
    """An experiment name MLflow accepts: not empty, at most :data:`EXPERIMENT_NAME_MAX` characters."""
    if not isinstance(name, str) or not name.strip():
        raise TrackingStoreError(f"tracking.experiment must be a non-empty name, got {name!r}")
    if len(name) > EXPERIMENT_NAME_MAX:
        raise TrackingStoreError(f"tracking.experiment has {len(name)} characters; MLflow allows at most "
                                 f"{EXPERIMENT_NAME_MAX}")


def check_store(uri: str) -> None:
    """Raise :class:`TrackingStoreError` when the store ``uri`` cannot be used for runs (see module docstring):
    a scheme MLflow does not write to, a sqlite path that is a directory, not writable, or not a database, or
    a tracking server that does not answer within :data:`SERVER_TIMEOUT` seconds. Other stores are left to
    MLflow."""
    check_uri_scheme(uri)
    path = sqlite_path(uri)
    if path is not None:
        announce_store_notices(path)
        check_sqlite_file(path, uri)
    elif uri.startswith(("http://", "https://")):
        check_server(uri)


def check_store_exists(uri: str) -> None:
    """For commands that only read a store (the report): a sqlite store whose file is missing is an error,
    not a new empty store (a mistyped path created its folder and a store, then reported nothing)."""
    path = sqlite_path(uri)
    if path is not None and not path.is_file():
        raise TrackingStoreError(f"tracking store {uri} does not exist ({path} is not a file); check the path "
                                 "(the runs' store is runs/mlflow.db of the project unless tracking.uri said "
                                 "otherwise)")


#: free space a new sqlite store needs (MLflow's schema, migrated: about 1 MB, with room) and a run on an
#: existing one (its params, metrics and tags)
NEW_STORE_ROOM = 8 << 20
RUN_ROOM = 1 << 20


def check_sqlite_file(path: Path, uri: str) -> None:
    """The sqlite store file can be created or opened for writing, and holds a database (or nothing yet)."""
    if path.is_dir():
        raise TrackingStoreError(f"tracking store {uri}: {path} is a directory, not a database file; "
                                 f"give a file path, e.g. tracking.uri={SQLITE_PREFIX}{path / 'mlflow.db'}")
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TrackingStoreError(f"tracking store {uri}: cannot create its directory {parent}: "
                                 f"{exc.strerror or exc}") from None
    new = not path.exists()
    if new and not os.access(parent, os.W_OK | os.X_OK):
        raise TrackingStoreError(f"tracking store {uri}: the directory {parent} is not writable, so the "
                                 "database cannot be created; choose another tracking.uri or run with "
                                 "tracking.enabled=false")
    need = NEW_STORE_ROOM if new else RUN_ROOM
    try:
        usage = shutil.disk_usage(parent)
        free = usage.free if usage.total else None  # a pseudo file system (/proc) reports no size at all
    except OSError:
        free = None
    if free is not None and free < need:  # sqlite's "database or disk is full" came as a 165-line traceback
        raise TrackingStoreError(f"tracking store {uri}: the disk holding {parent} has {free / 2**20:.1f} MB free, "
                                 f"less than the {need >> 20} MB {'a new store' if new else 'a run'} needs; free "
                                 "space there, choose another tracking.uri or run with tracking.enabled=false")
    if new:
        return
    if not os.access(path, os.R_OK | os.W_OK):
        raise TrackingStoreError(f"tracking store {uri}: {path} is read-only (runs write to it); make it "
                                 "writable, choose another tracking.uri or run with tracking.enabled=false")
    with open(path, "rb") as handle:
        head = handle.read(len(SQLITE_MAGIC))
    if head and head != SQLITE_MAGIC:
        raise TrackingStoreError(f"tracking store {uri}: {path} is not an SQLite database (it starts with "
                                 f"{head[:8]!r}); point tracking.uri at an MLflow database or a new file")


def check_server(uri: str, timeout: float = SERVER_TIMEOUT) -> None:
    """A tracking server answers ``<uri>/health`` within ``timeout`` seconds (any HTTP status counts as an
    answer: a proxy may not route /health). Without this, MLflow retries an unreachable server for minutes."""
    import urllib.error  # only for servers: urllib.request is not free to import
    import urllib.request

    try:
        with urllib.request.urlopen(uri.rstrip("/") + "/health", timeout=timeout):
            return
    except urllib.error.HTTPError:
        return  # it answered
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TrackingStoreError(f"tracking server {uri} is not reachable ({reason}); start it (mlflow server "
                                 "--host ... --port ...), fix tracking.uri, or run with tracking.enabled=false"
                                 ) from None


def create_store_atomically(path: Path, create: Callable[[str], None]) -> None:
    """A new sqlite store at ``path``, created and migrated by ``create(uri)`` under a temporary name beside it,
    then renamed into place (``os.replace``: atomic on one file system).

    Why: MLflow's first migration of a new store takes seconds (more under load); a run killed in that window
    left a half-migrated file that every later run failed on. Now a kill at any instant leaves either no store
    (and a temporary file, removed by the next creation) or a complete one. Call it under :func:`store_lock`."""
    remove_abandoned_creations(path)
    temporary = path.with_name(f"{path.name}{CREATING_INFIX}{os.getpid()}")
    create(SQLITE_PREFIX + str(temporary))
    os.replace(temporary, path)
    remove_abandoned_creations(path)  # the temporary store's journal, if SQLite left one


def remove_abandoned_creations(path: Path, stale_only: bool = False) -> None:
    """Delete what a creation killed before its rename left beside ``path`` (``<db>.creating-<pid>*``, with
    SQLite's journal); under the store's lock no creation is under way on this host. ``stale_only`` (the
    opening of a store that exists, which a process on another host sharing the folder may be creating anew
    only if it was deleted) keeps those whose process is alive and that changed in the last minutes."""
    import re
    import time

    from xmlthresh._util.files import STALE_SECONDS, pid_alive

    for leftover in path.parent.glob(glob.escape(path.name) + CREATING_INFIX + "*"):
        if stale_only:
            owner = re.match(r"\d+", leftover.name[len(path.name) + len(CREATING_INFIX):])
            try:
                age = time.time() - leftover.stat().st_mtime
            except OSError:
                continue
            if age < STALE_SECONDS and (owner is None or pid_alive(int(owner.group()))):
                continue
        with contextlib.suppress(OSError):
            leftover.unlink()
            log.info("removed %s, left by a creation of the store that was killed", leftover)


def upgrade_with_mlflow(uri: str, timeout: float = UPGRADE_TIMEOUT) -> tuple[bool, str]:
    """Run MLflow's own ``mlflow db upgrade <uri>`` (its public command for a store of an older schema) in a
    child process; (whether it succeeded, its last line of output)."""
    try:
        done = subprocess.run([sys.executable, "-m", "mlflow", "db", "upgrade", uri], capture_output=True,
                              text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return done.returncode == 0, lines[-1] if lines else ""


def heal_store(path: Path, uri: str, open_uri: Callable[[str], None], reason: str) -> None:
    """A store MLflow cannot open: first MLflow's own repair, ``mlflow db upgrade`` (an older schema, an
    interrupted upgrade it can finish), on the store after a copy of it is taken; if the store then opens, one
    warning line names the copy. Otherwise the store as it was is moved aside to ``<db>.broken-<time>-<pid>``
    (kept, never written: ``mlflow db upgrade`` may rescue it later) and a new store takes its place, also with
    one warning line. Nothing here reads or writes MLflow's tables: only MLflow does."""
    stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    kept = path.with_name(f"{path.name}{BROKEN_INFIX}{stamp}")
    shutil.copy2(path, kept)  # the store exactly as it was, before MLflow's repair touches it
    upgraded, said = upgrade_with_mlflow(uri)
    if upgraded:
        try:
            open_uri(uri)
        except Exception as exc:  # noqa: BLE001 - MLflow still refuses it: a new store below
            said = first_line(exc)
        else:
            log.warning("tracking store %s could not be used (%s): repaired by mlflow db upgrade; the store as it "
                        "was is kept at %s", uri, reason, kept)
            return
    path.unlink()  # what the failed repair left; the store as it was is the copy
    message = (f"tracking store {uri} could not be used ({reason}) and mlflow db upgrade did not repair it "
               f"({said}): moved it aside to {kept} (kept as it was, with the runs made before) and created a new one")
    log.warning("%s", message)
    if notices_for_later:  # healed by the background syncer, whose log nobody reads: said by the next command
        from xmlthresh._util.files import write_text_atomic

        write_text_atomic(kept.with_name(kept.name + NOTICE_SUFFIX), message + "\n")
    create_store_atomically(path, open_uri)


#: set by the background syncer: what it repairs is also said by the next command in the foreground
notices_for_later = False
#: the notice of a store moved aside in the background, beside its copy (``<db>.broken-<stamp>.notice``)
NOTICE_SUFFIX = ".notice"


def announce_store_notices(path: Path) -> None:
    """Say, once, what the background syncer did to the store at ``path`` (moved aside and replaced: the runs
    made before are in the copy): one warning line per notice, then the notice is gone."""
    for notice in sorted(path.parent.glob(f"{path.name}{BROKEN_INFIX}*{NOTICE_SUFFIX}")):
        try:
            text = notice.read_text(encoding="utf-8").strip()
            notice.unlink()
        except OSError:  # another command said it first, or the folder is read-only: said again next time
            continue
        log.warning("while syncing in the background: %s", text)


def prepare_sqlite_store(path: Path, uri: str, open_uri: Callable[[str], None], repair: bool = True) -> None:
    """Make the sqlite store ``uri`` (at ``path``) usable by ``open_uri`` (which opens it through MLflow, creating
    and migrating a new one). Call it under :func:`store_lock`.

    * no file, or an empty one: created atomically (:func:`create_store_atomically`);
    * a file that MLflow cannot open (an older or newer schema, a migration left half-done by an older version
      killed while it created the store): healed (:func:`heal_store`) when ``repair``; a command that only
      reads (the report) gets one :class:`TrackingStoreError` naming the problem and MLflow's repair.
    """
    if not path.exists() or path.stat().st_size == 0:
        if not repair:
            raise TrackingStoreError(f"tracking store {uri} is empty: it holds no runs to read")
        create_store_atomically(path, open_uri)
        return
    remove_abandoned_creations(path, stale_only=True)  # a kill after the rename left the journal of the creation
    try:
        open_uri(uri)
        return
    except TrackingStoreError:
        raise
    except Exception as exc:  # what MLflow raises for a store it cannot migrate or read
        if is_locked_error(exc):
            raise TrackingStoreError(f"tracking store {uri}: another process holds a lock on it (database is "
                                     "locked); wait for it to finish, or stop it, and run again") from None
        reason = f"MLflow {mlflow_version()} cannot open it: {first_line(exc)}"
    if not repair:
        raise TrackingStoreError(f"tracking store {uri} cannot be read: {reason}; back it up, then try MLflow's "
                                 f"repair: mlflow db upgrade {uri}")
    heal_store(path, uri, open_uri, reason)


def mlflow_version() -> str:
    """The installed MLflow's version, for messages about stores it cannot open (older or newer schemas)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mlflow")
    except PackageNotFoundError:
        return "(not installed)"


@contextlib.contextmanager
def store_lock(uri: str, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold ``<db>.lock`` beside a sqlite store while it is created, migrated or its experiment made, so
    that of several processes starting at once exactly one does it and the others wait, then find it done;
    a store that is not sqlite needs no lock."""
    path = sqlite_path(uri)
    if path is None:
        yield
        return
    from filelock import FileLock, Timeout

    lock_file = str(path) + ".lock"
    try:  # filelock polls until its timeout when it cannot create the file: find that out at once
        open(lock_file, "a").close()
    except OSError as exc:
        raise TrackingStoreError(f"tracking store {uri}: cannot create the lock file {lock_file}: "
                                 f"{exc.strerror or exc}; choose a writable place for tracking.uri") from None
    lock = FileLock(lock_file, timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise TrackingStoreError(f"tracking store {uri}: waited {timeout:.0f} s for {lock_file} (another "
                                 "process creating or migrating the store); if none is running, delete the "
                                 "lock file") from None
    try:
        yield
    finally:
        lock.release()


def is_locked_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps) is SQLite's "database is locked" (another writer held it too long)."""
    while exc is not None:
        if "database is locked" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def retry_when_locked(operation: Callable[[], T], what: str, seconds: float = LOCKED_RETRY_SECONDS) -> T:
    """``operation()``, retried with a jittered backoff while SQLite says "database is locked" (several runs
    writing one store at once), for up to ``seconds``; other errors propagate at once."""
    deadline = time.monotonic() + seconds
    delay = 0.05
    while True:
        try:
            return operation()
        except Exception as exc:
            if not is_locked_error(exc) or time.monotonic() > deadline:
                raise
            log.debug("%s: database is locked, retrying in %.2f s", what, delay)
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 2.0)
