"""Small helpers shared by test modules: a loopback HTTP server for download tests, finding real data, and
the package's option groups."""

from __future__ import annotations

import http.server
import os
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
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


def data_dir_with(relpath: str) -> Path | None:
    """$XMLTHRESH_DATA, else the shared cache beside the checkout, when it holds ``relpath``; else None."""
    env_dir = os.environ.get("XMLTHRESH_DATA")
    for candidate in ([Path(env_dir)] if env_dir else []) + [SHARED]:
        if (candidate / relpath).is_file():
            return candidate
    return None
