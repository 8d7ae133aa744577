"""Everything that talks to MLflow, through its public client (``MlflowClient``) only, and the one module
that imports mlflow (always inside a function, so importing this one stays cheap).

Runs reach MLflow from their local records (:mod:`xmlthresh.tracking.record`, sent by
:mod:`xmlthresh.tracking.sync`); this module opens the store (:func:`open_store`), finds or creates the
experiment, runs a sweep's parent (:func:`start_sweep_parent`, :func:`finish_sweep_parent`,
:func:`log_files_to_run`), ends runs whose process is gone (:func:`mark_dead_runs`), finds the finished runs
a sweep may resume (:func:`finished_runs_by_hash`, :func:`copy_result`) and reads the runs a report
compares (:func:`runs_table`, :func:`run_params_and_metrics`). It also computes the tags every run carries
(source checkout, user, process), without importing mlflow where MLflow's own answer is known.

Runs go to a sqlite store (default ``<project>/runs/mlflow.db``; MLflow 3 refuses the plain file store)
with artifacts under ``<project>/runs/mlartifacts``. The experiment is created with an explicit artifact
location so every process (also parallel sweep workers) writes to the same place.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, NamedTuple

from xmlthresh._util.paths import runs_dir, source_checkout
from xmlthresh.tracking.store import (check_store, prepare_sqlite_store, retry_when_locked, sqlite_path,
                                      store_lock)

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

_MAX_PARAM_LENGTH = 6000  # MLflow's limit for a param value
PARENT_TAG = "mlflow.parentRunId"


def default_tracking_uri() -> str:
    return f"sqlite:///{runs_dir() / 'mlflow.db'}"


def artifact_root_for(uri: str) -> str | None:
    """Artifact location for experiments created in the store ``uri`` (beside a sqlite file)."""
    if uri.startswith("sqlite:///"):
        db_path = Path(uri[len("sqlite:///"):])
        return (db_path.parent / "mlartifacts").resolve().as_uri()
    return None  # a tracking server decides itself


@functools.cache  # one process runs one version of the code: ask git once, not per run of a sweep
def git_commit() -> str:
    """Commit of the source checkout the code runs from (with ``-dirty`` for uncommitted changes), or
    ``unknown`` for an installed package (its version tag says what ran; the current directory's repository,
    if any, is the user's, not the code's)."""
    commit, _, dirty = _git_state()
    return commit + ("-dirty" if dirty else "") if commit else "unknown"


@functools.cache
def _git_state() -> tuple[str, str, bool]:
    """(commit, branch, uncommitted changes) of the source checkout; ("", "", False) without one."""
    root = source_checkout()
    if root is None:
        return "", "", False

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        branch = git("rev-parse", "--abbrev-ref", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return "", "", False
    return commit, branch, dirty


@functools.cache
def source_tags() -> dict[str, str]:
    """The tags MLflow's fluent ``start_run`` adds from the run's context (``mlflow.user``,
    ``mlflow.source.name``/``type``/``git.commit``/``git.branch``) plus ``git_commit``: resolved once per
    process (MLflow asks git for every run), and once per sweep when the launcher hands them to its jobs.
    The git tags describe the code's source checkout, as ``git_commit`` does (none for an installed package)."""
    tags = run_context_tags()
    commit, branch, _ = _git_state()  # the code's checkout (MLflow's looks at sys.argv[0]'s directory)
    if commit:
        tags.update({"mlflow.source.git.commit": commit, "mlflow.source.git.branch": branch})
    return {**tags, "git_commit": git_commit()}


#: environments where MLflow's run-context providers add tags of their own (notebooks, Databricks)
_SPECIAL_CONTEXTS = ("DATABRICKS_RUNTIME_VERSION", "JPY_PARENT_PID")


def run_context_tags() -> dict[str, str]:
    """What MLflow's run-context registry (``resolve_tags``, git left out) gives a run of this command, without
    importing mlflow where that is known: its default context (``mlflow.user`` from MLflow's credentials or the
    login name, ``mlflow.source.name`` = ``sys.argv[0]``, ``mlflow.source.type`` LOCAL) and the JSON tags of
    ``MLFLOW_RUN_CONTEXT``. In a notebook, on Databricks, or once mlflow is imported anyway, MLflow's own
    registry answers (its other providers may apply there)."""
    if "mlflow" in sys.modules or any(name in os.environ for name in _SPECIAL_CONTEXTS) or "ipykernel" in sys.modules:
        from mlflow.tracking.context.git_context import GitRunContext
        from mlflow.tracking.context.registry import resolve_tags

        return {k: str(v) for k, v in resolve_tags({}, ignore=[GitRunContext]).items()}
    return default_context_tags()


