"""The one keyed disk store (``xmlthresh.data.keyed_store``) on its own: exact round trips of every array kind,
the umask's file mode, a process killed while writing leaves no partial entry (and an older entry intact), an
entry of another key or a value that does not decode is a miss, unstorable arrays fail before any file.
The guarantees seen through the caches are tested with them: tests/test_streaming.py (ranked lists),
tests/test_mulan.py, tests/test_hmc.py, tests/test_xmlrepo.py (feature data sets)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from xmlthresh.data import keyed_store
from xmlthresh.data.keyed_store import cached, entry_path

ARRAYS = {
    "int32": np.arange(-5, 5, dtype=np.int32),
    "float": np.linspace(0, 1, 12).reshape(3, 4),
    "bool": np.array([True, False, True]),
    "names": np.array(["a", "bé", "long name"]),
    "scalar": np.array(7.5),
    "empty": np.zeros((0, 3), dtype=np.int64),
}


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "source.txt"
    source.write_text("the raw data")
    return source


def fetch(source, builds: list, key=None, arrays=None, decode=None):
    """``cached`` with a build that records its calls and returns ``arrays``."""
    arrays = ARRAYS if arrays is None else arrays
    return cached("test", "src", key or {"path": str(source)}, [source],
                  build=lambda: builds.append(1) or dict(arrays),
                  encode=lambda value: ({"n": len(value)}, value),
                  decode=decode or (lambda meta, stored: stored))


def entries(tmp_path) -> list[str]:
    root = tmp_path / "cache"
    return sorted(p.name for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_round_trip_is_exact_and_the_second_call_is_a_hit(store):
    builds: list = []
    first = fetch(store, builds)
    second = fetch(store, builds)
    assert (first.hit, second.hit, len(builds)) == (False, True, 1) and second.path == first.path
    assert second.path.name.startswith("src-") and second.path.suffix == keyed_store.SUFFIX
    for name, array in ARRAYS.items():
        assert second.value[name].dtype == array.dtype and second.value[name].shape == array.shape
        np.testing.assert_array_equal(second.value[name], array)


def test_entries_get_the_mode_the_umask_gives(store):
    old = os.umask(0o022)
    try:
        entry = fetch(store, []).path
    finally:
        os.umask(old)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o644


KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import numpy as np
    from xmlthresh.data import keyed_store

    def killed(out, header, arrays):
        out.write(b"half an entry")
        out.flush()
        os.kill(os.getpid(), signal.SIGKILL)

    keyed_store._write_payload = killed
    keyed_store.write_entry(Path(sys.argv[1]), {"key": {}, "sources": [], "meta": {}}, {"a": np.arange(10)})
""")


def test_a_process_killed_while_writing_leaves_no_partial_entry(store, tmp_path):
    builds: list = []
    entry = entry_path("test", "src", {"path": str(store)})
    run = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(entry)], env=os.environ)
    assert run.returncode == -9  # really killed mid-write
    assert not entry.exists()  # at most a hidden temporary file, never the entry
    assert fetch(store, builds).hit is False and len(builds) == 1
    good = entry.read_bytes()
    run = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(entry)], env=os.environ)
    assert run.returncode == -9 and entry.read_bytes() == good  # a killed rewrite keeps the old entry
    assert fetch(store, builds).hit is True and len(builds) == 1


def test_an_entry_of_another_key_is_a_miss(store):
    builds: list = []
    mine = fetch(store, builds, key={"path": str(store), "num_docs": 1}).path
    other = entry_path("test", "src", {"path": str(store), "num_docs": 2})
    shutil.copy(mine, other)  # as if two keys shared a digest
    assert fetch(store, builds, key={"path": str(store), "num_docs": 2}).hit is False and len(builds) == 2


def test_a_value_that_does_not_decode_is_corrupt_deleted_and_rebuilt(store, tmp_path, caplog):
    builds: list = []
    fetch(store, builds)

    def invalid(meta, stored):
        raise ValueError("label_ptr must start at 0")

    assert fetch(store, builds, decode=invalid).hit is False and len(builds) == 2
    assert "is corrupt (ValueError: label_ptr must start at 0)" in caplog.text
    assert fetch(store, builds).hit is True and len(builds) == 2  # the rebuilt entry is good


def test_unstorable_arrays_fail_before_any_file(store, tmp_path):
    with pytest.raises(TypeError, match="Python objects"):
        fetch(store, [], arrays={"names": np.array(["a", None], dtype=object)})
    assert entries(tmp_path) == []
