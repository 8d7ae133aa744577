"""The figure presets of the reference work's chapters 2-3: each composes as a sweep, and its jobs on tiny
data write the files its report reads; the report writes its table and picture with finite numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import composed

from xmlthresh.config.compose import register_resolvers
from xmlthresh.run.job import run_job
from xmlthresh.report.studies import write_study_report

PNG = b"\x89PNG"


def sweep_params(preset: str) -> tuple[dict, dict]:
    """The preset's sweep parameters and its resolved config (the hydra section composed like the CLI)."""
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"experiment={preset}"], return_hydra_config=True)
    params = OmegaConf.to_container(cfg.hydra.sweeper.params)
    return params, {key: OmegaConf.to_container(cfg[key]) if OmegaConf.is_config(cfg[key]) else cfg[key]
                    for key in ("plots", "report", "strategy", "dataset")}


@pytest.mark.slow  # two jobs drawing every picture of a run: ~5-9 s
def test_argv_preset_overlays_the_curves_of_its_jobs(tmp_path):
    params, cfg = sweep_params("argv")
    assert params["dataset"] == "espgame,wikilshtc,corel5k,corel5k_tagprop260" and cfg["report"]["kind"] == "argv"
    assert cfg["plots"] is True
    tiny = (["dataset=synthetic", "dataset.n_labels=12", "dataset.num_docs=60"],
            ["dataset=synthetic", "dataset.n_labels=20", "dataset.num_docs=90", "beta=2"])
    for job, overrides in enumerate(tiny):
        run_job(composed("strategy=linearization", "plots=true", *overrides), tmp_path / str(job))
        assert (tmp_path / str(job) / "argv.csv").is_file()
    paths = write_study_report("argv", tmp_path)
    assert paths["png"].read_bytes().startswith(PNG)
    table = pd.read_csv(paths["csv"])
    assert list(table["n_labels"]) == [12, 20] and list(table["beta"]) == [1, 2]
    assert np.isfinite(table[["crossing_angle_deg", "f_macro"]].to_numpy(dtype=float)).all()


@pytest.mark.slow  # one job drawing every picture of a run plus the two metric-choice figures: ~4-7 s
def test_metric_choice_preset_draws_both_figures(tmp_path):
    params, cfg = sweep_params("metric_choice")
    assert params == {"strategy": "domain", "dataset": "espgame,corel5k,wikilshtc"}
    assert cfg["plots"] is True
    result = run_job(composed("strategy=domain", "plots=true", "figures=[metric_choice]", "dataset.n_labels=15",
                              "dataset.num_docs=80"), tmp_path)
    assert np.isfinite(result["f_macro"]) and result["upper_bound"] >= result["f_macro"]
    for name in ("metric_choice_density.png", "metric_choice_groups.png"):
        assert (tmp_path / name).read_bytes().startswith(PNG)


def test_metric_choice_groups_split_the_labels_and_share_the_optimum_tangent():
    """The three groups partition the labels, and each group's F-macro point maximises the linear objective
    at the optimum over the group's hull (every label's best response does)."""
    from xmlthresh.datasets.synthetic import generate_ranked_lists
    from xmlthresh.report.plots import macro_f_optimum, metric_choice_groups
    from xmlthresh.strategies import STRATEGIES

    lists = generate_ranked_lists(n_labels=25, num_docs=150, seed=5)
    fitted = STRATEGIES.get("domain")().fit_lists(lists).fitted()
    cands, choice = macro_f_optimum(lists, 1.0)
    independent = STRATEGIES.get("independent")().fit_lists(lists)
    np.testing.assert_array_equal(cands.cut[choice], independent.cuts_)  # the macro-F optimum's cuts
    figure = metric_choice_groups(fitted)
    counts = [int(ax.get_title().rsplit(": ", 1)[1].split()[0]) for ax in figure.axes]
    assert sum(counts) == lists.n_labels
    # at a fixed point of V every group's mean point at the optimum is a support point of its hull in the
    # direction (R0^2, P0^2): the red line of each panel is tangent to the black curve there
    from xmlthresh.data.candidates import build_candidates
    from xmlthresh.report.plots import _label_points
    from xmlthresh.strategies.linearization import LinearizedMap

    assert STRATEGIES.get("domain")().fit_lists(lists).fixed_point_exists_
    p, r = _label_points(lists, fitted.cuts)
    weight = np.array([r.mean() ** 2, p.mean() ** 2])
    same = cands.cut[choice] == fitted.cuts
    for mask in (same, ~same & (p >= r), ~same & (p < r)):
        if mask.any():
            hull = LinearizedMap.build(build_candidates(lists.select_labels(mask)), 1.0)
            best = np.max(weight[0] * hull.mean_p + weight[1] * hull.mean_r)
            assert weight @ [p[mask].mean(), r[mask].mean()] == pytest.approx(best, abs=1e-12)


def test_unknown_figures_and_plot_labels_are_one_line_errors(tmp_path):
    from xmlthresh._util.registry import ConfigError
    from xmlthresh.run.threshold_task import picture_options

    ids = np.array([10, 20, 30])
    assert picture_options({"figures": ["metric_choice"], "plot_labels": [30, 10]}, ids)["labels"].tolist() == [2, 0]
    with pytest.raises(ConfigError, match="unknown figure.*known: metric_choice"):
        picture_options({"figures": ["nope"]}, ids)
    with pytest.raises(ConfigError, match="plot_labels: no label 40"):
        picture_options({"plot_labels": [40]}, ids)


def test_pr_curves_draw_the_chosen_labels():
    from xmlthresh.datasets.synthetic import generate_ranked_lists
    from xmlthresh.report.plots import pr_curves

    lists = generate_ranked_lists(n_labels=10, num_docs=60, seed=1)
    figure = pr_curves(lists, np.ones(10, dtype=np.int64), labels=np.array([7, 2]))
    assert [text.get_text() for text in figure.axes[0].get_legend().get_texts()] == [
        f"label {lists.label_ids[7]}", f"label {lists.label_ids[2]}"]


@pytest.mark.parametrize("preset, swept", [("domain_fast_beta", {"beta", "strategy.n_angles"}),
                                           ("domain_fast_angles", {"strategy.n_angles", "dataset"})])
def test_domain_fast_presets_sweep_numeric_parameters_and_report_the_spreads(preset, swept, tmp_path):
    params, cfg = sweep_params(preset)
    assert params["strategy"] == "domain_fast" and swept <= set(params)
    assert all(float(value) > 0 for value in str(params["strategy.n_angles"]).split(","))
    assert {"region_dF", "region_dP", "region_dR"} <= set(cfg["report"]["metrics"])
    # one job of the sweep, on tiny data: every reported spread is in result.json and finite
    result = run_job(composed("strategy=domain_fast", "strategy.n_angles=14", "dataset.n_labels=15",
                              "dataset.num_docs=80"), tmp_path)
    for name in cfg["report"]["metrics"]:
        assert np.isfinite(result[name]), name
