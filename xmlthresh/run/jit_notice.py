"""Say once, on the first run of a version, that numba is compiling kernels -- a fresh machine's first run
spends most of its time there (``benchmarks/cli.md``: the cold start) and should not look hung.

The marker is a file in the cache directory named after the package, numba and Python versions (compiled
kernels are cached per version); it is written after the first warm-up that finishes.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from xmlthresh import __version__
from xmlthresh._util.paths import cache_dir

log = logging.getLogger("xmlthresh")


def _marker() -> Path:
    import numba

    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    return cache_dir() / "jit" / f"compiled-{__version__}-numba{numba.__version__}-py{python}"


def announce_compilation() -> bool:
    """Log that kernels are being compiled when no earlier run of this version finished its warm-up; returns
    whether it did."""
    if _marker().exists():
        return False
    log.info("compiling numba kernels (first run of this version on this machine: about 15-20 s; "
             "later runs reuse the compiled cache)")
    return True


def compilation_done() -> None:
    """Remember that this version's kernels are compiled (best effort: an unwritable cache is not an error)."""
    marker = _marker()
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass
