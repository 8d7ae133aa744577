"""Plugin discovery: strategies, datasets, rankers or estimators from outside the package.

Two sources, both loaded by :func:`load_plugins` (idempotent; the CLI calls it in ``main()`` and every job
calls it again, so parallel sweep workers see the same plugins):

* a folder ``plugins/<name>/`` of the project holding an importable package (``__init__.py``) that registers
  its classes, plus its option YAMLs under ``plugins/<name>/conf/<group>/<option>.yaml`` (joined to Hydra's
  search path by ``xmlthresh.paths.config_search_dirs``). The ``plugins/`` folder is put on ``sys.path``, so
  the package is importable by its own name (also when a worker process unpickles its classes);
* an installed distribution declaring an entry point in the group ``xmlthresh.plugins`` whose value is a
  module to import (``[project.entry-points."xmlthresh.plugins"] name = "package.module"``). Its options
  ship as package data in ``package/conf/<group>/<option>.yaml`` of the entry point's top-level package
  (:func:`xmlthresh.paths.installed_plugin_conf_dirs`), so they come and go with the installed distribution.

A plugin that fails to import never crashes the run: it is listed as unavailable with the reason.
``python -m xmlthresh list`` shows what is registered and what is unavailable.
"""

from __future__ import annotations

import importlib
import logging
import sys
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from .paths import ENTRY_POINT_GROUP, config_search_dirs, installed_plugin_conf_dirs, plugin_folders

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PluginStatus:
    name: str
    source: str  # "folder <path>" or "entry point <dist>"
    loaded: bool
    error: str = ""


_STATUS: dict[str, PluginStatus] = {}


def load_plugins() -> dict[str, PluginStatus]:
    """Import every folder plugin and entry-point plugin once; returns the status of each."""
    for folder in plugin_folders():
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
        for package in sorted(p for p in folder.iterdir() if (p / "__init__.py").is_file()):
            _import(package.name, package.name, f"folder {package}")
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(entry.dist, "name", "?")
        _import(entry.name, entry.value, f"entry point of {dist}")
    return dict(_STATUS)


def _import(name: str, module: str, source: str) -> None:
    if name in _STATUS and _STATUS[name].loaded:
        return
    try:
        importlib.import_module(module)
    except Exception as exc:  # a broken plugin is reported, never fatal
        log.warning("plugin %s (%s) is unavailable: %s", name, source, exc)
        _STATUS[name] = PluginStatus(name, source, False, f"{type(exc).__name__}: {exc}")
    else:
        _STATUS[name] = PluginStatus(name, source, True)


def describe() -> str:
    """Human-readable listing of every registry and every plugin (for ``python -m xmlthresh list``)."""
    from .datasets import DATASETS
    from .strategies import STRATEGIES

    statuses = load_plugins()
    registries = [("strategy", STRATEGIES), ("dataset", DATASETS)]
    for module, attribute, kind in (("xmlthresh.rankers", "RANKERS", "ranker"),
                                    ("xmlthresh.cde", "ESTIMATORS", "estimator"),
                                    ("xmlthresh.cde", "CDE_DATASETS", "cde_dataset")):
        try:
            registries.append((kind, getattr(importlib.import_module(module), attribute)))
        except Exception as exc:
            statuses[f"{module}"] = PluginStatus(module, "built-in", False, f"{type(exc).__name__}: {exc}")
    lines = []
    for kind, registry in registries:
        lines.append(f"{kind}:")
        for name in registry.names():
            obj = registry.get(name)
            unavailable = getattr(obj, "unavailable_reason", None)
            reason = unavailable() if callable(unavailable) else None
            origin = getattr(obj, "__module__", "")
            state = f"  [unavailable: {reason}]" if reason else ""
            lines.append(f"  {name:<22} {origin}{state}")
    lines.append("plugins:")
    if not statuses:
        lines.append("  (none)")
    for status in statuses.values():
        state = "loaded" if status.loaded else f"UNAVAILABLE: {status.error}"
        lines.append(f"  {status.name:<22} {status.source}: {state}")
    lines.append("option folders (first wins on a name clash):")
    lines += [f"  {folder}" for folder in [Path(__file__).resolve().parent / "conf", *config_search_dirs()]]
    return "\n".join(lines)
