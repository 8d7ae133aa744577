"""Small helpers shared by test modules: a loopback HTTP server for download tests, finding real data, the
package's option groups, the command line in this process, and how many processes to run at once."""

from __future__ import annotations

import contextlib
import http.server
import io
import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Iterator

import xmlthresh

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
#: the built-in option groups (``strategy/``, ``dataset/``, ...): Hydra's primary config directory, in the package
PACKAGE_CONF = Path(xmlthresh.__file__).resolve().parent / "conf"


@contextmanager
def serve_directory(root: Path) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 (a free port) for the duration of the block; yields the base URL."""
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # a short poll interval: shutdown() waits up to one interval for the serving loop to notice
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


def default_data_dir() -> Path:
    """Where the loaders read and download raw data when XMLTHRESH_DATA is unset (as
    :func:`xmlthresh._util.paths.data_dir`): ``$XDG_CACHE_HOME/xmlthresh/data``, default ``~/.cache/xmlthresh/data``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "xmlthresh" / "data"


def data_dir_with(relpath: str) -> Path | None:
    """$XMLTHRESH_DATA (else the default data directory), or else the shared cache beside the checkout, when it
    holds ``relpath``; else None."""
    env_dir = os.environ.get("XMLTHRESH_DATA")
    for candidate in [Path(env_dir) if env_dir else default_data_dir(), SHARED]:
        if (candidate / relpath).is_file():
            return candidate
    return None


def no_data(relpath: str, what: str = "real data") -> str:
    """Why a test skips without its data: what is missing, where it was looked for (``XMLTHRESH_DATA``, else the
    default data directory) and what to set -- never a path of one developer's machine."""
    env_dir = os.environ.get("XMLTHRESH_DATA")
    where = f"XMLTHRESH_DATA={env_dir}" if env_dir else f"the default data directory {default_data_dir()} (XMLTHRESH_DATA unset)"
    return f"{what} not available: no {relpath} in {where}; set XMLTHRESH_DATA to a directory holding it"


def write_mulan_set(data: Path, name: str, n_train: int = 160, n_test: int = 80, n_labels: int = 6,
                    n_features: int = 8, seed: int = 0) -> Path:
    """A small dense Mulan data set (``<name>.xml``, ``<name>-train.arff``, ``<name>-test.arff``) under ``data``,
    drawn from scikit-learn's multi-label generator: a feature data set for end-to-end runs without real data."""
    from sklearn.datasets import make_multilabel_classification

    X, Y = make_multilabel_classification(n_samples=n_train + n_test, n_features=n_features, n_classes=n_labels,
                                          n_labels=2, allow_unlabeled=False, random_state=seed)
    header = (f"@relation {name}\n" + "".join(f"@attribute f{j} numeric\n" for j in range(n_features))
              + "".join(f"@attribute L{k} {{0,1}}\n" for k in range(n_labels)) + "@data\n")
    rows = [",".join([*(f"{v:g}" for v in x), *(str(int(v)) for v in y)]) for x, y in zip(X, Y)]
    folder = data / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.xml").write_text("<labels>" + "".join(f'<label name="L{k}"/>' for k in range(n_labels))
                                        + "</labels>")
    (folder / f"{name}-train.arff").write_text(header + "\n".join(rows[:n_train]) + "\n")
    (folder / f"{name}-test.arff").write_text(header + "\n".join(rows[n_train:]) + "\n")
    return folder


def composed(*overrides: str) -> dict:
    """The resolved config the CLI would run (tracking, plots and JIT warm-up off)."""
    from xmlthresh.config.compose import compose

    return compose(["tracking.enabled=false", "plots=false", "warm_up=false", *overrides])


def run_cli(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``xmlthresh <args>`` in this process (``xmlthresh.cli.entry.main`` with ``sys.argv``, what the console script
    runs before its fast exit), with ``env`` set for the call: its exit code and captured output, as
    ``subprocess.run`` would give them. Saves the 3-4 s a fresh interpreter spends importing the job's
    modules; a test about the process itself (its exit, its stderr as a whole) runs the real one."""
    from xmlthresh.cli import entry as cli

    out, err = io.StringIO(), io.StringIO()
    saved_argv, saved_env = sys.argv, {key: os.environ.get(key) for key in env or {}}
    sys.argv = ["xmlthresh", *args]
    os.environ.update(env or {})
    code = 0
    try:
        with _logging_restored(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            cli.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            err.write(f"{exc.code}\n")
    finally:
        sys.argv = saved_argv
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return subprocess.CompletedProcess(["xmlthresh", *args], code, out.getvalue(), err.getvalue())


@contextmanager
def _logging_restored() -> Iterator[None]:
    """Undo what a run's logging configuration (Hydra's job logging: handlers on the root logger, levels)
    does to this process's loggers, so that the tests after an in-process run see the logging they saw
    before; the run's own handlers (its log file) are closed."""
    import logging

    loggers = [logging.getLogger()] + [lg for lg in logging.Logger.manager.loggerDict.values()
                                       if isinstance(lg, logging.Logger)]
    saved = {id(lg): (lg.level, lg.propagate, lg.disabled, list(lg.handlers)) for lg in loggers}
    try:
        yield
    finally:
        for lg in [logging.getLogger()] + [lg for lg in logging.Logger.manager.loggerDict.values()
                                           if isinstance(lg, logging.Logger)]:
            level, propagate, disabled, handlers = saved.get(id(lg), (logging.NOTSET, True, False, []))
            for handler in lg.handlers:
                if handler not in handlers:
                    handler.close()
            lg.setLevel(level)
            lg.propagate, lg.disabled, lg.handlers = propagate, disabled, handlers


def free_cores() -> int:
    """How many processes a test should run at once: two when this process may use two cores (the suite
    itself keeps about one busy), else one."""
    return min(2, len(os.sched_getaffinity(0)))
