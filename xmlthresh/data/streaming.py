"""Reading large line-oriented data files block by block: plain files, gzip files and zip members through one
code path.

A source is a plain file, a gzip-compressed file (recognised by its magic bytes, whatever its name) or one
member of a zip archive, read without unpacking it to disk. It is consumed
in blocks of ``chunk_size`` bytes; every block handed to the caller holds **complete lines only** (the
incomplete last line of a read is carried over and handed out with the next one), so a per-block parser
never sees half a line and can name the line of an error. Blocks are zero-copy views of what was read,
except the few bytes of a line that straddles two reads.

A zip or gzip file that is truncated, corrupt (bad deflate stream, CRC mismatch) or a zip that is ambiguous (several files and no
``member`` chosen) raises :class:`CorruptArchiveError` / :class:`ArchiveMemberError` naming the file and
what to do. Long reads show a progress bar on a terminal and log progress otherwise.
"""

from __future__ import annotations

import gzip
import io
import logging
import sys
import time
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

log = logging.getLogger(__name__)

#: bytes read per block: large enough to amortise the per-block work, small enough to keep memory low
DEFAULT_CHUNK_SIZE = 32 << 20

_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP_MAGIC = b"PK\x05\x06"
_GZIP_MAGIC = b"\x1f\x8b"
#: what a damaged compressed stream raises while it is read
_STREAM_ERRORS = (zipfile.BadZipFile, gzip.BadGzipFile, zlib.error, EOFError)


class CorruptArchiveError(ValueError):
    """A zip archive that cannot be read (truncated, corrupt, unsupported); the message names the file."""


class ArchiveMemberError(ValueError):
    """The zip member to read is missing or ambiguous; the message lists the members."""


@dataclass(frozen=True)
class DataSource:
    """A plain file (``member`` None), a gzip file (``compression='gzip'``) or one member of a zip archive;
    ``size`` is its uncompressed size (of a gzip file: as its trailer says, modulo 4 GiB)."""

    path: Path
    member: str | None
    size: int
    compression: str | None = None

    @property
    def display(self) -> str:
        """How error messages and progress name the source: ``file`` or ``archive.zip:member``."""
        return f"{self.path}:{self.member}" if self.member is not None else str(self.path)

    @property
    def label(self) -> str:
        """Short name for progress output."""
        return self.member if self.member is not None else self.path.name


def is_zip(path: Path) -> bool:
    """Whether ``path`` is (meant to be) a zip archive: by its suffix or its first bytes."""
    if path.suffix.lower() == ".zip":
        return True
    with open(path, "rb") as handle:
        head = handle.read(4)
    return head in (_ZIP_MAGIC, _EMPTY_ZIP_MAGIC)


def is_gzip(path: Path) -> bool:
    """Whether ``path`` starts with gzip's magic bytes (a ``.gz`` name alone does not make a file gzip)."""
    with open(path, "rb") as handle:
        return handle.read(2) == _GZIP_MAGIC


def _gzip_size(path: Path) -> int:
    """The uncompressed size of a gzip file from its trailer (ISIZE, modulo 2^32; 0 if too short)."""
    with open(path, "rb") as handle:
        end = handle.seek(0, io.SEEK_END)
        if end < 18:
            return 0
        handle.seek(end - 4)
        return int.from_bytes(handle.read(4), "little")


def open_source(path: str | Path, member: str | None = None) -> DataSource:
    """Describe the data in ``path``: the file itself, or a member of a zip (``member``, or its only file).

    Raises FileNotFoundError for a missing file, :class:`CorruptArchiveError` for an unreadable zip and
    :class:`ArchiveMemberError` when the member is absent or not unique.
    """
    path = Path(path)
    if not is_zip(path):
        if member is not None:
            raise ArchiveMemberError(f"{path}: member {member!r} given but the file is not a zip archive")
        if is_gzip(path):
            return DataSource(path, None, _gzip_size(path), compression="gzip")
        return DataSource(path, None, path.stat().st_size)
    with _open_zip(path) as archive:
        info = _choose_member(path, archive, member)
        return DataSource(path, info.filename, info.file_size)


