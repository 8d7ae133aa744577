"""The comparison page in a real browser: headless Chromium renders the page of a small tracked sweep; the
table, the line plot over beta and the achievable set (drawn as SVG by plotly.js, loaded from the
``plotly.min.js`` beside the page) must be there, and at 1,400 px the table fits the window or scrolls inside
its box with the key columns frozen. The screenshot goes to runs/screenshots/ (kept by CI as an artifact).
Skipped, with the reason, without Chromium (``.ci/run`` installs Debian's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser import SKIP_REASON, dump_dom, find_chromium, screenshot

from xmlthresh.run.job import run_job
from xmlthresh.report.comparison import write_report
from xmlthresh.report.tables import load_runs
from xmlthresh.report.achievable import mlflow_run_data

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "runs" / "screenshots"


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = find_chromium()
    if binary is None:
        pytest.skip(SKIP_REASON)
    return binary


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The page of 2 strategies x 2 betas on a small synthetic set, tracked in a temporary store."""
    tmp = tmp_path_factory.mktemp("page")
    uri = f"sqlite:///{tmp / 'store.db'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XMLTHRESH_HOME", str(tmp))
        for strategy in ("domain", "independent"):
            for beta in (0.5, 2.0):
                run_job({"strategy": {"name": strategy}, "beta": beta, "seed": 0, "warm_up": False, "plots": False,
                         "dataset": {"loader": "synthetic", "name": "synthetic", "n_labels": 20, "num_docs": 200, "seed": 0},
                         "tracking": {"enabled": True, "uri": uri, "experiment": "xmlthresh"}},
                        tmp / f"{strategy}-{beta}")
        runs = load_runs(uri, latest_sweep=False)
        return write_report(runs, tmp / "report", title="small beta sweep", run_data=mlflow_run_data(uri))["html"]


@pytest.fixture(scope="module")
def wide_page(page) -> Path:
    """The same runs with twelve more metric columns: a table wider than 1,400 px."""
    runs = load_runs(f"sqlite:///{page.parents[1] / 'store.db'}", latest_sweep=False)
    extra = [f"extra_metric_{number}" for number in range(12)]
    for number, name in enumerate(extra):
        runs[name] = runs["f_macro"] * (number + 1) / 7
    runs.attrs["metrics"] = [*runs.attrs["metrics"], *extra]
    return write_report(runs, page.parents[1] / "wide", title="wide table")["html"]


def _layout(dom: str) -> dict[str, str]:
    """The table's layout as the page's script measured it after rendering (``data-*`` of the table)."""
    opening = re.search(r'<table class="sortable" id="comparison"[^>]*>', dom).group(0)
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', opening))


@pytest.mark.slow
def test_browser_renders_the_table_and_a_line_plot_over_beta(chromium, page):
    dom = dump_dom(chromium, page)
    table = re.search(r'<table class="sortable" id="comparison"[^>]*>.*?</table>', dom, re.S)
    assert table is not None and len(re.findall(r"<tr[ >]", table.group(0))) == 1 + 4  # header + 2 x 2 rows
    figure = re.search(r'<div id="figure-0" class="[^"]*js-plotly-plot[^"]*"', dom)
    assert figure is not None, "plotly.js did not draw the figure"
    assert '<svg class="main-svg"' in dom and "scatterlayer" in dom  # drawn lines, not an empty div
    assert "f_macro against beta" in dom and ">domain<" in dom and ">independent<" in dom
    achievable = re.search(r'<div id="achievable-0" class="[^"]*js-plotly-plot[^"]*"', dom)
    assert achievable is not None and "synthetic: achievable (mean P, mean R)" in dom  # with 4 operating points
    shot = screenshot(chromium, page, SCREENSHOTS / "report_page.png", height=1600)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


@pytest.mark.slow
def test_at_1400_px_the_table_fits_or_scrolls_in_its_box_with_the_keys_frozen(chromium, page, wide_page):
    layout = _layout(dump_dom(chromium, page, width=1400))
    assert layout["viewport"] == "1400", layout
    assert int(layout["right"]) <= 1400 and layout["scrolls"] == "no", layout  # 4 rows, 14 columns: fits
    assert int(layout["page-width"]) <= 1400, layout
    wide = _layout(dump_dom(chromium, wide_page, width=1400))
    # the wide table scrolls inside its box: the page itself never gets wider than the window
    assert wide["scrolls"] == "yes" and int(wide["right"]) > 1400, wide
    assert int(wide["box-right"]) <= 1400 and int(wide["page-width"]) <= 1400, wide
    assert wide["frozen"] == "sticky", wide  # dataset and strategy stay in view while it scrolls
    shot = screenshot(chromium, wide_page, SCREENSHOTS / "report_page_wide.png", width=1400, height=900)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
