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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
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


def _create_temporary(path: Path) -> tuple[Path, int]:
    """A new, empty hidden file beside ``path`` (``.<name>.<random>.tmp``) and its descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
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
