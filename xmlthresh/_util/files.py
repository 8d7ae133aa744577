"""Atomic file writes: every file the package writes (results, reports, plots, cache entries, score files,
downloads) goes through :func:`atomic_output`, so a crash, a full disk or an error never leaves a half-written
file behind and a reader sees either the old content or the new one, never a mix.

How: the data go to a temporary file in the target's directory (same file system, so the final rename is
atomic), which is flushed and ``fsync``-ed, then ``os.replace``-d onto the target; the directory is
``fsync``-ed too where the platform allows it, so the rename itself survives a power cut. On any error
(including ``KeyboardInterrupt``) the temporary file is removed and the target is left untouched. The
temporary file is created with mode 0o666 filtered by the process umask -- the mode any other new file
gets (``tempfile.mkstemp`` would create it 0o600, and the rename would keep that).
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Mapping

import numpy as np

_NEW_FILE_MODE = 0o666  # the kernel applies the umask (and default ACLs), as for open(path, "w")


#: errors of the file system itself (full, over quota, read-only, refused, failing): reported as
#: :class:`WriteFailedError` naming the file; other errors of a writer propagate unchanged
_STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM,
                             errno.EIO})


class WriteFailedError(OSError):
    """A file that could not be written because of where it goes (a full disk, a read-only directory); the
    message names the file and the reason, so the CLI can show it as one line."""

    def __str__(self) -> str:  # the message alone, without OSError's "[Errno 28]" prefix
        return str(self.strerror)


#: the settings that choose where the running command writes, named by a failed write (the report sets its
#: own: ``--out``; a run's are Hydra's folder and the project's)
WRITE_ELSEWHERE: contextvars.ContextVar[str] = contextvars.ContextVar(
    "write_elsewhere", default="hydra.run.dir, XMLTHRESH_HOME, XMLTHRESH_CACHE")


def _write_failed(path: Path, exc: OSError) -> WriteFailedError:
    hint = ""
    elsewhere = WRITE_ELSEWHERE.get()
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = f"; free space there or write elsewhere ({elsewhere})"
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        hint = f"; the place is not writable: write elsewhere ({elsewhere})"
    return WriteFailedError(exc.errno, f"cannot write {path}: {exc.strerror or exc}{hint}")


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file object whose content replaces ``path`` when the block ends without an exception.

    The parent directory is created when missing. Use it for writers that need a file object (``np.savez``,
    a download streamed to disk); :func:`write_bytes_atomic` for data already in memory. A full disk or an
    unwritable place raises :class:`WriteFailedError` naming ``path`` (the temporary file removed)."""
    path = Path(path)
    if path.is_dir():  # the rename at the end would fail, naming the temporary file instead
        raise WriteFailedError(errno.EISDIR, f"cannot write {path}: it is a folder; give the path of a file in it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _tidy_once(path.parent)
        tmp, handle = _create_temporary(path)
    except OSError as exc:
        if exc.errno in _STORAGE_ERRNOS:
            raise _write_failed(path, exc) from exc
        raise
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno in _STORAGE_ERRNOS and not isinstance(exc, WriteFailedError):
            raise _write_failed(path, exc) from exc
        raise
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


#: the suffix of a folder being written by :func:`folder_as_one_unit` (``.<name>.<pid>-<random>.partial``)
PARTIAL_SUFFIX = ".partial"


@contextlib.contextmanager
def folder_as_one_unit(path: str | os.PathLike) -> Iterator[Path]:
    """A new, empty staging folder beside ``path`` to write into; when the block ends without an exception its
    files appear in ``path``: the staging folder is renamed to ``path`` (atomic) when ``path`` does not exist,
    else each file is moved into it with ``os.replace`` (atomic per file: files already there and not written
    again stay). On any error (a full disk half-way, an interrupt) the staging folder is removed, and so are
    the parent folders this call made: a failed write leaves no partial folder behind.

    A staging folder left by a process killed with ``kill -9`` is removed by the next call for the same
    folder once it is stale (:func:`remove_stale_temporaries`)."""
    path = Path(path)
    made = [parent for parent in [path.parent, *path.parent.parents] if not parent.exists()]
    staging = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(6)}{PARTIAL_SUFFIX}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path.parent)
        staging.mkdir()  # mode 0o777 less the umask, as for any new folder (mkdtemp would make it 0o700)
    except OSError as exc:
        _remove_empty(made)
        if exc.errno in _STORAGE_ERRNOS:
            raise _write_failed(path, exc) from exc
        raise
    try:
        yield staging
        if not path.exists():
            os.rename(staging, path)
        else:
            for entry in sorted(staging.iterdir()):
                os.replace(entry, path / entry.name)
            staging.rmdir()
        _fsync_directory(path.parent)
    except BaseException as exc:
        import shutil

        shutil.rmtree(staging, ignore_errors=True)
        _remove_empty(made)
        if isinstance(exc, WriteFailedError):  # named by the folder the user asked for, not the staging one
            raise WriteFailedError(exc.errno, str(exc).replace(str(staging), str(path))) from None
        if isinstance(exc, OSError) and exc.errno in _STORAGE_ERRNOS:
            raise _write_failed(path, exc) from exc
        raise


