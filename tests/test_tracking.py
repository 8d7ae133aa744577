"""MLflow stays behind xmlthresh.tracking: no other module imports it, tracking imports it only on use, and
the store functions the job, sweep and report layers call round-trip through a real sqlite store."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import xmlthresh
from xmlthresh import tracking

PACKAGE = Path(xmlthresh.__file__).resolve().parent


def mlflow_imports(source: str) -> list[int]:
    """Line numbers of ``import mlflow...`` / ``from mlflow... import`` / ``import_module("mlflow...")``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else []
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            names = [str(node.args[0].value)]
        else:
            continue
        if any(name == "mlflow" or name.startswith("mlflow.") for name in names):
            lines.append(node.lineno)
    return lines


def test_the_scanner_finds_every_way_of_importing_mlflow():
    source = ("import os\nimport mlflow\nfrom mlflow.artifacts import download_artifacts\n"
              "def f():\n    import mlflow.tracking as t\n    return importlib.import_module('mlflow')\n"
              "from . import mlflow_like\nimport mlflowx\n")
    assert mlflow_imports(source) == [2, 3, 5, 6]


def test_only_the_tracking_module_imports_mlflow():
    importing = sorted(str(path.relative_to(PACKAGE.parent)) for path in PACKAGE.rglob("*.py")
                       if mlflow_imports(path.read_text(encoding="utf-8")))
    assert importing == [os.path.join("xmlthresh", "tracking.py")]


def test_tracking_imports_mlflow_only_inside_functions():
    tree = ast.parse((PACKAGE / "tracking.py").read_text(encoding="utf-8"))
    top_level = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert not mlflow_imports(ast.unparse(ast.Module(body=top_level, type_ignores=[])))
    modules = "xmlthresh.tracking, xmlthresh.sweep, xmlthresh.report"
    proc = subprocess.run([sys.executable, "-c", f"import sys, {modules}; print('mlflow' in sys.modules)"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_a_logged_result_comes_back_through_the_store_functions(tmp_path, isolated_home):
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"f_macro": 0.5}))
    with tracking.tracked_run(True, uri, "exp", run_name="r", tags={tracking.CONFIG_HASH_TAG: "abc"}) as tracker:
        tracker.log_metrics({"f_macro": 0.5})
        tracker.log_artifact(result)
        run_id = tracker.run_id
    assert tracking.finished_run_with_hash(uri, "exp", "abc") == run_id
    local = tracking.download_result(run_id, tmp_path / "copy", uri)
    assert local.parent == tmp_path / "copy" and json.loads(local.read_text()) == {"f_macro": 0.5}
    table = tracking.runs_table(uri, "exp")
    assert list(table["run_id"]) == [run_id] and table.loc[0, "metrics.f_macro"] == 0.5


def test_a_sweep_parent_counts_its_children_and_keeps_its_report(tmp_path, isolated_home):
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    parent = tracking.start_sweep_parent(uri, "exp", tmp_path / "sweep1", "strategy=a,b", "basic")
    for name, skipped in (("ok", False), ("skip", True)):
        with tracking.tracked_run(True, uri, "exp", run_name=name, parent_run_id=parent,
                                  tags={"skipped": "yes"} if skipped else {}):
            pass
    try:
        with tracking.tracked_run(True, uri, "exp", run_name="bad", parent_run_id=parent):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    children = tracking.sweep_children(uri, parent)
    assert sorted(children) == [("FAILED", False, False), ("FINISHED", False, False), ("FINISHED", True, False)]
    report = tmp_path / "comparison.md"
    report.write_text("# report\n")
    tracking.log_files_to_run(uri, parent, [report])
    tracking.finish_sweep_parent(uri, parent, {"n_children": 3, "n_failed": 1}, failed=True)
    row = tracking.runs_table(uri, "exp").set_index("run_id").loc[parent]
    assert row["status"] == "FAILED" and row["metrics.n_children"] == 3 and row["metrics.n_failed"] == 1
    assert row["params.arguments"] == "strategy=a,b" and row["params.launcher"] == "basic"
    assert row["tags.xmlthresh.sweep"] == "parent" and row["tags.sweep_dir"] == str(tmp_path / "sweep1")
    assert _artifact_names(uri, parent) == ["comparison.md"]


def _artifact_names(uri: str, run_id: str) -> list[str]:
    """Artifact file names of a run, read with MLflow's own client (the test may import mlflow)."""
    import mlflow

    return [item.path for item in mlflow.MlflowClient(uri).list_artifacts(run_id)]


def test_a_reused_run_is_a_child_copy_of_the_run_it_reuses(tmp_path, isolated_home):
    """A resumed sweep job (issue 14, defect 1): a FINISHED child of its sweep with the params, metrics and tags
    of the run that computed it, pointing to that run, and a ``reused`` row of the sweep's report."""
    from xmlthresh.report import load_runs

    uri = f"sqlite:///{tmp_path / 'store.db'}"
    with tracking.tracked_run(True, uri, "xmlthresh", run_name="domain-x", tags={tracking.CONFIG_HASH_TAG: "h"}) as t:
        t.log_params({"strategy": "domain", "dataset": "x", "beta": 1.0})
        t.log_metrics({"f_macro": 0.5})
        origin = t.run_id
    parent = tracking.start_sweep_parent(uri, "xmlthresh", tmp_path / "sweep", "strategy=domain", "basic")
    result = tmp_path / "result.json"
    result.write_text("{}")
    child = tracking.log_reused_run(uri, tracking.finished_run_with_hash(uri, "xmlthresh", "h"), parent, [result])
    again = tracking.log_reused_run(uri, child, parent)  # reusing a reused run points to the one that computed it
    table = tracking.runs_table(uri, "xmlthresh").set_index("run_id")
    for run in (child, again):
        row = table.loc[run]
        assert row["status"] == "FINISHED" and row["tags.mlflow.parentRunId"] == parent
        assert row["tags.xmlthresh.reused_run_id"] == origin and row["tags.xmlthresh.config_hash"] == "h"
        assert row["params.strategy"] == "domain" and row["metrics.f_macro"] == 0.5
    assert tracking.finished_run_with_hash(uri, "xmlthresh", "h") == origin  # the oldest: the one that computed it
    assert _artifact_names(uri, child) == ["result.json"]
    assert sorted(tracking.sweep_children(uri, parent)) == [("FINISHED", False, True)] * 2
    report = load_runs(uri, sweep=parent)
    assert list(report["reused"]) == [True, True] and set(report["strategy"]) == {"domain"}
    assert list(load_runs(uri)["run_id"]) == [origin]  # over all runs: the copies are not counted twice