def data_files_of(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members of ``archive`` that hold data: files, not directories, hidden files or macOS metadata."""
    return [
        info for info in archive.infolist()
        if not info.is_dir() and not info.filename.startswith("__MACOSX/")
        and not Path(info.filename).name.startswith(".")
    ]


@contextmanager
def line_blocks(
    source: DataSource, chunk_size: int = DEFAULT_CHUNK_SIZE, progress: bool = True
) -> Iterator[Iterator[memoryview]]:
    """Context manager giving an iterator over blocks of complete lines of ``source`` (see module doc).

    The last block may lack a final newline. Errors of a corrupt zip surface as :class:`CorruptArchiveError`.
    """
    if source.compression == "gzip":
        with gzip.open(source.path, "rb") as handle:
            with closing(_checked_blocks(handle, source, chunk_size, progress)) as blocks:
                yield blocks
    elif source.member is None:
        with open(source.path, "rb") as handle:
            with closing(_checked_blocks(handle, source, chunk_size, progress)) as blocks:
                yield blocks
    else:
        with _open_zip(source.path) as archive:
            try:
                handle = archive.open(source.member)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
                raise _corrupt(source.path, exc, member=source.member) from exc
            with handle, closing(_checked_blocks(handle, source, chunk_size, progress)) as blocks:
                yield blocks


def bytes_blocks(data: bytes, chunk_size: int = DEFAULT_CHUNK_SIZE) -> Iterator[memoryview]:
    """Blocks of complete lines of in-memory ``data`` (same splitting as files, no progress)."""
    source = DataSource(Path("<bytes>"), None, len(data))
    return _checked_blocks(io.BytesIO(data), source, chunk_size, progress=False)


# ---------------------------------------------------------------------------------------------- internals
def _checked_blocks(handle: BinaryIO, source: DataSource, chunk_size: int, progress: bool) -> Iterator[memoryview]:
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    bar = Progress(f"reading {source.label}", source.size) if progress else None
    reads = _reads(handle, source, chunk_size, bar)
    try:
        yield from _complete_lines(reads)
    finally:
        if bar is not None:
            bar.close()


def _reads(handle: BinaryIO, source: DataSource, chunk_size: int, bar: "Progress | None") -> Iterator[bytes]:
    done = 0
    while True:
        try:
            block = handle.read(chunk_size)
        except _STREAM_ERRORS as exc:
            raise _corrupt(source.path, exc, member=source.member, kind=source.compression or "zip") from exc
        if not block:
            return
        done += len(block)
        if bar is not None:
            bar.update(done)
        yield block


def _complete_lines(reads: Iterator[bytes]) -> Iterator[memoryview]:
    """Re-cut a stream of reads into blocks that end with a newline (the last one possibly not).

    The line that straddles two reads is joined from its pieces and handed out alone; the rest of every
    read is handed out as a view, without copying.
    """
    pending: list[bytes | memoryview] = []  # pieces of a line that started in an earlier read
    for block in reads:
        view = memoryview(block)
        first = block.find(b"\n")
        if first < 0:
            pending.append(view)
            continue
        start = 0
        if pending:
            pending.append(view[: first + 1])
            yield memoryview(b"".join(pending))
            pending = []
            start = first + 1
        last = block.rfind(b"\n")
        if last + 1 > start:
            yield view[start: last + 1]
        if last + 1 < len(block):
            pending.append(view[last + 1:])
    if pending:
        yield memoryview(b"".join(pending))


@contextmanager
def _open_zip(path: Path) -> Iterator[zipfile.ZipFile]:
    try:
        archive = zipfile.ZipFile(path)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise _corrupt(path, exc) from exc
    with archive:
        yield archive


def _choose_member(path: Path, archive: zipfile.ZipFile, member: str | None) -> zipfile.ZipInfo:
    files = data_files_of(archive)
    names = ", ".join(repr(info.filename) for info in files[:10]) + (", ..." if len(files) > 10 else "")
    if member is not None:
        for info in archive.infolist():
            if info.filename == member and not info.is_dir():
                return info
        raise ArchiveMemberError(f"{path}: the archive has no file {member!r}; its files: {names or 'none'}")
    if not files:
        raise ArchiveMemberError(f"{path}: the zip archive holds no file")
    if len(files) > 1:
        raise ArchiveMemberError(
            f"{path}: the zip archive holds {len(files)} files ({names}); choose one with member=NAME"
        )
    return files[0]


def damage_of(source: DataSource) -> CorruptArchiveError | None:
    """The error to report instead of a parse error when ``source`` is a compressed stream whose checksum
    fails: a zeroed block of a zip member decompresses to garbage that the parser meets long before the CRC
    at the member's end would be checked (the user saw "line 70536: token 2112819" instead of "corrupt
    archive"). Reads the rest of the stream (CRC-32 checked by zipfile / gzip at its end); None when it is
    intact -- the parse error then stands -- or not compressed."""
    if source.member is None and source.compression is None:
        return None
    try:
        if source.compression == "gzip":
            with gzip.open(source.path, "rb") as handle:
                while handle.read(DEFAULT_CHUNK_SIZE):
                    pass
        else:
            with zipfile.ZipFile(source.path) as archive, archive.open(source.member) as handle:
                while handle.read(DEFAULT_CHUNK_SIZE):
                    pass
    except (*_STREAM_ERRORS, RuntimeError, NotImplementedError, OSError) as exc:
        return _corrupt(source.path, exc, member=source.member, kind=source.compression or "zip")
    return None


def _corrupt(path: Path, exc: BaseException, member: str | None = None, kind: str = "zip") -> CorruptArchiveError:
    where = f"{path}:{member}" if member is not None else str(path)
    what = "gzip file" if kind == "gzip" else "zip archive"
    return CorruptArchiveError(
        f"{where}: corrupt or truncated {what} ({type(exc).__name__}: {exc}); "
        f"delete the file and download it again (or check it against its published sha256)"
    )


class Progress:
    """Progress of a long read: a bar on stderr when it is a terminal, else a log line every few seconds.

    Nothing is shown for reads that finish within ``delay`` seconds, so small files stay quiet.
    """

    def __init__(self, label: str, total: int, delay: float = 1.0, tty_every: float = 0.25,
                 log_every: float = 5.0) -> None:
        self.label = label
        self.total = total
        self.delay = delay
        self.tty = sys.stderr.isatty()
        self.every = tty_every if self.tty else log_every
        self.started = time.monotonic()
        self.last_shown = self.started + delay - self.every
        self.shown = False
        self.done = 0

    def update(self, done: int) -> None:
        self.done = done
        now = time.monotonic()
        if now - self.started < self.delay or now - self.last_shown < self.every:
            return
        self.last_shown = now
        self.shown = True
        share = f" ({100.0 * done / self.total:5.1f}%)" if self.total else ""
        text = f"{self.label}: {done / 1e6:,.1f} of {self.total / 1e6:,.1f} MB{share}, {now - self.started:.1f} s"
        if self.tty:
            print(f"\r  {text}", end="", file=sys.stderr, flush=True)
        else:
            log.info("%s", text)

    def close(self) -> None:
        if not self.shown:
            return
        elapsed = time.monotonic() - self.started
        if self.tty:
            print(file=sys.stderr, flush=True)
        log.info("%s: %.1f MB in %.1f s", self.label, self.done / 1e6, elapsed)
        self.shown = False
