"""MLflow tracking: the only module that imports mlflow (always inside a function, so importing this one
stays cheap).

Besides a job's run (:func:`tracked_run`), it holds every store operation of the other layers: resuming a
sweep job (:func:`finished_run_with_hash`, :func:`download_result`), a sweep's parent run
(:func:`start_sweep_parent`, :func:`sweep_children`, :func:`finish_sweep_parent`, :func:`log_files_to_run`)
and the runs a report compares (:func:`runs_table`).

A run costs few store transactions: it is created with its tags (also its process id and host, so that
:func:`mark_dead_runs` can end a run whose process was killed), its params, metrics and tags are written
in one ``log_batch`` when it ends, and in a sweep the launching process opens the store, finds the
experiment and asks git for the commit once (:class:`SweepStore`, read by every job from the sweep dir).

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
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, NamedTuple

from xmlthresh import __version__
from xmlthresh._util.paths import runs_dir, source_checkout
from xmlthresh.tracking.sqlite_direct import PARENT_TAG, DirectStore, Experiment
from xmlthresh.tracking.store import check_store, retry_when_locked, sqlite_path, store_lock

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

_MAX_PARAM_LENGTH = 6000  # MLflow's limit for a param value


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


class Tracker:
    """Logs one run; use :func:`tracked_run` to get one. A disabled tracker does nothing.

    Params, metrics and tags are collected and written in one batch when the run ends (a run of a sweep job
    used to make ~8 separate store transactions for them); artifacts are copied at once. The writes go to
    ``backend``: the store itself (:class:`~xmlthresh.tracking.sqlite_direct.DirectStore`, a local sqlite store) or
    MLflow's client (:class:`MlflowBackend`), which retries what SQLite refuses with "database is locked"."""

    def __init__(self, backend: Any | None, run_id: str | None = None) -> None:
        self._backend = backend
        self._run_id = run_id
        self.logged_params: set[str] = set()
        self._params: dict[str, str] = {}
        self._metrics: dict[str, float] = {}
        self._tags: dict[str, str] = {}

    @property
    def run_id(self) -> str | None:
        return self._run_id

    def log_params(self, params: Mapping[str, Any]) -> None:
        if self._backend is not None:
            clean = {k: ("null" if v is None else str(v)[:_MAX_PARAM_LENGTH]) for k, v in params.items()}
            self._params.update(clean)
            self.logged_params.update(clean)

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        if self._backend is not None:
            self._metrics.update({k: float(v) for k, v in metrics.items()})

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        if self._backend is not None:
            self._tags.update({k: str(v) for k, v in tags.items()})

    def log_artifact(self, path: Path) -> None:
        if self._backend is not None:
            self._backend.log_artifact(self._run_id, Path(path))

    def log_text(self, text: str, name: str) -> None:
        if self._backend is not None:
            self._backend.log_text(self._run_id, text, name)

    def flush(self) -> None:
        """Write the collected params, metrics and tags in one batch."""
        if self._backend is None or not (self._params or self._metrics or self._tags):
            return
        self._backend.log_batch(self._run_id, self._params, self._metrics, self._tags)
        self._params, self._metrics, self._tags = {}, {}, {}

    def end(self, status: str) -> None:
        if self._backend is not None:
            self._backend.set_terminated(self._run_id, status)


