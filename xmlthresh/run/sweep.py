"""Sweeps (Hydra multirun) in MLflow: one parent run per sweep, one child run per job, resume.

:class:`MlflowSweepCallback` runs in the launching process, the only one of a sweep that imports mlflow.
Before any job starts it sends records left pending by earlier commands, ends parent runs whose process is
gone, creates the store, the experiment and the parent run, writes the parent's id to
``<sweep dir>/mlflow_parent_run_id`` and the finished runs the jobs may resume to ``<sweep dir>/resume.json``
(by config hash). Every job, in whatever worker process, only writes its local run record
(:mod:`xmlthresh.tracking.record`). When the jobs are done the launcher sends all records of the sweep as
child runs of the parent, and the parent records how many children there are, how many ran and finished,
failed or were skipped, and how many jobs were resumed (already finished in an earlier sweep: a job whose
configuration hash matches a FINISHED run is not run again unless ``force=true``; it still gets a child
run, a copy of the run it reuses tagged ``xmlthresh.reused_run_id``, so the sweep and its report keep
every job). A sweep with a failed job ends FAILED and the command exits with code 1.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from xmlthresh._util.files import write_text_atomic
from xmlthresh.tracking.mlflow_runs import default_tracking_uri
from xmlthresh.run.parent_watch import mark_launcher
from xmlthresh.tracking.store import TrackingStoreError

log = logging.getLogger(__name__)

PARENT_FILE = "mlflow_parent_run_id"
RESUMED_DIR = "resumed"
#: the finished runs a sweep's jobs may resume, by config hash (written by the launcher)
RESUME_FILE = "resume.json"
#: the keys the sweep varies (more than one value), written by the launcher: the jobs name their runs by them
SWEPT_FILE = "swept_keys.json"

#: failures of the last sweep finished in this process (read by the CLI to set the exit code)
last_sweep_failures = 0
#: a sweep that ended without a failure but without a result either (every job skipped): its one line
last_sweep_problem: str | None = None


def parent_run_id(sweep_dir: str | Path) -> str | None:
    """The sweep's parent run id, when the callback created one."""
    path = Path(sweep_dir) / PARENT_FILE
    return path.read_text().strip() if path.is_file() else None


def resumable_run(sweep_dir: str | Path, digest: str) -> Any:
    """The FINISHED run (:class:`~xmlthresh.tracking.mlflow_runs.FinishedRun`) with config hash ``digest`` that
    the sweep's launcher found, or None."""
    from xmlthresh.tracking.mlflow_runs import FinishedRun

    found = _resume_map(str(sweep_dir)).get(digest)
    return FinishedRun(*found) if found else None


@functools.lru_cache(maxsize=8)
def _resume_map(sweep_dir: str) -> dict[str, list[str]]:
    try:
        return json.loads((Path(sweep_dir) / RESUME_FILE).read_text())
    except (OSError, ValueError):
        return {}


def mark_resumed(sweep_dir: str | Path, job_num: int, run_id: str) -> None:
    """Remember that job ``job_num`` was already done (its earlier run id), for the parent's counts."""
    write_text_atomic(Path(sweep_dir) / RESUMED_DIR / f"{job_num}", run_id + "\n")


