"""The comparison report: repetitions over seeds, paired differences, markdown/CSV/HTML outputs."""

from __future__ import annotations

import re

import numpy as np
import pytest

from xmlthresh.run.job import run_job
from xmlthresh.report.comparison import main
from xmlthresh.report.tables import comparison, load_runs, paired_differences, to_markdown


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
    page = (out / "comparison.html").read_text()
    assert '<script src="plotly.min.js"></script>' in page and 'id="figure-0"' in page  # drawn by the shared file
    assert (out / "plotly.min.js").stat().st_size > 1_000_000 and len(page) < 200_000


def test_an_unknown_sweep_id_is_one_line_and_writes_no_report(store, tmp_path, capsys):
    uri, _ = store
    out = tmp_path / "report"
    assert main(["--uri", uri, "--sweep", "nosuchid", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("python -m xmlthresh.report: error: no sweep with parent run id 'nosuchid' in experiment "
                          "'xmlthresh'") and len(err.splitlines()) == 1
    assert not out.exists()


def test_markdown_of_empty_table():
    import pandas as pd

    assert "no finished runs" in to_markdown(pd.DataFrame())


def fake_store(monkeypatch, rows: list[dict]) -> None:
    """Make ``load_runs`` read ``rows`` (MLflow search-table columns: ``params.*``, ``metrics.*``, ``tags.*``)
    instead of a store: report logic tested in milliseconds."""
    import pandas as pd

    import xmlthresh.report.tables as report  # load_runs reads the store through tables.runs_table

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


def beta_sweep_rows(seeds=(0, 1)) -> list[dict]:
    """Two strategies x five betas x seeds, F-macro = a known function of all three."""
    rows = []
    for strategy, offset in (("domain", 0.5), ("independent", 0.4)):
        for beta in (0.25, 0.5, 1, 2, 4):
            for seed in seeds:
                row = run_row(strategy, offset + 0.01 * beta + 0.001 * seed, seed=seed, kind="deterministic")
                row.update({"params.beta": str(float(beta)), "metrics.gap": 0.0, "metrics.lower_bound": offset,
                            "metrics.upper_bound": offset + 1e-9, "experiment_id": "7"})
                rows.append(row)
    return rows


def test_a_swept_numeric_parameter_is_the_x_axis_never_averaged(monkeypatch):
    """Issue 14 defect 2: beta_sweep's plot averaged F over the five betas (aggfunc="mean")."""
    from xmlthresh.report.figures import figure_points, figure_specs

    fake_store(monkeypatch, beta_sweep_rows())
    runs = load_runs(latest_sweep=False)
    specs = figure_specs(runs)
    assert [(s.kind, s.metric, s.x, s.series, s.panels) for s in specs] == [("line", "f_macro", "beta", ("strategy",), ())]
    points = figure_points(runs, specs[0])
    assert len(points) == 10 and set(points["n"]) == {2}  # one point per strategy and beta: only seeds pooled
    domain = points[points["series"] == "domain"]
    assert list(domain["x"]) == [0.25, 0.5, 1, 2, 4]
    assert list(domain["mean"]) == pytest.approx([0.5 + 0.01 * b + 0.0005 for b in (0.25, 0.5, 1, 2, 4)])
    assert domain["se"].iloc[0] == pytest.approx(0.0005)  # sem of (x, x + 0.001)


def test_without_a_numeric_parameter_bars_per_data_set_name_every_other_key(monkeypatch):
    from xmlthresh.report.figures import figure_points, figure_specs

    rows = [run_row(s, f, dataset=d, protocol=p) for s, f in (("domain", 0.5), ("pu", 0.4))
            for d in ("espgame", "corel5k") for p in ("oracle", "holdout")]
    fake_store(monkeypatch, rows)
    runs = load_runs(latest_sweep=False)
    (spec,) = figure_specs(runs)
    assert (spec.kind, spec.x, set(spec.series)) == ("bar", "dataset", {"strategy", "protocol"})
    assert len(figure_points(runs, spec)) == 8  # protocols are not averaged either


def test_two_numeric_parameters_one_line_per_value_of_the_other(monkeypatch):
    from xmlthresh.report.figures import figure_points, figure_specs

    rows = [run_row("domain_fast", 0.5 + a * 1e-4 + b, **{"strategy.n_angles": a}) for a in (14, 100) for b in (0.0, 0.1)]
    for row, beta in zip(rows, ("1.0", "2.0") * 2):
        row["params.beta"] = beta
    fake_store(monkeypatch, rows)
    runs = load_runs(latest_sweep=False)
    specs = {s.x: s for s in figure_specs(runs)}
    assert set(specs) == {"beta", "strategy.n_angles"}
    points = figure_points(runs, specs["beta"])
    assert set(points["series"]) == {"domain_fast / strategy.n_angles=14", "domain_fast / strategy.n_angles=100"}
    assert len(points) == 4


def test_comparison_page_is_self_contained_sortable_and_links_runs(monkeypatch, tmp_path):
    from xmlthresh.report.comparison import write_report

    fake_store(monkeypatch, beta_sweep_rows(seeds=(0,)))
    runs = load_runs(latest_sweep=False)
    paths = write_report(runs, tmp_path, title="beta <sweep>", command="xmlthresh experiment=beta_sweep",
                         ui_url="http://ui:5000")
    page = paths["html"].read_text()
    assert "<title>beta &lt;sweep&gt;</title>" in page and 'table class="sortable"' in page
    # plotly.js is one file beside the page (offline, shared by the folder's pages), not 4.7 MB inline
    assert '<script src="plotly.min.js"></script>' in page.split("<body>")[0] and "plotly.js v" not in page
    assert "plotly.js v" in paths["plotly"].read_text()[:200] and paths["plotly"].parent == tmp_path
    assert len(page) < 1_000_000 and 'id="figure-0"' in page and 'id="figure-1"' not in page
    assert 'href="http://ui:5000/#/experiments/7/runs/run0?workflowType=machine_learning"' in page
    # the upper bound shown to 7 significant digits, its full precision in the hover title and the sort key
    assert 'data-v="0.500000001" title="0.500000001">0.5</td>' in page
    before = paths["plotly"].stat().st_mtime_ns
    write_report(runs, tmp_path, title="again", command="x")
    assert paths["plotly"].stat().st_mtime_ns == before  # written once per folder
    for fact in ("date", "command", "git commit", "packages", "machine"):
        assert f"<dt>{fact}</dt>" in page
    assert "xmlthresh experiment=beta_sweep" in page and "numpy " in page


def test_links_open_the_model_training_view_of_mlflow():
    """The URLs were checked in headless Chromium against MLflow 3.17's UI: Model training view, the sweep's
    12 children, sorted by F-macro (the GenAI view and an unsorted table of every run otherwise)."""
    from xmlthresh.report.html import run_url, runs_view_url

    assert run_url("http://127.0.0.1:5077/", 1, "abc") == "http://127.0.0.1:5077/#/experiments/1/runs/abc?workflowType=machine_learning"
    assert runs_view_url("http://127.0.0.1:5077", 1, "bf27") == (
        "http://127.0.0.1:5077/#/experiments/1/runs?workflowType=machine_learning&searchFilter=tags.%60mlflow.parentRunId"
        "%60%20%3D%20%27bf27%27&orderByKey=metrics.%60f_macro%60&orderByAsc=false")
    assert "searchFilter" not in runs_view_url("http://h", 1)


def test_hull_boundary_holds_the_certified_optimum_and_params_round_trip():
    """The page's achievable set is the set domain certifies (the instance has fewer states than are thinned
    to): its best vertex is domain's optimum (lower bound), and F along its edges peaks at the certified upper
    bound."""
    from xmlthresh.metrics import f_beta
    from xmlthresh.run.protocols import fit_and_evaluate
    from xmlthresh.report.achievable import MAX_BOUNDARY_POINTS, _param_value, dataset_from_params, hull_boundary
    from xmlthresh.strategies import STRATEGIES

    params = {"dataset.loader": "synthetic", "dataset.name": "synthetic", "dataset.n_labels": "12",
              "dataset.num_docs": "150", "dataset.seed": "0", "dataset.first_n_labels": "None",
              "dataset.include_predict_all": "True"}
    lists = dataset_from_params(params).load()
    assert lists.n_labels == 12 and lists.num_docs == 150
    assert [_param_value(v) for v in ("None", "null", "True", "3", "0.5", "x")] == [None, None, True, 3, 0.5, "x"]
    p, r = hull_boundary(lists)
    assert len(p) < MAX_BOUNDARY_POINTS
    result = fit_and_evaluate(STRATEGIES.build("domain", {"beta": 2.0}), lists, "oracle")
    assert float(np.max(f_beta(p, r, 2.0))) == pytest.approx(result["lower_bound"], abs=1e-12)
    t = np.linspace(0, 1, 2001)[:, None]
    along = f_beta(p[:-1] + t * (p[1:] - p[:-1]), r[:-1] + t * (r[1:] - r[:-1]), 2.0)
    assert float(np.max(along)) == pytest.approx(result["upper_bound"], abs=1e-9)
    assert result["upper_bound"] - result["lower_bound"] > 1e-4  # the two differ here: both claims are tested


def test_a_data_set_s_own_params_are_keys_only_when_swept_within_it(monkeypatch):
    """dataset.path differs between espgame and example because the data set does, not because it was swept;
    dataset.first_n_labels was swept; the figure names its line by the strategy only."""
    from xmlthresh.report.figures import figure_points, figure_specs

    rows = [run_row("domain_fast", 0.5, dataset=d, **{"dataset.path": f"{d}.txt", "dataset.first_n_labels": n})
            for d in ("espgame", "example") for n in (2, 8)]
    fake_store(monkeypatch, rows)
    runs = load_runs(latest_sweep=False)
    assert "dataset.path" not in runs.attrs["keys"] and "dataset.first_n_labels" in runs.attrs["keys"]
    (spec,) = figure_specs(runs)
    assert (spec.x, spec.panels) == ("dataset.first_n_labels", ("dataset",))
    assert set(figure_points(runs, spec)["series"]) == {"domain_fast"}


def test_a_cde_sweep_is_not_averaged_over_its_swept_parameter(monkeypatch):
    from xmlthresh.report.figures import figure_specs

    rows = [{"tags.task": "cde", "params.estimator": e, "params.cde_dataset": "surd", "params.seed": str(s),
             "params.cde_dataset.alpha": str(a), "metrics.rel_loss_approx": -a - 0.01 * s}
            for e in ("nnkcde", "gmm") for a in (0.1, 0.3) for s in (0, 1)]
    fake_store(monkeypatch, rows)
    runs = load_runs(latest_sweep=False)
    table = comparison(runs).set_index(["estimator", "cde_dataset.alpha"])
    assert table.loc[("gmm", 0.3), "rel_loss_approx"] == pytest.approx(-0.305) and len(table) == 4
    assert [(s.kind, s.x) for s in figure_specs(runs)] == [("line", "cde_dataset.alpha")]


def test_the_interval_for_new_documents_is_a_column_of_the_table_and_the_page_when_runs_have_it(monkeypatch, tmp_path):
    from xmlthresh.report.comparison import write_report

    rows = [run_row(strategy, 0.5 + 0.01 * seed, seed=seed, protocol="holdout") for strategy in ("pooled", "independent")
            for seed in (0, 1)]
    for row in rows[:2]:
        row.update({"metrics.f_macro_interval_low": 0.41, "metrics.f_macro_interval_high": 0.57})
    fake_store(monkeypatch, rows)
    runs = load_runs(latest_sweep=False)
    table = comparison(runs)
    pooled = table[table["strategy"] == "pooled"].iloc[0]
    assert (pooled["f_macro_interval_low"], pooled["f_macro_interval_high"]) == (0.41, 0.57)
    assert table[table["strategy"] == "independent"]["f_macro_interval_low"].isna().all()
    paths = write_report(runs, tmp_path, title="interval", command="xmlthresh", ui_url="http://ui:5000")
    assert ">new docs: low</th>" in paths["html"].read_text()
    assert "f_macro_interval_high" in paths["markdown"].read_text()
    fake_store(monkeypatch, rows[2:])  # no run has one: no empty column
    assert "new docs:" not in write_report(load_runs(latest_sweep=False), tmp_path / "none",
                                                            title="t", command="x")["html"].read_text()


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("arguments, message", [
    (lambda uri, tmp: ["--uri", f"http://127.0.0.1:{_free_port()}"], r"tracking server http://127\.0\.0\.1:\d+ is not "
                                                                      r"reachable"),
    (lambda uri, tmp: ["--uri", f"sqlite:///{tmp}/nosuch/x.db"], r"tracking store sqlite:///.*/nosuch/x\.db does not "
                                                                 r"exist"),
    (lambda uri, tmp: ["--uri", uri, "--experiment", "nosuch"], r"no experiment 'nosuch' in the store .*experiments: "
                                                                r"'Default', 'xmlthresh'"),
    (lambda uri, tmp: ["--uri", uri, "--all", "--reference", "nosuch"], r"--reference 'nosuch': no selected run used "
                                                                        r"that strategy \(strategies: domain, independent\)"),
    (lambda uri, tmp: ["--uri", uri, "--all", "--metrics", "f_macro", "nosuch"],
     r"--metrics: no selected run logged 'nosuch' \(logged: .*f_macro"),
    (lambda uri, tmp: ["--uri", uri, "--all", "--out", str(_a_file(tmp))], r"--out .*a-file: cannot create the report "
                                                                           r"folder there \(File exists\)"),
])
def test_every_bad_report_command_is_one_line_within_seconds(store, tmp_path, capsys, arguments, message):
    """The report command was outside the error contract: tracebacks for an unreachable server or a bad --out,
    a new empty store for a mistyped path, an unknown --reference or --metrics silently ignored."""
    import re
    import time

    uri, _ = store
    started = time.monotonic()
    assert main(arguments(uri, tmp_path)) == 1
    assert time.monotonic() - started < 30
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("python -m xmlthresh.report: error: "), err
    assert re.search(message, err), err
    assert not (tmp_path / "nosuch").exists()  # a mistyped store path creates nothing


def _a_file(tmp):
    path = tmp / "a-file"
    path.write_text("in the way")
    return path


def test_a_figure_with_many_panels_wraps_into_rows(monkeypatch):
    """Fourteen panels in one row crashed plotly (a spacing above 1 / (columns - 1))."""
    from xmlthresh.report.figures import figure_specs
    from xmlthresh.report.html import plotly_figure

    rows = [run_row(s, 0.5 + 0.01 * b, dataset=f"set{d}", **{"strategy.n_angles": b}) for s in ("domain_fast",)
            for d in range(14) for b in (14, 100)]
    fake_store(monkeypatch, rows)
    runs = load_runs(latest_sweep=False)
    (spec,) = figure_specs(runs)
    figure = plotly_figure(runs, spec)
    titles = [annotation.text for annotation in figure.layout.annotations]
    assert len(titles) == 14 and len(figure.data) == 14
    assert {trace.xaxis for trace in figure.data} == {"x"} | {f"x{k}" for k in range(2, 15)}


def test_the_bounds_are_labelled_with_the_objective_they_certify(store, monkeypatch, tmp_path):
    """A holdout page showed pu's lower bound (of the plug-in F-macro on the fit split) above its own
    F-macro, with nothing saying that the bound belongs to another objective."""
    from xmlthresh.report.comparison import write_report
    from xmlthresh.tracking.run_fields import bounds_objective

    uri, _ = store  # real runs: the job tags the objective of its bounds
    tracked = load_runs(uri, latest_sweep=False)
    assert set(tracked[tracked["strategy"] == "domain"]["bounds_objective"]) == {"empirical F-macro"}
    assert tracked[tracked["strategy"] == "independent"]["bounds_objective"].isna().all()  # no bounds at all
    plug_in = "plug-in F-macro (expected counts under calibrated probabilities)"
    assert bounds_objective({"fit_lower_bound": 0.2, "fit_objective": plug_in, "lower_bound": None}) == plug_in
    assert bounds_objective({"lower_bound": 0.5, "upper_bound": 0.5}) == "empirical F-macro"
    assert bounds_objective({"lower_bound": None, "fit_upper_bound": None}) is None

    rows = [run_row("pu", 0.1443, protocol="holdout", dataset="corel5k"),
            run_row("domain", 0.20, protocol="holdout", dataset="corel5k"),
            run_row("domain", 0.30, protocol="oracle", dataset="corel5k"),
            run_row("coordinate", 0.29, protocol="oracle", dataset="corel5k")]
    rows[0].update({"metrics.fit_lower_bound": 0.2255, "metrics.fit_upper_bound": 0.2256,
                    "tags.xmlthresh.bounds_objective": plug_in})
    rows[1].update({"metrics.fit_lower_bound": 0.31, "metrics.fit_upper_bound": 0.31, "metrics.fit_f_macro": 0.31,
                    "tags.xmlthresh.bounds_objective": "empirical F-macro"})
    rows[2].update({"metrics.lower_bound": 0.30, "metrics.upper_bound": 0.30,
                    "tags.xmlthresh.bounds_objective": "empirical F-macro"})
    fake_store(monkeypatch, rows)
    page = write_report(load_runs(latest_sweep=False), tmp_path, title="t", command="x")["html"].read_text()
    table = re.search(r'<table class="sortable" id="comparison">.*?</table>', page, re.S).group(0)
    cells = {re.search(r'class="key key1">(\w+)<', row).group(1) + "/" + re.search(r"<td>(holdout|oracle)</td>", row)
             .group(1): row for row in re.findall(r"<tr[^>]*>.*?</tr>", table)[1:]}
    assert 'title="the bounds hold for the optimum of the plug-in F-macro (expected counts under calibrated ' \
           'probabilities) on the fit split (see fit F-macro)">plug-in F-macro, fit split<sup>&dagger;</sup>' \
           in cells["pu/holdout"]
    assert '<td class="num other" data-v="0.2255">0.2255</td>' in cells["pu/holdout"]  # marked as not this F-macro
    assert ">F-macro, fit split<sup>&dagger;</sup>" in cells["domain/holdout"]
    assert '">F-macro</td>' in cells["domain/oracle"] and "other" not in cells["domain/oracle"]
    assert "bounds of another objective" in page


def test_numbers_show_few_digits_with_full_precision_on_hover_and_the_best_row_is_marked(monkeypatch, tmp_path):
    from xmlthresh.report.comparison import write_report
    from xmlthresh.report.html import best_rows

    rows = [run_row(strategy, value, kind="deterministic") for strategy, value in
            (("domain", 0.3746035038639264), ("independent", 0.2758), ("coordinate", 0.3746035038639264))]
    rows += [dict(run_row(strategy, value, kind="deterministic"), **{"params.beta": "2.0"}) for strategy, value in
             (("domain", 0.5), ("independent", 0.6))]
    # alone in its group: nothing to beat
    rows += [dict(run_row("domain", 0.7, kind="deterministic"), **{"params.beta": "4.0"})]
    fake_store(monkeypatch, rows)
    runs = load_runs(latest_sweep=False)
    table = comparison(runs)
    best = table.loc[sorted(best_rows(table, table.attrs["keys"]))]
    assert sorted(zip(best["beta"], best["strategy"])) == [(1.0, "coordinate"), (1.0, "domain"), (2.0, "independent")]
    page = write_report(runs, tmp_path, title="t", command="x")["html"].read_text()
    assert ('<td class="num best" data-v="0.3746035038639264" title="0.3746035038639264">0.374604 &#9733;</td>'
            in page)
    assert page.count("&#9733;</td>") == 3 and "<b>&#9733; best</b>: the highest F-macro" in page
    # a key with one value in every row is said once above the table instead of filling a column
    assert "In every row: protocol = <b>oracle</b>, kind = <b>deterministic</b>." in page
    table = re.search(r'<table class="sortable" id="comparison">.*?</table>', page, re.S).group(0)
    assert ">protocol</th>" not in table and ">beta</th>" in table and ">dataset</th>" in table  # frozen: kept
    assert not re.search(r">0\.\d{8,}<", page)  # no 16-digit number shown anywhere (tables, differences)
    # an empty cell says why: independent computes no bounds; one seed has no standard error
    assert 'title="independent gives no certificate: it computes no bounds of the optimum">&ndash;<sup>' not in page
    assert 'title="one run (seed) only: no standard error; sweep seed=0,1,2 for one">&ndash;<sup>' in page
    fake_store(monkeypatch, [dict(row, **{"metrics.lower_bound": 0.3, "metrics.upper_bound": 0.4})
                             if "domain" in row["params.strategy"] else row for row in rows])
    page = write_report(load_runs(latest_sweep=False), tmp_path / "b", title="t", command="x")["html"].read_text()
    reason = "independent gives no certificate: it computes no bounds of the optimum"
    letter = re.search(rf'title="{reason}">&ndash;<sup>(\w)</sup>', page).group(1)
    assert f"<li>&ndash;<sup>{letter}</sup> {reason}</li>" in page  # the footnote under the table says it too


def test_the_page_of_a_sweep_folder_from_its_result_files_links_each_run_to_its_file(tmp_path, capsys):
    """``--results``: the page of a sweep run without tracking, made again from its jobs' result.json."""
    folder = tmp_path / "sweep"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XMLTHRESH_HOME", str(tmp_path))
        for job, strategy in enumerate(("domain", "independent")):
            config = job_config(strategy, 0, "unused")
            config["tracking"] = {"enabled": False}
            run_job(config, folder / str(job))
    assert main(["--results", str(folder)]) == 0
    page = (folder / "report" / "comparison.html").read_text()
    assert sorted(re.findall(r'href="\.\./(\d)/result\.json"', page)) == ["0", "1"]
    assert ">F-macro, fit split<sup>&dagger;</sup>" in page and "MLflow UI" not in page
    out = tmp_path / "elsewhere" / "page"
    assert main(["--results", str(folder), "--out", str(out)]) == 0
    for link in re.findall(r'href="([^"]+result\.json)"', (out / "comparison.html").read_text()):
        assert (out / link).resolve().is_file(), link  # the links still reach the files from another folder
    (tmp_path / "empty").mkdir()
    capsys.readouterr()
    assert main(["--results", str(tmp_path / "empty")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no job folder with a result.json" in err
