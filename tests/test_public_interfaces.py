"""The package uses other libraries (the standard library included) through their public interfaces only:
no import of a private module, no access to a private attribute of another library's module, no
replacement of another library's functions; nothing writes MLflow's tables. Scanned from the syntax tree of
every module of xmlthresh/ and the plugins shipped beside it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import xmlthresh

PACKAGE = Path(xmlthresh.__file__).resolve().parent
PLUGINS = PACKAGE.parent / "plugins"
#: our own top-level packages (the library and its plugins): their private names are ours to use
OWN = re.compile(r"^(xmlthresh|xmlthresh_\w+|counterexample|corel5k_tagprop260)$")
#: private-looking names that the owning library documents as public API
DOCUMENTED = {("os", "_exit"): "https://docs.python.org/3/library/os.html#os._exit",
              ("sklearn.utils", "_safe_indexing"): "in scikit-learn's API reference: sklearn.utils._safe_indexing"}
#: what the acceptance check greps for (patches of Hydra's internals, the interpreter's private exit path,
#: SQL written into MLflow's tables)
FORBIDDEN_TEXT = re.compile(r"_internal|threading\._shutdown|_run_exitfuncs|INSERT INTO|latest_metrics")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def violations(source: str, filename: str = "<source>") -> list[str]:
    """Every use of another library's private parts in ``source`` (``file:line: what``)."""
    tree = ast.parse(source, filename)
    modules: dict[str, str] = {}  # local name -> the other library's module it is bound to
    found: list[str] = []

    def third_party(module: str) -> bool:
        return not OWN.match(module.split(".")[0])

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if third_party(alias.name):
                    if any(_private(part) for part in alias.name.split(".")):
                        found.append(f"{filename}:{node.lineno}: imports the private module {alias.name}")
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and third_party(node.module):
            if any(_private(part) for part in node.module.split(".")):
                found.append(f"{filename}:{node.lineno}: imports from the private module {node.module}")
            for alias in node.names:
                if _private(alias.name) and (node.module, alias.name) not in DOCUMENTED:
                    found.append(f"{filename}:{node.lineno}: imports the private name {alias.name} of {node.module}")
                else:
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            owner = modules[node.value.id]
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                found.append(f"{filename}:{node.lineno}: replaces {owner}.{node.attr} of another library")
            elif _private(node.attr) and (owner, node.attr) not in DOCUMENTED:
                found.append(f"{filename}:{node.lineno}: uses the private {owner}.{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and \
                node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in modules:
            found.append(f"{filename}:{node.lineno}: replaces an attribute of {modules[node.args[0].id]} (setattr)")
    for number, line in enumerate(source.splitlines(), 1):
        if FORBIDDEN_TEXT.search(line):
            found.append(f"{filename}:{number}: {FORBIDDEN_TEXT.search(line).group(0)}")
    return found


def _sources() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    if PLUGINS.is_dir():
        files += sorted(path for path in PLUGINS.rglob("*.py") if "build" not in path.parts)
    return files


def test_the_scanner_finds_every_kind_of_private_use():
    source = ("import os, sys, threading, atexit\nimport somelib._hidden.utils as hu\n"
              "from somelib._hidden import utils\nfrom threading import _helper\nfrom xmlthresh._util import files\n"
              "import matplotlib.artist as artist\nfrom mlflow import tracking\n"
              "def f():\n    threading._helper()\n    atexit._handlers()\n    sys._frame(1)\n"
              "    artist.kwdoc = None\n    setattr(tracking, 'x', 1)\n    os._exit(0)\n    files._private()\n"
              "    obj._cache = 1\n    sys.__stdout__.flush()\n")
    found = [entry.split(": ", 1)[1] for entry in violations(source)]
    assert sorted(found) == sorted([
        "imports the private module somelib._hidden.utils",
        "imports from the private module somelib._hidden",
        "imports the private name _helper of threading",
        "uses the private threading._helper",
        "uses the private atexit._handlers",
        "uses the private sys._frame",
        "replaces matplotlib.artist.kwdoc of another library",
        "replaces an attribute of mlflow.tracking (setattr)",
    ])


def test_the_acceptance_grep_catches_each_of_its_patterns():
    """Each alternative of the grep, written out from the pattern itself, is found on a line of its own."""
    for alternative in FORBIDDEN_TEXT.pattern.split("|"):
        line = alternative.replace("\\.", ".")
        assert [entry.split(": ", 1)[1] for entry in violations(f"x = {line!r}\n")] == [line]


def test_the_scanner_leaves_our_own_private_names_and_plain_objects_alone():
    source = ("from xmlthresh._util.registry import ConfigError\nimport xmlthresh.tracking.record as record\n"
              "record._end(1)\nrecord.x = 1\nclass A:\n    def f(self):\n        self._x = 1\n        return self._x\n")
    assert violations(source) == []


def test_the_package_and_its_plugins_use_only_public_interfaces():
    found = [entry for path in _sources() for entry in violations(path.read_text(encoding="utf-8"), str(path))]
    assert not found, "\n".join(found)


#: SQL that changes a database's tables: nothing but MLflow may run it on MLflow's store (its public client and
#: ``mlflow db upgrade`` do); a test that needs a broken store makes MLflow refuse it instead
WRITES_TABLES = re.compile(r"\b(INSERT\s+INTO|UPDATE\s+\w+\s+SET|DROP\s+TABLE|CREATE\s+TABLE|ALTER\s+TABLE)\b",
                           re.IGNORECASE)


def test_no_test_writes_mlflows_tables_either():
    """The tests build their stores through MLflow's public client, also for the faults they inject."""
    here = Path(__file__).resolve()
    found = [f"{path.name}:{number}: {line.strip()}" for path in sorted(here.parent.rglob("*.py")) if path != here
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if WRITES_TABLES.search(line)]
    assert not found, "\n".join(found)
    # the scanner catches each kind of table write; the samples are put together here so that this file
    # holds no SQL statement itself (it executes none)
    for verb, table in (("INSERT", "INTO runs"), ("DROP", "TABLE runs"), ("UPDATE", "runs SET x = 1")):
        assert WRITES_TABLES.search(f"execute('{verb} {table}')"), verb
