"""Shared fixtures: the real-data directory (skip with a reason when absent) and an isolated project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import no_data


def real_data_dir() -> Path | None:
    """$XMLTHRESH_DATA when it holds the reference files, else None (tests use real data only through it)."""
    env = os.environ.get("XMLTHRESH_DATA")
    if env and (Path(env) / "berger" / "ESPGameNN.txt").is_file():
        return Path(env)
    return None


@pytest.fixture
def real_data() -> Path:
    path = real_data_dir()
    if path is None:
        pytest.skip(no_data("berger/ESPGameNN.txt"))
    return path


@pytest.fixture
def isolated_home(tmp_path, monkeypatch) -> Path:
    """Runs and the MLflow store go to a temporary project root; derived caches to a temporary dir."""
    monkeypatch.setenv("XMLTHRESH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def toy_mulan(tmp_path, monkeypatch):
    """A small Mulan set in a data directory of its own (cache too; downloads off)."""
    from helpers import write_mulan_set

    monkeypatch.setenv("XMLTHRESH_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("XMLTHRESH_OFFLINE", "1")
    write_mulan_set(tmp_path / "data", "toy")
    return tmp_path
