"""Console entry point: ``xmlthresh strategy=domain dataset=espgame beta=2`` (= ``python -m xmlthresh ...``).

Light on purpose: ``xmlthresh list`` and ``xmlthresh --help`` are answered from the option folders without
importing Hydra, a numerical library or a plugin; everything else goes to the Hydra application
(:mod:`xmlthresh.hydra_app`), which imports the job's modules only after Hydra has parsed the command line.
``--hydra-help`` still shows Hydra's own flags.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys


def register_resolvers() -> None:
    """The resolvers the primary config uses (idempotent; see :func:`xmlthresh.config.register_resolvers`)."""
    from .config import register_resolvers as register

    register()


def main() -> None:
    """Console entry point (``xmlthresh ...`` and ``python -m xmlthresh ...``).

    ``xmlthresh list`` lists every option of every group and the plugins (read from the option folders:
    nothing heavy is imported); ``xmlthresh list --check`` also imports the plugins and every registered class.
    """
    if sys.argv[1:] in (["--help"], ["-h"]):
        print(help_text())
        return
    if sys.argv[1:2] == ["list"]:
        from .plugins import describe

        print(describe(check="--check" in sys.argv[2:]))
        return
    from . import hydra_app, sweep

    hydra_app.hydra_main()
    if sweep.last_sweep_failures:
        print(f"xmlthresh: {sweep.last_sweep_failures} job(s) of the sweep failed (see MLflow)", file=sys.stderr)
        sys.exit(1)


def console() -> None:
    """The ``xmlthresh`` console script and ``python -m xmlthresh``: :func:`main`, then a fast exit.

    The interpreter's own finalization of the modules a run loaded (numba's compiled kernels above all) costs
    about 1 s of CPU after the work is done (measured: 9.5 -> 8.2 s for a tracked espgame run; 2.7 -> 1.8 s for
    a domain warm-up alone). So after flushing the logs and the output and running the exit handlers as
    usual, the process ends with ``os._exit``. Called as a library function, :func:`main` exits normally."""
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    logging.shutdown()
    stop_worker_pools()
    atexit._run_exitfuncs()  # what the interpreter would run first; the rest of its finalization is skipped
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def stop_worker_pools() -> None:
    """Shut down joblib's reusable loky pool (the joblib launcher's workers), if one was started.

    The interpreter would do it in ``threading._shutdown`` before the exit handlers; :func:`console` runs the
    exit handlers itself, and multiprocessing's handler joins every child process, so idle loky workers
    (which stop only after their 300 s idle timeout) kept every joblib sweep alive 5 minutes after its
    report (measured: a 2-job sweep 341 s instead of 36 s)."""
    module = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(module, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True)


EXAMPLES = (
    ("xmlthresh", "the default job: domain on embedded synthetic data (certified F-macro)"),
    ("xmlthresh strategy=domain dataset=espgame beta=2", "exact thresholds on the ESP Game lists, F_2"),
    ("xmlthresh -m strategy=domain,independent,pu dataset=corel5k protocol=holdout report.enabled=true",
     "a sweep with its comparison report"),
)


def help_text() -> str:
    """``xmlthresh --help``: what the program does, every option group with its options (one line each, from
    the option folders), the top-level settings and three example commands."""
    from .options import GROUPS, option_lines

    lines = ["xmlthresh: find, certify and benchmark decision thresholds for (extreme) multi-label classification.",
             "", "Usage: xmlthresh [group=option ...] [key=value ...]   (-m: a sweep over comma-separated values)", ""]
    for group in GROUPS:
        lines += option_lines(group)
    lines += ["", "settings: seed, beta, task (thresholds | cde), plots, ceiling, warm_up, force, report.*, tracking.*",
              "(xmlthresh --cfg job shows them all with their values)", "", "Examples:"]
    for command, what in EXAMPLES:
        lines += [f"  {command}", f"      {what}"]
    lines += ["", "xmlthresh list: the options and the plugins; xmlthresh --hydra-help: Hydra's own flags."]
    return "\n".join(lines)
