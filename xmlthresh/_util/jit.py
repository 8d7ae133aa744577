"""numba's compiled-kernel cache: kept under ``$XMLTHRESH_CACHE/numba`` and checked before numba reads it.

Why: numba caches every ``cache=True`` kernel in files it reads back without a check. One corrupt file (random
bytes in a ``*.nbc``, a truncated ``*.nbi``: a full disk, a kill during a copy) made every later run fail with
"could not convert string to float" or an ``UnpicklingError`` until someone found and deleted it; and the
default place, the package's own ``__pycache__``, is often read-only in an installed package. So:

* ``import xmlthresh`` (before any module imports numba) points numba's ``NUMBA_CACHE_DIR`` at
  ``$XMLTHRESH_CACHE/numba`` unless the user set it;
* importing this module (every module with kernels does, for :func:`cached_njit`) checks that folder once per
  process: an unwritable one is replaced by a temporary folder for this process, and every cache file that is
  not a complete pickle stream is deleted, each with one warning line; numba then recompiles what it lacks.

The check reads the pickle opcodes only (:func:`pickletools.genops`): nothing in a file is executed, and the
whole cache is checked in milliseconds.
"""

from __future__ import annotations

import atexit
import functools
import io
import logging
import os
import pickletools
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)

#: numba's environment variable for its cache folder, read once when numba is imported
NUMBA_CACHE_ENV = "NUMBA_CACHE_DIR"
#: the index of a cached function (two pickles: numba's version, then the overloads) and one overload's code
INDEX_SUFFIX, DATA_SUFFIX = ".nbi", ".nbc"


def numba_cache_folders() -> list[Path]:
    """The folders numba caches this package's kernels in: ``NUMBA_CACHE_DIR`` when set, else (numba imported
    before xmlthresh, without the variable) the package's ``__pycache__`` folders."""
    folder = os.environ.get(NUMBA_CACHE_ENV)
    if folder:
        return [Path(folder)]
    package = Path(__file__).resolve().parents[1]
    return sorted(package.rglob("__pycache__"))


def is_complete_pickle_stream(path: Path) -> bool:
    """Whether ``path`` holds complete pickles and nothing else: two for an index (``.nbi``), one for the code
    of an overload (``.nbc``), as numba writes them. Only the opcodes are read, nothing is built."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    stream = io.BytesIO(data)
    try:
        for _ in range(2 if path.suffix == INDEX_SUFFIX else 1):
            for _opcode in pickletools.genops(stream):
                pass
    except Exception:  # genops raises whatever a malformed argument gives (ValueError, struct.error, ...)
        return False
    return stream.tell() == len(data)


def drop_unreadable_cache_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """Delete every numba cache file under ``folder`` that is not a complete pickle stream; returns the files
    deleted and those that could not be.

    numba writes each file under a temporary name and renames it, so a file caught while another process
    writes it is never seen half-written; a missing data file is simply a cache miss for numba."""
    dropped: list[Path] = []
    stuck: list[Path] = []
    if not folder.is_dir():
        return dropped, stuck
    for path in folder.rglob("*.nb[ic]"):
        if path.suffix not in (INDEX_SUFFIX, DATA_SUFFIX) or is_complete_pickle_stream(path):
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError:
            stuck.append(path)
            continue
        dropped.append(path)
    return dropped, stuck


def folder_is_writable(folder: Path) -> bool:
    """Whether files can be created in ``folder`` (created when missing)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


#: free space the cache folder needs: numba writes each compiled kernel there, and a full disk made every run
#: fail with its "No space left on device" traceback (the package's kernels take about 25 MB)
CACHE_ROOM = 64 << 20


def free_bytes(folder: Path) -> int | None:
    """Free space on the file system of ``folder`` (None when it cannot be told)."""
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def use_temporary_cache(reason: str) -> None:
    """Point numba at a new temporary folder for this process, saying why in one warning line; the folder is
    removed when the process ends (it held only what this process compiled)."""
    replacement = tempfile.mkdtemp(prefix="xmlthresh-numba-")
    atexit.register(shutil.rmtree, replacement, ignore_errors=True)
    log.warning("numba cache %s; compiled kernels are cached in %s for this process only (set XMLTHRESH_CACHE "
                "or NUMBA_CACHE_DIR to a writable folder to keep them)", reason, replacement)
    os.environ[NUMBA_CACHE_ENV] = replacement


def check_numba_cache() -> None:
    """Once per process, before numba reads its cache: a usable folder, and no unreadable file in it (see the
    module docstring). Each repair is one warning line."""
    can_redirect = "numba" not in sys.modules  # numba reads NUMBA_CACHE_DIR once, when imported
    folder = os.environ.get(NUMBA_CACHE_ENV)
    if folder and can_redirect and not folder_is_writable(Path(folder)):
        use_temporary_cache(f"folder {folder} is not writable")
        return
    room = free_bytes(Path(folder)) if folder else None
    if room is not None and room < CACHE_ROOM and can_redirect:
        use_temporary_cache(f"folder {folder} has {room / 2**20:.1f} MB free, less than the "
                            f"{CACHE_ROOM >> 20} MB it may need")
        return
    dropped, stuck = [], []
    for cache_folder in numba_cache_folders():
        gone, left = drop_unreadable_cache_files(cache_folder)
        dropped += gone
        stuck += left
    if dropped:
        log.warning("numba cache: dropped %d unreadable file(s) (%s%s); the kernels are recompiled once",
                    len(dropped), dropped[0], ", ..." if len(dropped) > 1 else "")
    if stuck and can_redirect:
        use_temporary_cache(f"file {stuck[0]} is unreadable and cannot be deleted")


check_numba_cache()

import numba  # noqa: E402  (after the check: numba reads NUMBA_CACHE_DIR when imported)


def cached_njit(function: Callable | None = None, **options: Any) -> Any:
    """``numba.njit(cache=True, **options)``: every kernel of the package is compiled once per machine and kept
    in the checked cache. Use as ``@cached_njit`` or ``@cached_njit(inline="always")``."""
    decorator = functools.partial(numba.njit, cache=True, **options)
    return decorator(function) if function is not None else decorator
