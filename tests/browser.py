"""Headless Chromium for tests of the HTML pages: the rendered DOM (after the page's scripts ran) and a
screenshot. Debian's package (``apt-get install -y chromium``); ``XMLTHRESH_CHROMIUM`` names another binary.

Chromium runs with a new empty profile and without its background networking, so it never reaches out
(the machines' network is closed; without these flags its connections are refused, many at a time)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

#: flags for a headless run as root on a machine without display, GPU or network
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars")


def find_chromium() -> str | None:
    """The Chromium binary: ``$XMLTHRESH_CHROMIUM``, else chromium / chromium-browser / google-chrome on PATH."""
    named = os.environ.get("XMLTHRESH_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


SKIP_REASON = ("no Chromium found (install Debian's: apt-get install -y chromium, or set XMLTHRESH_CHROMIUM to "
               "a Chromium binary)")


def _run(binary: str, page: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="xmlthresh-chromium-") as profile:
        command = [binary, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=15000", *args,
                   page.resolve().as_uri()]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc


def dump_dom(binary: str, page: Path, width: int = 1400, height: int = 1000) -> str:
    """The page's DOM after its scripts ran (``--dump-dom``), laid out in a ``width`` x ``height`` window."""
    return _run(binary, page, "--dump-dom", f"--window-size={width},{height}").stdout


def screenshot(binary: str, page: Path, png: Path, width: int = 1400, height: int = 2400) -> Path:
    """A PNG of the page in a ``width`` x ``height`` window."""
    png.parent.mkdir(parents=True, exist_ok=True)
    _run(binary, page, f"--screenshot={png.resolve()}", f"--window-size={width},{height}")
    if not png.is_file() or png.stat().st_size == 0:
        raise RuntimeError(f"chromium wrote no screenshot to {png}")
    return png
