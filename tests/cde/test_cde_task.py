"""task=cde inside the common job: result.json, MLflow params/metrics, density plot, and the report table."""

from __future__ import annotations

import json

from xmlthresh.run.job import run_job
from xmlthresh.report.comparison import write_report
from xmlthresh.report.tables import load_runs


def cde_config(estimator: str, uri: str) -> dict:
    return {
        "task": "cde", "seed": 0, "plots": True, "cde": {"n_samples": 64, "n_plot_points": 2},
        "estimator": {"name": estimator},
        "cde_dataset": {"name": "fork", "nx": 4, "ny": 1, "m": 2, "a": 1.0, "n_train": 300, "n_test": 150},
        "tracking": {"enabled": True, "uri": uri, "experiment": "xmlthresh"},
    }


def test_cde_runs_are_tracked_and_reported(tmp_path, isolated_home):
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    results = {name: run_job(cde_config(name, uri), tmp_path / name) for name in ("marginal", "nnkcde")}
    for name, result in results.items():
        stored = json.loads((tmp_path / name / "result.json").read_text())
        assert stored["task"] == "cde" and stored["estimator"] == name
        assert stored["rel_loss_direct"] < 0 and stored["rel_loss_approx"] is not None
        assert (tmp_path / name / "densities.png").read_bytes().startswith(b"\x89PNG")
    runs = load_runs(uri, latest_sweep=False)
    assert runs.attrs["keys"] == ["cde_dataset", "estimator"]
    assert set(runs["estimator"]) == {"marginal", "nnkcde"}
    paths = write_report(runs, tmp_path / "report", reference="none")
    text = paths["markdown"].read_text()
    assert "| fork | nnkcde |" in text and "rel_loss_approx" in text
    import mlflow  # the values the tuning chose are params of the run, beside the grids

    mlflow.set_tracking_uri(uri)
    (run,) = mlflow.search_runs(experiment_names=["xmlthresh"], filter_string="params.estimator = 'nnkcde'",
                                output_format="list")
    assert int(run.data.params["tuned.k_"]) == results["nnkcde"]["tuned"]["k_"]
    assert "tuned.bandwidth_" in run.data.params, sorted(run.data.params)

