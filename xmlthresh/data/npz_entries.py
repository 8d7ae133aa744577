"""Checked, atomic ``.npz`` entries: the storage shared by the derived caches (parsed ranked lists, parsed
feature data sets).

* :func:`write_entry` writes the arrays plus a JSON metadata record (with a CRC-32 of every array) to a
  temporary file in the entry's directory and renames it into place: an error or a full disk leaves no
  partial entry. An ``OSError`` (full disk, read-only directory) costs only the cache: a warning, ``False``.
* :func:`read_entry` returns (metadata, arrays) and raises :class:`CorruptEntryError` when the stored arrays
  do not match their checksums; :func:`discard` deletes an entry that cannot be trusted, with a warning.
* :func:`source_stamp` identifies a source file without reading it (name, size, modification time), so a
  changed source makes its entry stale.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: what reading a damaged entry can raise (besides CorruptEntryError)
READ_ERRORS = (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, json.JSONDecodeError)


class CorruptEntryError(ValueError):
    """A cache entry that cannot be trusted (checksum mismatch, missing or unexpected arrays)."""


def source_stamp(path: Path) -> dict[str, Any]:
    """What identifies the content of ``path`` without reading it: name, size and modification time."""
    status = Path(path).stat()
    return {"name": Path(path).name, "size": status.st_size, "mtime_ns": status.st_mtime_ns}


def write_entry(entry: Path, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> bool:
    """Write ``arrays`` and ``meta`` (plus checksums) to ``entry`` atomically; False after an OS error."""
    arrays = {key: np.ascontiguousarray(array) for key, array in arrays.items()}
    meta = {**meta, "crc32": {key: zlib.crc32(array) for key, array in arrays.items()}}
    tmp: Path | None = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp_name = tempfile.mkstemp(prefix=f".{entry.name}.", suffix=".tmp", dir=entry.parent)
        tmp = Path(tmp_name)
        with os.fdopen(handle, "wb") as out:
            _write(out, meta, arrays)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, entry)
        tmp = None
    except OSError as exc:
        log.warning("could not write the cache %s (%s); continuing without it", entry, exc)
        return False
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
    return True


def read_entry(entry: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(metadata, arrays) of ``entry``, every array checked against its stored checksum."""
    with np.load(entry, allow_pickle=False) as npz:
        meta = json.loads(str(npz["meta"][()]))
        arrays = {key: npz[key] for key in npz.files if key != "meta"}
    expected = meta.get("crc32", {})
    if set(expected) != set(arrays):
        raise CorruptEntryError(f"arrays {sorted(arrays)} stored, {sorted(expected)} expected")
    for key, array in arrays.items():
        if zlib.crc32(np.ascontiguousarray(array)) != expected[key]:
            raise CorruptEntryError(f"checksum mismatch in {key}")
    return meta, arrays


def discard(entry: Path, exc: BaseException) -> None:
    """Delete an entry that cannot be trusted (the next load rebuilds it)."""
    log.warning("cache %s is corrupt (%s: %s): deleting it and reading the source again",
                entry, type(exc).__name__, exc)
    try:
        entry.unlink(missing_ok=True)
    except OSError:
        pass  # the rebuilt entry replaces it (or the cache is unwritable: then we go without)


def _write(out, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """The writer: one uncompressed npz (the metadata as a JSON string array)."""
    np.savez(out, meta=np.array(json.dumps(meta)), **arrays)