class MlflowBackend:
    """A run's writes through MLflow's client (what :class:`Tracker` needs; the same calls as
    :class:`~xmlthresh.tracking.sqlite_direct.DirectStore`), for stores the direct path does not write: tracking
    servers, new stores, other schema revisions, remote artifacts. Writes refused with "database is locked"
    are retried; MLflow splits a batch at its size limits."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def log_batch(self, run_id: str, params: Mapping[str, Any] = {}, metrics: Mapping[str, float] = {},
                  tags: Mapping[str, Any] = {}) -> None:
        import time

        from mlflow.entities import Metric, Param, RunTag

        now = int(time.time() * 1000)
        retry_when_locked(lambda: self.client.log_batch(
            run_id, metrics=[Metric(k, float(v), now, 0) for k, v in metrics.items()],
            params=[Param(k, str(v)) for k, v in params.items()], tags=[RunTag(k, str(v)) for k, v in tags.items()]),
            "logging the run")

    def log_artifact(self, run_id: str, path: Path) -> None:
        self.client.log_artifact(run_id, str(path))

    def log_text(self, run_id: str, text: str, name: str) -> None:
        self.client.log_text(run_id, text, name)

    def set_terminated(self, run_id: str, status: str = "FINISHED") -> None:
        retry_when_locked(lambda: self.client.set_terminated(run_id, status=status), "ending the run")


#: stores of this process that :func:`check_store` accepted
_CHECKED: set[str] = set()


def direct_store(uri: str | None) -> DirectStore | None:
    """The store ``uri`` (the default one for None) as a :class:`~xmlthresh.tracking.sqlite_direct.DirectStore` when
    it can be read and written exactly without MLflow (an existing local sqlite store at a verified schema
    revision), checked once per process first (:func:`~xmlthresh.tracking.store.check_store`); else None."""
    uri = uri or default_tracking_uri()
    path = sqlite_path(uri)
    if path is None or not path.is_file():
        return None
    if uri not in _CHECKED:
        check_store(uri)
        _CHECKED.add(uri)
    return DirectStore.for_uri(uri)


def _direct_experiment(uri: str | None, name: str) -> tuple[DirectStore, Experiment] | None:
    """(store, experiment) when both can be used directly (the experiment exists, with local artifacts)."""
    store = direct_store(uri)
    found = store.experiment(name) if store is not None else None
    return None if found is None else (store, found)


#: stores this process has checked and opened (created and migrated when new) -- once per process
_OPENED: set[str] = set()


def open_store(uri: str | None) -> str:
    """The store ``uri`` (the default one for None), checked (:func:`~xmlthresh.tracking.store.check_store`:
    one line naming the URI and the problem instead of minutes of retries) and opened once per process under
    its file lock, so that a new sqlite store is created and migrated by exactly one of several processes
    starting at once. Every function here that writes to a store goes through it."""
    uri = uri or default_tracking_uri()
    if uri not in _OPENED:
        check_store(uri)  # before importing mlflow (seconds): a store that cannot be used fails at once
        import mlflow

        _quiet_mlflow_logging()
        with store_lock(uri):
            retry_when_locked(lambda: mlflow.MlflowClient(uri).search_experiments(max_results=1), f"opening {uri}")
        _OPENED.add(uri)
    return uri


def ensure_experiment(uri: str, name: str) -> str:
    """Create the store and the experiment if needed (call in the launching process); returns its id.

    Under the store's lock: of several processes starting at once one creates the experiment, the others
    find it (a tracking server, which has no file lock: the one that loses the creation looks it up)."""
    direct = _direct_experiment(uri, name)
    if direct is not None:
        return direct[1].experiment_id
    uri = open_store(uri)
    import mlflow

    mlflow.set_tracking_uri(uri)

    def get_or_create() -> str:
        experiment = mlflow.get_experiment_by_name(name)
        if experiment is not None:
            return experiment.experiment_id
        try:
            return mlflow.create_experiment(name, artifact_location=artifact_root_for(uri))
        except mlflow.exceptions.MlflowException as exc:
            # a tracking server has no file lock: another process created it between the look-up and here
            if exc.error_code != "RESOURCE_ALREADY_EXISTS":
                raise
            return mlflow.get_experiment_by_name(name).experiment_id

    with store_lock(uri):
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


def mark_dead_runs(uri: str | None, experiment: str) -> list[str]:
    """End as KILLED (with an ``error`` tag saying why) every RUNNING run of ``experiment`` whose process, on
    this host, is gone -- a job or a sweep killed with SIGKILL, a worker the OS killed for memory: nothing
    could close its run, and it would stay RUNNING forever. Runs of other hosts, and runs without the
    process tags (logged by older versions), are left alone. Returns the ids of the runs it ended."""
    direct = _direct_experiment(uri, experiment)
    if direct is not None:
        store, found = direct
        running = [(run_id, store.get_run(run_id).tags) for run_id in store.run_ids(found.experiment_id, "RUNNING")]

        def end(run_id: str, message: str) -> None:
            store.log_batch(run_id, tags={"error": message})
            store.set_terminated(run_id, "KILLED")
    else:
        import mlflow

        uri = open_store(uri)
        client = mlflow.MlflowClient(uri)
        found = client.get_experiment_by_name(experiment)
        if found is None:
            return []
        running = [(run.info.run_id, run.data.tags) for run in retry_when_locked(
            lambda: client.search_runs([found.experiment_id], "attributes.status = 'RUNNING'", max_results=50_000),
            "looking up running runs")]

        def end(run_id: str, message: str) -> None:
            retry_when_locked(lambda: client.set_tag(run_id, "error", message), "tagging a dead run")
            retry_when_locked(lambda: client.set_terminated(run_id, status="KILLED"), "ending a dead run")
    host, ended = socket.gethostname(), []
    for run_id, tags in running:
        pid = tags.get(PID_TAG, "")
        if tags.get(HOST_TAG) != host or not pid.isdigit() or process_alive(int(pid), tags.get(PID_START_TAG, "")):
            continue
        end(run_id, f"process {pid} on {host} ended without closing this run (killed?); marked KILLED when a "
                    "later sweep started on this store")
        ended.append(run_id)
    return ended


CONFIG_HASH_TAG = "xmlthresh.config_hash"
#: the command-line overrides of a job (``strategy=domain dataset=espgame``), tagged when its run starts
OVERRIDES_TAG = "xmlthresh.overrides"


def config_hash(cfg: Mapping[str, Any], ignore: tuple[str, ...] = ("hydra", "tracking", "force", "warm_up")) -> str:
    """Fingerprint of what a job computes: the resolved config without bookkeeping keys."""
    relevant = {key: value for key, value in cfg.items() if key not in ignore}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()[:20]


def finished_run_with_hash(uri: str | None, experiment: str, digest: str) -> str | None:
    """Id of a FINISHED run of ``experiment`` whose config hash is ``digest`` (for resuming sweeps)."""
    direct = _direct_experiment(uri, experiment)
    if direct is not None:
        store, found = direct
        ids = store.run_ids(found.experiment_id, "FINISHED", tag=(CONFIG_HASH_TAG, digest), limit=1)
        return ids[0] if ids else None
    import mlflow

    _quiet_mlflow_logging()
    client = mlflow.MlflowClient(open_store(uri))
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return None
    runs = client.search_runs(
        [found.experiment_id],
        filter_string=f"tags.`{CONFIG_HASH_TAG}` = '{digest}' and attributes.status = 'FINISHED'",
        max_results=1, order_by=["attributes.start_time ASC"],  # the run that computed it comes first
    )
    return runs[0].info.run_id if runs else None


#: tag of a sweep job's child run that reuses the result of an earlier run (the id of the run that computed it)
REUSED_TAG = "xmlthresh.reused_run_id"
#: tags of the reused run that describe that run itself, not the result the new child shares
_OWN_TAGS = ("mlflow.parentRunId", "mlflow.runName", "mlflow.note.content", "xmlthresh.pid", "xmlthresh.host",
             "xmlthresh.pid_start", "xmlthresh.overrides")


def log_reused_run(uri: str | None, reused: str, parent_run_id: str | None, files: Iterable[Path] = (),
                   extra_tags: Mapping[str, Any] | None = None) -> str:
    """A FINISHED child run of the sweep ``parent_run_id`` for a job whose configuration already finished as
    run ``reused``: the same params, metrics and tags, the tag :data:`REUSED_TAG` naming the run that
    computed the result, and ``files`` (the job's copied result.json) as artifacts. So a resumed job is one
    child of its sweep like any other (the report shows it, marked reused) instead of a silent gap.
    Returns the new run's id."""
    store = direct_store(uri)
    if store is not None and store.has_local_artifacts(reused):
        origin = store.get_run(reused)
        tags = _reused_tags(origin.tags, reused, parent_run_id, extra_tags)
        run_id = store.create_run(origin.experiment_id, origin.name, tags)
        store.log_batch(run_id, params=origin.params, metrics=origin.metrics)
        for path in files:
            store.log_artifact(run_id, Path(path))
        store.set_terminated(run_id, "FINISHED")
        return run_id
    import time

    from mlflow.entities import Metric, Param

    uri = open_store(uri)
    import mlflow

    client = mlflow.MlflowClient(uri)
    origin = retry_when_locked(lambda: client.get_run(reused), f"reading run {reused}")
    tags = _reused_tags(origin.data.tags, reused, parent_run_id, extra_tags)
    run = retry_when_locked(lambda: client.create_run(origin.info.experiment_id, run_name=origin.info.run_name,
                                                      tags=tags), "creating the reused job's run")
    run_id = run.info.run_id
    now = int(time.time() * 1000)
    metrics = [Metric(key, value, now, 0) for key, value in origin.data.metrics.items()]
    params = [Param(key, value) for key, value in origin.data.params.items()]
    retry_when_locked(lambda: client.log_batch(run_id, metrics=metrics, params=params), "logging the reused run")
    for path in files:
        client.log_artifact(run_id, str(path))
    retry_when_locked(lambda: client.set_terminated(run_id, status="FINISHED"), "ending the reused run")
    return run_id


def _reused_tags(origin: Mapping[str, str], reused: str, parent_run_id: str | None,
                 extra_tags: Mapping[str, Any] | None) -> dict[str, str]:
    """The tags of a reused job's child run: the reused run's own, less those describing that run itself."""
    computed_by = origin.get(REUSED_TAG, reused)  # a reused run's result came from its own origin
    tags = {key: value for key, value in origin.items() if key not in _OWN_TAGS}
    tags.update({REUSED_TAG: computed_by, **{k: str(v) for k, v in (extra_tags or {}).items()},
                 "mlflow.note.content": f"reuses run {computed_by}: the same configuration finished there"})
    if parent_run_id:
        tags["mlflow.parentRunId"] = parent_run_id
    return tags


RESULT_ARTIFACT = "result.json"


def download_result(run_id: str, dst: Path, uri: str | None) -> Path:
    """Download the ``result.json`` a run logged into the directory ``dst`` and return the local file
    (resuming a sweep job copies an earlier run's result). MLflow's error propagates when the artifact is
    gone or the store moved: the caller decides whether to run the job again."""
    import mlflow

    _quiet_mlflow_logging()
    mlflow.set_tracking_uri(uri or default_tracking_uri())
    return Path(mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=RESULT_ARTIFACT, dst_path=str(dst)))


