"""One keyed disk store for the derived caches (parsed ranked lists, loaded feature data sets): a value
derived from source files is built once and later loaded from ``<cache_dir>/<kind>/`` in milliseconds.

:func:`cached` is the whole interface: ``cached(kind, stem, key, sources, build, encode, decode)`` returns the
stored value when its entry is good, else ``build()``-s it and stores ``encode(value)``. What it guarantees:

* **keyed**: an entry's file name is a readable stem plus a digest of ``key`` (everything that shapes the value:
  resolved source paths, parse parameters, the caller's format version) -- other parameters, another entry;
* **invalidated by its sources**: the entry records the name, size and modification time (ns) of every source
  file; a changed source is a miss and the entry is rebuilt in place (stale entries do not pile up);
* **atomic**: entries are written through :func:`xmlthresh._util.files.atomic_output` (temporary file, fsync,
  rename): a kill, an error or a full disk during the write leaves no partial entry; a build that raises
  stores nothing;
* **checked**: every array carries a CRC-32; an entry that cannot be read, fails a checksum or does not decode
  is *corrupt*: deleted with a warning and rebuilt from the source, never an error;
* **optional**: an unwritable cache (full disk, read-only directory, a file where the directory should be)
  costs only the cache -- a warning, and the value is returned all the same.

Why not ``joblib.Memory``: it keeps no checksums (a flipped byte loads silently), leaves its temporary file
behind when a write fails, keys by argument hashes (a changed source would add an entry, not replace one),
pickles (code runs on load) and fails on an unwritable cache directory. An entry is one file: a magic line,
the header (JSON: key, source stamps, the caller's metadata, each array's dtype, shape, offset and CRC-32),
then the raw arrays, 64-byte aligned, read straight into preallocated arrays (no pickle, no zip layer, one
copy). Reading an entry is faster than the former ``.npz`` entries and about as fast as ``joblib.load`` (the
difference is the CRC pass); ``benchmarks/cache_hits.py`` times whole hits.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable, Generic, Mapping, Sequence, TypeVar

import numpy as np

from xmlthresh._util.files import atomic_output
from xmlthresh._util.paths import cache_dir

log = logging.getLogger(__name__)

T = TypeVar("T")
Arrays = dict[str, np.ndarray]

MAGIC = b"xmlthresh-entry 1\n"  # the store's layout version: a new layout reads old entries as corrupt
SUFFIX = ".entry"
_ALIGN = 64
#: what reading or decoding a damaged entry can raise (besides CorruptEntryError)
READ_ERRORS = (OSError, ValueError, KeyError, TypeError, IndexError, EOFError)


class CorruptEntryError(ValueError):
    """An entry that cannot be trusted (bad magic, truncated, checksum mismatch, malformed header)."""


@dataclass(frozen=True)
class Cached(Generic[T]):
    """What :func:`cached` returns: the value, its entry (None when it could not be stored) and whether it was
    loaded (``hit``) rather than built."""

    value: T
    path: Path | None
    hit: bool


def cached(kind: str, stem: str, key: Mapping[str, Any], sources: Sequence[str | os.PathLike],
           build: Callable[[], T], encode: Callable[[T], tuple[dict[str, Any], Arrays]],
           decode: Callable[[dict[str, Any], Arrays], T]) -> Cached[T]:
    """The value of ``key`` from its entry under ``<cache_dir>/<kind>/`` when every source is unchanged, else
    ``build()`` stored as ``encode(value)`` = (JSON metadata, arrays); ``decode(metadata, arrays)`` inverts it.

    A missing source raises ``FileNotFoundError`` (as reading it would); ``build``'s errors propagate."""
    stamps = [source_stamp(Path(p)) for p in sources]
    entry = entry_path(kind, stem, key)
    plain_key = json.loads(json.dumps(dict(key), default=str))
    stored = _load(entry, plain_key, stamps, decode)
    if stored is not None:
        log.debug("%s loaded from cache %s", stem, entry)
        return Cached(stored[0], entry, True)
    value = build()
    meta, arrays = encode(value)
    written = write_entry(entry, {"key": plain_key, "sources": stamps, "meta": meta}, arrays)
    return Cached(value, entry if written else None, False)


def source_stamp(path: Path) -> dict[str, Any]:
    """What identifies the content of ``path`` without reading it: name, size and modification time (ns)."""
    status = path.stat()
    return {"name": path.name, "size": status.st_size, "mtime_ns": status.st_mtime_ns}


