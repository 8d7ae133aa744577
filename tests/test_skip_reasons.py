"""Tests that skip say why in terms every user has: XMLTHRESH_DATA and the default data directory, never a
path of one developer's machine (issue 14)."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import default_data_dir, no_data

TESTS = Path(__file__).resolve().parent


def test_no_data_names_xmlthresh_data_and_the_default_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("XMLTHRESH_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_data_dir() == tmp_path / "xmlthresh" / "data"
    reason = no_data("berger/ESPGameNN.txt")
    assert reason == (f"real data not available: no berger/ESPGameNN.txt in the default data directory "
                      f"{tmp_path / 'xmlthresh' / 'data'} (XMLTHRESH_DATA unset); set XMLTHRESH_DATA to a "
                      "directory holding it")
    monkeypatch.setenv("XMLTHRESH_DATA", "/data/here")
    assert "in XMLTHRESH_DATA=/data/here;" in no_data("x.txt")


def test_no_skip_reason_points_at_the_shared_cache_beside_a_checkout():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        text = path.read_text()
        for match in re.finditer(r"pytest\.skip\((.{0,300}?)\)\n", text, re.S):
            if "SHARED" in match.group(1) or "shared" in match.group(1).lower():
                offenders.append(f"{path.relative_to(TESTS)}: {match.group(1)[:80]}")
    assert offenders == []