def _remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` (innermost first) where they are empty; never an error."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


#: how long a temporary file or staging folder may go unmodified before it counts as abandoned
STALE_SECONDS = 600.0
#: how long one whose owner process is gone (on this host) is left alone, for owners on other hosts
DEAD_OWNER_SECONDS = 10.0


#: the names this module gives its temporary files and staging folders, and no other (a user's own hidden
#: ``.notes.tmp`` in the same folder is never touched)
_TEMPORARY_NAME = re.compile(r"^\..+\.(?:\d+-)?[0-9a-f]{12}(?:\.tmp|\.partial)$")


def remove_stale_temporaries(folder: str | os.PathLike) -> list[Path]:
    """Remove the temporary files (``.<name>.<pid>-<random>.tmp``, also the older ``.<name>.<random>.tmp``) and
    staging folders (``...partial``) a killed writer left in ``folder``: those whose writing process is gone
    (unmodified for :data:`DEAD_OWNER_SECONDS`, so that a writer on another host sharing the folder is left
    alone) or that were not modified for :data:`STALE_SECONDS`. Returns what was removed; never an error."""
    import shutil
    import time

    removed = []
    try:
        candidates = [entry for entry in Path(folder).iterdir() if _TEMPORARY_NAME.match(entry.name)]
    except OSError:
        return removed
    now = time.time()
    for entry in candidates:
        try:
            age = now - entry.lstat().st_mtime
        except OSError:
            continue
        owner = _owner_pid(entry.name)
        if age < STALE_SECONDS and not (owner is not None and age > DEAD_OWNER_SECONDS and not pid_alive(owner)):
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            removed.append(entry)
        except OSError:
            continue
    return removed


#: the folders this process has tidied (:func:`_tidy_once`)
_TIDIED: set[str] = set()


def _tidy_once(folder: Path) -> None:
    """:func:`remove_stale_temporaries` of ``folder``, the first time this process writes there: what a writer
    killed with ``kill -9`` left (a parse-cache entry's ``.tmp``) goes at the next start, without a listing of
    the folder at every write."""
    key = str(folder)
    if key not in _TIDIED:
        _TIDIED.add(key)
        removed = remove_stale_temporaries(folder)
        if removed:
            import logging

            logging.getLogger(__name__).info("removed %d temporary file(s) a killed writer left in %s",
                                             len(removed), folder)


def _owner_pid(name: str) -> int | None:
    """The writing process's id in a temporary's name (``.<name>.<pid>-<random>.tmp``), or None."""
    stem = name.rsplit(".", 2)[-2] if name.count(".") >= 2 else ""
    pid = stem.split("-", 1)[0] if "-" in stem else ""
    return int(pid) if pid.isdigit() else None


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (a process of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _create_temporary(path: Path) -> tuple[Path, int]:
    """A new, empty hidden file beside ``path`` (``.<name>.<pid>-<random>.tmp``: the writer's process id lets a
    later process tell an abandoned one, :func:`remove_stale_temporaries`) and its descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(6)}.tmp")
        try:
            return tmp, os.open(tmp, flags, _NEW_FILE_MODE)
        except FileExistsError:  # another writer drew the same name: draw again
            continue


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable; a no-op where directories cannot be opened (Windows)."""
    try:
        handle = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass  # some file systems refuse fsync on directories; the data themselves are synced
    finally:
        os.close(handle)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Replace ``path`` by ``data`` atomically (see the module docstring)."""
    with atomic_output(path) as out:
        out.write(data)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Replace ``path`` by ``text`` (UTF-8) atomically."""
    write_bytes_atomic(path, text.encode())


def write_json_atomic(path: str | os.PathLike, payload: Mapping[str, Any]) -> None:
    """Replace ``path`` by ``payload`` as indented JSON atomically."""
    write_text_atomic(path, json.dumps(payload, indent=2) + "\n")


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON values: numpy scalars and arrays -> Python numbers and lists, tuples -> lists,
    mapping keys -> strings, anything else that JSON cannot hold -> its repr."""
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)
