"""The values a CDE run's tuning chose (``tuned.*`` params) are results, not keys of the comparison: as keys
they kept the seeds apart and gave the cde_direct_vs_approx sweep's report 132 figures (a line plot per
tuned value and metric), which took longer to draw than the sweep's jobs took to run."""

from __future__ import annotations

import pandas as pd

from xmlthresh.report.figures import figure_specs
from xmlthresh.report.tables import _cde_table, comparison  # _cde_table: what load_runs returns for CDE runs


def _runs() -> pd.DataFrame:
    rows = []
    for nz in ("2", "3"):
        for estimator in ("marginal", "nnkcde"):
            for seed in ("0", "1"):
                rows.append({"tags.task": "cde", "status": "FINISHED", "params.cde_dataset": "surd",
                             "params.estimator": estimator, "params.cde_dataset.nz": nz, "params.seed": seed,
                             "params.tuned.bandwidth_": str(0.1 + 0.01 * len(rows)),  # differs in every run
                             "params.tuned.k_": str(10 + len(rows)) if estimator == "nnkcde" else None,
                             "metrics.rel_loss_direct": -0.5 - 0.01 * len(rows),
                             "metrics.rel_loss_approx": -0.4 - 0.01 * len(rows), "run_id": f"r{len(rows)}"})
    return pd.DataFrame(rows)


def test_tuned_values_are_not_keys_and_the_seeds_pool():
    table = _cde_table(_runs(), [])
    keys = table.attrs["keys"]
    assert "cde_dataset.nz" in keys and not [key for key in keys if key.startswith("tuned.")]
    pooled = comparison(table)
    assert len(pooled) == 4 and set(pooled["n_runs"]) == {2}  # 2 nz x 2 estimators, each over both seeds
    specs = figure_specs(table)
    assert {spec.x for spec in specs} == {"cde_dataset.nz"}
