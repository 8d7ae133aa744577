"""One line for an ``OSError`` about a place a run reads or writes (its folder, made by Hydra before any job
code runs, or a sweep's folder: a 300-character name, a read-only or full file system), naming the path, the
problem and the fix; the command line and the sweep's launcher print it instead of a traceback."""

from __future__ import annotations

import errno

#: what can be wrong with a place a run reads or writes, and what to do about it
ELSEWHERE = "(hydra.run.dir, hydra.sweep.dir, XMLTHRESH_HOME)"
PLACEMENT_ERRORS = {
    errno.ENAMETOOLONG: f"a name in that path is longer than the file system allows: choose a shorter one {ELSEWHERE}",
    errno.ENOTDIR: f"a part of that path is a file, not a folder: choose another place {ELSEWHERE}",
    errno.EACCES: f"no permission there: fix its permissions or choose another place {ELSEWHERE}",
    errno.EPERM: f"no permission there: fix its permissions or choose another place {ELSEWHERE}",
    errno.EROFS: f"the file system is read-only: write elsewhere {ELSEWHERE}",
    errno.ENOSPC: f"the disk is full: free space there or write elsewhere {ELSEWHERE}",
    errno.EDQUOT: f"the disk quota is used up: free space there or write elsewhere {ELSEWHERE}",
    errno.ENOENT: f"that folder cannot be made there: choose another place {ELSEWHERE}",
    errno.EEXIST: f"a file is there, where a folder belongs: choose another place {ELSEWHERE}",
}


def placement_message(exc: BaseException) -> str | None:
    """One line for an ``OSError`` about a place the run uses (its folder, made by Hydra before any job code
    runs: a 300-character folder name, a read-only folder, a full disk), naming the path, the problem and the
    fix; None for any other exception (its traceback is shown)."""
    if not isinstance(exc, OSError) or exc.errno not in PLACEMENT_ERRORS or not exc.filename:
        return None
    if exc.errno == errno.ENOENT and not _made_by_hydra(exc):  # a missing input file is the job's to report
        return None
    return f"{exc.filename}: {exc.strerror}; {PLACEMENT_ERRORS[exc.errno]}"


def _made_by_hydra(exc: OSError) -> bool:
    """Whether ``exc`` was raised by Hydra itself (making the run's folder): of the frames of Hydra and of
    this package in its traceback, the innermost is Hydra's, so no job code was running."""
    innermost = ""
    tb = exc.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module.startswith(("hydra.", "xmlthresh.")):
            innermost = module
        tb = tb.tb_next
    return innermost.startswith("hydra.")