class MlflowSweepCallback(Callback):
    """Creates and closes the parent run of a sweep (see module docstring)."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Checks the sweep before any job; a problem is one line and exit code 1 (SystemExit passes Hydra's
        handler of callback errors, which would only warn and launch anyway), also a sweep folder that cannot
        be written."""
        problem = (idle_sweep_message(config, sweep_values(config)) or sweep_settings_problem(config)
                   or shared_job_folder_problem(config) or hold_sweep_folder(Path(config.hydra.sweep.dir)))
        if problem is None:
            try:
                self._start(config)
                return
            except OSError as exc:
                from xmlthresh._util.places import placement_message

                problem = placement_message(exc) or f"{exc.filename or 'the sweep folder'}: {exc.strerror or exc}"
        print(f"xmlthresh: error: {problem}", file=sys.stderr)
        raise SystemExit(1)

    def _start(self, config: DictConfig) -> None:
        global last_sweep_failures, last_sweep_problem, _open_sweep, _progress
        last_sweep_failures, last_sweep_problem = 0, None
        _stop_progress()
        mark_launcher()  # the workers a launcher starts end when this process is gone (parent_watch)
        clear_job_outcomes(config.hydra.sweep.dir)  # a re-launch into the same folder counts its own jobs only
        _progress = SweepProgress(Path(config.hydra.sweep.dir), count_jobs(config))
        write_swept_keys(Path(config.hydra.sweep.dir), sweep_values(config))
        tracking = config.get("tracking", {})
        if not tracking.get("enabled", True):
            return
        from xmlthresh.tracking.store import absolute_sqlite_uri

        uri = absolute_sqlite_uri(tracking.get("uri"), config.hydra.runtime.cwd) or default_tracking_uri()
        sweep_dir = Path(config.hydra.sweep.dir)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        arguments = " ".join(typed_overrides(config))
        launcher = OmegaConf.select(config, "hydra.launcher._target_", default="?")
        experiment = tracking.get("experiment", "xmlthresh")
        try:
            from xmlthresh.tracking.mlflow_runs import finished_runs_by_hash, mark_dead_runs, start_sweep_parent
            from xmlthresh.tracking.store import check_experiment_name

            check_experiment_name(experiment)
            send_left_over_records(uri)
            dead = mark_dead_runs(uri, experiment)
            if dead:
                log.warning("marked %d run(s) KILLED whose process is gone (killed in an earlier sweep?): %s",
                            len(dead), ", ".join(dead))
            resumable = finished_runs_by_hash(uri, experiment)
            parent = start_sweep_parent(uri, experiment, sweep_dir, arguments, launcher)
        except TrackingStoreError as exc:
            # Hydra turns a callback's exception into a warning and launches every job anyway (each failing
            # on the same store): stop the sweep here with the one line (SystemExit passes Hydra's handler)
            print(f"xmlthresh: error: {exc}", file=sys.stderr)
            raise SystemExit(1) from None
        write_text_atomic(sweep_dir / RESUME_FILE, json.dumps({k: list(v) for k, v in resumable.items()}) + "\n")
        write_text_atomic(sweep_dir / PARENT_FILE, parent + "\n")
        _open_sweep = (uri, parent, sweep_dir)
        log.info("sweep parent run %s in %s", parent, uri)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            self._end(config)
        finally:
            release_sweep_folder()

    def _end(self, config: DictConfig) -> None:
        global last_sweep_failures, _open_sweep
        _stop_progress()
        stop_joblib_workers()
        tracking = config.get("tracking", {})
        sweep_dir = Path(config.hydra.sweep.dir)
        # the jobs' own reports of failure set the exit code, tracked or not
        last_sweep_failures = failed_jobs(sweep_dir)
        global last_sweep_problem
        last_sweep_problem = all_skipped_message(sweep_dir)
        parent = parent_run_id(sweep_dir)
        report = config.get("report", {}) or {}
        if not tracking.get("enabled", True) or parent is None:
            if report.get("enabled", True):  # the page from the jobs' result.json files: no MLflow needed
                self._write_report(config, None, sweep_dir, report)
            elif report.get("kind"):  # a study's report reads the jobs' result.json files: it needs no tracking
                from xmlthresh.report.studies import write_study_report

                try:
                    print(write_study_report(str(report.get("kind")), sweep_dir)["markdown"].read_text())
                except ValueError as exc:
                    print(f"xmlthresh: report.kind={report.get('kind')}: no study report: {exc}", file=sys.stderr)
            return
        from xmlthresh.tracking.store import absolute_sqlite_uri

        uri = absolute_sqlite_uri(tracking.get("uri"), config.hydra.runtime.cwd)
        from xmlthresh.tracking.mlflow_runs import finish_sweep_parent

        counts = send_sweep_records(sweep_dir, parent)
        failed = counts["n_failed"]
        last_sweep_failures = max(last_sweep_failures, failed)
        finish_sweep_parent(uri, parent, counts, failed=bool(last_sweep_failures))
        _open_sweep = None
        log.info("sweep finished: %s", ", ".join(f"{k[2:]} {v}" for k, v in counts.items()))
        if report.get("enabled", True):
            self._write_report(config, parent, sweep_dir, report)

    @staticmethod
    def _write_report(config: DictConfig, parent: str | None, sweep_dir: Path, report: Any) -> None:
        """The comparison page of this sweep, in ``<sweep dir>/report/``: from its runs in MLflow (and logged to
        the ``parent`` run), or without tracking (``parent`` None) from the jobs' ``result.json`` files."""
        from xmlthresh.report.comparison import load_runs, write_report
        from xmlthresh.report.achievable import mlflow_run_data, results_run_data
        from xmlthresh.report.tables import load_results

        tracking = config.get("tracking", {})
        metrics = list(report.get("metrics", []) or [])
        if parent is not None:
            runs = load_runs(tracking.get("uri"), tracking.get("experiment", "xmlthresh"), sweep=parent,
                             metrics=metrics)
            run_data = mlflow_run_data(tracking.get("uri"))
        else:
            runs = load_results(sweep_dir, metrics=metrics)
            run_data = results_run_data(sweep_dir)
        if runs.empty:
            log.warning("report: no job of the sweep finished, so the comparison page lists no run")
        elif metrics:
            from xmlthresh.report.comparison import check_selection

            try:  # the sweep's results are kept: a metric no job logged is said, and its column stays empty
                check_selection(runs, None, metrics, metrics_option="report.metrics")
            except ValueError as exc:
                log.warning("%s; the page shows no column for it", exc)
        reference = report.get("reference", "domain")
        if "strategy" in runs and not runs.empty and reference not in set(runs["strategy"].dropna()):
            log.warning("report.reference=%s: no job of the sweep used that strategy (strategies: %s), so the "
                        "report has no paired differences", reference, ", ".join(sorted(set(runs["strategy"]))))
        paths = write_report(runs, sweep_dir / "report", reference=reference,
                             title=report.get("title", "xmlthresh sweep"),
                             command="xmlthresh -m " + " ".join(typed_overrides(config)),
                             sweep=parent, run_data=run_data)
        study = report.get("kind")
        if study:  # a study preset: its own report (from the jobs' result.json files) beside the comparison
            from xmlthresh.report.studies import write_study_report

            try:
                study_paths = write_study_report(str(study), sweep_dir)
            except ValueError as exc:  # runs the study cannot read: said in one line, the comparison page stays
                print(f"xmlthresh: report.kind={study}: no study report: {exc}", file=sys.stderr)
            else:
                print(study_paths["markdown"].read_text())
                paths.update({f"{study}_{key}": value for key, value in study_paths.items()})
        if parent is not None:
            from xmlthresh.tracking.mlflow_runs import log_files_to_run

            log_files_to_run(tracking.get("uri"), parent, paths.values())
        print(paths["markdown"].read_text())
        print(f"report: {paths['html']}")


