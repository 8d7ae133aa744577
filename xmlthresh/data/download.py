"""Fetching raw data files from their public origin into the data directory, verified by sha256.

A file is streamed to a temporary file in the destination directory (:func:`xmlthresh._util.files.atomic_output`)
and renamed into place only after its checksum matched, so a failed or corrupted download never leaves a
partial file behind. Downloads can
be switched off with ``XMLTHRESH_OFFLINE=1``; then a missing file is an error saying where to put it.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from xmlthresh._util.environment import env_flag
from xmlthresh._util.files import atomic_output
from xmlthresh._util.paths import data_dir
from xmlthresh._util.errors import UserFacingError

log = logging.getLogger(__name__)

_CHUNK = 1 << 20


class DataUnavailableError(RuntimeError, UserFacingError):
    """A raw data file is missing and could not be downloaded (the message says where to put it)."""


@dataclass(frozen=True)
class RemoteFile:
    """A raw data file: its path relative to the data directory, public URL and expected sha256."""

    relpath: str
    url: str
    sha256: str

    @property
    def local_path(self) -> Path:
        return data_dir() / self.relpath


def ensure_file(remote: RemoteFile, timeout: float = 60.0) -> Path:
    """Local path of ``remote``, downloading (and verifying) it first when it is missing."""
    target = remote.local_path
    if target.is_file():
        check_once(target, remote.sha256)
        return target
    if target.exists():  # a folder (or a socket, ...) where the file belongs: not "missing", and not downloadable
        raise DataUnavailableError(f"{target} is not a file (a folder?); remove it, or point XMLTHRESH_DATA at a "
                                   f"directory that holds {remote.relpath}")
    manual = (
        f"Download {remote.url} (sha256 {remote.sha256}) and save it as {target}, or point the "
        f"XMLTHRESH_DATA environment variable at a directory that holds {remote.relpath}."
    )
    if env_flag("XMLTHRESH_OFFLINE"):
        raise DataUnavailableError(f"{target} is missing and downloads are off (XMLTHRESH_OFFLINE). {manual}")
    try:
        download(remote.url, target, remote.sha256, timeout=timeout)
    except (OSError, ValueError) as exc:
        raise DataUnavailableError(f"{target} is missing and the download failed: {exc}. {manual}") from exc
    return target


def check_once(path: Path, sha256: str) -> bool:
    """Whether the file already in the data directory is the published one: its sha256 is computed once per
    version of the file (size and modification time, remembered in ``<cache>/verified/``) and a mismatch is
    a :class:`~xmlthresh._util.notices.DataWarning` naming the file. Why: a copy cut to half its size (an
    interrupted copy) was read as a smaller data set with no word (ranked lists end at any line); checksums were
    checked only on download. A warning, not an error: an edited copy may be meant. Without a writable cache
    the check runs, and is not remembered."""
    import json
    import warnings

    from xmlthresh._util.notices import DataWarning
    from xmlthresh._util.paths import cache_dir

    stat = path.stat()
    version = {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}
    stamp = cache_dir() / "verified" / (hashlib.sha256(version["path"].encode()).hexdigest()[:32] + ".json")
    try:
        if json.loads(stamp.read_text()) == version:
            return True
    except (OSError, ValueError):
        pass
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        warnings.warn(f"{path} is not the published file (sha256 {digest.hexdigest()[:16]}..., expected "
                      f"{sha256[:16]}...): a truncated or edited copy? Its numbers are those of this copy; delete it "
                      "to download the published one", DataWarning, stacklevel=2)
        return False
    try:
        from xmlthresh._util.files import write_text_atomic

        write_text_atomic(stamp, json.dumps(version) + "\n")
    except OSError:  # a cache that cannot be written: checked again next time
        pass
    return True


def download(url: str, target: Path, sha256: str, timeout: float = 60.0) -> None:
    """Download ``url`` to ``target`` atomically; raise ValueError on a checksum mismatch."""
    log.info("downloading %s -> %s", url, target)
    digest = hashlib.sha256()
    import urllib.request  # only when downloading: slow to import, and most runs never download

    with atomic_output(target) as out, urllib.request.urlopen(url, timeout=timeout) as response:
        total = int(response.headers.get("Content-Length") or 0)
        done = 0
        for block in iter(lambda: response.read(_CHUNK), b""):
            out.write(block)
            digest.update(block)
            done += len(block)
            _progress(target.name, done, total)
        if sys.stderr.isatty():
            print(file=sys.stderr)
        if digest.hexdigest() != sha256:  # inside the block: the partial file is discarded, never renamed
            raise ValueError(f"sha256 mismatch for {url}: got {digest.hexdigest()}, expected {sha256}")


def _progress(name: str, done: int, total: int) -> None:
    if not sys.stderr.isatty():
        return
    share = f" {100 * done / total:5.1f}%" if total else ""
    print(f"\r  {name}: {done / 1e6:8.1f} MB{share}", end="", file=sys.stderr, flush=True)
