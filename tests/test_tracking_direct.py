"""The direct writer of MLflow's sqlite store (xmlthresh.tracking.sqlite_direct) against MLflow itself: the same run
written both ways reads back the same through MLflow's client, search and artifacts; the writer is used
only where it is exact (a verified schema revision, local artifacts), and a tracked command imports no mlflow."""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from xmlthresh.tracking import mlflow_runs as tracking
from xmlthresh.tracking.sqlite_direct import VERIFIED_REVISIONS, DirectStore, checked_key, local_artifact_root

PARAMS = {"strategy": "domain", "beta": 1.0, "none": None, "long": "x" * 7000, "path.like/key": "v"}
METRICS = {"f_macro": 0.5685122, "nan": math.nan, "inf": math.inf, "minus_inf": -math.inf, "negative": -3.25,
           "zero": 0.0, "big": 1e300}
TAGS = {"xmlthresh.config_hash": "abc", "task": "thresholds", "long_tag": "t" * 9000, "empty": ""}


@pytest.fixture(scope="module")
def migrated_store(tmp_path_factory) -> Path:
    """A sqlite store with the experiment ``exp``, created and migrated by MLflow once (seconds) for the module."""
    path = tmp_path_factory.mktemp("store") / "store.db"
    tracking.ensure_experiment(f"sqlite:///{path}", "exp")
    return path


@pytest.fixture
def store_uri(tmp_path, isolated_home, migrated_store) -> str:
    """A copy of :func:`migrated_store` of the test's own (the artifact directory is shared; run ids differ)."""
    shutil.copy(migrated_store, tmp_path / "store.db")
    return f"sqlite:///{tmp_path / 'store.db'}"


def _write_run(uri: str, tmp_path: Path, name: str, via_mlflow: bool, monkeypatch, fail: bool = False) -> str:
    """One run through tracked_run, with the direct writer or (``via_mlflow``) MLflow's client."""
    monkeypatch.setenv("XMLTHRESH_TRACKING_VIA_MLFLOW", "1" if via_mlflow else "0")
    artifact = tmp_path / f"{name}.json"
    artifact.write_text(json.dumps({"f_macro": 0.5}))
    os.utime(artifact, (1_700_000_000, 1_700_000_000))
    try:
        with tracking.tracked_run(True, uri, "exp", run_name="domain-x-oracle", parent_run_id="p" * 32,
                                  tags=TAGS, failure_params={"strategy": "domain", "dataset": "x"}) as tracker:
            tracker.log_params(PARAMS)
            tracker.log_metrics(METRICS)
            tracker.set_tags({"late": "yes", "late_long": "t" * 9000})
            tracker.log_text("a: 1\n", "config.yaml")
            tracker.log_artifact(artifact)
            run_id = tracker.run_id
            if fail:
                raise RuntimeError("boom")
    except RuntimeError:
        pass
    return run_id


def _read(uri: str, run_id: str) -> dict:
    import mlflow

    client = mlflow.MlflowClient(uri)
    run = client.get_run(run_id)
    own = {"xmlthresh.pid", "xmlthresh.pid_start"}
    root = Path(local_artifact_root(run.info.artifact_uri))
    return {"status": run.info.status, "lifecycle": run.info.lifecycle_stage, "user": run.info.user_id,
            "name": run.info.run_name, "experiment": run.info.experiment_id, "ended": run.info.end_time is not None,
            "artifact_uri": run.info.artifact_uri.replace(run_id, "<id>"),
            "params": run.data.params, "tags": {k: v for k, v in run.data.tags.items() if k not in own},
            "metrics": {k: ("nan" if math.isnan(v) else v) for k, v in run.data.metrics.items()},
            "history": [(m.value if not math.isnan(m.value) else "nan", m.step)
                        for m in client.get_metric_history(run_id, "f_macro")],
            "artifacts": sorted(item.path for item in client.list_artifacts(run_id)),
            "contents": {p.name: (p.read_bytes(), int(p.stat().st_mtime) if p.suffix == ".json" else None)
                         for p in sorted(root.iterdir())}}


