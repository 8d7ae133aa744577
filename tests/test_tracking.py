"""MLflow stays behind xmlthresh.tracking.mlflow_runs: no other module imports it, tracking imports it only on use, and
the store functions the job, sweep and report layers call round-trip through a real sqlite store."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import xmlthresh
from xmlthresh.tracking import mlflow_runs as tracking
from xmlthresh.tracking.record import tracked_run

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


def test_only_the_tracking_package_imports_mlflow():
    importing = sorted(path.relative_to(PACKAGE) for path in PACKAGE.rglob("*.py")
                       if mlflow_imports(path.read_text(encoding="utf-8")))
    assert importing and all(path.parts[0] == "tracking" for path in importing), importing


def test_tracking_imports_mlflow_only_inside_functions():
    for path in (PACKAGE / "tracking").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top_level = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert not mlflow_imports(ast.unparse(ast.Module(body=top_level, type_ignores=[]))), path
    modules = "xmlthresh.tracking.mlflow_runs, xmlthresh.run.sweep, xmlthresh.report.comparison"
    proc = subprocess.run([sys.executable, "-c", f"import sys, {modules}; print('mlflow' in sys.modules)"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_a_logged_result_comes_back_through_the_store_functions(tmp_path, isolated_home):
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    result = tmp_path / "run" / "result.json"
    result.parent.mkdir()
    result.write_text(json.dumps({"f_macro": 0.5, "mlflow_run_id": None}))
    with tracked_run(True, uri, "exp", run_name="r", tags={tracking.CONFIG_HASH_TAG: "abc"},
                     run_dir=result.parent) as tracker:
        tracker.log_metrics({"f_macro": 0.5})
        tracker.log_artifact(result)
        assert tracker.run_id is None  # nothing reaches MLflow before the run ends
    run_id = tracker.run_id
    assert run_id and json.loads(result.read_text())["mlflow_run_id"] == run_id  # result.json names its run
    found = tracking.finished_runs_by_hash(uri, "exp")
    assert list(found) == ["abc"] and found["abc"].run_id == run_id
    local = tracking.copy_result(found["abc"], tmp_path / "copy", uri)
    assert local.parent == tmp_path / "copy" and json.loads(local.read_text())["f_macro"] == 0.5
    table = tracking.runs_table(uri, "exp")
    assert list(table["run_id"]) == [run_id] and table.loc[0, "metrics.f_macro"] == 0.5


def _sweep_job(uri: str, sweep_dir: Path, name: str, parent: str, tags: dict | None = None, fail: bool = False,
               reused: str | None = None) -> Path:
    """A job of a sweep as run_job records it: its record in its own folder, sent later by the launcher."""
    run_dir = sweep_dir / name
    try:
        with tracked_run(True, uri, "xmlthresh", run_name=name, parent_run_id=parent, tags=tags or {},
                         run_dir=run_dir, sync="deferred") as tracker:
            if reused:
                tracker.record["reused_run_id"] = reused
            if fail:
                raise RuntimeError("boom")
    except RuntimeError:
        pass
    return run_dir / "run_record.json"


def test_a_sweep_parent_counts_its_children_and_keeps_its_report(tmp_path, isolated_home):
    from xmlthresh.run.sweep import send_sweep_records

    uri = f"sqlite:///{tmp_path / 'store.db'}"
    sweep_dir = tmp_path / "sweep1"
    parent = tracking.start_sweep_parent(uri, "xmlthresh", sweep_dir, "strategy=a,b", "basic")
    _sweep_job(uri, sweep_dir, "0", parent)
    _sweep_job(uri, sweep_dir, "1", parent, tags={"skipped": "yes"})
    _sweep_job(uri, sweep_dir, "2", parent, fail=True)
    assert len(tracking.runs_table(uri, "xmlthresh")) == 1  # only the parent until the launcher sends them
    counts = send_sweep_records(sweep_dir, parent)
    assert counts == {"n_children": 3, "n_finished": 2, "n_failed": 1, "n_skipped": 1, "n_resumed": 0, "n_unsent": 0}
    report = tmp_path / "comparison.md"
    report.write_text("# report\n")
    tracking.log_files_to_run(uri, parent, [report])
    tracking.finish_sweep_parent(uri, parent, counts, failed=True)
    table = tracking.runs_table(uri, "xmlthresh").set_index("run_id")
    row = table.loc[parent]
    assert row["status"] == "FAILED" and row["metrics.n_children"] == 3 and row["metrics.n_failed"] == 1
    assert row["params.arguments"] == "strategy=a,b" and row["params.launcher"] == "basic"
    assert row["tags.xmlthresh.sweep"] == "parent" and row["tags.sweep_dir"] == str(sweep_dir)
    assert _artifact_names(uri, parent) == ["comparison.md"]
    children = table[table["tags.mlflow.parentRunId"] == parent]
    assert sorted(children["status"]) == ["FAILED", "FINISHED", "FINISHED"]
    assert "boom" in children.loc[children["status"] == "FAILED", "tags.error"].iloc[0]
    assert send_sweep_records(sweep_dir, parent) == counts  # sending again changes nothing
    assert len(tracking.runs_table(uri, "xmlthresh")) == 4


def _artifact_names(uri: str, run_id: str) -> list[str]:
    """Artifact file names of a run, read with MLflow's own client (the test may import mlflow)."""
    import mlflow

    return [item.path for item in mlflow.MlflowClient(uri).list_artifacts(run_id)]