def stop_joblib_workers() -> None:
    """Shut down the joblib launcher's worker processes once the sweep's jobs are done. joblib keeps them for
    reuse (loky's reusable executor) until loky's idle timeout, and at exit the launching process joins its
    children: a joblib sweep's command returned minutes after its last job. The executor is
    reached through loky's public ``get_reusable_executor`` (which returns the running one), and only when
    a joblib launcher loaded loky in this process: otherwise there is nothing to stop."""
    if "joblib.externals.loky" not in sys.modules:
        return
    try:
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
    except Exception as problem:  # noqa: BLE001 - never fail a finished sweep over its idle workers
        log.warning("could not stop the joblib workers: %s", problem)


def send_left_over_records(uri: str) -> None:
    """Send the records earlier commands left pending for the store ``uri`` (a background syncer that did
    not finish, a killed sweep), so that a resumed sweep sees their runs; records of other stores wait for
    ``xmlthresh sync``."""
    from xmlthresh.tracking.record import pending_records, read_record
    from xmlthresh.tracking.sync import sync_records

    mine = []
    for path in pending_records():
        try:
            if read_record(path)["uri"] == uri:
                mine.append(path)
        except ValueError:
            continue
    if mine:
        log.info("sending %d run record(s) left pending by earlier commands", len(mine))
        _, problems = sync_records(mine, wait=False)
        for path, problem in problems:
            log.warning("left pending: %s (%s)", path, problem)


