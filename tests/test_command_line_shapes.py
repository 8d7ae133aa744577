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


@pytest.mark.fast
@pytest.mark.parametrize("args, message", [
    (["bta=2"], "unknown setting 'bta'; did you mean beta? the settings are listed by xmlthresh --help"),
    (["hydra.launcher.n_jobs=2"], "hydra.launcher.n_jobs: the chosen launcher has no such setting; the parallel "
                                  "launcher's settings need it chosen first: hydra/launcher=joblib "
                                  "hydra.launcher.n_jobs=2 (with -m)"),
    (["+strategy=pu"], "+strategy=pu: the strategy group has an option already; choose another without the +: "
                       "strategy=pu"),
    (["experiment=beta_sweep", "experiment=transfer"],
     "experiment=beta_sweep and experiment=transfer: two presets; a preset is a whole study"),
    (["--cfg", "job", "-m", "strategy=domain,independent"], "--cfg shows the config of one job: drop -m"),
    (["-m", "hydra.sweeper.params.beta=1,2"], "hydra.sweeper.params.beta=1,2: a sweeper parameter extends the sweep "
                                              "of a preset (experiment=...); to sweep beta here, give its values "
                                              "directly: -m beta=1,2"),
])
def test_hydras_advice_that_does_not_fit_is_replaced_by_the_fix(isolated_home, args, message):
    proc = run_cli([*args, "tracking.enabled=false"])
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert message in _last_line(proc.stderr), proc.stderr


@pytest.mark.fast
def test_a_number_from_an_environment_variable_is_a_number(isolated_home, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_TEST_BETA", "2")
    proc = run_cli(["beta=${oc.env:XMLTHRESH_TEST_BETA}", *SMALL, "plots=false"])
    assert proc.returncode == 0, proc.stderr
    result = json.loads(next(isolated_home.rglob("result.json")).read_text())
    assert result["beta"] == 2


@pytest.mark.fast
@pytest.mark.parametrize("group, text, choice, message", [
    ("strategy", "", "strategy=mine", "strategy=mine: the option names nothing to build: its file "
                                      "(strategy/mine.yaml) is empty or lacks 'name: <a registered strategy>'"),
    ("experiment", "beta: 2\n", "experiment=mine", "experiment=mine: its settings (beta) landed under experiment.* "
                                                   "and would do nothing: a preset's file starts with the line "
                                                   "'# @package _global_'"),
])
def test_a_users_option_file_that_composes_but_cannot_work_is_named(isolated_home, group, text, choice, message):
    (isolated_home / "conf" / group).mkdir(parents=True)
    (isolated_home / "conf" / group / "mine.yaml").write_text(text)
    proc = run_cli([choice, *SMALL, "plots=false"])
    assert proc.returncode == 1 and message in _last_line(proc.stderr), proc.stderr


def test_help_piped_into_a_reader_that_stops_early_is_quiet():
    import subprocess
    import sys

    proc = subprocess.run(f"{sys.executable} -m xmlthresh list | head -c 10", shell=True, capture_output=True,
                          text=True)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


@pytest.mark.fast
def test_a_key_given_twice_takes_the_last_and_says_so(isolated_home):
    proc = run_cli(["beta=1", *SMALL, "plots=false", "beta=2", "dataset.n_labels=9"])
    assert proc.returncode == 0, proc.stderr
    assert "xmlthresh: note: given more than once, the last is used: beta=2, dataset.n_labels=9" in proc.stderr
    result = json.loads(next(isolated_home.rglob("result.json")).read_text())
    assert result["beta"] == 2 and result["n_labels"] <= 9


@pytest.mark.fast
def test_flags_after_the_overrides_are_read_as_before_them():
    from xmlthresh.cli.entry import multirun_flag_first

    assert multirun_flag_first(["beta=2", "--cfg", "job", "seed=1"]) == ["--cfg", "job", "beta=2", "seed=1"]
    assert multirun_flag_first(["a=1", "-m", "b=2,3"]) == ["-m", "a=1", "b=2,3"]
    assert multirun_flag_first(["--info", "config", "beta=2"]) == ["--info", "config", "beta=2"]


@pytest.mark.fast
@pytest.mark.parametrize("args, message", [
    (["lsit"], "'lsit' is neither a subcommand (explain, list, ui, sync) nor a setting key=value; did you mean "
               "xmlthresh list?"),
    (["beta"], "'beta' is neither a subcommand (explain, list, ui, sync) nor a setting key=value; xmlthresh --help"),
    (["-m", "hydra/launcher=joblib", "hydra.launcher.backend=bogus", "strategy=domain,independent"],
     "hydra.launcher.backend=bogus: joblib's backends are loky, threading, multiprocessing, sequential"),
])
def test_words_and_launcher_settings_that_mean_nothing_are_one_line(isolated_home, args, message):
    proc = run_cli([*args, *SMALL, "plots=false"])
    assert proc.returncode == 1 and message in _last_line(proc.stderr), proc.stderr


@pytest.mark.fast
def test_sweep_settings_in_a_single_run_are_said(isolated_home):
    proc = run_cli(["report.title=hello", "force=true", *SMALL, "plots=false"])
    assert proc.returncode == 0
    assert "xmlthresh: note: report.title, force act on sweeps (-m); this single run does not read them" in proc.stderr


@pytest.mark.fast
def test_a_sweep_whose_every_job_was_skipped_fails_saying_why(isolated_home, tmp_path):
    proc = run_cli(["-m", "strategy=rcut,pcut", *SMALL, "plots=false", f"hydra.sweep.dir={tmp_path}/sw"])
    assert proc.returncode == 1
    assert _last_line(proc.stderr).startswith("xmlthresh: no job of the sweep ran: all 2 were skipped (job 0: rcut "
                                              "needs per-document scores")
    assert "skipped 2" in proc.stderr


@pytest.mark.fast
def test_a_value_a_sweep_lists_twice_and_a_preset_shown_with_cfg_are_noted(isolated_home, tmp_path):
    from xmlthresh.cli.command_line import preset_sweep_note, repeated_keys_note

    assert repeated_keys_note(["-m", "strategy=independent,independent"]) == (
        "strategy=independent,independent sweeps independent more than once (the same job again)")
    assert repeated_keys_note(["-m", "strategy=glob(ind*)", "seed=range(0,2)"]) is None
    assert preset_sweep_note(["experiment=holdout_vs_oracle", "--cfg", "job"]) == (
        "experiment=holdout_vs_oracle is a sweep (run it with -m): the config shown is the base of its jobs; each "
        "job sets strategy, dataset, protocol, seed")
    assert preset_sweep_note(["--cfg", "job"]) is None