def test_a_reused_run_is_a_child_copy_of_the_run_it_reuses(tmp_path, isolated_home):
    """A resumed sweep job: a FINISHED child of its sweep with the params, metrics and tags of the run that
    computed it, pointing to that run, and a ``reused`` row of the sweep's report."""
    from xmlthresh.report.tables import load_runs
    from xmlthresh.run.sweep import send_sweep_records

    uri = f"sqlite:///{tmp_path / 'store.db'}"
    with tracked_run(True, uri, "xmlthresh", run_name="domain-x", tags={tracking.CONFIG_HASH_TAG: "h"},
                     run_dir=tmp_path / "origin") as t:
        t.log_params({"strategy": "domain", "dataset": "x", "beta": 1.0})
        t.log_metrics({"f_macro": 0.5})
    origin = t.run_id
    sweep_dir = tmp_path / "sweep"
    parent = tracking.start_sweep_parent(uri, "xmlthresh", sweep_dir, "strategy=domain", "basic")
    first = _sweep_job(uri, sweep_dir, "0", parent, reused=tracking.finished_runs_by_hash(uri, "xmlthresh")["h"].run_id)
    assert send_sweep_records(sweep_dir, parent)["n_resumed"] == 1
    child = json.loads(first.read_text())["mlflow_run_id"]
    again = _sweep_job(uri, sweep_dir, "1", parent, reused=child)  # reusing a reused run names the one that computed it
    assert send_sweep_records(sweep_dir, parent)["n_resumed"] == 2
    table = tracking.runs_table(uri, "xmlthresh").set_index("run_id")
    for run in (child, json.loads(again.read_text())["mlflow_run_id"]):
        row = table.loc[run]
        assert row["status"] == "FINISHED" and row["tags.mlflow.parentRunId"] == parent
        assert row["tags.xmlthresh.reused_run_id"] == origin and row["tags.xmlthresh.config_hash"] == "h"
        assert row["params.strategy"] == "domain" and row["metrics.f_macro"] == 0.5
    assert tracking.finished_runs_by_hash(uri, "xmlthresh")["h"].run_id == origin  # the one that computed it
    report = load_runs(uri, sweep=parent)
    assert list(report["reused"]) == [True, True] and set(report["strategy"]) == {"domain"}
    assert list(load_runs(uri)["run_id"]) == [origin]  # over all runs: the copies are not counted twice


def test_runs_whose_process_is_gone_are_marked_killed(tmp_path, isolated_home):
    """Runs killed mid-sweep (a sweep's parent) would stay RUNNING forever; the next sweep's start ends them KILLED."""
    import mlflow

    uri = f"sqlite:///{tmp_path / 'store.db'}"
    experiment_id = tracking.ensure_experiment(uri, "exp")
    client = mlflow.MlflowClient(uri)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = gone.stdout.strip()
    me = {**tracking.process_tags(), "xmlthresh.sweep": "parent"}  # only sweep parents are ended
    cases = {"dead": {**me, tracking.PID_TAG: dead_pid, tracking.PID_START_TAG: ""},
             "reused pid": {**me, tracking.PID_START_TAG: "1"},  # our pid, but another process's start time
             "alive": me, "other host": {**me, tracking.PID_TAG: dead_pid, tracking.HOST_TAG: "elsewhere"},
             "old version": {"xmlthresh.sweep": "parent"},
             # a job's run being sent by another process: left to that send
             "a job's run": {**me, tracking.PID_TAG: dead_pid, tracking.PID_START_TAG: "", "xmlthresh.sweep": "job"}}
    ids = {name: client.create_run(experiment_id, run_name=name, tags=tags).info.run_id for name, tags in cases.items()}
    ended = tracking.mark_dead_runs(uri, "exp")
    assert sorted(ended) == sorted([ids["dead"], ids["reused pid"]])
    for name, run_id in ids.items():
        run = client.get_run(run_id)
        assert run.info.status == ("KILLED" if run_id in ended else "RUNNING"), name
    assert "ended without closing this run" in client.get_run(ids["dead"]).data.tags["error"]
    assert tracking.mark_dead_runs(uri, "no such experiment") == []