def send_sweep_records(sweep_dir: Path, parent: str) -> dict[str, int]:
    """Send the run records of the sweep's jobs to MLflow as children of ``parent`` and return the parent's
    counts: its children, and of the jobs that ran how many finished, failed or skipped, and how many were
    resumed (reused children). A record that cannot be sent stays pending (``xmlthresh sync``) and is
    counted as it is."""
    from xmlthresh.tracking.record import RECORD_FILE
    from xmlthresh.tracking.sync import sync_records

    paths = sorted(Path(sweep_dir).glob(f"*/{RECORD_FILE}"))
    if len(paths) > 20:
        print(f"xmlthresh: sending {len(paths)} runs to MLflow", file=sys.stderr, flush=True)
    records, problems = sync_records(paths, parent_run_id=parent)
    for path, problem in problems:
        log.warning("run record %s not sent (xmlthresh sync sends it later): %s", path, problem)
    ran = [record for record in records if not record.get("reused_run_id")]
    statuses = [record["status"] for record in ran]
    return {"n_children": len(records), "n_finished": statuses.count("FINISHED"),
            "n_failed": statuses.count("FAILED") + statuses.count("KILLED"),
            "n_skipped": sum("skipped" in record["tags"] for record in ran),
            "n_resumed": len(records) - len(ran), "n_unsent": len(problems)}


#: (store, parent run id, sweep dir) of the sweep started in this process and not yet ended by ``on_multirun_end``
_open_sweep: tuple[str, str, Path] | None = None
#: the lock on the folder of the sweep this process launches (held from its start to its end)
_sweep_lock: Any = None
#: the lock file in a sweep folder (a lock of the operating system: a launcher killed with kill -9 frees it)
SWEEP_LOCK = ".sweep.lock"


def hold_sweep_folder(sweep_dir: Path) -> str | None:
    """Lock ``sweep_dir`` for this sweep; the one-line problem when another sweep holds it, else None.

    Why: two sweeps launched into one ``hydra.sweep.dir`` shared its job folders ``0/``, ``1/``, ...: each
    overwrote the other's results, both exited 0, and both pages said no job had finished. A folder that
    cannot be made is left to the sweep's own check of its folder (one line naming the place)."""
    global _sweep_lock
    from filelock import FileLock, Timeout

    try:
        sweep_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(sweep_dir / SWEEP_LOCK), timeout=0)
        lock.acquire()
    except Timeout:
        return (f"{sweep_dir}: another sweep is running in this folder; wait for it to end, or give this one "
                "another hydra.sweep.dir")
    except OSError:
        return None
    _sweep_lock = lock
    return None


def release_sweep_folder() -> None:
    """Release the lock of :func:`hold_sweep_folder` (at the sweep's end, or when it stops early)."""
    global _sweep_lock
    if _sweep_lock is not None:
        _sweep_lock.release()
        _sweep_lock = None


def close_unfinished_sweep(exc: BaseException) -> None:
    """End the parent run of a sweep that stopped before Hydra's ``on_multirun_end`` (which Hydra skips when
    the sweep raises): a job's config that does not compose (``-m strategy=domain,nosuch``), a joblib worker
    killed, Ctrl-C. The parent is marked FAILED (KILLED for an interrupt) with the error and the counts of
    its children, instead of staying RUNNING forever. Called by the CLI with the exception that ended
    ``hydra_main`` (Hydra reports the original error and raises SystemExit from inside its handler, so
    the original is the SystemExit's context)."""
    global _open_sweep
    _stop_progress()
    stop_joblib_workers()
    release_sweep_folder()
    if _open_sweep is None:
        return
    uri, parent, sweep_dir = _open_sweep
    _open_sweep = None
    cause = exc.__context__ if isinstance(exc, SystemExit) and exc.__context__ is not None else exc
    interrupted = isinstance(cause, KeyboardInterrupt)
    # Hydra's composition errors end with the config search path: the user's problem is in the part before
    error = "interrupted" if interrupted else f"{type(cause).__name__}: {cause}".split("\nConfig search path:")[0]
    try:
        from xmlthresh.tracking.mlflow_runs import finish_sweep_parent

        counts = send_sweep_records(sweep_dir, parent)
        finish_sweep_parent(uri, parent, counts, failed=True, error=f"the sweep stopped: {error}",
                            status="KILLED" if interrupted else "FAILED")
    except Exception as problem:  # never hide the sweep's own error
        log.warning("could not end the sweep's parent run %s: %s", parent, problem)


