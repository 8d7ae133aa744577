"""Where things live: the project root (runs/, conf/), the raw-data directory and the derived-cache directory.

* Raw data: ``$XMLTHRESH_DATA`` (same layout as the shared dataset cache, e.g. ``berger/ESPGameNN.txt``),
  default ``~/.cache/xmlthresh/data``. It may be read-only.
* Derived caches (parsed binaries): ``$XMLTHRESH_CACHE``, default ``~/.cache/xmlthresh/cache``; always
  separate from the raw data so a read-only data directory works.
* Project root: ``$XMLTHRESH_HOME`` if set, else the source checkout that contains this package (the
  directory holding ``pyproject.toml``), else the current directory. ``runs/`` and ``conf/`` live there.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _user_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    return Path(base) if base else Path.home() / ".cache"


def data_dir() -> Path:
    """Directory holding the raw data files (``$XMLTHRESH_DATA``)."""
    env = os.environ.get("XMLTHRESH_DATA")
    return Path(env).expanduser().resolve() if env else _user_cache_root() / "xmlthresh" / "data"


def cache_dir() -> Path:
    """Writable directory for derived caches (``$XMLTHRESH_CACHE``)."""
    env = os.environ.get("XMLTHRESH_CACHE")
    return Path(env).expanduser().resolve() if env else _user_cache_root() / "xmlthresh" / "cache"


def project_root() -> Path:
    """Root of the project: holds ``runs/`` (outputs, MLflow store) and the top-level ``conf/``."""
    env = os.environ.get("XMLTHRESH_HOME")
    if env:
        return Path(env).expanduser().resolve()
    checkout = _PACKAGE_DIR.parent
    if (checkout / "pyproject.toml").is_file():
        return checkout
    return Path.cwd().resolve()


def source_checkout() -> Path | None:
    """The source checkout this package was imported from (editable install), if any."""
    checkout = _PACKAGE_DIR.parent
    return checkout if (checkout / "pyproject.toml").is_file() else None


def config_search_dirs() -> list[Path]:
    """Directories of option groups joined to Hydra's search path, in priority order: the project's
    top-level ``conf/`` (from the source checkout, else the project root) and each ``plugins/*/conf``."""
    roots = [root for root in (source_checkout(), project_root()) if root is not None]
    dirs: list[Path] = []
    for root in dict.fromkeys(roots):
        for candidate in [root / "conf", *sorted((root / "plugins").glob("*/conf"))]:
            if candidate.is_dir() and candidate not in dirs:
                dirs.append(candidate)
    return dirs


def runs_dir() -> Path:
    """Where Hydra run directories and the MLflow store go."""
    return project_root() / "runs"
