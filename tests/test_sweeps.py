"""Multirun sweeps: one MLflow parent per sweep, one child per job, failures counted, resume, joblib."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import mlflow
import pandas as pd
import pytest

from xmlthresh.report.tables import load_runs, paired_differences


def sweep(home, *overrides: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "XMLTHRESH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "xmlthresh", "-m", *overrides], capture_output=True, text=True,
                          env=env, timeout=600)


def runs(home):
    mlflow.set_tracking_uri(f"sqlite:///{home / 'runs' / 'mlflow.db'}")
    return mlflow.search_runs(experiment_names=["xmlthresh"])


def test_sweep_counts_failures_then_resumes_only_missing_jobs(isolated_home):
    # crossfit needs features, which ranked lists lack: those two jobs fail once their data is read (a value a
    # job refuses before reading data stops the sweep before any job), the two others must still run and be logged
    first = sweep(isolated_home, "strategy=domain,independent", "dataset=counterexample", "protocol=oracle,crossfit")
    assert first.returncode == 1, first.stderr  # a failed job fails the sweep command, after all jobs ran
    assert "2 job(s) of the sweep failed" in first.stderr
    table = runs(isolated_home)
    parent = table[table["tags.xmlthresh.sweep"] == "parent"].iloc[0]
    children = table[table["tags.mlflow.parentRunId"] == parent["run_id"]]
    assert sorted(children["status"]) == ["FAILED", "FAILED", "FINISHED", "FINISHED"]
    assert children[children["status"] == "FAILED"]["tags.error"].str.contains("protocol=crossfit refits").all()
    assert parent["status"] == "FAILED" and parent["metrics.n_failed"] == 2 and parent["metrics.n_finished"] == 2
    # the runs are named by the values the sweep varies (the groups chosen are in the name's base)
    names = sorted(children["tags.mlflow.runName"])
    assert all(any(name.startswith(f"{s}-counterexample") for s in ("domain", "independent")) for name in names), names
    assert sum("crossfit" in name for name in names) == 2, names
    # every sweep writes its comparison page (report.enabled is on by default): the two finished jobs
    (page,) = (isolated_home / "runs" / "multirun").glob("*/*/report/comparison.html")
    assert page.read_text().count("/runs/") >= 2 and (page.parent / "plotly.min.js").is_file()

    again = sweep(isolated_home, "strategy=domain,independent,coordinate", "dataset=counterexample", "protocol=oracle")
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already done") == 2  # domain and independent under oracle finished before
    table = runs(isolated_home)
    second = table[(table["tags.xmlthresh.sweep"] == "parent") & (table["run_id"] != parent["run_id"])].iloc[0]
    assert second["metrics.n_resumed"] == 2 and second["metrics.n_children"] == 3
    assert second["metrics.n_finished"] == 1 and second["status"] == "FINISHED"
    reused = table[(table["tags.mlflow.parentRunId"] == second["run_id"])
                   & table["tags.xmlthresh.reused_run_id"].notna()]
    assert sorted(reused["params.strategy"]) == ["domain", "independent"]
    assert set(reused["tags.xmlthresh.reused_run_id"]) <= set(children["run_id"])

    forced = sweep(isolated_home, "strategy=domain", "dataset=counterexample", "force=true")
    assert forced.returncode == 0 and "already done" not in forced.stdout


def test_a_sweep_without_tracking_writes_its_comparison_page_from_the_jobs_result_files(isolated_home, tmp_path):
    """With tracking off a sweep wrote no comparison page and exited 0 without a word: now the page is made
    from the result.json of each job (links to them instead of MLflow), with its figures and differences."""
    import re

    folder = tmp_path / "sweep"
    proc = sweep(isolated_home, "strategy=domain,independent", "dataset=counterexample", "beta=1,2", "plots=false",
                 "tracking.enabled=false", f"hydra.sweep.dir={folder}")
    assert proc.returncode == 0, proc.stderr
    page = (folder / "report" / "comparison.html").read_text()
    assert f"report: {folder / 'report' / 'comparison.html'}" in proc.stdout
    table = re.search(r'<table class="sortable" id="comparison">.*?</table>', page, re.S).group(0)
    rows = re.findall(r"<tr[ >].*?</tr>", table)[1:]
    assert len(rows) == 4 and all(">counterexample<" in row for row in rows)
    links = sorted(re.findall(r'href="\.\./(\d+)/result\.json"', table))
    assert links == ["0", "1", "2", "3"] and all((folder / job / "result.json").is_file() for job in links)
    assert ">F-macro</td>" in table and "independent gives no certificate" in table  # bounds labelled, gaps said
    assert 'id="figure-0"' in page and "Paired differences to domain" in page
    assert 'id="achievable-0"' in page  # the data set rebuilt from the job's own config, as from MLflow params
    assert (folder / "report" / "plotly.min.js").is_file() and len(page) < 1_000_000
    assert not (isolated_home / "runs" / "mlflow.db").exists()  # nothing was tracked


def test_joblib_sweep_logs_children_in_parallel_workers(isolated_home):
    proc = sweep(isolated_home, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "strategy=domain,independent",
                 "dataset=counterexample,synthetic")
    assert proc.returncode == 0, proc.stderr
    table = runs(isolated_home)
    children = table[table["tags.mlflow.parentRunId"].notna()]
    assert len(children) == 4 and set(children["status"]) == {"FINISHED"}
    assert set(children["params.launcher"]) == {"hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"}
    assert (children["params.threads.numba"].astype(int) >= 1).all()


def test_experiment_preset_runs_a_sweep_and_writes_its_report(isolated_home, real_data):
    env = {**os.environ, "XMLTHRESH_HOME": str(isolated_home)}
    proc = subprocess.run([sys.executable, "-m", "xmlthresh", "experiment=beta_sweep", "plots=false",
                           'hydra.sweeper.params.beta="0.5,2"'], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    reports = list((isolated_home / "runs" / "multirun").glob("*/*/report/comparison.md"))
    assert len(reports) == 1
    text = reports[0].read_text()
    assert "| espgame | oracle | domain | deterministic | 0.5 |" in text and "0.61718" in text
    assert "| espgame | oracle | domain | deterministic | 2 |" in text and "0.62609" in text


def test_submitit_local_sweep_runs_jobs_as_separate_processes(isolated_home):
    """The launcher that also drives SLURM clusters (hydra/launcher=submitit_slurm), run locally."""
    proc = sweep(isolated_home, "hydra/launcher=submitit_local", "strategy=domain,independent",
                 "dataset=counterexample", "plots=false")
    assert proc.returncode == 0, proc.stderr
    table = runs(isolated_home)
    children = table[table["tags.mlflow.parentRunId"].notna()]
    assert len(children) == 2 and set(children["status"]) == {"FINISHED"}
    assert set(children["params.launcher"]) == {"hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher"}


def _jobs_of(table, parent_id):
    return table[table["tags.mlflow.parentRunId"] == parent_id]


@pytest.mark.slow
def test_resumed_jobs_stay_in_their_sweep_and_its_report(isolated_home, real_data):
    """Issue 14, defect 1: after an earlier run, a sweep printed 'resumed 1' and its report had no
    domain/espgame row and no paired differences for espgame; a joblib sweep with 2 of 4 jobs resumed showed
    one strategy. Every job must be a child of its sweep (the resumed ones pointing to the run they reuse)
    and a row of the report, marked reused."""
    env = {**os.environ, "XMLTHRESH_HOME": str(isolated_home)}
    single = subprocess.run([sys.executable, "-m", "xmlthresh", "strategy=domain", "dataset=espgame"],
                            capture_output=True, text=True, env=env, timeout=600)
    assert single.returncode == 0, single.stderr
    uri = f"sqlite:///{isolated_home / 'runs' / 'mlflow.db'}"
    sweeps = [(["strategy=domain,independent,coordinate", "dataset=espgame,example"], 6, 1),
              (["hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "strategy=domain,linearization",
                "dataset=espgame,example"], 4, 2)]
    parents_seen = set()
    for overrides, n_jobs, n_resumed in sweeps:
        proc = sweep(isolated_home, *overrides)
        assert proc.returncode == 0, proc.stderr
        table = runs(isolated_home)
        parent = table[(table["tags.xmlthresh.sweep"] == "parent") & ~table["run_id"].isin(parents_seen)].iloc[0]
        parents_seen.add(parent["run_id"])
        jobs = _jobs_of(table, parent["run_id"])
        assert len(jobs) == n_jobs and set(jobs["status"]) == {"FINISHED"}
        assert parent["metrics.n_children"] == n_jobs and parent["metrics.n_resumed"] == n_resumed
        reused = jobs[jobs["tags.xmlthresh.reused_run_id"].notna()]
        assert len(reused) == n_resumed
        by_id = table.set_index("run_id")
        for _, job in reused.iterrows():  # the same params and metrics as the run it reuses
            origin = by_id.loc[job["tags.xmlthresh.reused_run_id"]]
            assert pd.isna(origin.get("tags.xmlthresh.reused_run_id"))  # points to the run that computed it
            for column in [c for c in table.columns if c.startswith(("params.", "metrics."))]:
                if pd.notna(origin[column]):
                    assert job[column] == origin[column], column
        report = load_runs(uri, sweep=parent["run_id"])
        assert len(report) == n_jobs and int(report["reused"].sum()) == n_resumed
        strategies = {s.split("=")[1] for s in overrides if s.startswith("strategy=")}.pop().split(",")
        assert set(zip(report["dataset"], report["strategy"])) == {(d, s) for d in ("espgame", "example")
                                                                    for s in strategies}
        differences = paired_differences(report)
        assert set(differences["dataset"]) == {"espgame", "example"}
    everything = load_runs(uri)  # over all runs, a reused copy is not counted twice
    assert not everything["reused"].any() and len(everything) == 1 + 5 + 2


@pytest.mark.slow
@pytest.mark.parametrize("overrides, message", [
    (("strategy=domain,nosuch",), "xmlthresh: error: unknown strategy option 'nosuch'; known: "),
    (("strategy=domain_fast,domain", "strategy.n_angles=8"), "xmlthresh: error: strategy.n_angles: strategy=domain has no key 'n_angles'"),
])
def test_a_sweep_that_does_not_compose_leaves_no_running_parent(isolated_home, overrides, message):
    """Issue 17: ``-m strategy=domain,nosuch`` failed at composition and its parent run stayed RUNNING. Now the
    options are checked and the config composed before the sweep starts: one line, and no run at all (a
    sweep stopped later ends its parent FAILED: see the soak test and ``close_unfinished_sweep``)."""
    proc = sweep(isolated_home, *overrides, "dataset=counterexample", "plots=false")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith(message), proc.stderr
    table = runs(isolated_home)
    assert "RUNNING" not in set(table.get("status", []))


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [False, True])
def test_the_progress_line_counts_what_the_jobs_report(tmp_path, terminal):
    """Issue 12 item 5 / issue 14: done / failed / resumed / remaining, elapsed and ETA while a sweep runs -- a
    tqdm line on a terminal, one line per job otherwise. Jobs report from any process through files."""
    from xmlthresh.run.sweep import SweepProgress, record_job_outcome

    stream = _Terminal() if terminal else io.StringIO()
    progress = SweepProgress(tmp_path, total=4, stream=stream, interval=3600)  # polled by hand below
    for job, outcome in enumerate(["done", "failed", "resumed"]):
        record_job_outcome(tmp_path, job, outcome)
        progress.poll()
    progress.close()
    text = stream.getvalue()
    if terminal:
        assert "\r" in text and "3/4" in text and "done 1, failed 1, resumed 1, remaining 1" in text
        assert "<" in text  # tqdm's elapsed<remaining time
    else:
        lines = text.splitlines()
        assert len(lines) == 3 and all(line.startswith("xmlthresh: sweep ") for line in lines)
        assert lines[-1].startswith("xmlthresh: sweep 3/4 jobs: done 1, failed 1, resumed 1, remaining 1, elapsed ")
        assert "ETA" in lines[-1]


def test_the_progress_line_knows_how_many_jobs_a_sweep_has():
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    from xmlthresh.config.compose import register_resolvers
    from xmlthresh.run.sweep import count_jobs

    register_resolvers()
    overrides = ["strategy=domain,independent,coordinate", "dataset=espgame,example", "beta=1"]
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        cfg = compose(config_name="config", return_hydra_config=True)
    OmegaConf.set_readonly(cfg, False)
    cfg.hydra.overrides.task = overrides
    assert count_jobs(cfg) == 6
    cfg.hydra.sweeper.params = {"seed": "0,1"}  # an experiment preset's sweep
    assert count_jobs(cfg) == 12
    cfg.hydra.overrides.task = [*overrides, "seed=range(3)"]  # the command line replaces the preset's seeds
    assert count_jobs(cfg) == 18
    cfg.hydra.overrides.task = [*overrides, "seed=range(0)"]
    assert count_jobs(cfg) == 0


def test_an_untracked_sweep_with_a_failed_job_exits_1(isolated_home):
    folder = f"hydra.sweep.dir={isolated_home / 'one_folder'}"
    proc = sweep(isolated_home, "tracking.enabled=false", "dataset=counterexample", "protocol=crossfit,oracle",
                 "plots=false", folder)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "1 job(s) of the sweep failed" in proc.stderr
    again = sweep(isolated_home, "tracking.enabled=false", "beta=1,2", "plots=false", folder)  # the same folder
    assert again.returncode == 0, again.stderr[-2000:]  # the earlier launch's failure is not this one's
    assert "failed 0" in again.stderr and "job(s) of the sweep failed" not in again.stderr


def _sweep_config(overrides: list[str], task: str = "thresholds"):
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    from xmlthresh.config.compose import register_resolvers

    register_resolvers()
    with initialize_config_module(config_module="xmlthresh.conf", version_base="1.3"):
        cfg = compose(config_name="config", return_hydra_config=True, overrides=[f"task={task}"])
    OmegaConf.set_readonly(cfg, False)
    cfg.hydra.overrides.task = overrides
    return cfg


@pytest.mark.parametrize("overrides, task, message", [
    (["beta=range(0)"], "thresholds", "the sweep has no job: beta gives no value (a glob that matches no option"),
    (["strategy=glob(nosuch*)"], "thresholds", "the sweep has no job: strategy gives no value"),
    (["strategy=glob(indep*)"], "thresholds", None),
    (["estimator=ckde,gmm", "cde_dataset=surd,xanes"], "thresholds",
     "task=thresholds does not read estimator, cde_dataset: the sweep's 4 jobs would be identical"),
    (["strategy=domain,pu"], "cde", "task=cde does not read strategy: the sweep's 2 jobs would be identical"),
    (["strategy=domain,pu", "estimator=ckde,gmm"], "thresholds", None),  # one swept key is read: jobs differ
    (["strategy=domain,pu", "task=thresholds,cde"], "thresholds", None),
    (["beta=1,2"], "thresholds", None),
])
def test_a_sweep_that_would_do_nothing_is_refused(overrides, task, message):
    """``-m beta=range(0)`` exited 0 having run nothing; ``experiment=cde_benchmark task=thresholds`` ran 18
    identical threshold jobs."""
    from xmlthresh.run.sweep import idle_sweep_message, sweep_values

    cfg = _sweep_config(overrides, task)
    found = idle_sweep_message(cfg, sweep_values(cfg))
    assert (found is None) if message is None else found.startswith(message), found


def test_an_idle_sweep_exits_1_with_one_line_and_runs_nothing(isolated_home):
    proc = sweep(isolated_home, "beta=range(0)", "tracking.enabled=false")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        "xmlthresh: error: the sweep has no job: beta gives no value (a glob that matches no option, an empty range); "
        "give at least one (xmlthresh list shows the options)"), proc.stderr
    assert "Traceback" not in proc.stderr


def _descendants(pid: int) -> set[int]:
    """The processes below ``pid`` (Linux: /proc/<pid>/task/<tid>/children)."""
    found: set[int] = set()
    pending = [pid]
    while pending:
        current = pending.pop()
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                kids = {int(k) for k in children.read_text().split()}
            except OSError:
                continue
            pending += sorted(kids - found)
            found |= kids
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc")
def test_joblib_workers_end_when_the_launching_process_is_killed(isolated_home):
    """kill -9 of a joblib sweep's launcher left its loky workers running (still alive 586 s later, about 195 MB
    each); now each worker ends within seconds of its parent, and the next launch resumes what is left."""
    import signal
    import time

    env = {**os.environ, "XMLTHRESH_HOME": str(isolated_home)}
    launcher = subprocess.Popen([sys.executable, "-m", "xmlthresh", "-m", "hydra/launcher=joblib",
                                 "hydra.launcher.n_jobs=2", "seed=range(40)", "tracking.enabled=false"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and launcher.poll() is None:
            workers = _descendants(launcher.pid)
            done = list(isolated_home.glob("runs/multirun/*/*/*/result.json"))
            if len(workers) >= 2 and done:
                break
            time.sleep(0.2)
        assert launcher.poll() is None and len(workers) >= 2, "the sweep's workers did not start"
        os.kill(launcher.pid, signal.SIGKILL)
        launcher.wait()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.2)
        left = sorted(pid for pid in workers if _alive(pid))
        assert not left, f"still running after the launcher was killed: {left}"
    finally:
        for pid in workers | _descendants(launcher.pid) | {launcher.pid}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