PROGRESS_DIR = ".progress"
#: what became of a job, for the live progress line
OUTCOMES = ("done", "failed", "skipped", "resumed")


def record_job_outcome(sweep_dir: str | Path, job_num: int, outcome: str) -> None:
    """Say that job ``job_num`` ended ``outcome`` (one of :data:`OUTCOMES`), in whatever process it ran: an
    empty file ``<sweep dir>/.progress/<job>.<outcome>`` the launching process's progress line counts."""
    folder = Path(sweep_dir) / PROGRESS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{job_num}.{outcome}").touch()


def clear_job_outcomes(sweep_dir: str | Path) -> None:
    """Forget the outcomes an earlier launch into ``sweep_dir`` recorded (its failures are not this one's)."""
    folder = Path(sweep_dir) / PROGRESS_DIR
    if folder.is_dir():
        for marker in folder.iterdir():
            marker.unlink(missing_ok=True)


def failed_jobs(sweep_dir: str | Path) -> int:
    """How many jobs of the sweep reported ``failed`` (:func:`record_job_outcome`)."""
    return len(jobs_with_outcome(sweep_dir, "failed"))


def jobs_with_outcome(sweep_dir: str | Path, outcome: str) -> list[int]:
    """The numbers of the jobs of the sweep that reported ``outcome`` (:func:`record_job_outcome`)."""
    folder = Path(sweep_dir) / PROGRESS_DIR
    return sorted(int(marker.name.split(".", 1)[0]) for marker in folder.glob(f"*.{outcome}")
                  if marker.name.split(".", 1)[0].isdigit()) if folder.is_dir() else []


def all_skipped_message(sweep_dir: str | Path) -> str | None:
    """The one line for a sweep whose every job was skipped (a strategy that needs scores on ranked lists, for
    every data set of the sweep): its progress said "done 2, failed 0" and it ended with exit code 0 having
    fitted nothing. None when a job ran, failed or was resumed."""
    skipped = jobs_with_outcome(sweep_dir, "skipped")
    if not skipped or any(jobs_with_outcome(sweep_dir, outcome) for outcome in OUTCOMES if outcome != "skipped"):
        return None
    reason = ""
    try:
        result = json.loads((Path(sweep_dir) / str(skipped[0]) / "result.json").read_text())
        reason = f" (job {skipped[0]}: {result.get('skip_reason')})" if result.get("skip_reason") else ""
    except (OSError, ValueError):
        pass
    return (f"no job of the sweep ran: all {len(skipped)} were skipped{reason}; choose strategies and data sets "
            "that fit together")


def sweep_values(config: DictConfig) -> dict[str, int] | None:
    """The number of values of each key of the basic sweeper's sweep (``hydra.sweeper.params``, overridden key
    by key by the command line), parsed by Hydra's public ``OverridesParser``; None for another sweeper or
    when the parser refuses (the sweep itself then says why)."""
    try:
        from hydra.core.override_parser.overrides_parser import OverridesParser

        if "BasicSweeper" not in str(OmegaConf.select(config, "hydra.sweeper._target_", default="")):
            return None
        params = OmegaConf.select(config, "hydra.sweeper.params") or {}
        arguments = [f"{key}={value}" for key, value in params.items()] + typed_overrides(config)
        from hydra.core.override_parser.types import Glob

        values: dict[str, int] = {}
        for override in OverridesParser.create().parse_overrides(arguments):
            if isinstance(override.value(), Glob):  # a glob over a group's options: what it matches here
                from xmlthresh.config.options import options

                count = len(override.value().filter([option.name for option in options(override.key_or_group)]))
            else:
                count = len(list(override.sweep_string_iterator())) if override.is_sweep_override() else 1
            values[override.get_key_element()] = count  # a later override of the same key replaces it
        return values
    except Exception:  # noqa: BLE001 - a progress line is never worth failing a sweep for
        return None