def default_context_tags() -> dict[str, str]:
    """MLflow's default run context and ``MLFLOW_RUN_CONTEXT`` (see :func:`run_context_tags`), computed here."""
    tags = {"mlflow.user": _mlflow_user(), "mlflow.source.name": sys.argv[0] if sys.argv and sys.argv[0] else "<console>",
            "mlflow.source.type": "LOCAL"}
    if "MLFLOW_RUN_CONTEXT" in os.environ:
        tags.update({k: str(v) for k, v in json.loads(os.environ["MLFLOW_RUN_CONTEXT"]).items()})
    return tags


def _mlflow_user() -> str:
    """MLflow's user of a run: ``MLFLOW_TRACKING_USERNAME``, else its credentials file's username, else the
    login name (``unknown`` without one)."""
    import getpass

    user = os.environ.get("MLFLOW_TRACKING_USERNAME")
    if not user:
        path = Path("~/.mlflow/credentials").expanduser()
        if path.is_file():
            import configparser

            config = configparser.ConfigParser()
            config.read(path)
            user = config["mlflow"].get("mlflow_tracking_username") if "mlflow" in config else None
    if user:
        return user
    try:
        return getpass.getuser()
    except (ImportError, KeyError, OSError):
        return "unknown"


class SweepStore(NamedTuple):
    """What a sweep's launching process found once for all its jobs (``<sweep dir>/mlflow_sweep.json``): the
    store, the experiment's id, and the source tags with the commit."""

    uri: str
    experiment: str
    experiment_id: str
    source_tags: dict[str, str]


SWEEP_STORE_FILE = "mlflow_sweep.json"


def write_sweep_store(sweep_dir: Path, store: SweepStore) -> None:
    from xmlthresh._util.files import write_text_atomic

    write_text_atomic(Path(sweep_dir) / SWEEP_STORE_FILE, json.dumps(store._asdict(), indent=1) + "\n")


@functools.lru_cache(maxsize=16)
def read_sweep_store(sweep_dir: str) -> SweepStore | None:
    """The sweep's :class:`SweepStore`, read once per process (None when the launcher wrote none)."""
    path = Path(sweep_dir) / SWEEP_STORE_FILE
    try:
        return SweepStore(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"strategy": {"name": "domain"}} -> {"strategy.name": "domain"}."""
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, prefix=f"{name}."))
        else:
            flat[name] = value
    return flat


def numeric_metrics(result: Mapping[str, Any], exclude: tuple[str, ...] = ()) -> dict[str, float]:
    """The finite numbers of a result (booleans as 0/1) except ``exclude``, ready for ``log_metrics``."""
    metrics = {}
    for key, value in result.items():
        if key in exclude:
            continue
        if isinstance(value, bool):
            metrics[key] = float(value)
        elif isinstance(value, (int, float)) and math.isfinite(value):
            metrics[key] = float(value)
    return metrics


#: stores this process has checked and opened (created and migrated when new) -- once per process
_OPENED: set[str] = set()


def open_store(uri: str | None, repair: bool = True) -> str:
    """The store ``uri`` (the default one for None), checked (:func:`~xmlthresh.tracking.store.check_store`:
    one line naming the URI and the problem instead of minutes of retries) and opened once per process under
    its file lock, so that a new sqlite store is created and migrated by exactly one of several processes
    starting at once. Every function here that writes to a store goes through it. ``repair=False`` (a command
    that only reads) refuses a store MLflow cannot open instead of repairing or replacing it."""
    uri = uri or default_tracking_uri()
    if uri not in _OPENED:
        check_store(uri)  # before importing mlflow (seconds): a store that cannot be used fails at once
        if sqlite_path(uri) is not None:
            # MLflow's documented pool setting: without pooled connections, a store healed by replacing its
            # file (heal_store) is opened anew; a pooled connection kept reading the broken file it replaced
            os.environ.setdefault("MLFLOW_SQLALCHEMYSTORE_POOLCLASS", "NullPool")
        import mlflow

        _quiet_mlflow_logging()
        def open_uri(target: str) -> None:  # opening creates and migrates a new store
            retry_when_locked(lambda: mlflow.MlflowClient(target).search_experiments(max_results=1),
                              f"opening {target}")

        with store_lock(uri):
            path = sqlite_path(uri)
            if path is None:
                open_uri(uri)
            else:
                prepare_sqlite_store(path, uri, open_uri, repair=repair)
        _OPENED.add(uri)
    return uri


@functools.lru_cache(maxsize=8)
def client_for(uri: str | None) -> Any:
    """MLflow's client of the store ``uri``, opened (:func:`open_store`) once per process."""
    import mlflow

    return mlflow.MlflowClient(open_store(uri))


