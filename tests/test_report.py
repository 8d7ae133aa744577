"""The comparison report: repetitions over seeds, paired differences, markdown/CSV/HTML outputs."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.job import run_job
from xmlthresh.report import comparison, load_runs, main, paired_differences, to_markdown


def job_config(strategy: str, seed: int, uri: str) -> dict:
    return {
        "strategy": {"name": strategy},
        "dataset": {"loader": "synthetic", "name": "synthetic", "n_labels": 40, "num_docs": 300, "seed": 0},
        "beta": 1.0, "protocol": "holdout", "seed": seed, "warm_up": False,
        "tracking": {"enabled": True, "uri": uri, "experiment": "xmlthresh"},
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Six tracked runs (2 strategies x 3 seeds) in a temporary store, made once for the module."""
    tmp = tmp_path_factory.mktemp("report")
    uri = f"sqlite:///{tmp / 'store.db'}"
    results = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XMLTHRESH_HOME", str(tmp))
        for strategy in ("domain", "independent"):
            for seed in (0, 1, 2):
                results[strategy, seed] = run_job(job_config(strategy, seed, uri), tmp / f"{strategy}-{seed}")
    return uri, results


def test_table_means_and_standard_errors_over_seeds(store):
    uri, results = store
    runs = load_runs(uri, latest_sweep=False)
    assert len(runs) == 6
    table = comparison(runs).set_index("strategy")
    values = [results["domain", s]["f_macro"] for s in (0, 1, 2)]
    assert table.loc["domain", "f_macro"] == pytest.approx(np.mean(values))
    assert table.loc["domain", "f_macro_seeds_se"] == pytest.approx(np.std(values, ddof=1) / np.sqrt(3))
    assert table.loc["domain", "n_runs"] == 3


def test_paired_differences_pair_by_seed(store):
    uri, results = store
    diffs = paired_differences(load_runs(uri, latest_sweep=False), reference="domain")
    row = diffs.iloc[0]
    expected = [results["independent", s]["f_macro"] - results["domain", s]["f_macro"] for s in (0, 1, 2)]
    assert row["strategy"] == "independent" and row["n_pairs"] == 3
    assert row["mean_diff"] == pytest.approx(np.mean(expected))
    assert row["se_diff"] == pytest.approx(np.std(expected, ddof=1) / np.sqrt(3))


def test_report_command_writes_all_formats(store, tmp_path, capsys):
    uri, _ = store
    out = tmp_path / "report"
    assert main(["--uri", uri, "--all", "--out", str(out)]) == 0
    for name in ("comparison.md", "comparison.csv", "comparison.html", "comparison.png"):
        assert (out / name).stat().st_size > 0
    assert "| synthetic | holdout | domain |" in (out / "comparison.md").read_text()
    assert "data:image/png;base64," in (out / "comparison.html").read_text()


def test_markdown_of_empty_table():
    import pandas as pd

    assert "no finished runs" in to_markdown(pd.DataFrame())


def fake_store(monkeypatch, rows: list[dict]) -> None:
    """Make ``load_runs`` read ``rows`` (MLflow search-table columns: ``params.*``, ``metrics.*``, ``tags.*``)
    instead of a store: report logic tested in milliseconds."""
    import pandas as pd

    import xmlthresh.report as report

    frame = pd.DataFrame([{"run_id": f"run{i}", "status": "FINISHED", "start_time": i, **row}
                          for i, row in enumerate(rows)])
    monkeypatch.setattr(report, "runs_table", lambda uri, experiment: frame)


def run_row(strategy: str, f_macro: float, seed: int = 0, dataset: str = "espgame", **params) -> dict:
    return {"params.strategy": strategy, "params.dataset": dataset, "params.beta": "1.0", "params.seed": str(seed),
            "metrics.f_macro": f_macro, **{f"params.{k}": str(v) for k, v in params.items()}}


def test_numeric_sweep_parameters_sort_as_numbers_and_null_is_all_labels(monkeypatch):
    """Issue 15: n = 128, 16, 2 (text order) was the report's order; null (all labels) sorts as its count."""
    rows = [run_row("domain_fast", 0.5, **{"dataset.first_n_labels": n}) for n in (128, 16, 2, "None")]
    rows[-1]["metrics.n_labels"] = 268
    fake_store(monkeypatch, rows)
    table = comparison(load_runs(latest_sweep=False))
    assert list(table["dataset.first_n_labels"]) == [2, 16, 128, 268]
    rows = [run_row("domain", 0.5, **{"strategy.refine": r}) for r in ("bnb", "none")]
    fake_store(monkeypatch, rows)
    assert list(load_runs(latest_sweep=False)["strategy.refine"]) == ["bnb", "none"]  # text stays text
