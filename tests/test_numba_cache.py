"""numba's kernel cache heals: it lives under ``$XMLTHRESH_CACHE/numba``, an unreadable file in it is dropped with
one warning line and the kernel recompiled, and an unusable folder gives way to a temporary one. Before, one
corrupt ``*.nbc`` or truncated ``*.nbi`` made every run fail until someone deleted it."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from xmlthresh._util import jit

ROOT = Path(__file__).resolve().parents[1]

#: a fresh interpreter that runs one cached kernel and prints its result
KERNEL_RUN = textwrap.dedent("""
    import numpy as np
    from xmlthresh._util import detmath
    print(repr(float(detmath.exp(np.array([0.5, 1.5])).sum())))
""")


def _run_kernel(env: dict[str, str]) -> subprocess.CompletedProcess:
    """The kernel in a fresh interpreter with ``env`` over this one's, without the ``NUMBA_CACHE_DIR`` that
    ``import xmlthresh`` set here (unless ``env`` gives one)."""
    base = {key: value for key, value in os.environ.items() if key != "NUMBA_CACHE_DIR"}
    base["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", KERNEL_RUN], env={**base, **env}, capture_output=True, text=True,
                          timeout=300)


def _lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


@pytest.mark.parametrize("damage", ["random bytes in the code", "a truncated index", "both"])
def test_a_corrupt_cache_file_is_dropped_with_one_line_and_rebuilt(tmp_path, damage):
    env = {"XMLTHRESH_CACHE": str(tmp_path / "cache")}
    first = _run_kernel(env)
    assert first.returncode == 0, first.stderr
    folder = tmp_path / "cache" / "numba"
    codes, indexes = sorted(folder.rglob("*.nbc")), sorted(folder.rglob("*.nbi"))
    assert codes and indexes, "the kernel is cached under $XMLTHRESH_CACHE/numba"
    if damage in ("random bytes in the code", "both"):
        codes[0].write_bytes(os.urandom(3000))
    if damage in ("a truncated index", "both"):
        indexes[0].write_bytes(indexes[0].read_bytes()[:20])
    again = _run_kernel(env)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    lines = _lines(again.stderr)
    assert len(lines) == 1 and lines[0].startswith("numba cache: dropped "), again.stderr
    third = _run_kernel(env)
    assert third.stdout == first.stdout and _lines(third.stderr) == []  # rebuilt: nothing left to drop


def test_an_unusable_cache_folder_gives_way_to_a_temporary_one(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = _run_kernel({"NUMBA_CACHE_DIR": str(blocker / "numba")})
    assert result.returncode == 0, result.stderr
    lines = _lines(result.stderr)
    assert len(lines) == 1 and lines[0].startswith(f"numba cache folder {blocker / 'numba'} is not writable; "
                                                    "compiled kernels are cached in "), result.stderr
    temporary = Path(lines[0].split("compiled kernels are cached in ", 1)[1].split(" for this process only")[0])
    assert not temporary.exists()  # removed when the process ended: each such run left one behind


def test_a_cache_folder_without_room_gives_way_to_a_temporary_one(tmp_path, monkeypatch):
    """A full disk under XMLTHRESH_CACHE made every run fail with numba's "No space left on device"."""
    import shutil

    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(jit.shutil, "disk_usage", lambda path: usage._replace(free=1 << 20))
    monkeypatch.setattr(jit, "use_temporary_cache", lambda reason: reasons.append(reason))
    monkeypatch.delitem(sys.modules, "numba")  # as before numba is imported: the folder can still change
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    reasons: list[str] = []
    jit.check_numba_cache()
    assert reasons == [f"folder {tmp_path / 'numba'} has 1.0 MB free, less than the 64 MB it may need"]


def test_a_user_set_numba_cache_dir_is_respected(tmp_path):
    result = _run_kernel({"NUMBA_CACHE_DIR": str(tmp_path / "theirs"), "XMLTHRESH_CACHE": str(tmp_path / "ours")})
    assert result.returncode == 0, result.stderr
    assert list((tmp_path / "theirs").rglob("*.nbi")) and not (tmp_path / "ours" / "numba").exists()


@pytest.mark.fast
def test_only_complete_pickle_streams_pass(tmp_path):
    index = tmp_path / "f-1.py311.nbi"
    index.write_bytes(pickle.dumps("0.68.1") + pickle.dumps((1.0, {"sig": "f-1.py311.1.nbc"})))
    code = tmp_path / "f-1.py311.1.nbc"
    code.write_bytes(pickle.dumps((b"\x00" * 5000, {"name": "f"})))
    assert jit.is_complete_pickle_stream(index) and jit.is_complete_pickle_stream(code)
    for broken, data in [(index, index.read_bytes()[:-3]), (index, pickle.dumps("0.68.1")),
                         (code, code.read_bytes() + b"x"), (code, b"\xff" * 100), (code, b"")]:
        broken.write_bytes(data)
        assert not jit.is_complete_pickle_stream(broken)
    dropped, stuck = jit.drop_unreadable_cache_files(tmp_path)
    assert sorted(dropped) == sorted([index, code]) and stuck == []
    assert jit.drop_unreadable_cache_files(tmp_path / "missing") == ([], [])