def write_swept_keys(sweep_dir: Path, values: dict[str, int] | None) -> None:
    """Record which keys the sweep varies (:data:`SWEPT_FILE`); nothing when the sweeper is not the basic one."""
    if values is None:
        return
    sweep_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(sweep_dir / SWEPT_FILE, json.dumps(sorted(k for k, n in values.items() if n > 1)) + "\n")


def swept_keys(sweep_dir: str | Path | None) -> list[str]:
    """The keys a sweep varies (:func:`write_swept_keys`); empty when unknown."""
    if sweep_dir is None:
        return []
    try:
        keys = json.loads((Path(sweep_dir) / SWEPT_FILE).read_text())
    except (OSError, ValueError):
        return []
    return [str(k) for k in keys] if isinstance(keys, list) else []


def count_jobs(config: DictConfig) -> int | None:
    """How many jobs the basic sweeper will launch for ``config`` (:func:`sweep_values`); None when unknown."""
    values = sweep_values(config)
    if values is None:
        return None
    total = 1
    for count in values.values():
        total *= count
    return total


def idle_sweep_message(config: DictConfig, values: dict[str, int] | None) -> str | None:
    """Why the sweep would do nothing worth reporting, or None: a key that gives no value (``beta=range(0)``:
    no job, exit code 0 before), or a sweep whose every swept key is one its task does not read
    (``experiment=cde_benchmark task=thresholds``: 18 identical threshold jobs before)."""
    from xmlthresh.config.options import TASK_KEYS

    if not values:
        return None
    empty = [key for key, count in values.items() if count == 0]
    if empty:
        return (f"the sweep has no job: {', '.join(empty)} gives no value (a glob that matches no option, an "
                "empty range); give at least one (xmlthresh list shows the options)")
    swept = [key.lstrip("+~") for key, count in values.items() if count > 1]
    task = str(OmegaConf.select(config, "task", default="thresholds"))
    if not swept or "task" in swept or task not in TASK_KEYS:
        return None
    others = {key for other, keys in TASK_KEYS.items() if other != task for key in keys} - set(TASK_KEYS[task])
    unread = [key for key in swept if key.split(".")[0].split("/")[0] in others]
    if len(unread) == len(swept):
        return (f"task={task} does not read {', '.join(unread)}: the sweep's {count_jobs(config)} jobs would be "
                f"identical; sweep keys of task={task}, or give the task those keys belong to")
    return None


def job_overrides(config: DictConfig) -> list[list[str]] | None:
    """The override list of every job the basic sweeper will launch, in its order (the product of the values of
    ``hydra.sweeper.params`` and the command line's overrides, parsed by Hydra's public ``OverridesParser``);
    None for another sweeper or when the parser refuses."""
    import itertools

    try:
        from hydra.core.override_parser.overrides_parser import OverridesParser

        if "BasicSweeper" not in str(OmegaConf.select(config, "hydra.sweeper._target_", default="")):
            return None
        params = OmegaConf.select(config, "hydra.sweeper.params") or {}
        arguments = [f"{key}={value}" for key, value in params.items()] + typed_overrides(config)
        by_key: dict[str, list[str]] = {}
        for override in OverridesParser.create().parse_overrides(arguments):
            key = override.get_key_element()
            by_key[key] = ([f"{key}={value}" for value in override.sweep_string_iterator()]
                           if override.is_sweep_override() else [f"{key}={override.get_value_element_as_str()}"])
        return [list(job) for job in itertools.product(*by_key.values())]
    except Exception:  # noqa: BLE001 - the sweep itself then says what is wrong
        return None


