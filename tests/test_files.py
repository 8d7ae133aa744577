"""The one atomic writer (``xmlthresh._util.files``): new files get the umask's mode, an error leaves neither a partial
file nor a temporary one, a replacement is a rename (readers of the old file keep the whole old content), and
the data are fsync-ed before the rename."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from xmlthresh._util import files
from xmlthresh._util.files import atomic_output, write_bytes_atomic, write_json_atomic


def mode_of(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_new_files_get_the_mode_the_umask_gives(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_json_atomic(tmp_path / "result.json", {"f": 1})
        with atomic_output(tmp_path / "arrays.npz") as out:
            np.savez(out, a=np.arange(3))
        (tmp_path / "plain.txt").write_text("reference: what open() gives")
    finally:
        os.umask(old)
    assert mode_of(tmp_path / "result.json") == 0o666 & ~umask == mode_of(tmp_path / "plain.txt")
    assert mode_of(tmp_path / "arrays.npz") == 0o666 & ~umask


@pytest.mark.parametrize("error", [RuntimeError("writer bug"), OSError(28, "No space left on device"),
                                   KeyboardInterrupt()])
def test_a_writer_that_raises_leaves_no_partial_and_no_temporary_file(tmp_path, error):
    target = tmp_path / "sub" / "entry.bin"
    with pytest.raises(type(error)):
        with atomic_output(target) as out:
            out.write(b"half an entry")
            raise error
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == []


def test_a_failed_replacement_keeps_the_old_content(tmp_path):
    target = tmp_path / "result.json"
    target.write_text("old")
    with pytest.raises(ValueError):
        with atomic_output(target) as out:
            out.write(b"new but incomplete")
            assert target.read_text() == "old"  # nothing visible before the block ends
            raise ValueError("checksum mismatch")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_replacing_an_existing_file_is_a_rename(tmp_path):
    target = tmp_path / "scores.npz"
    target.write_bytes(b"old content " * 1000)
    with open(target, "rb") as reader:  # a reader that opened the old file ...
        inode = os.fstat(reader.fileno()).st_ino
        write_bytes_atomic(target, b"new")
        assert reader.read() == b"old content " * 1000  # ... still reads all of it: no in-place truncation
    assert target.read_bytes() == b"new" and target.stat().st_ino != inode
    assert [p.name for p in tmp_path.iterdir()] == ["scores.npz"]


def test_data_are_synced_before_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(files.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(files.os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    write_bytes_atomic(tmp_path / "x", b"data")
    assert events[:2] == ["fsync", "replace"]  # the file, then the rename (then the directory, where possible)
    assert (tmp_path / "x").read_bytes() == b"data"


def test_a_full_disk_is_one_error_naming_the_file_and_no_temporary_is_left(tmp_path):
    """OSError [Errno 28] reached the user as a raw traceback without the path (issue 17)."""
    import errno

    from xmlthresh._util.files import WriteFailedError

    target = tmp_path / "run" / "thresholds.csv"
    with pytest.raises(WriteFailedError) as info:
        with atomic_output(target) as out:  # a fake writer: the disk fills up mid-write
            out.write(b"label_id,cut\n")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert str(info.value) == (f"cannot write {target}: No space left on device; free space there or write "
                               "elsewhere (hydra.run.dir, XMLTHRESH_HOME, XMLTHRESH_CACHE)")
    assert info.value.errno == errno.ENOSPC and isinstance(info.value, OSError)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_an_unwritable_place_is_one_error_naming_the_file(tmp_path, monkeypatch):
    import errno

    from xmlthresh._util import files

    def refuse(path):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(files, "_create_temporary", refuse)
    with pytest.raises(files.WriteFailedError, match=rf"^cannot write {tmp_path / 'x.json'}: Read-only file system; "
                                                     "the place is not writable"):
        files.write_json_atomic(tmp_path / "x.json", {"a": 1})


def test_other_writer_errors_propagate_unchanged(tmp_path):
    with pytest.raises(FileNotFoundError):
        with atomic_output(tmp_path / "y.bin"):
            raise FileNotFoundError(2, "the input the writer reads is gone")


def test_a_run_that_cannot_write_its_result_leaves_none_of_its_files(tmp_path, monkeypatch):
    """A full disk at result.json left thresholds.csv and the PNGs behind (docs/cli.md: a failed run leaves no
    partial result); the run's files are now removed together."""
    import errno

    from xmlthresh._util import files
    from xmlthresh.run.job import run_job

    real = files._create_temporary

    def disk_full_at_the_result(path):
        if path.name == "result.json":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path)

    monkeypatch.setattr(files, "_create_temporary", disk_full_at_the_result)
    run_dir = tmp_path / "run"
    (run_dir / ".hydra").mkdir(parents=True)
    (run_dir / ".hydra" / "config.yaml").write_text("strategy: domain\n")  # Hydra's, there before the run
    cfg = {"strategy": {"name": "domain"}, "dataset": {"loader": "synthetic", "n_labels": 20, "num_docs": 100},
           "warm_up": False, "plots": True, "tracking": {"enabled": False}}
    with pytest.raises(files.WriteFailedError, match=rf"cannot write {run_dir / 'result.json'}: No space left") as info:
        run_job(cfg, run_dir)
    from xmlthresh.cli.hydra_app import user_errors

    assert isinstance(info.value, user_errors())  # the CLI prints it as one line, no traceback
    assert sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file()) == [
        ".hydra/config.yaml"]
    monkeypatch.setattr(files, "_create_temporary", real)
    run_job(cfg, run_dir)  # with space, the same run writes every file
    assert {"result.json", "thresholds.csv"} <= {p.name for p in run_dir.iterdir()}
    assert any(p.suffix == ".png" for p in run_dir.iterdir())