@pytest.mark.parametrize("fail", [False, True], ids=["finished", "failed"])
def test_a_run_written_directly_reads_back_like_one_written_by_mlflow(store_uri, tmp_path, monkeypatch, fail):
    direct = _write_run(store_uri, tmp_path, "direct", False, monkeypatch, fail)
    via = _write_run(store_uri, tmp_path, "via", True, monkeypatch, fail)
    mine, theirs = _read(store_uri, direct), _read(store_uri, via)
    mine["contents"] = {k.replace("direct", "via"): v for k, v in mine["contents"].items()}
    mine["artifacts"] = [name.replace("direct", "via") for name in mine["artifacts"]]
    for key in theirs:
        if isinstance(theirs[key], dict):
            assert {k: v for k, v in mine[key].items() if theirs[key].get(k) != v} == {}, key
            assert set(mine[key]) == set(theirs[key]), key
    assert mine == theirs
    assert mine["status"] == ("FAILED" if fail else "FINISHED")
    # MLflow truncates what log_batch writes, and stores a new run's tags as given
    assert len(mine["params"]["long"]) == 6000 and len(mine["tags"]["late_long"]) == 8000
    assert len(mine["tags"]["long_tag"]) == 9000
    assert mine["metrics"]["nan"] == "nan" and mine["metrics"]["inf"] == 1.7976931348623157e308
    if fail:
        assert mine["tags"]["error"] == "RuntimeError: boom" and mine["params"]["dataset"] == "x"


def test_mlflow_search_finds_direct_runs_by_tag_status_and_metric(store_uri, tmp_path, monkeypatch):
    import mlflow

    direct = _write_run(store_uri, tmp_path, "direct", False, monkeypatch)
    via = _write_run(store_uri, tmp_path, "via", True, monkeypatch)
    client = mlflow.MlflowClient(store_uri)
    experiment = client.get_experiment_by_name("exp").experiment_id
    query = ("tags.`xmlthresh.config_hash` = 'abc' and attributes.status = 'FINISHED' and metrics.f_macro > 0.5 "
             "and params.strategy = 'domain'")
    found = client.search_runs([experiment], query, order_by=["attributes.start_time ASC"])
    assert [run.info.run_id for run in found] == [direct, via]
    table = tracking.runs_table(store_uri, "exp").set_index("run_id")
    assert table.loc[direct].drop(["start_time", "end_time", "artifact_uri", "tags.xmlthresh.pid",
                                   "tags.xmlthresh.pid_start"]).equals(
        table.loc[via].drop(["start_time", "end_time", "artifact_uri", "tags.xmlthresh.pid",
                             "tags.xmlthresh.pid_start"]))
    assert tracking.finished_run_with_hash(store_uri, "exp", "abc") == direct  # the oldest, as MLflow's search