def shared_job_folder_problem(config: DictConfig) -> str | None:
    """Two jobs of the sweep whose folders (``hydra.sweep.dir``/``hydra.sweep.subdir``) are the same, or None.

    Why: with ``hydra.sweep.subdir=same`` every job wrote into one folder, each overwriting the results of the
    one before, and the sweep said "done 2". The subdir is resolved for every job as Hydra resolves it (its
    number, its ``override_dirname``, the values it sets), before any job runs."""
    raw = OmegaConf.to_container(config.hydra.sweep, resolve=False).get("subdir")
    jobs = job_overrides(config)
    if jobs is None or len(jobs) < 2 or raw is None:
        return None
    text = str(raw)
    if "hydra.job.num" in text or "hydra.job.id" in text:  # one number per job: never shared
        return None
    from omegaconf import open_dict, read_write

    from hydra.core.override_parser.overrides_parser import OverridesParser

    dirname = OmegaConf.select(config, "hydra.job.config.override_dirname", default=None) or {}
    exclude = set(dirname.get("exclude_keys", []) or [])
    kv_sep, item_sep = dirname.get("kv_sep", "="), dirname.get("item_sep", ",")
    parser = OverridesParser.create()
    job_config = OmegaConf.create(OmegaConf.to_container(config, resolve=False))
    seen: dict[str, int] = {}
    try:
        with read_write(job_config), open_dict(job_config):
            for number, job in enumerate(jobs):
                parsed = parser.parse_overrides(job)
                job_config.hydra.job.num = number
                job_config.hydra.job.id = number
                job_config.hydra.job.override_dirname = item_sep.join(sorted(
                    override.input_line for override in parsed if override.key_or_group not in exclude
                )).replace("=", kv_sep)
                for override in parsed:
                    key = override.key_or_group
                    if key in (OmegaConf.select(job_config, "hydra.runtime.choices", default=None) or {}):
                        job_config.hydra.runtime.choices[key] = override.get_value_element_as_str()
                    elif not override.is_delete():
                        OmegaConf.update(job_config, key, override.value(), force_add=True)
                subdir = str(OmegaConf.select(job_config, "hydra.sweep.subdir"))
                if subdir in seen:
                    folder = Path(str(config.hydra.sweep.dir)) / subdir
                    return (f"hydra.sweep.subdir={text} gives jobs {seen[subdir]} and {number} the same folder "
                            f"{folder}: each job would overwrite the results of the other; use a subdir that "
                            "differs between jobs, e.g. ${hydra.job.num} (the default) or ${hydra.job.override_dirname}")
                seen[subdir] = number
    except Exception:  # noqa: BLE001 - a subdir this cannot resolve is left to Hydra
        return None
    return None


#: settings a sweep cannot vary: its parent run is made once, in one experiment of one store
ONE_PER_SWEEP = ("tracking.uri", "tracking.experiment", "tracking.enabled", "tracking")


def sweep_settings_problem(config: DictConfig) -> str | None:
    """A setting of the sweep that cannot work, found before any job runs (each was found only after every
    job had run, or never): a study report of an unknown kind, a joblib launcher with no worker."""
    report = config.get("report", {}) or {}
    swept_tracking = [key for key, count in (sweep_values(config) or {}).items()
                      if count > 1 and key.lstrip("+~") in ONE_PER_SWEEP]
    if swept_tracking:
        return (f"{swept_tracking[0].lstrip('+~')} takes one value per sweep (a sweep's parent run and its job runs "
                "are kept together in one experiment of one store, tracked or not); run one sweep per value")
    study = report.get("kind")
    if study:
        from xmlthresh.report.studies import STUDIES

        if str(study) not in STUDIES:
            return f"report.kind={study}: unknown study; known: {', '.join(STUDIES)}"
    if "joblib" in str(OmegaConf.select(config, "hydra.launcher._target_", default="")).lower():
        from xmlthresh.validation import InputError, check_n_jobs

        try:
            check_n_jobs("hydra.launcher.n_jobs", OmegaConf.select(config, "hydra.launcher.n_jobs", default=None))
        except InputError as exc:
            return str(exc)
        backend = OmegaConf.select(config, "hydra.launcher.backend", default=None)
        if backend is not None and str(backend) not in JOBLIB_BACKENDS:  # joblib said nothing and ran loky
            return (f"hydra.launcher.backend={backend}: joblib's backends are {', '.join(JOBLIB_BACKENDS)} (null: "
                    "its default, loky)")
    return None


#: the backends joblib's launcher accepts
JOBLIB_BACKENDS = ("loky", "threading", "multiprocessing", "sequential")


