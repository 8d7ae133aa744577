"""Shared fixtures: the real-data directory (skip with a reason when absent) and an isolated project; and
the background compilation of the numba kernels when a large selection of tests starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import free_cores, no_data

# A single run's MLflow record goes in a background process by default; tests that read the store right
# after a run (in this process or a command line they start) need it sent before the run returns. The
# background syncer has tests of its own (tests/test_tracking_records.py).
os.environ.setdefault("XMLTHRESH_TRACKING_SYNC", "foreground")

WARM_UP = Path(__file__).with_name("_warm_numba.py")
#: selections of at least this many tests start the background compilation (XMLTHRESH_TEST_WARM_UP=1: any
#: selection, =0: never)
WARM_UP_MIN_TESTS = 200
_warm_up_process = pytest.StashKey[subprocess.Popen]()


#: what a test's source says about the work it does: a fresh interpreter, the command line (in-process: the
#: whole Hydra job), the real data sets, or an MLflow store. ``make test-fast`` leaves such tests out (``-m fast``).
_HEAVY_SOURCE = {"subprocess": ("subprocess", "Popen", "sys.executable", "check_output", "multiprocessing", "Process("),
                 "cli": ("run_cli(", "run_job(", "hydra_main", "console(", "main([", "compose(", "multirun", "sweep(",
                         "hydra.run.dir"),
                 "realdata": ("real_data", "XMLTHRESH_DATA", "realdata"),
                 # a real MLflow store: each new sqlite store runs MLflow's schema migrations, each process
                 # imports mlflow
                 "mlflowstore": ("mlflow", "tracked_run(", "load_runs(", "runs_table(", "sync_record(", "open_store(",
                                 "start_sweep_parent(", "_race(", "sqlite:///")}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test by the work its source shows (:data:`_HEAVY_SOURCE`), and ``fast`` the tests with none
    of it and no ``slow`` mark: ``pytest -m fast`` is the quick inner loop of ``make test-fast`` (no
    subprocess, no command line, no real data, no MLflow store; numba kernels come from the warm cache)."""
    import inspect

    sources: dict[object, str] = {}
    for item in items:
        function = getattr(item, "function", None)
        if function is None:
            continue
        if function not in sources:
            try:
                sources[function] = inspect.getsource(function)
            except (OSError, TypeError):
                sources[function] = ""
        fixtures = set(getattr(item, "fixturenames", ()))
        source = sources[function]
        heavy = {mark for mark, needles in _HEAVY_SOURCE.items() if any(n in source for n in needles)}
        if "real_data" in fixtures:
            heavy.add("realdata")
        for mark in sorted(heavy):
            item.add_marker(mark)
        if not heavy and item.get_closest_marker("slow") is None and item.get_closest_marker("realdata") is None:
            item.add_marker("fast")


def pytest_collection_finish(session: pytest.Session) -> None:
    """On a fresh checkout the suite spends about a minute of CPU compiling numba kernels (``cache=True``:
    compiled once, then loaded from $XMLTHRESH_CACHE/numba), inside the first tests that call them, one
    core busy. tests/_warm_numba.py compiles them on tiny inputs in a background process at low priority, on
    the second core, while the first tests run; a test that reaches a kernel first compiles it itself, as
    before. With a warm cache the process only loads the kernels (a few seconds of CPU)."""
    setting = os.environ.get("XMLTHRESH_TEST_WARM_UP", "")
    wanted = setting == "1" or (setting != "0" and len(session.items) >= WARM_UP_MIN_TESTS)
    if not wanted or session.config.option.collectonly or free_cores() < 2:
        return
    proc = subprocess.Popen([sys.executable, str(WARM_UP)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        os.setpriority(os.PRIO_PROCESS, proc.pid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10))
    except OSError:
        pass
    session.config.stash[_warm_up_process] = proc


def pytest_sessionfinish(session: pytest.Session) -> None:
    proc = session.config.stash.get(_warm_up_process, None)
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def real_data_dir() -> Path | None:
    """$XMLTHRESH_DATA when it holds the reference files, else None (tests use real data only through it)."""
    env = os.environ.get("XMLTHRESH_DATA")
    if env and (Path(env) / "berger" / "ESPGameNN.txt").is_file():
        return Path(env)
    return None


@pytest.fixture
def real_data() -> Path:
    path = real_data_dir()
    if path is None:
        pytest.skip(no_data("berger/ESPGameNN.txt"))
    return path


@pytest.fixture
def isolated_home(tmp_path, monkeypatch) -> Path:
    """Runs and the MLflow store go to a temporary project root; derived caches to a temporary dir."""
    monkeypatch.setenv("XMLTHRESH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def toy_mulan(tmp_path, monkeypatch):
    """A small Mulan set in a data directory of its own (cache too; downloads off)."""
    from helpers import write_mulan_set

    monkeypatch.setenv("XMLTHRESH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("XMLTHRESH_OFFLINE", "1")
    write_mulan_set(tmp_path / "data", "toy")
    return tmp_path