def test_the_verified_schema_is_that_of_the_installed_mlflow():
    """When MLflow changes its schema (a new alembic head), the direct writer must be checked again: this
    test fails until the new revision is added to VERIFIED_REVISIONS (after the tests above pass with it)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    import mlflow.store.db_migrations as migrations

    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    assert set(ScriptDirectory.from_config(config).get_heads()) <= VERIFIED_REVISIONS


def test_other_revisions_remote_artifacts_and_servers_go_through_mlflow(store_uri, tmp_path):
    assert DirectStore.for_uri("http://localhost:5000") is None
    assert DirectStore.for_uri(f"sqlite:///{tmp_path / 'missing.db'}") is None
    other = tmp_path / "other.db"
    shutil.copy(store_uri[len("sqlite:///"):], other)
    with sqlite3.connect(other) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'ffffffffffff'")
    assert DirectStore.for_uri(f"sqlite:///{other}") is None
    import mlflow

    mlflow.MlflowClient(store_uri).create_experiment("remote", artifact_location="s3://bucket/somewhere")
    store = DirectStore.for_uri(store_uri)
    assert store is not None and store.experiment("remote") is None and store.experiment("exp") is not None
    assert store.experiment("no such experiment") is None
    assert local_artifact_root("file:///a/b%20c") == Path("/a/b c") and local_artifact_root("s3://x/y") is None


def test_names_mlflow_refuses_are_refused(store_uri):
    import mlflow
    from mlflow.entities import Param

    client = mlflow.MlflowClient(store_uri)
    run = client.create_run(client.get_experiment_by_name("exp").experiment_id)
    for key in ["a/../b", "/absolute", "bad!char", "semi;colon", "x" * 251, ".", "a//b"]:
        with pytest.raises(Exception):
            client.log_batch(run.info.run_id, params=[Param(key, "v")])
        with pytest.raises(ValueError, match="invalid MLflow param name"):
            checked_key("param", key)
    for key in ["a", "a/b", "with space", "dots.and-dashes", "colon:ok", "x" * 250]:
        client.log_batch(run.info.run_id, params=[Param(key, "v")])
        assert checked_key("param", key) == key


def test_a_param_keeps_its_first_value(store_uri):
    store = DirectStore.for_uri(store_uri)
    run_id = store.create_run(store.experiment("exp").experiment_id, "r", {})
    store.log_batch(run_id, params={"a": "1"})
    store.log_batch(run_id, params={"a": "1"})  # the same value again is fine, as in MLflow
    with pytest.raises(ValueError, match="changing the value of param"):
        store.log_batch(run_id, params={"a": "2", "b": "3"})
    assert store.get_run(run_id).params == {"a": "1"}  # nothing of the refused batch was written


def test_the_default_run_context_matches_mlflow(monkeypatch, tmp_path):
    from mlflow.tracking.context.git_context import GitRunContext
    from mlflow.tracking.context.registry import resolve_tags

    monkeypatch.setenv("HOME", str(tmp_path))
    for env in ({}, {"MLFLOW_TRACKING_USERNAME": "alice"}, {"MLFLOW_RUN_CONTEXT": json.dumps({"team": "x"})}):
        for key in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_RUN_CONTEXT"):
            monkeypatch.delenv(key, raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        assert tracking.default_context_tags() == {k: str(v) for k, v in resolve_tags(
            {}, ignore=[GitRunContext]).items()}, env
    (tmp_path / ".mlflow").mkdir()
    (tmp_path / ".mlflow" / "credentials").write_text("[mlflow]\nmlflow_tracking_username = bob\n")
    monkeypatch.delenv("MLFLOW_TRACKING_USERNAME", raising=False)
    assert tracking.default_context_tags()["mlflow.user"] == "bob" == resolve_tags({})["mlflow.user"]


def test_a_tracked_command_imports_no_mlflow_once_the_store_exists(tmp_path, isolated_home):
    """Issue 12: once the store and the experiment exist, a tracked run writes them without importing mlflow."""
    import mlflow

    uri = tracking.default_tracking_uri()
    experiment = tracking.ensure_experiment(uri, "xmlthresh")  # what the first run on a new store does
    code = ("import sys; sys.argv = ['xmlthresh', 'dataset=example', 'plots=false']\n"
            "from xmlthresh.cli.entry import main\nmain()\nprint('MLFLOW IMPORTED', 'mlflow' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "MLFLOW IMPORTED False" in proc.stdout
    finished = mlflow.MlflowClient(uri).search_runs([experiment], "attributes.status = 'FINISHED'")
    assert len(finished) == 1 and finished[0].data.params["dataset.name"] == "example"
    assert finished[0].data.metrics["f_macro"] == json.loads(
        (Path(local_artifact_root(finished[0].info.artifact_uri)) / "result.json").read_text())["f_macro"]