class SweepProgress:
    """The live progress line of a sweep in the launching terminal: jobs done / failed / resumed /
    remaining, elapsed and ETA, for every launcher (jobs in worker processes report through
    :func:`record_job_outcome`; a thread here polls the sweep directory). On a terminal it is one tqdm line
    redrawn in place; otherwise (a log file, CI) one line per finished job."""

    def __init__(self, sweep_dir: Path, total: int | None, stream: Any = None, interval: float = 0.5) -> None:
        import threading
        import time

        self._folder = Path(sweep_dir) / PROGRESS_DIR
        self._total = total
        self._stream = stream if stream is not None else sys.stderr
        self._interval = interval
        self._started = time.monotonic()
        self._seen: set[str] = set()
        self._counts = dict.fromkeys(OUTCOMES, 0)
        self._stop = threading.Event()
        self._bar = None
        isatty = getattr(self._stream, "isatty", None)
        if isatty is not None and isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc="sweep", unit="job", file=self._stream, dynamic_ncols=True,
                             smoothing=0.0)
            self._bar.set_postfix_str(self._postfix(), refresh=True)
        self._thread = threading.Thread(target=self._run, name="xmlthresh-sweep-progress", daemon=True)
        self._thread.start()

    def _postfix(self) -> str:
        done = sum(self._counts.values())
        remaining = "?" if self._total is None else str(max(self._total - done, 0))
        shown = {k: v for k, v in self._counts.items() if k != "skipped" or v}  # skipped: only when there are
        return ", ".join(f"{k} {v}" for k, v in shown.items()) + f", remaining {remaining}"

    def poll(self) -> None:
        """Count the outcomes jobs reported since the last poll and show them."""
        import time

        try:
            names = sorted(entry.name for entry in self._folder.iterdir()) if self._folder.is_dir() else []
        except OSError:
            return
        for name in names:
            outcome = name.rsplit(".", 1)[-1]
            if name in self._seen or outcome not in self._counts:
                continue
            self._seen.add(name)
            self._counts[outcome] += 1
            if self._bar is not None:
                self._bar.update(1)
                self._bar.set_postfix_str(self._postfix(), refresh=True)
            else:
                done, elapsed = sum(self._counts.values()), time.monotonic() - self._started
                of = f"/{self._total}" if self._total is not None else ""
                eta = ""
                if self._total is not None:
                    eta = f", ETA {elapsed / done * max(self._total - done, 0):.0f} s"
                print(f"xmlthresh: sweep {done}{of} jobs: {self._postfix()}, elapsed {elapsed:.0f} s{eta}",
                      file=self._stream, flush=True)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.poll()

    def close(self) -> None:
        """Stop polling after a last count; the terminal line stays as the sweep's summary."""
        self._stop.set()
        self._thread.join(timeout=5)
        self.poll()
        if self._bar is not None:
            self._bar.close()


#: the progress line of the sweep running in this process
_progress: SweepProgress | None = None


def _stop_progress() -> None:
    global _progress
    if _progress is not None:
        _progress.close()
        _progress = None


def typed_overrides(config: DictConfig) -> list[str]:
    """The command line's overrides as typed (``hydra.overrides.task``): an override whose value is an
    interpolation (``beta=${oc.env:B}``) is text here, not resolved (an unset variable raised where the
    overrides were only listed)."""
    task = OmegaConf.select(config, "hydra.overrides.task", default=None)
    return [] if task is None else [str(text) for text in OmegaConf.to_container(task)]


def job_context() -> dict[str, Any]:
    """Where this job runs: multirun or not, its number, sweep dir, launcher (empty outside Hydra)."""
    if not HydraConfig.initialized():
        return {}
    hydra_cfg = HydraConfig.get()
    multirun = hydra_cfg.mode.name == "MULTIRUN"
    overrides = [str(text) for text in OmegaConf.to_container(hydra_cfg.overrides.task)]  # as typed: not resolved
    return {
        "multirun": multirun,
        "job_num": int(hydra_cfg.job.num) if multirun else 0,
        "sweep_dir": str(hydra_cfg.sweep.dir) if multirun else None,
        "launcher": OmegaConf.select(hydra_cfg, "launcher._target_", default="?"),
        "overrides": " ".join(overrides),
        "override_list": overrides,
    }
