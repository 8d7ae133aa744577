"""Inter-process locks around expensive cache fills (``filelock``): two sweep workers that need the same
ranker scores at the same moment fit the ranker once -- the second waits, then reads the cache."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def cache_lock(path: Path, enabled: bool = True) -> Iterator[None]:
    """Hold ``<path>.lock`` (created beside the cache entry) for the duration of the block; a cache directory
    that cannot be written raises :class:`xmlthresh._util.paths.CacheNotWritableError`."""
    if not enabled:
        yield
        return
    from filelock import FileLock

    from xmlthresh._util.paths import writable_cache_dir

    writable_cache_dir(path.parent)  # an unwritable cache is one line saying so, not a raw OSError
    with FileLock(str(path) + ".lock"):
        yield
