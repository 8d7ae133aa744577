"""The Hydra CLI end to end (subprocesses, as a user runs it) and MLflow tracking."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

from xmlthresh.cli.entry import register_resolvers
from xmlthresh.strategies import STRATEGIES

REQUIRED_FIELDS = {"f_macro", "macro_f", "micro_f", "precision", "recall", "lower_bound", "upper_bound",
                   "n_labels", "n_docs", "fit_seconds", "strategy", "dataset", "beta"}


def run_cli(*overrides: str, home: Path, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "XMLTHRESH_HOME": str(home), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "xmlthresh", *overrides], capture_output=True, text=True,
                          env=env, timeout=300)


def search_runs(db: Path):
    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{db}")
    return mlflow.search_runs(experiment_names=["xmlthresh"])


def test_default_job_runs_on_embedded_data_and_is_tracked(isolated_home):
    proc = run_cli(home=isolated_home)
    assert proc.returncode == 0, proc.stderr
    assert "F-macro" in proc.stdout and "certified" in proc.stdout
    results = list((isolated_home / "runs").glob("*/*/result.json"))
    assert len(results) == 1
    result = json.loads(results[0].read_text())
    assert REQUIRED_FIELDS <= set(result)
    assert result["strategy"] == "domain" and result["dataset"] == "synthetic"
    assert result["lower_bound"] <= result["upper_bound"]
    assert (results[0].parent / "thresholds.csv").is_file()
    runs = search_runs(isolated_home / "runs" / "mlflow.db")
    assert len(runs) == 1
    row = runs.iloc[0]
    assert row["status"] == "FINISHED"
    assert row["params.strategy"] == "domain" and row["params.dataset.n_labels"] == "200"
    assert row["metrics.f_macro"] == pytest.approx(result["f_macro"])
    assert row["tags.xmlthresh_version"] and row["tags.git_commit"]
    artifacts = Path(row["artifact_uri"].removeprefix("file://"))
    assert {p.name for p in artifacts.iterdir()} >= {"config.yaml", "result.json", "thresholds.csv", "domain.png",
                                                     "argv.png", "pr_curves.png", "per_label_pr.png"}


def test_espgame_with_explicit_run_dir_and_beta(isolated_home, real_data, tmp_path):
    run_dir = tmp_path / "my-run"
    proc = run_cli("strategy=domain", "dataset=espgame", "beta=2", f"hydra.run.dir={run_dir}",
                   "tracking.enabled=false", home=isolated_home)
    assert proc.returncode == 0, proc.stderr
    result = json.loads((run_dir / "result.json").read_text())
    assert result["f_macro"] == pytest.approx(0.626090, abs=1e-6)
    assert result["beta"] == 2.0 and result["n_labels"] == 268 and result["n_docs"] == 2080
    assert not (isolated_home / "runs" / "mlflow.db").exists()


def test_bad_input_is_one_clear_error_and_a_failed_run(isolated_home, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("0 2 1 0 1\n1 1 0 7 0\n")
    run_dir = tmp_path / "failed-run"
    db = tmp_path / "other" / "store.db"
    proc = run_cli("dataset=ranked_lists", f"dataset.path={bad}", f"hydra.run.dir={run_dir}",
                   f"tracking.uri=sqlite:///{db}", home=isolated_home)
    assert proc.returncode == 1
    assert f"xmlthresh: error: {bad} line 2: token 4 ('7') is not 0 or 1" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (run_dir / "result.json").exists()
    runs = search_runs(db)
    assert list(runs["status"]) == ["FAILED"]
    assert "is not 0 or 1" in runs.iloc[0]["tags.error"]


def test_unknown_option_lists_the_available_ones(isolated_home):
    proc = run_cli("strategy=nope", "tracking.enabled=false", home=isolated_home)
    assert proc.returncode != 0
    assert proc.stderr.startswith("xmlthresh: error: unknown strategy option 'nope'; known: coordinate, domain, ")
    assert len(proc.stderr.strip().splitlines()) == 1  # not Hydra's dozen lines


@pytest.mark.parametrize("strategy", [name for name in STRATEGIES.names()
                                      if STRATEGIES.get(name).__module__.startswith("xmlthresh.")])
@pytest.mark.parametrize("dataset", ["synthetic", "espgame", "example", "ranked_lists"])
def test_every_config_option_composes(strategy, dataset):
    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"strategy={strategy}", f"dataset={dataset}"])
    assert cfg.strategy.name == strategy
    assert cfg.dataset.loader in ("synthetic", "ranked_lists")


PRESETS = sorted(p.stem for p in (Path(__file__).resolve().parents[1] / "xmlthresh" / "conf" / "experiment").glob("*.yaml"))


@pytest.mark.parametrize("preset", PRESETS)
def test_every_experiment_preset_composes_with_a_protocol_group_option(preset):
    """protocol is a config group: presets select it in their defaults or sweep over its options."""
    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"experiment={preset}"], return_hydra_config=True)
    assert cfg.protocol.name in ("oracle", "holdout", "crossfit")
    swept = cfg.hydra.sweeper.params.get("protocol") if cfg.hydra.sweeper.get("params") else None
    options = {p.stem for p in (Path(__file__).resolve().parents[1] / "xmlthresh" / "conf" / "protocol").glob("*.yaml")}
    assert swept is None or set(str(swept).split(",")) <= options


def test_console_script_is_python_m_xmlthresh(isolated_home):
    """``xmlthresh ...`` (the installed console script) behaves exactly like ``python -m xmlthresh ...``."""
    script = Path(sys.executable).parent / "xmlthresh"
    assert script.is_file(), "the console script is declared in pyproject.toml [project.scripts]"
    env = {**os.environ, "XMLTHRESH_HOME": str(isolated_home)}
    for args in (["list"], ["strategy=independent", "dataset=example", "beta=2", "--cfg", "job"]):
        by_script = subprocess.run([str(script), *args], capture_output=True, text=True, env=env, timeout=120)
        by_module = subprocess.run([sys.executable, "-m", "xmlthresh", *args], capture_output=True, text=True,
                                   env=env, timeout=120)
        assert by_script.returncode == by_module.returncode == 0, by_script.stderr + by_module.stderr
        assert by_script.stdout == by_module.stdout and by_script.stdout
    assert "name: independent" in by_script.stdout and "beta: 2" in by_script.stdout
