"""Plots: every picture of a run is written (and readable as PNG) for ranked-list strategies."""

from __future__ import annotations

import numpy as np

from xmlthresh.datasets.synthetic import generate_ranked_lists
from xmlthresh.report.plots import achievable_set, save_run_plots
from xmlthresh.strategies import STRATEGIES

PNG = b"\x89PNG"


def test_run_plots_are_written(tmp_path):
    lists = generate_ranked_lists(n_labels=30, num_docs=200, seed=1)
    for name, expected in (("domain", {"domain", "argv", "per_label_pr", "pr_curves"}),
                           ("linearization_region", {"domain", "argv", "per_label_pr", "pr_curves", "error_map"})):
        params = {"grid": 10} if name == "linearization_region" else {}
        model = STRATEGIES.get(name)(**params).fit_lists(lists)
        out = tmp_path / name
        out.mkdir()
        paths = save_run_plots(model.fitted(), out)
        assert {p.stem for p in paths} == expected
        assert all(p.read_bytes().startswith(PNG) for p in paths if p.suffix == ".png")
        assert (out / "argv.csv").read_text().startswith("theta,argv\n")


def test_small_instances_show_every_threshold_vector():
    from xmlthresh.data.ranked_lists import RankedLists

    lists = RankedLists.from_relevance_lists([[1, 0, 0, 1], [1, 0, 1, 0]], [2, 2], num_docs=4)
    fig = achievable_set(lists, 1.0, cuts=np.array([1, 3]))
    scatter = fig.axes[0].collections[-1]
    assert len(scatter.get_offsets()) == 4  # 2 Pareto candidates per label


def test_plots_never_refit_a_strategy(tmp_path, monkeypatch):
    """The pictures are drawn from the fitted rule alone: no strategy is fitted while they are drawn."""
    from xmlthresh.strategies.base import ThresholdStrategy

    lists = generate_ranked_lists(n_labels=12, num_docs=80, seed=3)
    fitted = STRATEGIES.get("independent")().fit_lists(lists).fitted()

    def forbidden(*args, **kwargs):
        raise AssertionError("a plot refitted a strategy")

    monkeypatch.setattr(ThresholdStrategy, "fit_lists", forbidden)
    assert {p.stem for p in save_run_plots(fitted, tmp_path)} == {"domain", "argv", "per_label_pr", "pr_curves"}


def test_no_overflow_warning_on_a_huge_achievable_set():
    import warnings

    lists = generate_ranked_lists(n_labels=400, num_docs=3000, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        achievable_set(lists, 1.0, max_points=2000)


def test_pictures_leave_the_garbage_collector_as_they_found_it(tmp_path):
    """The run's objects are frozen out of the collector only while the pictures are drawn, and a caller's own
    frozen objects stay frozen."""
    import gc

    lists = generate_ranked_lists(n_labels=8, num_docs=40, seed=4)
    fitted = STRATEGIES.get("independent")().fit_lists(lists).fitted()
    assert gc.get_freeze_count() == 0
    save_run_plots(fitted, tmp_path)
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        save_run_plots(fitted, tmp_path)
        assert 0 < gc.get_freeze_count() <= frozen  # still frozen (less any freed by their reference count)
    finally:
        gc.unfreeze()