def start_sweep_parent(uri: str | None, experiment: str, sweep_dir: Path, arguments: str, launcher: str) -> str:
    """Create the parent run of a sweep (left RUNNING for the jobs' child runs) and return its id.

    It is tagged as the sweep parent with its directory, commit and command line, and records the
    command-line ``arguments`` and the Hydra ``launcher`` as params."""
    uri = uri or default_tracking_uri()
    experiment_id = ensure_experiment(uri, experiment)
    tags = {"xmlthresh.sweep": "parent", "sweep_dir": str(sweep_dir), "git_commit": git_commit(),
            "mlflow.note.content": f"python -m xmlthresh -m {arguments}", **process_tags()}
    name = f"sweep {sweep_dir.name}"
    params = {"arguments": arguments[:_MAX_PARAM_LENGTH], "launcher": launcher}
    direct = _direct_experiment(uri, experiment)
    if direct is not None:
        run_id = direct[0].create_run(experiment_id, name, tags)
        direct[0].log_batch(run_id, params=params)
    else:
        import mlflow

        client = mlflow.MlflowClient(uri)
        run_id = retry_when_locked(lambda: client.create_run(experiment_id, run_name=name, tags=tags),
                                   "creating the sweep's parent run").info.run_id
        MlflowBackend(client).log_batch(run_id, params=params)
    write_sweep_store(sweep_dir, SweepStore(uri, experiment, experiment_id, source_tags()))
    return run_id