def entry_path(kind: str, stem: str, key: Mapping[str, Any]) -> Path:
    """The entry file of ``key``: ``<cache_dir>/<kind>/<stem>-<digest of key><SUFFIX>``."""
    digest = hashlib.sha256(json.dumps(dict(key), sort_keys=True, default=str).encode()).hexdigest()[:24]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem) or "entry"
    return cache_dir() / kind / f"{safe}-{digest}{SUFFIX}"


def _load(entry: Path, key: dict[str, Any], stamps: list[dict[str, Any]],
          decode: Callable[[dict[str, Any], Arrays], T]) -> tuple[T] | None:
    """(value,) from ``entry``, or None when it is missing, stale or corrupt (then it is deleted, with a warning)."""
    try:
        header, arrays = read_entry(entry)
        if header.get("key") != key or header.get("sources") != stamps:
            log.info("cache %s is stale (a source changed): rebuilding it", entry)
            return None
        return (decode(header["meta"], arrays),)
    except FileNotFoundError:  # never written, or removed meanwhile by another process
        return None
    except (CorruptEntryError, *READ_ERRORS) as exc:
        discard(entry, exc)
        return None


def discard(entry: Path, exc: BaseException) -> None:
    """Delete an entry that cannot be trusted (the next load rebuilds it)."""
    log.warning("cache %s is corrupt (%s: %s): deleting it and reading the source again",
                entry, type(exc).__name__, exc)
    try:
        entry.unlink(missing_ok=True)
    except OSError:
        pass  # the rebuilt entry replaces it (or the cache is unwritable: then we go without)


# ---------------------------------------------------------------------------------------------- the format
def write_entry(entry: Path, header: dict[str, Any], arrays: Arrays) -> bool:
    """Write ``header`` and ``arrays`` to ``entry`` atomically; after an OS error (full disk, unwritable
    directory) log a warning, leave nothing behind and return False. Other errors propagate."""
    arrays = {name: np.asarray(array, order="C") for name, array in arrays.items()}  # keeps 0-d arrays 0-d
    specs, offset = [], 0
    for name, array in arrays.items():
        if array.dtype.hasobject:
            raise TypeError(f"array {name!r} holds Python objects; store numbers or fixed-width strings")
        specs.append({"name": name, "dtype": array.dtype.str, "shape": list(array.shape), "offset": offset,
                      "nbytes": array.nbytes, "crc32": zlib.crc32(_bytes_of(array))})
        offset += _aligned(array.nbytes)
    encoded = json.dumps({**header, "arrays": specs}).encode()  # a non-JSON header fails here, before any file
    try:
        with atomic_output(entry) as out:
            _write_payload(out, encoded, arrays)
    except OSError as exc:
        log.warning("could not write the cache %s (%s); continuing without it", entry, exc)
        return False
    return True


def _write_payload(out: BinaryIO, header: bytes, arrays: Arrays) -> None:
    """Magic, header length (8 bytes, little endian), header, then each array at its aligned offset."""
    prefix = MAGIC + len(header).to_bytes(8, "little") + header
    out.write(prefix + bytes(_aligned(len(prefix)) - len(prefix)))
    for array in arrays.values():
        out.write(_bytes_of(array))
        out.write(bytes(_aligned(array.nbytes) - array.nbytes))


def read_entry(entry: Path) -> tuple[dict[str, Any], Arrays]:
    """(header, arrays) of ``entry``, every array checked against its size and CRC-32."""
    with open(entry, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if handle.read(len(MAGIC)) != MAGIC:
            raise CorruptEntryError("not an entry of this store (bad magic)")
        length = int.from_bytes(handle.read(8), "little")
        if len(MAGIC) + 8 + length > size:
            raise CorruptEntryError(f"header of {length} bytes in a file of {size}")
        header = json.loads(handle.read(length))
        base = _aligned(len(MAGIC) + 8 + length)
        arrays: Arrays = {}
        for spec in header["arrays"]:
            array = np.empty(tuple(spec["shape"]), dtype=np.dtype(spec["dtype"]))
            if array.dtype.hasobject or array.nbytes != spec["nbytes"]:
                raise CorruptEntryError(f"array {spec['name']!r}: dtype or shape do not match its size")
            handle.seek(base + spec["offset"])
            if handle.readinto(_bytes_of(array)) != array.nbytes:
                raise CorruptEntryError(f"array {spec['name']!r} is truncated")
            if zlib.crc32(_bytes_of(array)) != spec["crc32"]:
                raise CorruptEntryError(f"checksum mismatch in array {spec['name']!r}")
            arrays[spec["name"]] = array
    return header, arrays


def _bytes_of(array: np.ndarray) -> np.ndarray:
    """The bytes of a C-contiguous array as a writable 1-D uint8 view (no copy)."""
    return array.reshape(-1).view(np.uint8)


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN
