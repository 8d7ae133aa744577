"""Ctrl-C in the report commands: one line and exit code 130, wherever the interpreter was.

Why: Python raises ``KeyboardInterrupt`` wherever the main thread is, also inside a weak-reference callback or a
finalizer, where it is printed as "Exception ignored in: ..." with a traceback and the command goes on (it
then ended with exit code 0). A report is written as one unit (:func:`xmlthresh._util.files.folder_as_one_unit`)
and reads its sources only, so ending the process at once leaves nothing half-made: the staging folder of an
unfinished page is removed by the next report once stale.
"""

from __future__ import annotations

import os
import signal
import sys


def end_at_interrupt(prog: str) -> None:
    """From now on, SIGINT prints ``<prog>: interrupted; no report was written`` and ends the process (130)."""

    def interrupted(signum: int, frame: object) -> None:
        try:
            print(f"{prog}: interrupted; no report was written", file=sys.stderr, flush=True)
        finally:
            os._exit(130)

    signal.signal(signal.SIGINT, interrupted)