def _run_backend(uri: str | None, run_id: str) -> "DirectStore | MlflowBackend":
    """Where to write to the existing run ``run_id``: the store itself when it is direct (and the run's
    artifacts are local), else MLflow's client."""
    store = direct_store(uri)
    if store is not None and store.has_local_artifacts(run_id):
        return store
    import mlflow

    _quiet_mlflow_logging()
    return MlflowBackend(mlflow.MlflowClient(uri or default_tracking_uri()))


class ChildRun(NamedTuple):
    """What the end of a sweep needs to know of one job's run: its MLflow status, whether it skipped, and
    whether it reuses an earlier run's result (a resumed job)."""

    status: str
    skipped: bool
    reused: bool = False


def sweep_children(uri: str | None, parent: str) -> list[ChildRun]:
    """The child runs of the sweep whose parent run is ``parent`` (any status)."""
    store = direct_store(uri)
    if store is not None and store.has_local_artifacts(parent):
        experiment_id = store.get_run(parent).experiment_id
        children = [store.get_run(run_id) for run_id in store.run_ids(experiment_id, tag=(PARENT_TAG, parent))]
        return [ChildRun(child.status, "skipped" in child.tags, REUSED_TAG in child.tags) for child in children]
    import mlflow

    client = mlflow.MlflowClient(uri or default_tracking_uri())
    experiment_id = client.get_run(parent).info.experiment_id
    found = client.search_runs([experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{parent}'",
                               max_results=50_000)
    return [ChildRun(child.info.status, "skipped" in child.data.tags, REUSED_TAG in child.data.tags)
            for child in found]


def finish_sweep_parent(uri: str | None, parent: str, counts: Mapping[str, int], failed: bool,
                        error: str | None = None, status: str | None = None) -> None:
    """Log the sweep's ``counts`` as metrics of its parent run and end it FAILED or FINISHED (or ``status``),
    with an ``error`` tag when the sweep itself failed (a config that does not compose, a worker killed)."""
    backend = _run_backend(uri, parent)
    backend.log_batch(parent, metrics={k: float(v) for k, v in counts.items()},
                      tags={"error": error[:5000]} if error else {})
    backend.set_terminated(parent, status or ("FAILED" if failed else "FINISHED"))


def log_files_to_run(uri: str | None, run_id: str, paths: Iterable[Path]) -> None:
    """Attach files as artifacts of an existing run (not the active one), e.g. a sweep's report to its parent."""
    backend = _run_backend(uri, run_id)
    for path in paths:
        backend.log_artifact(run_id, Path(path))


def run_params_and_metrics(uri: str | None, run_id: str) -> tuple[dict[str, str], dict[str, float]]:
    """A run's params and latest metrics from the store ``uri`` (the report rebuilds a run's data set from them)."""
    store = direct_store(uri)
    if store is not None and store.has_local_artifacts(run_id):
        run = store.get_run(run_id)
        return run.params, run.metrics
    import mlflow

    data = mlflow.MlflowClient(uri or default_tracking_uri()).get_run(run_id).data
    return dict(data.params), dict(data.metrics)


def runs_table(uri: str | None, experiment: str) -> "pd.DataFrame":
    """Every run of ``experiment`` in the store ``uri`` as MLflow's search table: one row per run, columns
    ``run_id``, ``status``, ``start_time`` and ``params.*``, ``metrics.*``, ``tags.*`` (empty when none)."""
    import mlflow

    mlflow.set_tracking_uri(uri or default_tracking_uri())
    return mlflow.search_runs(experiment_names=[experiment])


@contextmanager
def tracked_run(
    enabled: bool,
    uri: str | None,
    experiment: str,
    run_name: str | None = None,
    parent_run_id: str | None = None,
    tags: Mapping[str, Any] | None = None,
    failure_params: Mapping[str, Any] | None = None,
    sweep: "SweepStore | None" = None,
) -> Iterator[Tracker]:
    """An MLflow run for the duration of the block; an exception marks it FAILED with an ``error`` tag (and
    is re-raised).

    ``parent_run_id`` makes it a child of a sweep's parent run (created by another process).
    ``failure_params`` (the params the job would log, read from its config) are logged when the block fails
    before logging them itself -- a job refused for a bad parameter still says in MLflow what it was.
    ``sweep`` (:func:`read_sweep_store`: what the sweep's launching process found once) spares the job
    opening the store, looking up the experiment and asking git for the commit.
    """
    if not enabled:
        yield Tracker(None)
        return
    uri = uri or default_tracking_uri()
    direct = _direct_experiment(uri, experiment) if run_name else None
    if direct is not None:
        experiment_id = direct[1].experiment_id
    elif sweep is not None and sweep.uri == uri and sweep.experiment == experiment:
        experiment_id = sweep.experiment_id
    else:
        experiment_id = ensure_experiment(uri, experiment)  # checks the store first
    source = sweep.source_tags if sweep is not None and sweep.uri == uri else source_tags()
    run_tags = {**source, "xmlthresh_version": __version__, **process_tags(), **(tags or {})}
    if run_name:
        run_tags["mlflow.runName"] = run_name
    if parent_run_id:
        run_tags["mlflow.parentRunId"] = parent_run_id
    run_tags = {k: str(v) for k, v in run_tags.items()}
    if direct is not None:
        store = direct[0]
        run_id = store.create_run(experiment_id, run_name, run_tags)
        tracker = Tracker(store, run_id)
    else:
        import mlflow

        _quiet_mlflow_logging()
        client = mlflow.MlflowClient(uri)
        run = retry_when_locked(lambda: client.create_run(experiment_id, run_name=run_name, tags=run_tags),
                                f"starting a run in {uri}")
        run_id = run.info.run_id
        tracker = Tracker(MlflowBackend(client), run_id)
    try:
        yield tracker
    except BaseException as exc:
        try:
            missing = {k: v for k, v in (failure_params or {}).items() if k not in tracker.logged_params}
            if missing:
                tracker.log_params(missing)
            tracker.set_tags({"error": f"{type(exc).__name__}: {exc}"[:5000]})
            tracker.flush()
        finally:
            tracker.end("FAILED")
        raise
    else:
        tracker.flush()
        tracker.end("FINISHED")
    finally:
        log.debug("mlflow run %s ended", run_id)


def _quiet_mlflow_logging() -> None:
    """MLflow and alembic log every sqlite migration at INFO on first use: keep the console readable."""
    for name in ("mlflow", "alembic", "alembic.runtime.migration"):
        logging.getLogger(name).setLevel(logging.WARNING)
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
