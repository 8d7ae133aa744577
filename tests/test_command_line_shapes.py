"""Command lines that change the shape of the config or ask for what cannot apply: a key every swept option
has, a group deleted or renamed from outside, presets swept, a sweeper's values unquoted, an interpolation
that does not resolve, a single run of a strategy that cannot fit its data, pictures asked for in a run that
draws none, a fallback on ranked lists, a report metric no job logs, and memory sizes shown in their unit."""

from __future__ import annotations

import json

import pytest

from helpers import run_cli
from xmlthresh.validation import _gb

SMALL = ["dataset.n_labels=8", "dataset.num_docs=60", "tracking.enabled=false"]


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


@pytest.mark.fast
@pytest.mark.parametrize("sweep", ["strategy=linearization,linearization_region", "strategy=glob(linearization*)"])
def test_a_key_every_swept_option_has_is_set_in_every_job(isolated_home, tmp_path, sweep):
    proc = run_cli(["-m", sweep, "strategy.grid=7", *SMALL, "plots=false", f"hydra.sweep.dir={tmp_path}/sw"])
    assert proc.returncode == 0, proc.stderr
    configs = sorted((tmp_path / "sw").glob("*/.hydra/config.yaml"))
    assert len(configs) == 2 and all("  grid: 7\n" in path.read_text() for path in configs)


@pytest.mark.fast
def test_a_key_only_some_swept_options_have_names_the_one_that_lacks_it(isolated_home):
    proc = run_cli(["-m", "strategy=linearization,domain", "strategy.grid=7", *SMALL])
    assert proc.returncode == 1
    assert "strategy=domain has no key 'grid'" in _last_line(proc.stderr)


@pytest.mark.fast
@pytest.mark.parametrize("args, message", [
    (["~strategy"], "~strategy: the strategy group cannot be left out (every run reads one strategy option)"),
    (["strategy=domain", "strategy.name=independent"],
     "strategy.name=independent: strategy.name is what the chosen strategy option builds, set by the option "
     "itself; choose the option instead: strategy=independent"),
    (["dataset.loader=mulan"], "dataset.loader=mulan: dataset.loader is what the chosen dataset option builds"),
    (["-m", "experiment=beta_sweep,f_values"], "experiment=beta_sweep,f_values: presets cannot be swept"),
    (["-m", "experiment=beta_sweep", "hydra.sweeper.params.beta=1,2"],
     "hydra.sweeper.params.beta=1,2: the values a sweeper parameter sweeps are one text for Hydra; quote them, "
     "inside the shell's quotes: 'hydra.sweeper.params.beta=\"1,2\"'"),
    (["beta=${oc.env:XMLTHRESH_TEST_UNSET_VARIABLE}"],
     "Environment variable 'XMLTHRESH_TEST_UNSET_VARIABLE' not found\" (in beta); set what it refers to, or give "
     "the value itself"),
    (["strategy=pu"], "pu needs per-document scores; data set 'synthetic' provides ranked lists only; choose "
                      "another strategy or data set (a sweep skips such combinations and goes on)"),
    (["figures=[histogram]"], "unknown figure(s) histogram; known: metric_choice"),
])
def test_a_command_line_that_cannot_be_run_is_one_line(isolated_home, args, message):
    proc = run_cli([*args, *SMALL, "plots=false"])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    last = _last_line(proc.stderr)
    assert last.startswith("xmlthresh: error: ") and message in last, last
    assert not list(isolated_home.rglob("result.json"))


@pytest.mark.fast
def test_a_ranked_list_run_names_the_settings_it_cannot_apply(isolated_home, caplog, recwarn):
    proc = run_cli(["strategy.fallback=pooled", "figures=[metric_choice]", *SMALL, "plots=false"])
    assert proc.returncode == 0
    text = proc.stderr + caplog.text + " ".join(str(warning.message) for warning in recwarn)
    assert "fallback=pooled acts on scores only; ranked lists are fitted without it" in text
    assert "figures draw nothing here: this run draws no pictures (plots=False); set plots=true" in text


@pytest.mark.fast
def test_a_report_metric_no_job_logged_is_said(isolated_home, tmp_path, caplog):
    proc = run_cli(["-m", "strategy=domain,independent", "report.metrics=[nosuch_metric]", *SMALL, "plots=false",
                    f"hydra.sweep.dir={tmp_path}/sw"])
    assert proc.returncode == 0
    assert "report.metrics: no selected run logged 'nosuch_metric'" in proc.stderr + proc.stdout + caplog.text
    assert all(json.loads(path.read_text())["f_macro"] > 0 for path in (tmp_path / "sw").glob("*/result.json"))


@pytest.mark.fast
@pytest.mark.parametrize("n_bytes, shown", [(5, "5 bytes"), (1024, "1.0 KB"), (3e6, "3.0 MB"), (8e9, "8.0 GB")])
def test_memory_sizes_are_shown_in_the_unit_that_shows_them(n_bytes, shown):
    assert _gb(n_bytes) == shown
