"""The environment variables xmlthresh reads besides the folders of :mod:`xmlthresh._util.paths`, each read
by one rule that names the variable when its value is wrong (``XMLTHRESH_OFFLINE=false`` meant offline: any
value but "" and "0" did).

* ``XMLTHRESH_OFFLINE`` -- a switch (true/false, yes/no, on/off, 1/0; unset or empty: off): no downloads;
* ``XMLTHRESH_TRACKING_SYNC`` -- how a single run sends its record to MLflow when the config does not say
  (``tracking.sync``; :data:`xmlthresh.tracking.record.SYNC_MODES`).
"""

from __future__ import annotations

import os

from xmlthresh._util.errors import InputError
from xmlthresh._util.typed_params import FALSE_WORDS, TRUE_WORDS

#: how a single run sends its record to MLflow (``tracking.sync``, ``$XMLTHRESH_TRACKING_SYNC``)
SYNC_MODES = ("background", "foreground", "off")


def env_flag(name: str, default: bool = False) -> bool:
    """The switch ``$name``: a bool word or 1/0; ``default`` when unset or empty; otherwise an error naming it."""
    text = os.environ.get(name, "").strip().lower()
    if not text:
        return default
    if text in TRUE_WORDS or text == "1":
        return True
    if text in FALSE_WORDS or text == "0":
        return False
    raise InputError(f"environment variable {name}={os.environ[name]!r} must be true or false (yes/no, on/off, 1/0); "
                     f"unset it for {'on' if default else 'off'}")


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    """The value of ``$name`` among ``choices``; ``default`` when unset or empty; otherwise an error naming it."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if text not in choices:
        raise InputError(f"environment variable {name}={text!r} must be one of {', '.join(choices)}; unset it for "
                         f"{default}")
    return text
