"""The transfer and consistency studies: per-job fields (ceiling, population regret, variant) and reports."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import composed

from xmlthresh.run.job import run_job
from xmlthresh.report.studies import consistency_table, load_results, main, transfer_summary, transfer_table


DENSE_XMC = ["dataset=synthetic_xmc", "dataset.top_k=null", "dataset.n_labels=30", "dataset.num_docs=400",
             "dataset.num_validation_docs=300", "dataset.labels_per_doc=2.0", "protocol=holdout"]


def test_a_holdout_job_reports_its_ceiling_and_population_regret(tmp_path):
    results = {}
    for strategy in ("independent", "transfer/pu_eval", "transfer/domain_smoothed"):
        cfg = composed(*DENSE_XMC, f"strategy={strategy}", "ceiling=true")
        results[strategy] = run_job(cfg, tmp_path / strategy.replace("/", "_"))
    assert results["transfer/pu_eval"]["variant"] == "pu(target=eval)"
    assert results["transfer/domain_smoothed"]["variant"] == "domain(smoothing=5.0)"
    assert results["independent"]["variant"] == "independent"
    for result in results.values():
        # no rule fitted elsewhere beats domain fitted on the test split (up to the sweep's O(1/n^2) gap)
        assert result["f_macro"] <= result["ceiling_f_macro"] + 1e-3
        assert 0 <= result["population_f_macro"] <= result["population_upper_bound"] + 1e-12
        assert result["population_regret"] == pytest.approx(result["population_optimum"]
                                                            - result["population_f_macro"])
    on_disk = json.loads((tmp_path / "independent" / "result.json").read_text())
    assert on_disk["ceiling_f_macro"] == results["independent"]["ceiling_f_macro"]


def _write(sweep, job, **fields):
    (sweep / str(job)).mkdir(parents=True)
    (sweep / str(job) / "result.json").write_text(json.dumps(fields))


def test_transfer_table_gap_closed_and_paired_differences(tmp_path):
    job = 0
    for seed, (ind, dom, ceiling) in enumerate([(0.2, 0.3, 0.6), (0.4, 0.45, 0.8)]):
        for variant, value in (("independent", ind), ("domain", dom)):
            _write(tmp_path, job, dataset="d", protocol="holdout", strategy=variant, variant=variant,
                   kind="deterministic", seed=seed, f_macro=value, ceiling_f_macro=ceiling, ranker_p_at_1=0.5)
            job += 1
    _write(tmp_path, job, dataset="d", protocol="holdout", strategy="pu", skipped=True, skip_reason="x")
    results = load_results(tmp_path)
    assert len(results) == 4
    table = transfer_table(results).set_index("variant")
    # means: independent 0.3, domain 0.375, ceiling 0.7 -> gap closed 0.075 / 0.4
    assert table.loc["domain", "gap_closed"] == pytest.approx(0.075 / 0.4)
    assert table.loc["independent", "gap_closed"] == pytest.approx(0.0)
    assert table.loc["domain", "diff_to_ref"] == pytest.approx(0.075)
    assert table.loc["domain", "diff_to_ref_se"] == pytest.approx(np.std([0.1, 0.05], ddof=1) / np.sqrt(2))
    summary = transfer_summary(transfer_table(results)).set_index("variant")
    assert summary.loc["domain", "mean_gap_closed"] == pytest.approx(0.1875)
    assert summary.loc["domain", "datasets_below_ref_by_1se"] == 0


def test_consistency_table_and_cli(tmp_path, capsys):
    for job, (m, seed, regret) in enumerate([(100, 0, 0.2), (100, 1, 0.3), (1000, 0, 0.1), (1000, 1, 0.05)]):
        _write(tmp_path, job, dataset="x", protocol="holdout", strategy="pu", variant="pu", kind="deterministic",
               seed=seed, f_macro=0.4, fit_n_docs=m, population_regret=regret)
    table = consistency_table(load_results(tmp_path)).set_index("fit_docs")
    assert table.loc[100, "regret"] == pytest.approx(0.25)
    assert table.loc[1000, "regret"] == pytest.approx(0.075)
    assert main(["consistency", str(tmp_path)]) == 0
    assert (tmp_path / "report" / "consistency.png").stat().st_size > 0
    assert main(["consistency", str(tmp_path / "missing")]) == 1