#: experiment ids this process found or created, by (store, name)
_EXPERIMENTS: dict[tuple[str, str], str] = {}


def experiment_id_for(uri: str | None, name: str) -> str:
    """The id of the experiment ``name`` in the store ``uri``, created when missing (:func:`ensure_experiment`),
    looked up once per process."""
    key = (uri or default_tracking_uri(), name)
    if key not in _EXPERIMENTS:
        _EXPERIMENTS[key] = ensure_experiment(key[0], name)
    return _EXPERIMENTS[key]


#: MLflow's UI opens an experiment of this kind in its model-training view (runs, metrics), not the GenAI one
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_TAGS = {EXPERIMENT_KIND_TAG: "custom_model_development"}


def ensure_experiment(uri: str, name: str) -> str:
    """Create the store and the experiment if needed; returns its id.

    Under the store's lock: of several processes starting at once one creates the experiment, the others
    find it (a tracking server, which has no file lock: the one that loses the creation looks it up)."""
    from mlflow.exceptions import MlflowException

    client = client_for(uri)

    def get_or_create() -> str:
        experiment = client.get_experiment_by_name(name)
        if experiment is not None:
            return experiment.experiment_id
        try:
            return client.create_experiment(name, artifact_location=artifact_root_for(uri or default_tracking_uri()),
                                            tags=dict(EXPERIMENT_TAGS))
        except MlflowException as exc:
            # a tracking server has no file lock: another process created it between the look-up and here
            if exc.error_code != "RESOURCE_ALREADY_EXISTS":
                raise
            return client.get_experiment_by_name(name).experiment_id

    with store_lock(uri or default_tracking_uri()):
        return retry_when_locked(get_or_create, f"experiment {name!r} in {uri}")


#: tags naming the process that owns a RUNNING run, so that a later sweep can tell a run whose process is gone
PID_TAG, HOST_TAG, PID_START_TAG = "xmlthresh.pid", "xmlthresh.host", "xmlthresh.pid_start"


def process_tags() -> dict[str, str]:
    """This process's id, host name and start time (``/proc/<pid>/stat``, empty elsewhere; it tells a reused
    pid from the run's own process): tagged on every run when it starts."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname(), PID_START_TAG: _process_start(os.getpid())}


def _process_start(pid: int) -> str:
    """Start time of process ``pid`` in clock ticks since boot (field 22 of /proc/<pid>/stat), '' if unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return ""
    return fields[19] if len(fields) > 19 and fields[0] != "Z" else "zombie"


