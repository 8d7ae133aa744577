"""One line for an ``OSError`` about a place a run reads or writes (its folder, made by Hydra before any job
code runs, or a sweep's folder: a 300-character name, a read-only or full file system), naming the path, the
problem and the fix; the command line and the sweep's launcher print it instead of a traceback."""

from __future__ import annotations

import errno
import os

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
    errno.EFBIG: f"a file there would be larger than allowed (ulimit -f, or the file system's limit): raise the limit "
                 f"or write elsewhere {ELSEWHERE}",
    errno.ENOENT: f"that folder cannot be made there: choose another place {ELSEWHERE}",
    errno.EEXIST: f"a file is there, where a folder belongs: choose another place {ELSEWHERE}",
}


def placement_message(exc: BaseException, folder: str | None = None) -> str | None:
    """One line for an ``OSError`` about a place the run uses (its folder, made by Hydra before any job code
    runs: a 300-character folder name, a read-only folder, a full disk), naming the path, the problem and the
    fix; None for any other exception (its traceback is shown).

    An error without a file name (a full disk while Hydra writes the job's ``.hydra/`` files: the write, not
    the open, fails) is named by ``folder``, the folder Hydra was writing, when Hydra raised it."""
    if not isinstance(exc, OSError) or exc.errno not in PLACEMENT_ERRORS:
        return None
    where = exc.filename
    if not where:
        if not _made_by_hydra(exc):
            return None
        folder = _folder_hydra_wrote(exc) or folder
        where = f"{folder} (Hydra was writing there)" if folder else "the job's folder (Hydra was writing there)"
    if exc.errno == errno.ENOENT and not _made_by_hydra(exc):  # a missing input file is the job's to report
        return None
    return f"{where}: {exc.strerror or PLACEMENT_ERRORS[exc.errno].split(':')[0]}; {PLACEMENT_ERRORS[exc.errno]}"


#: the local names under which Hydra's frames (and OmegaConf's ``save``, which Hydra calls) hold the place written
_PLACE_NAMES = ("output_dir", "sweep_dir", "f")


def _folder_hydra_wrote(exc: OSError) -> str | None:
    """The place the innermost frame of Hydra's (or of OmegaConf's, called by Hydra) in the traceback of ``exc``
    was writing to: its ``output_dir`` (a job's ``.hydra/``), ``sweep_dir`` or the file ``OmegaConf.save``
    wrote (``multirun.yaml``); None when no frame says."""
    place = None
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_globals.get("__name__", "").startswith(("hydra.", "omegaconf.")):
            for name in _PLACE_NAMES:
                value = frame.f_locals.get(name) if name in frame.f_code.co_varnames else None
                if isinstance(value, (str, os.PathLike)):
                    place = str(value)
                    break
        tb = tb.tb_next
    return place


def hydra_output_folder() -> str | None:
    """The folder Hydra writes the running job's own files to (``<run dir>/.hydra``), or None outside a job."""
    try:
        from hydra.core.hydra_config import HydraConfig

        if not HydraConfig.initialized():
            return None
        config = HydraConfig.get()
        output = str(config.runtime.output_dir)
        return f"{output}/{config.output_subdir}" if config.output_subdir else output
    except Exception:  # noqa: BLE001 - only a better name for the place: never an error of its own
        return None


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
