"""Plugin discovery: strategies, datasets, rankers or estimators from outside the package.

Two sources, both loaded by :func:`load_plugins` (idempotent). Importing this module installs it as the
registries' loader of last resort (:func:`xmlthresh._util.registry.on_unknown_name`): a run imports the plugins
only when it asks for a name that is not built in, or lists every name -- ``strategy=domain`` never pays for
importing the peers. The job, the API and the CLI import this module, so sweep workers see the same plugins:

* a folder ``plugins/<name>/`` of the project holding an importable package (``__init__.py``) that registers
  its classes, plus its option YAMLs under ``plugins/<name>/conf/<group>/<option>.yaml`` (joined to Hydra's
  search path by ``xmlthresh._util.paths.config_search_dirs``). The ``plugins/`` folder is put on ``sys.path``, so
  the package is importable by its own name (also when a worker process unpickles its classes);
* an installed distribution declaring an entry point in the group ``xmlthresh.plugins`` whose value is a
  module to import (``[project.entry-points."xmlthresh.plugins"] name = "package.module"``). Its options
  ship as package data in ``package/conf/<group>/<option>.yaml`` of the entry point's top-level package
  (:func:`xmlthresh._util.paths.installed_plugin_conf_dirs`), so they come and go with the installed distribution.

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

from xmlthresh._util.paths import ENTRY_POINT_GROUP, plugin_folders
from xmlthresh._util.registry import on_unknown_name

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


#: the registries load the plugins when a name is not built in (importing this module is enough)
on_unknown_name(lambda: load_plugins())


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


def plugin_sources() -> list[tuple[str, str]]:
    """(name, source) of every folder plugin and entry-point plugin, found without importing them."""
    found = [(package.name, f"folder {package}") for folder in plugin_folders()
             for package in sorted(p for p in folder.iterdir() if (p / "__init__.py").is_file())]
    found += [(entry.name, f"entry point of {getattr(entry.dist, 'name', '?')}")
              for entry in entry_points(group=ENTRY_POINT_GROUP)]
    return found


def describe(check: bool = False) -> str:
    """Human-readable listing for ``xmlthresh list``: every option of every group with its one-line
    description, the plugins and the option folders -- read from the option folders, importing neither the
    plugins nor a numerical library. ``check=True`` (``xmlthresh list --check``) also imports every plugin and
    every registered class and lists the classes, with the reason of any that is unavailable here."""
    from xmlthresh.config.options import GROUPS, option_folders, option_lines

    lines = []
    if check:
        lines += _registered_classes()
    for group in GROUPS:
        lines += option_lines(group)
    lines.append("plugins:")
    sources = plugin_sources()
    if not sources:
        lines.append("  (none)")
    for name, source in sources:
        status = _STATUS.get(name)
        state = ("loaded" if status.loaded else f"UNAVAILABLE: {status.error}") if status else \
            "not imported (xmlthresh list --check imports it)"
        lines.append(f"  {name:<22} {source}: {state}")
    lines.append("option folders (first wins on a name clash):")
    lines += [f"  {folder}" for folder in option_folders()]
    return "\n".join(lines)


def _registered_classes() -> list[str]:
    """Every registered class of every registry (plugins imported), with the reason of an unavailable one."""
    load_plugins()
    lines = ["registered classes (xmlthresh list --check):"]
    for module, attribute, kind in (("xmlthresh.strategies", "STRATEGIES", "strategy"),
                                    ("xmlthresh.datasets", "DATASETS", "dataset"),
                                    ("xmlthresh.rankers", "RANKERS", "ranker"),
                                    ("xmlthresh.cde", "ESTIMATORS", "estimator"),
                                    ("xmlthresh.cde", "CDE_DATASETS", "cde_dataset")):
        try:
            registry = getattr(importlib.import_module(module), attribute)
            names = registry.names()
        except Exception as exc:  # a built-in package that cannot be imported here is reported, not fatal
            lines.append(f"  {kind}: UNAVAILABLE: {type(exc).__name__}: {exc}")
            continue
        for name in names:
            obj = registry.get(name)
            unavailable = getattr(obj, "unavailable_reason", None)
            reason = unavailable() if callable(unavailable) else None
            state = f"  [unavailable: {reason}]" if reason else ""
            lines.append(f"  {kind} {name:<22} {getattr(obj, '__module__', '')}{state}")
    return lines