def process_alive(pid: int, started: str = "") -> bool:
    """Whether process ``pid`` of this host still runs and is the one that started at ``started`` (a pid
    the system gave to a new process since, or a zombie, is gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        pass
    now = _process_start(pid)
    return now != "zombie" and not (started and now and now != started)


def mark_dead_runs(uri: str | None, experiment: str, when: str = "a later sweep started on this store") -> list[str]:
    """End as KILLED (with an ``error`` tag saying why) every RUNNING sweep parent of ``experiment`` whose
    process, on this host, is gone -- a sweep killed with SIGKILL, a launcher the OS killed for memory:
    nothing could close its parent run, and it would stay RUNNING forever (``when`` says what found it). A job's
    own run is not touched:
    it reaches MLflow from its record, and a RUNNING one is a send in progress (or interrupted, which the
    next send finishes). Runs of other hosts, and runs without the process tags, are left alone. Returns
    the ids of the runs it ended."""
    client = client_for(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return []
    # only sweep parents stay RUNNING while their process works: a job's run is created and ended in one send
    # of its record, and a send that was interrupted is finished by the next one
    running = [(run.info.run_id, run.data.tags) for run in retry_when_locked(
        lambda: client.search_runs([found.experiment_id], "attributes.status = 'RUNNING'", max_results=50_000),
        "looking up running runs") if run.data.tags.get("xmlthresh.sweep") == "parent"]
    host, ended = socket.gethostname(), []
    for run_id, tags in running:
        pid = tags.get(PID_TAG, "")
        if tags.get(HOST_TAG) != host or not pid.isdigit() or process_alive(int(pid), tags.get(PID_START_TAG, "")):
            continue
        message = f"process {pid} on {host} ended without closing this run (killed?); marked KILLED when {when}"
        retry_when_locked(lambda: client.set_tag(run_id, "error", message), "tagging a dead run")
        retry_when_locked(lambda: client.set_terminated(run_id, status="KILLED"), "ending a dead run")
        ended.append(run_id)
    return ended


CONFIG_HASH_TAG = "xmlthresh.config_hash"
#: the command-line overrides of a job (``strategy=domain dataset=espgame``), tagged when its run starts
OVERRIDES_TAG = "xmlthresh.overrides"
#: the objective a run's certified bounds hold for (``plug-in F-macro ...``; the comparison page labels them)
OBJECTIVE_TAG = "xmlthresh.bounds_objective"


def config_hash(cfg: Mapping[str, Any], ignore: tuple[str, ...] = ("hydra", "tracking", "force", "warm_up")) -> str:
    """Fingerprint of what a job computes: the resolved config without bookkeeping keys."""
    relevant = {key: value for key, value in cfg.items() if key not in ignore}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()[:20]


#: tag of a sweep job's child run that reuses the result of an earlier run (the id of the run that computed it)
REUSED_TAG = "xmlthresh.reused_run_id"


class FinishedRun(NamedTuple):
    """A FINISHED run a sweep job may resume: its id (the run that computed the result) and artifact URI."""

    run_id: str
    artifact_uri: str


def finished_runs_by_hash(uri: str | None, experiment: str) -> dict[str, FinishedRun]:
    """The FINISHED runs of ``experiment`` by config hash (:data:`CONFIG_HASH_TAG`), the earliest of each
    hash (the run that computed it), in one search: what a sweep's launcher hands its jobs for resuming."""
    client = client_for(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return {}
    runs = retry_when_locked(lambda: client.search_runs(
        [found.experiment_id], filter_string="attributes.status = 'FINISHED'", max_results=50_000,
        order_by=["attributes.start_time ASC"]), "looking up finished runs")
    by_hash: dict[str, FinishedRun] = {}
    for run in runs:
        digest = run.data.tags.get(CONFIG_HASH_TAG)
        if digest and digest not in by_hash and REUSED_TAG not in run.data.tags:
            by_hash[digest] = FinishedRun(run.info.run_id, run.info.artifact_uri)
    return by_hash


RESULT_ARTIFACT = "result.json"


def copy_result(run: FinishedRun, dst: Path, uri: str | None) -> Path:
    """Copy the ``result.json`` a run logged into the directory ``dst`` and return the local file (resuming
    a sweep job): a plain copy from a local artifact folder (no mlflow import in the job), else MLflow's
    download. The error propagates when the artifact is gone: the caller decides to run the job again."""
    import shutil
    from urllib.parse import unquote, urlparse

    parsed = urlparse(run.artifact_uri)
    if parsed.scheme in ("", "file"):
        source = Path(unquote(parsed.path)) / RESULT_ARTIFACT
        target = Path(dst) / RESULT_ARTIFACT
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return target
    import mlflow

    _quiet_mlflow_logging()
    client_for(uri)
    mlflow.set_tracking_uri(uri or default_tracking_uri())
    return Path(mlflow.artifacts.download_artifacts(run_id=run.run_id, artifact_path=RESULT_ARTIFACT,
                                                    dst_path=str(dst)))


def copy_artifacts(run: FinishedRun, dst: Path, uri: str | None) -> list[Path]:
    """Copy every file a run logged at the top of its artifacts, but ``result.json`` (:func:`copy_result`), into
    ``dst`` and return the local copies (resuming a sweep job: its per-point losses, density slices, fitted
    thresholds and pictures, which the study reports read from the job's folder). Local artifact folders are
    copied directly, other stores through MLflow's download. An artifact that is gone is simply not copied: the
    caller checks the files the job needs (:func:`xmlthresh.run.job.files_needed`)."""
    import shutil
    from urllib.parse import unquote, urlparse

    dst = Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    parsed = urlparse(run.artifact_uri)
    if parsed.scheme in ("", "file"):
        source = Path(unquote(parsed.path))
        names = sorted(p.name for p in source.iterdir() if p.is_file()) if source.is_dir() else []
        copied = []
        for name in names:
            if name != RESULT_ARTIFACT:
                shutil.copyfile(source / name, dst / name)
                copied.append(dst / name)
        return copied
    import mlflow

    _quiet_mlflow_logging()
    client = client_for(uri)
    mlflow.set_tracking_uri(uri or default_tracking_uri())
    copied = []
    for info in client.list_artifacts(run.run_id):
        if not info.is_dir and info.path != RESULT_ARTIFACT:
            copied.append(Path(mlflow.artifacts.download_artifacts(run_id=run.run_id, artifact_path=info.path,
                                                                   dst_path=str(dst))))
    return copied


def start_sweep_parent(uri: str | None, experiment: str, sweep_dir: Path, arguments: str, launcher: str) -> str:
    """Create the parent run of a sweep (left RUNNING for the jobs' child runs) and return its id.

    It is tagged as the sweep parent with its directory, commit and command line, and records the
    command-line ``arguments`` and the Hydra ``launcher`` as params. The store, experiment and source tags
    go to ``<sweep dir>/mlflow_sweep.json`` for the jobs (:class:`SweepStore`)."""
    from mlflow.entities import Param

    uri = uri or default_tracking_uri()
    experiment_id = experiment_id_for(uri, experiment)
    client = client_for(uri)
    tags = {"xmlthresh.sweep": "parent", "sweep_dir": str(sweep_dir), "git_commit": git_commit(),
            "mlflow.note.content": f"python -m xmlthresh -m {arguments}", **process_tags()}
    run_id = retry_when_locked(lambda: client.create_run(experiment_id, run_name=f"sweep {sweep_dir.name}",
                                                         tags=tags), "creating the sweep's parent run").info.run_id
    params = [Param("arguments", arguments[:_MAX_PARAM_LENGTH]), Param("launcher", launcher)]
    retry_when_locked(lambda: client.log_batch(run_id, params=params), "logging the sweep's parent run")
    write_sweep_store(sweep_dir, SweepStore(uri, experiment, experiment_id, source_tags()))
    return run_id


def finish_sweep_parent(uri: str | None, parent: str, counts: Mapping[str, int], failed: bool,
                        error: str | None = None, status: str | None = None) -> None:
    """Log the sweep's ``counts`` as metrics of its parent run and end it FAILED or FINISHED (or ``status``),
    with an ``error`` tag when the sweep itself failed (a config that does not compose, a worker killed)."""
    import time

    from mlflow.entities import Metric, RunTag

    client = client_for(uri)
    now = int(time.time() * 1000)
    retry_when_locked(lambda: client.log_batch(
        parent, metrics=[Metric(k, float(v), now, 0) for k, v in counts.items()],
        tags=[RunTag("error", error[:5000])] if error else []), "logging the sweep's counts")
    retry_when_locked(lambda: client.set_terminated(parent, status=status or ("FAILED" if failed else "FINISHED")),
                      "ending the sweep's parent run")


def log_files_to_run(uri: str | None, run_id: str, paths: Iterable[Path]) -> None:
    """Attach files as artifacts of an existing run, e.g. a sweep's report to its parent."""
    client = client_for(uri)
    for path in paths:
        client.log_artifact(run_id, str(path))


def run_params_and_metrics(uri: str | None, run_id: str) -> tuple[dict[str, str], dict[str, float]]:
    """A run's params and latest metrics from the store ``uri`` (the report rebuilds a run's data set from them)."""
    data = client_for(uri).get_run(run_id).data
    return dict(data.params), dict(data.metrics)


def runs_table(uri: str | None, experiment: str) -> "pd.DataFrame":
    """Every run of ``experiment`` in the store ``uri`` as MLflow's search table: one row per run, columns
    ``run_id``, ``status``, ``start_time`` and ``params.*``, ``metrics.*``, ``tags.*`` (empty when none)."""
    import mlflow
    import pandas as pd

    if client_for(uri).get_experiment_by_name(experiment) is None:  # MLflow would log a warning, then the same
        return pd.DataFrame()
    mlflow.set_tracking_uri(uri or default_tracking_uri())
    return mlflow.search_runs(experiment_names=[experiment])


def mlflow_error_types() -> tuple[type[BaseException], ...]:
    """MLflow's own exception (a store or server that refuses a request), for entry points that print it as
    one line; empty when MLflow is not installed."""
    try:
        from mlflow.exceptions import MlflowException
    except ImportError:
        return ()
    return (MlflowException,)


def experiment_names(uri: str | None) -> list[str]:
    """The names of the experiments in the store ``uri`` (for messages naming what is there)."""
    return sorted(experiment.name for experiment in client_for(uri).search_experiments())


def _quiet_mlflow_logging() -> None:
    """MLflow and alembic log every sqlite migration at INFO on first use: keep the console readable."""
    for name in ("mlflow", "alembic", "alembic.runtime.migration"):
        logging.getLogger(name).setLevel(logging.WARNING)
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
