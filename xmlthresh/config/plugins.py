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
from typing import Any, Sequence

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


def describe(check: bool = False, groups: Sequence[str] = ()) -> str:
    """Human-readable listing for ``xmlthresh list``: every option of every group (or of ``groups``) with its
    one-line description, the plugins and the option folders -- read from the option folders, importing
    neither the plugins nor a numerical library. ``check=True`` (``xmlthresh list --check``) also imports every
    plugin and every registered class and lists the classes, with the reason of any that is unavailable
    here, and builds every option of the user's and the plugins' folders (:func:`option_problems`)."""
    from xmlthresh.config.options import GROUPS, option_folders, option_lines

    lines = []
    if check:
        lines += _registered_classes()
        problems = option_problems()
        lines += ["options of the user's and the plugins' folders (xmlthresh list --check):"]
        lines += [f"  {BROKEN} {problem}" for problem in problems] or ["  all build"]
    if groups:
        return "\n".join(lines + [line for group in groups for line in option_lines(group)])
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


#: marks an option of ``xmlthresh list --check`` that does not build (the command then exits with 1)
BROKEN = "BROKEN"
#: the option groups built from a registry, and the key of an option that names the class
BUILT_GROUPS = {"strategy": "name", "dataset": "loader", "ranker": "name", "estimator": "name", "cde_dataset": "name"}


def option_problems() -> list[str]:
    """``<group>=<option>: <problem>`` for every option outside the package's own folder (the user's
    ``conf/``, a plugin's) that does not compose, names no registered class, or has a key or value its class
    refuses -- found here instead of when a run uses it. The package's own options are tested."""
    from xmlthresh.config.compose import compose
    from xmlthresh.config.options import options

    load_plugins()
    package_conf = (Path(__file__).resolve().parents[1] / "conf").resolve()
    problems = []
    for group, naming in BUILT_GROUPS.items():
        registry = _registry(group)
        for option in options(group):
            if option.folder.resolve() == package_conf:
                continue
            try:
                node = dict(compose([f"{group}={option.name}"] + (["task=cde"] if group in ("estimator", "cde_dataset")
                                                                    else []))[group])
                name = node.get(naming) or node.get("name")
                params = {key: value for key, value in node.items() if key != naming}
                if group != "dataset":
                    params.pop("name", None)
                registry.build(name, params)
            except Exception as exc:  # noqa: BLE001 - every problem of a user's option is reported, none is fatal
                from xmlthresh._util.errors import first_line

                problems.append(f"{group}={option.name} ({option.folder}): {first_line(exc)}")
    return problems


#: where each group's registry lives (module, attribute)
REGISTRY_MODULES = {"strategy": ("xmlthresh.strategies", "STRATEGIES"), "dataset": ("xmlthresh.datasets", "DATASETS"),
                    "ranker": ("xmlthresh.rankers", "RANKERS"), "estimator": ("xmlthresh.cde", "ESTIMATORS"),
                    "cde_dataset": ("xmlthresh.cde", "CDE_DATASETS")}


def _registry(group: str) -> Any:
    module, attribute = REGISTRY_MODULES[group]
    return getattr(importlib.import_module(module), attribute)


def _registered_classes() -> list[str]:
    """Every registered class of every registry (plugins imported), with the reason of an unavailable one."""
    load_plugins()
    lines = ["registered classes (xmlthresh list --check):"]
    for kind in REGISTRY_MODULES:
        try:
            registry = _registry(kind)
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


def plugin_estimators() -> list[str]:
    """The CDE estimators that plugins add and that can run here: registered by a module outside the package,
    not unavailable (``unavailable_reason``), and with an option ``estimator=<name>`` to select them -- sorted.
    The presets that compare every estimator (``experiment=cde_xanes``) append them to their own list through
    the resolver ``xmlthresh_with_plugin_estimators`` (:func:`with_plugin_estimators`)."""
    from xmlthresh.config.options import options

    load_plugins()
    registry = _registry("estimator")
    selectable = {option.name for option in options("estimator")}
    found = []
    for name in registry.names():
        cls = registry.get(name)
        if cls.__module__.split(".")[0] == "xmlthresh" or name not in selectable:
            continue
        unavailable = getattr(cls, "unavailable_reason", None)
        if callable(unavailable) and unavailable():
            log.info("estimator %s of a plugin is not added to the sweep: %s", name, unavailable())
            continue
        found.append(name)
    return sorted(found)


def with_plugin_estimators(*names: str) -> str:
    """``names`` followed by :func:`plugin_estimators` not among them, comma-separated: the value of a sweep
    over estimators (``hydra.sweeper.params.estimator``) that includes every installed estimator plugin."""
    given = [str(name).strip() for name in names if str(name).strip()]
    return ",".join(given + [name for name in plugin_estimators() if name not in given])
