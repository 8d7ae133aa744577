"""Where things live: the project root (runs/, user conf/), the raw-data directory and the derived caches.

* Raw data: ``$XMLTHRESH_DATA`` (same layout as the shared dataset cache, e.g. ``berger/ESPGameNN.txt``),
  default ``~/.cache/xmlthresh/data``. It may be read-only.
* Derived caches (parsed binaries): ``$XMLTHRESH_CACHE``, default ``~/.cache/xmlthresh/cache``; always
  separate from the raw data so a read-only data directory works.
* Project root: ``$XMLTHRESH_HOME`` if set, else the source checkout that contains this package (an
  editable install: the directory whose ``pyproject.toml`` declares xmlthresh), else the current directory
  (an installed package). ``runs/`` (outputs, MLflow store) lives there, and so do the user's additions:
  ``conf/<group>/<option>.yaml`` and folder plugins ``plugins/<name>/``.
* Option groups: every built-in option ships inside the package (``xmlthresh/conf/<group>/``, Hydra's
  primary config directory); :func:`config_search_dirs` lists the directories joined to it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import tempfile
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the xmlthresh package folder
_DECLARES_XMLTHRESH = re.compile(r'^name\s*=\s*"xmlthresh"\s*$', re.MULTILINE)
#: entry-point group of installed plugins (``[project.entry-points."xmlthresh.plugins"]``)
ENTRY_POINT_GROUP = "xmlthresh.plugins"


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


#: the environment variables that must name folders; XMLTHRESH_CACHE must too, but a cache folder that cannot be
#: written (read-only, full) is used without caching, each cache saying so
FOLDER_VARIABLES = ("XMLTHRESH_HOME", "XMLTHRESH_DATA", "XMLTHRESH_CACHE")


def environment_problem() -> str | None:
    """The one-line problem with a folder variable that names something other than a folder, or None (a file
    there gave a raw ``NotADirectoryError`` from deep inside Hydra or a loader)."""
    for name in FOLDER_VARIABLES:
        value = os.environ.get(name)
        if value is not None and not value.strip():  # empty was taken for unset: runs went into the source tree
            return f"{name} is set but empty; unset it (the default place) or give a folder"
    for name in FOLDER_VARIABLES:
        value = os.environ.get(name)
        if not value:
            continue
        path = Path(value).expanduser()
        if path.exists() and not path.is_dir():
            return f"{name}={value} is a file, not a folder; point {name} at a folder (it is created when missing)"
        for parent in path.parents:  # a file further up makes the folder impossible to create
            if parent.exists():
                if not parent.is_dir():
                    return f"{name}={value}: {parent} is a file, so the folder cannot be created there"
                break
    from xmlthresh._util.environment import SYNC_MODES, env_choice, env_flag
    from xmlthresh._util.errors import InputError

    try:  # the other variables, checked before a run starts rather than when they are first read
        env_flag("XMLTHRESH_OFFLINE")
        env_choice("XMLTHRESH_TRACKING_SYNC", tuple(SYNC_MODES), "background")
    except InputError as exc:
        return str(exc)
    return None


def launch_dir() -> Path:
    """The directory the command was started from, where relative input paths are read: under
    ``hydra.job.chdir=true`` the working directory is the run directory, so Hydra's record of the original one
    is used (a library call outside a Hydra job gets the working directory)."""
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.utils import get_original_cwd
    except ImportError:  # the library without the framework
        return Path.cwd()
    return Path(get_original_cwd()) if HydraConfig.initialized() else Path.cwd()


class CacheNotWritableError(OSError):
    """The derived-cache directory (``$XMLTHRESH_CACHE``) cannot be written; the message says where and how to
    point it elsewhere (shown as one line by the CLI)."""

    def __str__(self) -> str:  # the message alone, without OSError's "[Errno 13]" prefix
        return str(self.strerror)


def writable_cache_dir(folder: Path | None = None) -> Path:
    """``folder`` (a directory of the derived cache; default :func:`cache_dir`), created when missing, after
    a probe that a file can be created in it; else a :class:`CacheNotWritableError` saying so (a read-only
    ``$XMLTHRESH_CACHE`` gave a raw ``OSError`` from deep inside the ranker's cache lock)."""
    folder = cache_dir() if folder is None else Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise CacheNotWritableError(
            exc.errno, f"the cache directory {folder} is not writable ({exc.strerror or exc}); point XMLTHRESH_CACHE "
            f"to a writable directory (e.g. XMLTHRESH_CACHE=/tmp/xmlthresh-cache) -- it only holds what can be "
            f"recomputed (parsed data, ranker scores)") from None
    return folder


def project_root() -> Path:
    """Root of the project: holds ``runs/`` (outputs, MLflow store) and the user's ``conf/`` and ``plugins/``."""
    env = os.environ.get("XMLTHRESH_HOME")
    if env:
        return Path(env).expanduser().resolve()
    checkout = source_checkout()
    return checkout if checkout is not None else launch_dir().resolve()


def source_checkout() -> Path | None:
    """The source checkout this package was imported from (editable install), or None when installed.

    A checkout is the package's parent directory holding xmlthresh's own ``pyproject.toml``; an installed
    package's parent is ``site-packages``, which holds none (and a stray one there is not xmlthresh's)."""
    checkout = _PACKAGE_DIR.parent
    try:
        text = (checkout / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return checkout if _DECLARES_XMLTHRESH.search(text) else None


def config_search_dirs() -> list[Path]:
    """Directories joined to Hydra's search path after the package's own ``xmlthresh/conf/`` (whose
    options win on a name clash), in priority order: the user's ``conf/`` of the source checkout and of the
    project root, each folder plugin's ``plugins/<name>/conf`` there, then the ``conf/`` of each installed
    plugin (:func:`installed_plugin_conf_dirs`)."""
    candidates = [root / "conf" for root in project_roots()]
    candidates += [conf for folder in plugin_folders() for conf in sorted(folder.glob("*/conf"))]
    candidates += installed_plugin_conf_dirs()
    return [d for d in dict.fromkeys(c.resolve() for c in candidates) if d.is_dir()]


def project_roots() -> list[Path]:
    """The source checkout (if any) and the project root, without repetition: where ``conf/`` and
    ``plugins/`` of the user are looked for (the checkout's own ``plugins/`` stay visible when
    ``$XMLTHRESH_HOME`` points elsewhere)."""
    roots = [root for root in (source_checkout(), project_root()) if root is not None]
    return list(dict.fromkeys(roots))


def runs_dir() -> Path:
    """Where Hydra run directories and the MLflow store go: ``<project root>/runs``."""
    return project_root() / "runs"


def plugin_folders() -> list[Path]:
    """The ``plugins/`` folders of the source checkout and of the project root that exist."""
    return [root / "plugins" for root in project_roots() if (root / "plugins").is_dir()]


def installed_plugin_conf_dirs() -> list[Path]:
    """The ``conf/`` folder of each installed plugin: the one at the top of the package its entry point
    names (``peers = "xmlthresh_peers"`` -> ``xmlthresh_peers/conf``), when there is one.

    Found from the distribution's metadata without importing the plugin, in whichever process composes a
    config (the CLI, a sweep worker, the compose API): an uninstalled plugin has no entry point, so its
    options are unknown again."""
    from importlib.metadata import entry_points  # not at module level: ``import xmlthresh`` imports this module

    dirs: list[Path] = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        top_level = entry.value.split(":")[0].strip().split(".")[0]
        try:
            spec = importlib.util.find_spec(top_level)
        except (ImportError, ValueError):  # reported by load_plugins when it imports the plugin
            continue
        for location in (spec.submodule_search_locations or []) if spec is not None else []:
            conf = Path(location) / "conf"
            if conf.is_dir() and conf not in dirs:
                dirs.append(conf)
    return dirs
