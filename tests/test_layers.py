"""The package's layering is enforced: the import-linter contract in pyproject.toml holds, it fails when a
lower layer imports a higher one, every top-level module is in one layer, and every module can be the first
import of a fresh interpreter (no import cycle hidden by the order in which the tests import things)."""

from __future__ import annotations

import pkgutil
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import xmlthresh

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(xmlthresh.__file__).resolve().parent
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent))


def _contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def _contract() -> dict:
    """The package-level contract (the first): every top-level module and package in one layer."""
    return _contracts()[0]


def _lint(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the package under ``root`` with this project's contract."""
    assert LINT_IMPORTS, "import-linter is a test dependency (pip install -e '.[test]')"
    if root != ROOT:
        shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=root,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=300)


def test_the_layer_contract_holds():
    run = _lint(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout and f"{len(_contracts())} kept" in run.stdout


def test_a_lower_layer_importing_a_higher_one_breaks_the_contract(tmp_path):
    copy = tmp_path / "xmlthresh"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    metrics = copy / "metrics.py"
    metrics.write_text(metrics.read_text() + "\n\ndef _violation():\n    from .run.job import run_job  # noqa\n")
    run = _lint(tmp_path)
    assert run.returncode != 0
    assert "xmlthresh.metrics is not allowed to import xmlthresh.run" in run.stdout
    assert "xmlthresh.metrics -> xmlthresh.run.job" in run.stdout


def test_the_top_level_holds_the_library_surface_only():
    """Besides the packages, the top level is the library's surface: at most eight modules."""
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(modules) <= 8, modules


def test_a_sibling_importing_an_independent_one_breaks_the_contract(tmp_path):
    copy = tmp_path / "xmlthresh"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    tracking = copy / "tracking" / "store.py"
    tracking.write_text(tracking.read_text() + "\n\ndef _violation():\n    from xmlthresh.api import fit_thresholds  # noqa\n")
    run = _lint(tmp_path)
    assert run.returncode != 0
    assert "xmlthresh.tracking is not allowed to import xmlthresh.api" in run.stdout


def test_every_top_level_module_is_in_exactly_one_layer():
    listed = [name.strip() for layer in _contract()["layers"] for name in re.split(r"[|:]", layer)]
    top_level = {f"xmlthresh.{module.name}" for module in pkgutil.iter_modules([str(PACKAGE)])} - {"xmlthresh.conf"}
    assert sorted(listed) == sorted(set(listed)), "a module is listed in two layers"
    assert set(listed) == top_level


def _all_modules() -> list[str]:
    return sorted(["xmlthresh"] + [info.name for info in pkgutil.walk_packages([str(PACKAGE)], prefix="xmlthresh.")
                                   if not info.name.startswith("xmlthresh.conf")])


def test_every_module_imports_first_in_a_fresh_interpreter():
    """One interpreter, but before each module every xmlthresh module is forgotten, so each import starts
    from nothing of the package (third-party libraries stay loaded: they cannot hide a cycle of ours)."""
    script = f"""
import importlib, sys, traceback
failures = []
for name in {_all_modules()!r}:
    for loaded in [m for m in sys.modules if m == "xmlthresh" or m.startswith("xmlthresh.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failures.append(name + ": " + traceback.format_exc(limit=-3))
print("\\n".join(failures))
sys.exit(1 if failures else 0)
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("module", ["xmlthresh.metrics", "xmlthresh.data", "xmlthresh._util.registry"])
def test_low_layers_import_first_in_a_new_process(module):
    """The cycle the review found (metrics -> data -> candidates -> metrics), in a really new interpreter."""
    run = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