RECORDED = json.loads((Path(__file__).parent / "recorded_runs.json").read_text())


def _logged(uri: str, run_id: str) -> dict:
    import mlflow

    run = mlflow.MlflowClient(uri).get_run(run_id)
    return {"params": run.data.params, "metrics": run.data.metrics, "tags": run.data.tags,
            "artifacts": sorted(_artifact_names(uri, run_id)), "status": run.info.status}


def _assert_nothing_lost(logged: dict, recorded: dict) -> None:
    for kind in ("params", "metrics", "tags", "artifacts"):
        missing = set(recorded[kind]) - set(logged[kind])
        if kind == "tags" and not tracking._git_state()[0]:  # code not run from a git checkout: no git tags
            missing -= {"mlflow.source.git.branch", "mlflow.source.git.commit"}
        assert not missing, f"{kind} logged before and lost now: {sorted(missing)}"


@pytest.mark.slow
def test_batched_logging_loses_nothing_of_a_recorded_run(tmp_path, isolated_home, real_data):
    """One log_batch per run, sent from the run's record; the store, experiment and commit once per sweep -- the same
    params, metrics, tags and artifacts as runs logged through MLflow's fluent API before (recorded in
    tests/recorded_runs.json): a single run, a finished and a failed sweep job, the sweep's parent."""
    from xmlthresh.config.compose import compose
    from xmlthresh.run.job import run_job
    from xmlthresh.run.sweep import send_sweep_records

    uri = f"sqlite:///{tmp_path / 'store.db'}"
    cfg = compose(["strategy=domain", "dataset=example", f"tracking.uri={uri}"])
    (tmp_path / "single").mkdir()
    single = run_job(cfg, tmp_path / "single", resolved_yaml="x: 1\n")
    logged = _logged(uri, single["mlflow_run_id"])
    _assert_nothing_lost(logged, RECORDED["single"])
    machine = ("launcher", "threads.numba", "threads.blas")
    # every recorded param with its recorded value (parameters added since may come on top)
    assert {k: logged["params"].get(k) for k in RECORDED["single_params"] if k not in machine} == {
        k: v for k, v in RECORDED["single_params"].items() if k not in machine}
    assert logged["tags"]["mlflow.runName"] == "domain-example-oracle" and logged["tags"]["task"] == "thresholds"
    assert logged["tags"]["git_commit"] == tracking.git_commit() == single["git_commit"]
    assert logged["metrics"]["f_macro"] == single["f_macro"] and logged["status"] == "FINISHED"

    sweep_dir = tmp_path / "sweep"
    parent = tracking.start_sweep_parent(uri, "xmlthresh", sweep_dir, "strategy=domain beta=1,-1", "basic")
    (sweep_dir / "mlflow_parent_run_id").write_text(parent + "\n")
    store = tracking.read_sweep_store(str(sweep_dir))
    assert store.experiment_id == tracking.ensure_experiment(uri, "xmlthresh") and store.source_tags["git_commit"]
    context = {"multirun": True, "job_num": 0, "sweep_dir": str(sweep_dir), "launcher": "basic"}
    job_cfg = compose(["strategy=domain", "dataset=counterexample", f"tracking.uri={uri}", "force=true"])
    (sweep_dir / "0").mkdir()
    run_job(job_cfg, sweep_dir / "0", resolved_yaml="x: 1\n", context=context)
    (sweep_dir / "1").mkdir()
    with pytest.raises(ValueError, match="beta must be"):
        run_job({**job_cfg, "beta": -1}, sweep_dir / "1", resolved_yaml="x: 1\n", context={**context, "job_num": 1})
    counts = send_sweep_records(sweep_dir, parent)
    job = json.loads((sweep_dir / "0" / "run_record.json").read_text())
    _assert_nothing_lost(_logged(uri, job["mlflow_run_id"]), RECORDED["sweep_job"])
    assert json.loads((sweep_dir / "0" / "result.json").read_text())["mlflow_run_id"] == job["mlflow_run_id"]
    failed = [run for run in tracking.runs_table(uri, "xmlthresh").itertuples() if run.status == "FAILED"]
    assert len(failed) == 1
    logged = _logged(uri, failed[0].run_id)
    _assert_nothing_lost(logged, RECORDED["failed_sweep_job"])
    assert logged["params"]["strategy"] == "domain" and logged["params"]["beta"] == "-1"  # what it was
    assert logged["params"]["dataset"] == "counterexample" and "beta must be" in logged["tags"]["error"]
    tracking.finish_sweep_parent(uri, parent, counts, failed=True)
    _assert_nothing_lost(_logged(uri, parent), RECORDED["parent"])

