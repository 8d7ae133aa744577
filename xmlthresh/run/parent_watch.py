"""Sweep workers that end with the process that launched them.

Why: joblib's loky workers (``hydra/launcher=joblib``) outlive a launching process killed with ``kill -9``:
nothing tells them, so they kept computing (and holding about 200 MB each) for as long as loky's idle timeout
allowed -- still alive ten minutes later. A worker started by a sweep therefore watches its parent from its
first job on: when the parent is gone (the worker has been handed to another process, ``os.getppid()``
changes), the worker ends at once with ``os._exit``. Its loky resource tracker ends by itself once no worker
holds its pipe.

Only the process id of the parent is read, once a second, on a daemon thread: no signal handler and nothing
of loky's is touched. A job run by itself (no sweep) or a SLURM job (whose parent is SLURM's own daemon,
which stays) never sees its parent change.
"""

from __future__ import annotations

import os
import sys
import threading

#: set by the process that launches a sweep to its pid, inherited by the workers it starts
LAUNCHER_PID_ENV = "XMLTHRESH_SWEEP_LAUNCHER_PID"
#: how often a worker looks at its parent, in seconds
POLL_SECONDS = 1.0
#: exit code of a worker that ends because its parent is gone (128 + SIGHUP, as for a closed terminal)
ORPHAN_EXIT_CODE = 129

_watching: int | None = None  # the pid of the process whose parent is watched (a fork must start its own)


def exit_when_parent_dies(poll_seconds: float = POLL_SECONDS) -> None:
    """Start (once per process) a daemon thread that ends this process when its parent process is gone."""
    global _watching
    if _watching == os.getpid():
        return
    _watching = os.getpid()
    parent = os.getppid()
    if parent <= 1:  # already orphaned, or the first process of a container: nothing to watch
        return

    def watch() -> None:
        event = threading.Event()
        while not event.wait(poll_seconds):
            if os.getppid() != parent:
                sys.stderr.write(f"xmlthresh: the sweep's launching process {parent} is gone; worker {os.getpid()} "
                                 "stops (re-run the sweep to resume the jobs left)\n")
                sys.stderr.flush()
                os._exit(ORPHAN_EXIT_CODE)

    threading.Thread(target=watch, name="xmlthresh-parent-watch", daemon=True).start()


def mark_launcher() -> None:
    """Record this process as the one launching a sweep (:data:`LAUNCHER_PID_ENV`), for its workers."""
    os.environ[LAUNCHER_PID_ENV] = str(os.getpid())


def watch_parent_if_sweep_worker() -> None:
    """In a process that runs a sweep's jobs for the launching process (not the launcher itself: the basic
    launcher runs the jobs in-process), :func:`exit_when_parent_dies`."""
    launcher = os.environ.get(LAUNCHER_PID_ENV, "")
    if launcher.isdigit() and int(launcher) != os.getpid():
        exit_when_parent_dies()
